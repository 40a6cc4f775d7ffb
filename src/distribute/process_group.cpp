// init/finalize, rank and size, bounded waits and the agreement check (Note
// [collectives never hang] in eagerflow/distribute/distribute.h).
#include "distribute/process_group.h"

#include <sched.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <thread>
#include <vector>

#include "eagerflow/core/error.h"

namespace ef::distribute {
namespace detail {
namespace {

bool& on_communication_thread() {
  thread_local bool on = false;
  return on;
}

Group& the_group() {
  static Group* g = new Group;  // never destroyed: finalize at exit may still read it
  return *g;
}

// Set by the launchers eagerflow knows: OpenMPI's mpirun, PMIx-based ones (srun, prterun)
// and MPICH's hydra (PMI). Without any of them the process is a group of one and never
// calls into MPI, so a plain run needs no MPI at all.
bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(var)) return true;
  return false;
}

void check_mpi(int code, std::string_view what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail<InternalError>("distribute: ", what, " failed: ", std::string_view(text, static_cast<size_t>(length)));
}

// Note [collectives never hang]: an uncaught exception on one rank would leave the
// others waiting in their next collective; ending the job at once names the culprit.
[[noreturn]] void terminate_job() {
  std::string what = "an unknown exception";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
    }
  }
  distribute::abort("uncaught exception: " + what);
}

void finalize_at_exit() { finalize(); }

// FNV-1a: the same bytes hash the same in every process (std::hash promises no such thing).
uint64_t fingerprint(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

Group& group(std::string_view op) {
  Group& g = the_group();
  if (!g.initialized) fail<FailedPreconditionError>(op, ": call ef::distribute::init() first");
  if (g.finalized) fail<FailedPreconditionError>(op, ": ef::distribute::finalize() has been called");
  return g;
}

std::future<void> start_in_order(Group& g, std::function<void()> job) {
  std::packaged_task<void()> task([&g, job = std::move(job)] {
    std::lock_guard lock(g.mutex);
    job();
  });
  std::future<void> done = task.get_future();
  std::lock_guard lock(g.queue_mutex);
  if (g.stopping) fail<FailedPreconditionError>("distribute: the group is being finalized");
  if (!g.communication_thread.joinable())
    g.communication_thread = std::thread([&g] {
      on_communication_thread() = true;
      std::unique_lock queue_lock(g.queue_mutex);
      for (;;) {
        g.queue_changed.wait(queue_lock, [&] { return g.stopping || !g.queue.empty(); });
        if (g.queue.empty()) return;  // stopping, and nothing is left to run
        std::packaged_task<void()> next = std::move(g.queue.front());
        g.queue.pop_front();
        queue_lock.unlock();
        next();  // an exception goes to the task's future
        queue_lock.lock();
        --g.started;
        g.queue_changed.notify_all();
      }
    });
  g.queue.push_back(std::move(task));
  ++g.started;
  g.queue_changed.notify_all();
  return done;
}

std::unique_lock<std::mutex> lock_in_order(Group& g) {
  {
    std::unique_lock queue_lock(g.queue_mutex);
    g.queue_changed.wait(queue_lock, [&] { return g.started == 0; });
  }
  return std::unique_lock(g.mutex);
}

void stop_communication_thread(Group& g) {
  {
    std::lock_guard lock(g.queue_mutex);
    if (!g.communication_thread.joinable()) return;
    g.stopping = true;
    g.queue_changed.notify_all();
  }
  if (g.communication_thread.get_id() != std::this_thread::get_id()) g.communication_thread.join();
  else g.communication_thread.detach();
}

void wait(Group& g, MPI_Request& request, std::string_view what) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  // Poll without pause for the first 50 µs (a small collective is done by then, and
  // yielding would cost a trip through the scheduler on a busy machine), then yield the
  // core between polls until a second has passed, then poll every 200 µs so that a
  // long wait costs little CPU.
  const auto hot_for = std::chrono::microseconds(50);
  const auto spin_for = std::chrono::seconds(1);
  const bool background = on_communication_thread();
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    const auto waited = Clock::now() - start;
    if (std::chrono::duration<double>(waited).count() > g.options.timeout_seconds)
      distribute::abort(
          ef::detail::str("waited more than ", g.options.timeout_seconds, " s in ", what,
                          " for the other ranks (a rank skipped this collective, failed or hangs)"));
    if (waited < hot_for) continue;
    if (background)  // leave the cores to the backward pass it overlaps with
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    else if (waited < spin_for)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void check_agreement(Group& g, std::string_view op, const std::string& description) {
  if (!g.uses_mpi || !g.options.check_agreement) return;
  // One all-reduce finds both the largest hash and (as the largest complement) the smallest.
  const uint64_t h = fingerprint(description);
  std::array<uint64_t, 2> mine = {h, ~h}, extremes = {};
  MPI_Request request;
  check_mpi(MPI_Iallreduce(mine.data(), extremes.data(), 2, MPI_UINT64_T, MPI_MAX, g.comm, &request), op);
  wait(g, request, description + " (agreement check)");
  if (extremes[0] == ~extremes[1]) return;

  // They disagree: every rank learns every rank's description and throws the same error.
  constexpr size_t kWidth = 256;
  std::vector<char> all(kWidth * static_cast<size_t>(g.size));
  std::array<char, kWidth> own = {};
  std::strncpy(own.data(), description.c_str(), kWidth - 1);
  check_mpi(MPI_Iallgather(own.data(), kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, g.comm, &request), op);
  wait(g, request, description + " (agreement check)");
  std::map<std::string, std::vector<int>> ranks_of;
  for (int r = 0; r < g.size; ++r) ranks_of[std::string(&all[kWidth * static_cast<size_t>(r)])].push_back(r);
  std::string listing;
  for (const auto& [text, ranks] : ranks_of) {
    listing += "\n  ranks";
    for (int r : ranks) listing += ef::detail::str(" ", r);
    listing += ": " + text;
  }
  fail(op, ": the ranks called collectives that disagree (rank ", g.rank, " called ", description,
       "); every rank must call the same collectives in the same order with the same dtypes and shapes:",
       listing);
}

void divide_in_place(const Tensor& x, int n) {
  void* data = const_cast<void*>(x.raw_data());
  const int64_t count = x.num_elements();
  if (x.dtype() == DType::Float32) {
    float* p = static_cast<float*>(data);
    for (int64_t i = 0; i < count; ++i) p[i] /= static_cast<float>(n);
  } else {
    double* p = static_cast<double*>(data);
    for (int64_t i = 0; i < count; ++i) p[i] /= n;
  }
}

MPI_Datatype mpi_type(DType dtype, std::string_view op) {
  switch (dtype) {
    case DType::Float32:
      return MPI_FLOAT;
    case DType::Float64:
      return MPI_DOUBLE;
    case DType::Int32:
      return MPI_INT32_T;
    case DType::Int64:
      return MPI_INT64_T;
    default:
      fail<UnimplementedError>(op, ": dtype ", dtype, " is not supported (float32, float64, int32, int64)");
  }
}

}  // namespace detail

