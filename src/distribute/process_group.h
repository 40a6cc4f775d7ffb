// The process group behind ef::distribute: MPI's state, bounded waits and the
// agreement check that every collective runs first (Note [collectives never hang] in
// eagerflow/distribute/distribute.h). Internal to the distribute library.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "eagerflow/core/dtype.h"
#include "eagerflow/core/tensor.h"
#include "eagerflow/distribute/distribute.h"

namespace ef::distribute::detail {

struct Group {
  bool initialized = false;
  bool finalized = false;
  bool uses_mpi = false;  // false for a group of one started without a launcher
  bool owns_mpi = false;  // init() called MPI_Init, so finalize() calls MPI_Finalize
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of MPI_COMM_WORLD, ours alone
  Options options;
  // Collectives are issued one at a time: MPI runs at MPI_THREAD_SERIALIZED, and every
  // rank must issue them in the same order.
  std::mutex mutex;

  // Note [collectives in the background]: started collectives (a gradient bucket's
  // all-reduce) run on one communication thread, in the order they were started, each
  // holding `mutex`. A collective called on the caller's thread waits until every one
  // started before it has finished, so each rank issues its collectives in program
  // order whichever thread runs them.
  std::mutex queue_mutex;  // guards the members below
  std::condition_variable queue_changed;
  std::deque<std::packaged_task<void()>> queue;
  size_t started = 0;  // queued or running
  bool stopping = false;
  std::thread communication_thread;
};

// The group after init(); throws FailedPreconditionError naming `op` before init() or
// after finalize().
Group& group(std::string_view op);

// Runs `job` on the communication thread once the collectives started before it have
// run; the future reports its end (and rethrows what it threw).
std::future<void> start_in_order(Group& g, std::function<void()> job);

// Locks g.mutex once every started collective has finished: the lock under which a
// collective runs on the calling thread.
std::unique_lock<std::mutex> lock_in_order(Group& g);

// Lets the communication thread finish what was started, then ends it (finalize()).
void stop_communication_thread(Group& g);

// Waits for `request` to complete, polling it (so MPI makes progress); past the
// group's timeout it ends the job, naming this rank and `what`.
void wait(Group& g, MPI_Request& request, std::string_view what);

// Compares `description` (op, attrs, dtype, shape) across the ranks, by a hash; when
// they differ, every rank throws InvalidArgumentError naming `op` and each rank's
// description. Skipped when Options::check_agreement is off.
void check_agreement(Group& g, std::string_view op, const std::string& description);

// x /= n in place (float32 or float64, contiguous, a buffer of its own): a sum over the
// ranks made a mean.
void divide_in_place(const Tensor& x, int n);

// MPI's datatype for `dtype`; UnimplementedError naming `op` for the others.
MPI_Datatype mpi_type(DType dtype, std::string_view op);

}  // namespace ef::distribute::detail
