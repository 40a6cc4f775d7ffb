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
// Whether a random op's stream id is a stateless op's (which must always repeat).
bool is_stateless_stream(uint64_t stream);
// The key for the `run`-th execution (run > 0) of a graph node that claimed `key` when
// it was built (Note [random ops in graphs] in src/graph/executor.cpp): deterministic
// given the seeds, unrelated to other keys.
uint64_t key_for_run(uint64_t key, uint64_t run);

}  // namespace ef::detail