using detail::Group;

void init(const Options& options) {
  Group& g = detail::the_group();
  if (!(options.timeout_seconds > 0))
    fail("distribute::init: timeout_seconds must be positive, got ", options.timeout_seconds);
  std::lock_guard lock(g.mutex);
  if (g.finalized)
    fail<FailedPreconditionError>("distribute::init: the group was finalized; it cannot start again");
  g.options = options;
  if (g.initialized) return;
  int mpi_ready = 0;
  MPI_Initialized(&mpi_ready);
  if (!mpi_ready && !detail::launched_by_mpi()) {  // a group of one
    g.initialized = true;
    return;
  }
  if (!mpi_ready) {
    int provided = 0;
    detail::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    g.owns_mpi = true;
    std::atexit(detail::finalize_at_exit);
  }
  detail::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &g.comm), "MPI_Comm_dup");
  MPI_Comm_rank(g.comm, &g.rank);
  MPI_Comm_size(g.comm, &g.size);
  MPI_Comm local;
  detail::check_mpi(MPI_Comm_split_type(g.comm, MPI_COMM_TYPE_SHARED, g.rank, MPI_INFO_NULL, &local),
                    "MPI_Comm_split_type");
  MPI_Comm_rank(local, &g.local_rank);
  MPI_Comm_free(&local);
  g.uses_mpi = true;
  g.initialized = true;
  std::set_terminate(detail::terminate_job);
}

bool initialized() { return detail::the_group().initialized; }
int rank() { return detail::group("distribute::rank").rank; }
int size() { return detail::group("distribute::size").size; }
int local_rank() { return detail::group("distribute::local_rank").local_rank; }
const Options& options() { return detail::group("distribute::options").options; }

void set_options(const Options& options) {
  Group& g = detail::group("distribute::set_options");
  if (!(options.timeout_seconds > 0))
    fail("distribute::set_options: timeout_seconds must be positive, got ", options.timeout_seconds);
  std::lock_guard lock(g.mutex);
  g.options = options;
}

void finalize() {
  Group& g = detail::the_group();
  detail::stop_communication_thread(g);
  std::lock_guard lock(g.mutex);
  if (!g.initialized || g.finalized) return;
  g.finalized = true;
  if (!g.uses_mpi) return;
  int mpi_done = 0;
  MPI_Finalized(&mpi_done);
  if (mpi_done) return;
  MPI_Comm_free(&g.comm);
  if (g.owns_mpi) MPI_Finalize();
}

void abort(const std::string& message, int code) {
  const Group& g = detail::the_group();
  std::fprintf(stderr, "eagerflow.distribute: rank %d of %d: %s; ending the job\n", g.rank, g.size,
               message.c_str());
  std::fflush(stderr);
  int mpi_ready = 0, mpi_done = 0;
  MPI_Initialized(&mpi_ready);
  MPI_Finalized(&mpi_done);
  if (mpi_ready && !mpi_done) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::string_view name(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum:
      return "sum";
    case Reduction::kMean:
      return "mean";
    case Reduction::kMax:
      return "max";
    case Reduction::kMin:
      return "min";
  }
  return "?";
}

Reduction reduction_from_name(std::string_view text) {
  for (Reduction r : {Reduction::kSum, Reduction::kMean, Reduction::kMax, Reduction::kMin})
    if (name(r) == text) return r;
  fail("distribute: unknown reduction '", text, "' (sum, mean, max, min)");
}

}  // namespace ef::distribute
