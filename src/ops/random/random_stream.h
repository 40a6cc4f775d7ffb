// Seed resolution for random ops (Note [random seeds] in eagerflow/ops/random.h):
// turns the user's optional op seed and the global seed into the Philox key and
// stream id that a random op carries as attributes, so its kernel is a deterministic
// function of its attributes. Internal to src/ops.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ef::detail {

struct RandomStream {
  uint64_t key = 0;     // Philox key, derived from (global seed, op seed)
  uint64_t stream = 0;  // which call on that seed pair this is (upper counter words)
};

// Throws UnimplementedError naming the random op `op` of a traced function while a
// RandomStreamLog is active on this thread: a graph's random nodes count their own
// runs (Note [random ops in graphs]), which no log can replay.
void refuse_while_streams_logged(std::string_view op);

// Resolves the seeds of one random op call and claims the next stream of the pair.
RandomStream next_random_stream(std::optional<int64_t> op_seed);
// The same, ignoring any RandomStreamLog (next_random_stream's own step).
RandomStream claim_random_stream(std::optional<int64_t> op_seed);
// The fixed stream of a stateless op's two-integer seed; touches no seed state.
RandomStream stateless_random_stream(const std::array<int64_t, 2>& seed);
// Whether a random op's stream id is a stateless op's (which must always repeat).
bool is_stateless_stream(uint64_t stream);
// The key for the `run`-th execution (run > 0) of a graph node that claimed `key` when
// it was built (Note [random ops in graphs] in src/graph/executor.cpp): deterministic
// given the seeds, unrelated to other keys.
uint64_t key_for_run(uint64_t key, uint64_t run);

// Note [recomputation replays random streams]: recompute_grad (eagerflow/autodiff/
// recompute_grad.h) runs its function again during backprop; the random ops in it must
// draw the numbers they drew the first time, or the gradient would be another
// function's. While a log records on this thread, every stream claimed is appended to
// it; while it replays, next_random_stream hands back the recorded streams in order
// (and throws FailedPreconditionError, naming `what`, when asked for more).
class RandomStreamLog {
 public:
  // Appends the streams claimed on this thread to `streams` while it lives.
  explicit RandomStreamLog(std::vector<RandomStream>& streams);
  // Hands back `streams` in order while it lives.
  RandomStreamLog(const std::vector<RandomStream>& streams, std::string_view what);
  ~RandomStreamLog();
  RandomStreamLog(const RandomStreamLog&) = delete;
  RandomStreamLog& operator=(const RandomStreamLog&) = delete;

  // next_random_stream's step while this log is the thread's innermost.
  RandomStream next(std::optional<int64_t> op_seed);
  // A replaying log: throws FailedPreconditionError unless every recorded stream was
  // handed back (a run that drew fewer would have shifted them onto other ops).
  void check_all_replayed() const;

 private:
  std::vector<RandomStream>* recording_ = nullptr;
  const std::vector<RandomStream>* replaying_ = nullptr;
  size_t next_ = 0;
  std::string_view what_;
  RandomStreamLog* outer_;
};

}  // namespace ef::detail
