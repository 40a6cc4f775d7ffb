// Recording op runs (Note [profiler cost] in eagerflow/runtime/profiler.h): each thread
// appends to its own buffer; start() and stop() visit every buffer.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include "core/host_name.h"
#include "eagerflow/core/error.h"
#include "eagerflow/runtime/profiler.h"

namespace ef::profiler {
namespace detail {

std::atomic<bool> g_active{false};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace detail

namespace {

struct RawEvent {
  std::string_view name;
  int64_t start_ns, end_ns;
  Device device;
  uint32_t first_input, input_count;  // into the buffer's shapes and dtypes
};

// One thread's records. The mutex is only ever contended by start() and stop().
struct ThreadBuffer {
  std::mutex mu;
  uint64_t thread = 0;
  uint64_t generation = 0;  // the profile these records belong to
  std::vector<RawEvent> events;
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
};

struct Registry {
  std::mutex mu;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  uint64_t generation = 0;
  bool running = false;
  int64_t start_ns = 0;
  std::string logdir;
  ProfilerOptions options;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may record during exit
  return *r;
}

std::atomic<bool> g_record_shapes{true};
std::atomic<uint64_t> g_generation{0};

ThreadBuffer& this_thread_buffer() {
  thread_local std::shared_ptr<ThreadBuffer> buffer = [] {
    auto b = std::make_shared<ThreadBuffer>();
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    b->thread = r.buffers.size() + 1;
    r.buffers.push_back(b);
    return b;
  }();
  return *buffer;
}

}  // namespace

void detail::record(std::string_view name, int64_t start_ns, Device device, std::span<const Tensor> inputs) {
  const int64_t end_ns = now_ns();
  ThreadBuffer& b = this_thread_buffer();
  std::lock_guard lock(b.mu);
  const uint64_t generation = g_generation.load(std::memory_order_relaxed);
  if (b.generation != generation) {  // left over from an earlier profile
    b.events.clear();
    b.shapes.clear();
    b.dtypes.clear();
    b.generation = generation;
  }
  RawEvent e{name, start_ns, end_ns, device, static_cast<uint32_t>(b.shapes.size()), 0};
  if (g_record_shapes.load(std::memory_order_relaxed)) {
    for (const Tensor& t : inputs) {
      if (!t.defined()) continue;
      b.shapes.push_back(t.shape());
      b.dtypes.push_back(t.dtype());
      ++e.input_count;
    }
  }
  b.events.push_back(e);
}

void start(const std::string& logdir, ProfilerOptions options) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (r.running) fail<FailedPreconditionError>("profiler.start: a profile is already running; stop it first");
  r.running = true;
  r.logdir = logdir;
  r.options = options;
  g_record_shapes.store(options.record_shapes, std::memory_order_relaxed);
  g_generation.store(++r.generation, std::memory_order_relaxed);
  r.start_ns = detail::now_ns();
  detail::g_active.store(true, std::memory_order_release);
}

Profile stop() {
  Registry& r = registry();
  Profile profile;
  std::string logdir;
  {
    std::lock_guard lock(r.mu);
    if (!r.running) fail<FailedPreconditionError>("profiler.stop: no profile is running; call start first");
    detail::g_active.store(false, std::memory_order_release);
    r.running = false;
    profile.wall_ns = detail::now_ns() - r.start_ns;
    logdir = r.logdir;
    for (const std::shared_ptr<ThreadBuffer>& b : r.buffers) {
      std::lock_guard buffer_lock(b->mu);
      if (b->generation != r.generation) continue;
      for (const RawEvent& raw : b->events) {
        if (raw.start_ns < r.start_ns) continue;  // began before start()
        OpEvent e{std::string(raw.name),
                  raw.start_ns - r.start_ns,
                  raw.end_ns - raw.start_ns,
                  b->thread,
                  raw.device,
                  {},
                  {}};
        e.input_shapes.assign(b->shapes.begin() + raw.first_input,
                              b->shapes.begin() + raw.first_input + raw.input_count);
        e.input_dtypes.assign(b->dtypes.begin() + raw.first_input,
                              b->dtypes.begin() + raw.first_input + raw.input_count);
        profile.events.push_back(std::move(e));
      }
      b->events.clear();
      b->shapes.clear();
      b->dtypes.clear();
    }
  }
  std::stable_sort(profile.events.begin(), profile.events.end(),
                   [](const OpEvent& a, const OpEvent& b) { return a.start_ns < b.start_ns; });
  if (!logdir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(logdir, ec);
    if (ec) fail<FailedPreconditionError>("profiler.stop: cannot create '", logdir, "': ", ec.message());
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    const fs::path path = fs::path(logdir) / (ef::detail::host_name() + "_" + std::to_string(::getpid()) +
                                              "." + std::to_string(ms) + ".pt.trace.json");
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << profile.chrome_trace();
    out.close();
    if (!out) fail<FailedPreconditionError>("profiler.stop: cannot write '", path.string(), "'");
    profile.trace_path = path.string();
  }
  return profile;
}

Scope::Scope(const std::string& logdir, ProfilerOptions options) { start(logdir, options); }

Scope::~Scope() {
  if (!running_) return;
  try {
    stop();
  } catch (...) {  // a trace that cannot be written must not end the program from a destructor
  }
}

const Profile& Scope::stop() {
  if (running_) {
    running_ = false;
    profile_ = profiler::stop();
  }
  return profile_;
}

}  // namespace ef::profiler
