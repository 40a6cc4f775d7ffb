// ef::distribute: data-parallel training across processes on MPI (CPU tensors).
//
//   // mpirun -np 2 ./train
//   ef::distribute::init();                       // rank and size from the launcher
//   ef::GradientTape tape;
//   ef::Tensor loss = loss_of(model, my_shard_of(batch));
//   auto grads = tape.gradient(loss, variables);
//   for (auto& g : grads) g = ef::distribute::all_reduce(g, ef::distribute::Reduction::kMean);
//   optimizer.apply_gradients(grads, variables);  // every rank takes the same step
//
// A process started without a launcher is a group of one: init() does not touch MPI,
// and every collective returns its input's values. The collectives are ops (stateful
// OpDefs), so tapes record them, graphs and ef::function hold them, and they are
// differentiable where the math says so (Note [collective gradients] in
// src/distribute/collectives.cpp). This library is separate from libeagerflow (target
// eagerflow::distribute) so that programs that do not distribute never load libmpi.
//
// Note [collectives never hang]: before each collective the ranks compare a fingerprint
// of (op, reduction or root, dtype, shape); ranks that disagree all get an
// InvalidArgumentError naming the op and each rank's dtype and shape. Every MPI call is
// nonblocking and polled against Options::timeout_seconds: a rank that waits longer
// (another rank skipped the collective, died, or hangs) ends the whole job through
// MPI_Abort with a message naming itself and the op. An uncaught exception on any rank
// also ends the job (std::terminate → MPI_Abort), so no rank is left waiting.
#pragma once

#include <string>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable_creation.h"

namespace ef::distribute {

// How all_reduce and reduce_scatter combine the ranks' values. kMean divides the sum
// by size() and needs a floating dtype.
enum class Reduction { kSum, kMean, kMax, kMin };

// "sum", "mean", "max", "min".
std::string_view name(Reduction reduction);
// The reduction called `text`; throws InvalidArgumentError naming the valid ones.
Reduction reduction_from_name(std::string_view text);

struct Options {
  // How long one collective may wait for the other ranks before the job is ended.
  double timeout_seconds = 300;
  // Compare each collective's fingerprint across ranks first (one 16-byte all-reduce).
  bool check_agreement = true;
};

// Joins the process group the launcher started (mpirun/srun with OpenMPI or PMIx), or
// forms a group of one when there is none. Calls MPI_Init unless MPI is initialized
// already (mpi4py, say), and MPI_Finalize at exit only when it initialized MPI itself.
// Called again, it only replaces the options. Throws InvalidArgumentError for a timeout
// that is not positive.
void init(const Options& options = {});
// Whether init() has run.
bool initialized();
// This process's rank in [0, size()), the number of processes, and its rank among
// the processes of its machine. Throw FailedPreconditionError before init().
int rank();
int size();
int local_rank();
// The options in force; set_options changes them for later collectives (every rank
// should set the same).
const Options& options();
void set_options(const Options& options);
// Leaves the group (MPI_Finalize when init() initialized MPI). Collectives afterwards
// throw FailedPreconditionError. Called at exit when not called before.
void finalize();
// Ends every rank of the job now with `message` (on stderr) and exit code `code`.
[[noreturn]] void abort(const std::string& message, int code = 1);

// Every rank gets the reduction of all ranks' x (same dtype and shape on every rank).
// float32, float64, int32, int64; kMean needs a float dtype. The gradient of kSum and
// kMean is the same all_reduce of the gradients; kMax and kMin send each rank's
// gradient sum to the ranks holding the extremum (split evenly among ties).
Tensor all_reduce(const Tensor& x, Reduction reduction = Reduction::kSum,
                  CallSite where = CallSite::current());
// all_reduce of each tensor, fused: the tensors of one dtype travel flattened in one
// collective (Horovod's tensor fusion), which saves a collective's fixed cost per tensor
// for a model's many small gradients. Undefined tensors stay undefined (every rank must
// pass the same list). Differentiable as all_reduce.
std::vector<Tensor> all_reduce_many(const std::vector<Tensor>& xs, Reduction reduction = Reduction::kSum,
                                    CallSite where = CallSite::current());
// Every rank gets rank `root`'s x (same dtype and shape on every rank). The gradient
// sums the ranks' gradients on root (zeros elsewhere).
Tensor broadcast(const Tensor& x, int root = 0, CallSite where = CallSite::current());
// The ranks' x concatenated along axis 0 in rank order: shape [size * n, ...] for x of
// shape [n, ...] on every rank (not a scalar). Its gradient is reduce_scatter(kSum).
Tensor all_gather(const Tensor& x, CallSite where = CallSite::current());
// Reduces the ranks' x and gives rank r the r-th of size() equal slices along axis 0:
// x of shape [size * n, ...] gives [n, ...]. Its gradient (kSum, kMean) is all_gather.
Tensor reduce_scatter(const Tensor& x, Reduction reduction = Reduction::kSum,
                      CallSite where = CallSite::current());
// Returns once every rank has called it (bounded by the timeout, like a collective).
void barrier();

// Assigns every variable rank `root`'s value (Horovod's broadcast_variables): replicas
// that start as one. Every rank passes the same variables in the same order.
void broadcast_variables(const std::vector<Variable>& variables, int root = 0);

// While it lives, every variable created on this thread starts with rank 0's initial
// value on every rank (broadcast as it is created, Note [variable creation hooks]), so
// replicas start identical even when initializers are random: MultiWorkerMirroredStrategy's
// scope(). Every rank must create the same variables in the same order. Throws
// FailedPreconditionError before init().
class MirroredScope {
 public:
  MirroredScope();

 private:
  VariableCreationHook hook_;
};

}  // namespace ef::distribute
