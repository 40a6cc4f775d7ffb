// GradientSync: every rank's gradients of some variables are all-reduced while the
// backward pass is still running (PyTorch DistributedDataParallel's buckets, Horovod's
// tensor fusion), so that a training step looks like a single process's:
//
//   ef::distribute::init();
//   ef::distribute::GradientSync sync(model.trainable_variables());   // mean by default
//   ef::GradientTape tape;
//   ef::Tensor loss = loss_of(model, my_shard_of(batch));
//   auto grads = tape.gradient(loss, model.trainable_variables());      // averaged over the ranks
//   optimizer.apply_gradients(grads, model.trainable_variables());
//
// Note [gradient buckets]: GradientSync is a gradient hook (Note [gradient hooks] in
// eagerflow/autodiff/gradient_hooks.h). Each gradient() call splits the variables it
// asks for into buckets: last to first (the order in which a backward pass roughly
// finishes them), one dtype per bucket, a bucket closed once it holds bucket_cap_mb (the
// first one at 1 MB, as PyTorch's, so that communication starts early).
// The buckets depend only on the variables, so every rank makes the same ones. As the
// backward pass finishes each variable's gradient it goes into its bucket; a bucket
// whose gradients are all final, and whose predecessors were sent, is flattened into
// one buffer (with one flag per variable saying whether this rank has a gradient for
// it) and all-reduced on the communication thread while the backward pass goes on.
// gradient() returns once the last bucket is reduced. A variable no rank has a gradient
// for stays undefined; one that only some ranks have is reduced with zeros for the
// others (a rank whose loss skips a layer still takes part). Each bucket's contents are
// compared across ranks before it is reduced (the agreement check of Note [collectives
// never hang]): ranks that synchronize different variables get an error naming them.
// float16 and bfloat16 gradients travel as float32.
//
// Traced into an ef::function (Keras fit's compiled steps), a bucket's all-reduce is
// two ops placed so that it still overlaps with the rest of the backward pass (Note
// [buckets in functions] in src/distribute/gradient_sync.cpp). Where the backward pass
// is itself recorded (by an outer tape or forward accumulator), the buckets are
// all_reduce ops on the calling thread instead: differentiable, without the overlap.
#pragma once

#include <memory>
#include <vector>

#include "eagerflow/autodiff/gradient_hooks.h"
#include "eagerflow/distribute/distribute.h"

namespace ef::distribute {

struct GradientSyncOptions {
  // kMean (PyTorch DDP, Keras fit under a strategy) or kSum (TensorFlow's custom loops,
  // whose loss is divided by the global batch size).
  Reduction reduction = Reduction::kMean;
  // A bucket is sent once it holds this many megabytes (2^20 bytes) of gradients.
  double bucket_cap_mb = 25;
};

// What the last synchronized gradient() call cost (eager backward passes only).
struct GradientSyncStats {
  int buckets = 0;
  int64_t bytes = 0;                 // all-reduced, per rank
  double communication_seconds = 0;  // the buckets' all-reduces, end to end
  double exposed_seconds = 0;        // of which gradient() waited for after the backward pass
};

class GradientSync {
 public:
  // Synchronizes the gradients of `variables` (each in at most one GradientSync) from
  // now until destroyed. Throws FailedPreconditionError before init(), and
  // InvalidArgumentError for kMax/kMin or a cap that is not positive.
  explicit GradientSync(const std::vector<Variable>& variables, GradientSyncOptions options = {});
  // Synchronizes every variable that gradient() calls on this thread differentiate (and
  // that has no GradientSync of its own) until destroyed: MultiWorkerMirroredStrategy's
  // run(), where the step's variables are not known in advance.
  static GradientSync for_this_thread(GradientSyncOptions options = {});
  GradientSync(GradientSync&&) noexcept = default;
  GradientSync& operator=(GradientSync&&) noexcept = default;

  GradientSyncStats last_stats() const;

  class Hook;  // the gradient hook (src/distribute/gradient_sync.cpp)

 private:
  explicit GradientSync(GradientSyncOptions options);

  std::shared_ptr<Hook> hook_;
  GradientHookRegistration registration_;
  std::unique_ptr<GradientHookScope> scope_;  // for_this_thread
};

}  // namespace ef::distribute
