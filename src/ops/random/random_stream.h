// Seed resolution for random ops (Note [random seeds] in eagerflow/ops/random.h):
// turns the user's optional op seed and the global seed into the Philox key and
// stream id that a random op carries as attributes, so its kernel is a deterministic
// function of its attributes. Internal to src/ops.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace ef::detail {

struct RandomStream {
  uint64_t key = 0;     // Philox key, derived from (global seed, op seed)
  uint64_t stream = 0;  // which call on that seed pair this is (upper counter words)
};

// Resolves the seeds of one random op call and claims the next stream of the pair.
RandomStream next_random_stream(std::optional<int64_t> op_seed);
// The fixed stream of a stateless op's two-integer seed; touches no seed state.
RandomStream stateless_random_stream(const std::array<int64_t, 2>& seed);

}  // namespace ef::detail
