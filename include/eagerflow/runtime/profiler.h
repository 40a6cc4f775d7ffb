// The profiler: every op a kernel runs for, eagerly or inside a function, with its
// time, input shapes and dtypes, thread and device.
//
//   ef::profiler::start("logs/profile");
//   ... training steps ...
//   ef::profiler::Profile profile = ef::profiler::stop();   // writes the trace file
//   std::cout << profile.table();        // op, calls, total, mean, min, max
//
// The file (profile.trace_path) is Chrome trace-event JSON, as PyTorch's profiler
// writes it ("<host>_<pid>.<ms>.pt.trace.json"): Perfetto and chrome://tracing open it.
//
// Note [profiler cost]: when no profile is running, an op pays one relaxed atomic load.
// While one runs, each op takes two clock reads and appends one record to its thread's
// buffer (input shapes copied when record_shapes is set); the report is built in stop().
// Ops on a GPU are timed on the host: the time to enqueue them, not to run them.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eagerflow/core/device.h"
#include "eagerflow/core/dtype.h"
#include "eagerflow/core/shape.h"
#include "eagerflow/core/tensor.h"

namespace ef::profiler {

struct ProfilerOptions {
  bool record_shapes = true;  // the inputs' shapes and dtypes of every op
};

// One op run.
struct OpEvent {
  std::string name;      // the op's registered name
  int64_t start_ns = 0;  // since the profile started
  int64_t duration_ns = 0;
  uint64_t thread = 0;  // 1, 2, ...: the threads in the order they first ran an op
  Device device;
  std::vector<Shape> input_shapes;  // empty unless record_shapes
  std::vector<DType> input_dtypes;
};

// The ops of one name together (PyTorch's key_averages).
struct OpStats {
  std::string name;
  int64_t calls = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  double mean_ns() const { return calls ? static_cast<double>(total_ns) / static_cast<double>(calls) : 0; }
};

class Profile {
 public:
  std::vector<OpEvent> events;  // by start time
  std::string trace_path;       // the trace file written by stop(); empty without a logdir
  int64_t wall_ns = 0;          // from start() to stop()

  // One row per op name, the most total time first.
  std::vector<OpStats> key_averages() const;
  // key_averages as a text table (the first `row_limit` rows; 0: all), with each op's
  // share of the summed op time.
  std::string table(size_t row_limit = 0) const;
  // The events as Chrome trace-event JSON.
  std::string chrome_trace() const;
};

// Starts recording; an empty `logdir` records without writing a file. A profile that is
// already running is a FailedPreconditionError.
void start(const std::string& logdir = "", ProfilerOptions options = {});
// Stops recording, writes the trace file into the logdir (created if missing), and
// returns what was recorded. FailedPreconditionError when no profile is running.
Profile stop();

// While alive, a profile runs (TensorFlow's tf.profiler.experimental.Profile); its
// result is in profile() after the scope's stop() or destructor.
class Scope {
 public:
  explicit Scope(const std::string& logdir = "", ProfilerOptions options = {});
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  const Profile& stop();

 private:
  bool running_ = true;
  Profile profile_;
};

namespace detail {
extern std::atomic<bool> g_active;
// Whether ops are being recorded (Note [profiler cost]).
inline bool active() { return g_active.load(std::memory_order_relaxed); }
int64_t now_ns();
// Records one op run on `inputs` that began at `start_ns` (now_ns()) and ends now.
// `name` must outlive the profile (an OpDef's name).
void record(std::string_view name, int64_t start_ns, Device device, std::span<const Tensor> inputs);

// Times the enclosing block as one op run when a profile is running.
class OpTimer {
 public:
  OpTimer(std::string_view name, Device device, std::span<const Tensor> inputs)
      : name_(name), device_(device), inputs_(inputs), start_ns_(active() ? now_ns() : -1) {}
  ~OpTimer() {
    if (start_ns_ >= 0) [[unlikely]]
      record(name_, start_ns_, device_, inputs_);
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  std::string_view name_;
  Device device_;
  std::span<const Tensor> inputs_;
  int64_t start_ns_;
};
}  // namespace detail

}  // namespace ef::profiler
