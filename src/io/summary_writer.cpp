// SummaryWriter: the event file and its writer thread (Note [event files] in
// eagerflow/io/summary.h), and the per-thread default writer and step.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "atomic_file.h"
#include "core/host_name.h"
#include "eagerflow/core/error.h"
#include "eagerflow/io/summary.h"
#include "event_file.h"
#include "summary_internal.h"
#include "tensorboard.pb.h"

namespace ef::summary {
namespace {

std::atomic<uint64_t> g_file_counter{0};

std::string event_file_name(const FileWriterOptions& options) {
  return "events.out.tfevents." + std::to_string(static_cast<long long>(std::time(nullptr))) + "." +
         ef::detail::host_name() + "." + std::to_string(::getpid()) + "." + std::to_string(g_file_counter++) +
         options.filename_suffix;
}

}  // namespace

struct SummaryWriter::State {
  std::string logdir, path;
  FileWriterOptions options;
  int fd = -1;

  std::mutex mu;
  std::condition_variable wake;     // the thread: events are waiting, or flush/close
  std::condition_variable written;  // flush(): the thread wrote a batch
  std::deque<std::string> queue;    // serialized events not yet written
  uint64_t queued = 0, done = 0;    // events queued and written, ever
  uint64_t flush_wanted = 0;        // write without waiting for max_queue up to here
  bool closing = false, closed = false;
  std::exception_ptr error;  // the thread's I/O error, raised to the callers
  std::thread thread;

  void run() {
    std::unique_lock lock(mu);
    for (;;) {
      wake.wait_for(lock, std::chrono::milliseconds(options.flush_millis), [&] {
        return closing || flush_wanted > done || static_cast<int>(queue.size()) >= options.max_queue;
      });
      if (!queue.empty() && !error) {
        std::string batch;
        const size_t count = queue.size();
        for (const std::string& event : queue) io::detail::append_record(batch, event);
        queue.clear();
        lock.unlock();
        try {
          io::detail::FileWriter(fd, path, "summary writer").write(batch.data(), batch.size());
        } catch (...) {
          lock.lock();
          error = std::current_exception();
          lock.unlock();
        }
        lock.lock();
        done += count;
      } else if (error) {
        done += queue.size();
        queue.clear();
      }
      written.notify_all();
      if (closing && queue.empty()) return;
    }
  }
};

SummaryWriter::SummaryWriter(std::string logdir, FileWriterOptions options)
    : state_(std::make_unique<State>()) {
  if (logdir.empty()) fail("create_file_writer: logdir is empty");
  if (options.max_queue < 1)
    fail("create_file_writer: max_queue must be at least 1, got ", options.max_queue);
  if (options.flush_millis < 1)
    fail("create_file_writer: flush_millis must be at least 1, got ", options.flush_millis);
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec) io::detail::fail_io("create_file_writer", "create the folder", logdir, ec.value());
  State& s = *state_;
  s.logdir = std::move(logdir);
  s.options = std::move(options);
  s.path = (std::filesystem::path(s.logdir) / event_file_name(s.options)).string();
  s.fd = ::open(s.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (s.fd < 0) io::detail::fail_io("create_file_writer", "create", s.path, errno);
  ef_tensorboard::Event version;
  version.set_wall_time(detail::now_seconds());
  version.set_file_version("brain.Event:2");
  std::string record;
  io::detail::append_record(record, version.SerializeAsString());
  try {
    io::detail::FileWriter(s.fd, s.path, "create_file_writer").write(record.data(), record.size());
  } catch (...) {
    ::close(s.fd);
    throw;
  }
  s.thread = std::thread([&s] { s.run(); });
}

SummaryWriter::~SummaryWriter() {
  try {
    close();
  } catch (...) {  // an I/O error nobody asked about: the records before it stay readable
  }
}

void SummaryWriter::write_event(std::string serialized_event) {
  State& s = *state_;
  std::lock_guard lock(s.mu);
  if (s.closing) fail<FailedPreconditionError>("summary: the writer for '", s.logdir, "' is closed");
  if (s.error) std::rethrow_exception(s.error);
  s.queue.push_back(std::move(serialized_event));
  ++s.queued;
  if (static_cast<int>(s.queue.size()) >= s.options.max_queue) s.wake.notify_one();
}

void SummaryWriter::flush() {
  State& s = *state_;
  std::unique_lock lock(s.mu);
  if (s.closed) return;
  const uint64_t target = s.queued;
  s.flush_wanted = target;
  s.wake.notify_one();
  s.written.wait(lock, [&] { return s.done >= target; });
  if (s.error) std::rethrow_exception(s.error);
}

void SummaryWriter::close() {
  State& s = *state_;
  {
    std::lock_guard lock(s.mu);
    if (s.closing) return;
    s.closing = true;
  }
  s.wake.notify_one();
  s.thread.join();
  ::close(s.fd);
  std::lock_guard lock(s.mu);
  s.closed = true;
  if (s.error) std::rethrow_exception(s.error);
}

bool SummaryWriter::closed() const {
  std::lock_guard lock(state_->mu);
  return state_->closing;
}

const std::string& SummaryWriter::logdir() const { return state_->logdir; }
const std::string& SummaryWriter::path() const { return state_->path; }

Writer create_file_writer(const std::string& logdir, FileWriterOptions options) {
  return std::make_shared<SummaryWriter>(logdir, std::move(options));
}

// ---- the per-thread default writer and step ----

namespace {
thread_local Writer t_default_writer;
thread_local std::optional<int64_t> t_step;
}  // namespace

WriterScope::WriterScope(Writer writer, std::optional<int64_t> step)
    : previous_writer_(std::move(t_default_writer)), previous_step_(t_step), sets_step_(step.has_value()) {
  if (!writer) fail("summary: as_default needs a writer, got none");
  t_default_writer = std::move(writer);
  if (sets_step_) t_step = step;
}

WriterScope::~WriterScope() {
  t_default_writer = std::move(previous_writer_);
  if (sets_step_) t_step = previous_step_;
}

Writer default_writer() { return t_default_writer; }
void set_step(std::optional<int64_t> step) { t_step = step; }
std::optional<int64_t> get_step() { return t_step; }

}  // namespace ef::summary
