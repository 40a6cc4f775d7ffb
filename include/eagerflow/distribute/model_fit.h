// Keras' fit with one replica per process (MultiWorkerMirroredStrategy's model.fit):
//
//   // mpirun -np 2 ./train
//   ef::distribute::init();
//   model.compile(...);
//   auto history = ef::distribute::fit(model, x, y, {.batch_size = 64, .epochs = 5});
//
// Note [distributed fit]: every rank passes the whole data. Rank r trains on examples
// r, r + n, r + 2n, ... (n ranks; the last examples that would make the shards unequal
// are left out) with batches of batch_size / n, so that one step of the n ranks covers
// batch_size consecutive examples: without shuffling, n ranks take exactly the steps
// one process takes with batch_size. The model starts from rank 0's weights; its
// gradients are averaged during the backward pass (GradientSync), its non-trainable
// variables (batch norm's moving statistics) averaged after every step, and the
// training logs that callbacks and the History see at each epoch's end are the ones of
// all ranks together: each compiled metric's state summed over the ranks (exact for
// every metric, the loss included). Validation data is evaluated whole on every rank.
// Only rank 0 prints progress. A Dataset of batches is shared batch by batch the same
// way: rank r takes rows r, r + n, ... of each batch.
#pragma once

#include <memory>
#include <vector>

#include "eagerflow/distribute/distribute.h"
#include "eagerflow/nn/model.h"

namespace ef::distribute {

// Model::fit of this rank's shard (Note [distributed fit]). options.batch_size is the
// global batch: it must be a multiple of size(). validation_split holds out the last
// examples of the whole data before sharding. Throws InvalidArgumentError for a
// batch_size that does not divide, x and y of different lengths, or fewer examples than
// ranks.
std::shared_ptr<nn::callbacks::History> fit(nn::Model& model, const std::vector<Tensor>& x,
                                            const std::vector<Tensor>& y, nn::FitOptions options = {});
// Model::fit on a Dataset of batches, every rank passing the same one: rank r trains on
// rows r, r + n, ... of each batch (a batch is the global batch; a last, smaller one
// gives some ranks a row fewer). Throws FailedPreconditionError for a model that is not
// built yet, and InvalidArgumentError (while iterating) for a batch smaller than size().
std::shared_ptr<nn::callbacks::History> fit(nn::Model& model, const data::Dataset& dataset,
                                            nn::FitOptions options = {});

// The callback behind fit's agreement between ranks: after every training step it
// averages the model's non-trainable float variables over the ranks and computes the
// compiled metrics' results over all ranks, which it writes into the training entries
// of the epoch's logs. Every rank must train in step. Usable with Model::fit on data the
// caller sharded.
class ReplicaCallback : public nn::callbacks::Callback {
 public:
  void on_epoch_begin(int epoch, const nn::Logs& logs) override;
  void on_train_batch_end(int64_t batch, const nn::Logs& logs) override;
  void on_epoch_end(int epoch, nn::Logs& logs) override;

 private:
  nn::Logs global_;  // the training results over all ranks after the last step
};

}  // namespace ef::distribute
