// Global and per-op seeds, TensorFlow 2 style (Note [random seeds] in
// eagerflow/ops/random.h).
#include <map>
#include <mutex>
#include <random>
#include <utility>

#include "eagerflow/ops/random.h"
#include "ops/random/random_stream.h"

namespace ef {
namespace {

// TensorFlow's DEFAULT_GRAPH_SEED: the global seed used when only an op seed is given.
constexpr int64_t kDefaultGlobalSeed = 87654321;

// The SplitMix64 finalizer: a bijective mix, so nearby seeds give unrelated keys.
uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t key_of(int64_t global_seed, int64_t op_seed) {
  return mix64(mix64(static_cast<uint64_t>(global_seed)) ^ static_cast<uint64_t>(op_seed));
}

struct SeedState {
  std::mutex mutex;
  std::optional<int64_t> global_seed;
  int64_t next_op_seed = 0;  // op seeds handed out while only the global seed is set
  // Calls made so far on each seed pair with an explicit op seed. Pairs whose op seed
  // came from the counter are unique until the next set_seed and need no entry, which
  // keeps this map from growing with every dropout call of a training loop.
  std::map<std::pair<int64_t, int64_t>, uint64_t> calls;
  // Nondeterministic streams: keys mixed from one entropy draw and a counter, which
  // costs nothing per op (a random_device read can take microseconds).
  std::optional<uint64_t> entropy;
  uint64_t unseeded_calls = 0;
};

SeedState& state() {
  static SeedState s;
  return s;
}

}  // namespace

void random::set_seed(std::optional<int64_t> seed) {
  SeedState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.global_seed = seed;
  s.next_op_seed = 0;
  s.calls.clear();
}

namespace {
thread_local detail::RandomStreamLog* active_log = nullptr;
}  // namespace

detail::RandomStreamLog::RandomStreamLog(std::vector<RandomStream>& streams)
    : recording_(&streams), outer_(active_log) {
  active_log = this;
}

detail::RandomStreamLog::RandomStreamLog(const std::vector<RandomStream>& streams, std::string_view what)
    : replaying_(&streams), what_(what), outer_(active_log) {
  active_log = this;
}

detail::RandomStreamLog::~RandomStreamLog() { active_log = outer_; }

detail::RandomStream detail::RandomStreamLog::next(std::optional<int64_t> op_seed) {
  if (replaying_) {
    if (next_ == replaying_->size())
      fail<FailedPreconditionError>(what_, ": the function drew more random tensors when run again (",
                                    next_ + 1, " so far) than the first time (", replaying_->size(),
                                    "); it must run the same random ops each time");
    return (*replaying_)[next_++];
  }
  // An enclosing log sees the stream too, so a recomputation nested in another replays
  // with it.
  const RandomStream claimed = outer_ ? outer_->next(op_seed) : claim_random_stream(op_seed);
  recording_->push_back(claimed);
  return claimed;
}

void detail::RandomStreamLog::check_all_replayed() const {
  if (replaying_ && next_ != replaying_->size())
    fail<FailedPreconditionError>(
        what_, ": the function drew fewer random tensors when run again (", next_, ") than the first time (",
        replaying_->size(),
        "); it must run the same random ops each time (a layer built inside it draws "
        "its initial weights on the first call only: build it before)");
}

void detail::refuse_while_streams_logged(std::string_view op) {
  if (active_log)
    fail<UnimplementedError>(
        "recompute_grad: the random op '", op,
        "' of a traced function (ef::function) inside the recomputed function draws numbers "
        "that cannot be drawn again when the function reruns for its gradient; call the "
        "traced function outside it, or recompute inside the traced function");
}

detail::RandomStream detail::next_random_stream(std::optional<int64_t> op_seed) {
  return active_log ? active_log->next(op_seed) : claim_random_stream(op_seed);
}

detail::RandomStream detail::claim_random_stream(std::optional<int64_t> op_seed) {
  SeedState& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.global_seed && !op_seed) {
    if (!s.entropy) {
      std::random_device device;
      s.entropy = static_cast<uint64_t>(device()) << 32 | device();
    }
    return {key_of(static_cast<int64_t>(*s.entropy), static_cast<int64_t>(s.unseeded_calls++)), 0};
  }
  int64_t global = s.global_seed.value_or(kDefaultGlobalSeed);
  // Counter-given op seeds use the upper half of the stream ids, so they never
  // collide with an explicit op seed of the same value (whose calls count from 0).
  if (!op_seed) return {key_of(global, s.next_op_seed++), uint64_t{1} << 63};
  uint64_t& calls = s.calls[{global, *op_seed}];
  return {key_of(global, *op_seed), calls++};
}

// Stream ids from 2^62 up are never claimed by stateful ops (explicit op seeds count
// from 0, counter-given ones from 2^63), so stateless values are distinct from theirs.
constexpr uint64_t kStatelessStream = uint64_t{1} << 62;

detail::RandomStream detail::stateless_random_stream(const std::array<int64_t, 2>& seed) {
  return {key_of(seed[0], seed[1]), kStatelessStream};
}

bool detail::is_stateless_stream(uint64_t stream) { return stream == kStatelessStream; }

uint64_t detail::key_for_run(uint64_t key, uint64_t run) { return mix64(key ^ mix64(run)); }

}  // namespace ef
