// The process group behind ef::distribute: MPI's state, bounded waits and the
// agreement check that every collective runs first (Note [collectives never hang] in
// eagerflow/distribute/distribute.h). Internal to the distribute library.
#pragma once

#include <mpi.h>

#include <mutex>
#include <string>
#include <string_view>

#include "eagerflow/core/dtype.h"
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
};

// The group after init(); throws FailedPreconditionError naming `op` before init() or
// after finalize().
Group& group(std::string_view op);

// Waits for `request` to complete, polling it (so MPI makes progress); past the
// group's timeout it ends the job, naming this rank and `what`.
void wait(Group& g, MPI_Request& request, std::string_view what);

// Compares `description` (op, attrs, dtype, shape) across the ranks, by a hash; when
// they differ, every rank throws InvalidArgumentError naming `op` and each rank's
// description. Skipped when Options::check_agreement is off.
void check_agreement(Group& g, std::string_view op, const std::string& description);

// MPI's datatype for `dtype`; UnimplementedError naming `op` for the others.
MPI_Datatype mpi_type(DType dtype, std::string_view op);

}  // namespace ef::distribute::detail
