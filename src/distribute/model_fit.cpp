// Keras' fit with one replica per process (Note [distributed fit] in
// eagerflow/distribute/model_fit.h).
#include "eagerflow/distribute/model_fit.h"

#include "distribute/process_group.h"
#include "eagerflow/distribute/gradient_sync.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "nn/validation_split.h"

namespace ef::distribute {
namespace {

// Rows begin, begin + step, ... of t (count of them).
Tensor every_nth_row(const Tensor& t, int64_t begin, int64_t step, int64_t count) {
  return gather(t, range(begin, begin + step * count, step, DType::Int64), 0);
}

// Rows [first, first + count) of t.
Tensor rows(const Tensor& t, int64_t first, int64_t count) {
  std::vector<int64_t> begin(static_cast<size_t>(t.rank()), 0), size(static_cast<size_t>(t.rank()), -1);
  begin[0] = first;
  size[0] = count;
  return slice(t, begin, size);
}

// Every float variable of `variables` replaced by its mean over the ranks, in one collective.
void average(const std::vector<Variable>& variables) {
  std::vector<Variable> floats;
  std::vector<Tensor> values;
  for (const Variable& v : variables)
    if (is_floating(v.dtype())) {
      floats.push_back(v);
      values.push_back(v.value());
    }
  if (floats.empty()) return;
  const std::vector<Tensor> means = all_reduce_many(values, Reduction::kMean);
  for (size_t i = 0; i < floats.size(); ++i) floats[i].assign(means[i]);
}

// The model's traced steps hold the all-reduces: they are traced afresh for the
// distributed fit and forgotten after it, whichever way it ends.
struct DistributedRun {
  nn::Model& model;
  explicit DistributedRun(nn::Model& m) : model(m) { model.reset_step_functions(); }
  ~DistributedRun() { model.reset_step_functions(); }  // the traces hold the all-reduces
};

// Runs fit(options) as this rank's replica (Note [distributed fit]): from rank 0's
// weights, gradients averaged, the ReplicaCallback first, progress on rank 0 only.
std::shared_ptr<nn::callbacks::History> fit_as_replica(
    nn::Model& model, nn::FitOptions options,
    const std::function<std::shared_ptr<nn::callbacks::History>(nn::FitOptions)>& fit) {
  if (rank() != 0) options.verbose = 0;
  options.callbacks.insert(options.callbacks.begin(), std::make_shared<ReplicaCallback>());
  broadcast_variables(model.variables());
  const DistributedRun run(model);
  const GradientSync sync(model.trainable_variables());
  return fit(std::move(options));
}

}  // namespace

void ReplicaCallback::on_epoch_begin(int, const nn::Logs&) { global_.clear(); }

void ReplicaCallback::on_train_batch_end(int64_t, const nn::Logs&) {
  nn::Model& m = model();
  average(m.non_trainable_variables());
  // Each metric's state summed over the ranks, its result read from the sums, its own
  // state put back (the next step adds to this rank's part only).
  const auto metrics = m.logged_metrics();
  std::vector<Tensor> states;
  for (const auto& [name, metric] : metrics)
    for (const Variable& v : metric->variables()) states.push_back(v.value());
  const std::vector<Tensor> sums = all_reduce_many(states, Reduction::kSum);
  size_t k = 0;
  for (const auto& [name, metric] : metrics) {
    std::vector<Variable> variables = metric->variables();
    for (size_t i = 0; i < variables.size(); ++i) variables[i].assign(sums[k + i]);
    global_[name] = metric->result().item<double>();
    for (size_t i = 0; i < variables.size(); ++i) variables[i].assign(states[k + i]);
    k += variables.size();
  }
}

void ReplicaCallback::on_epoch_end(int, nn::Logs& logs) {
  for (const auto& [name, value] : global_) logs[name] = value;
}

std::shared_ptr<nn::callbacks::History> fit(nn::Model& model, const std::vector<Tensor>& x,
                                            const std::vector<Tensor>& y, nn::FitOptions options) {
  const detail::Group& g = detail::group("distribute::fit");
  const int ranks = g.size;
  if (x.empty() || y.empty())
    fail("distribute::fit: give x and y (", x.size(), " and ", y.size(), " tensors)");
  int64_t examples = x[0].rank() ? x[0].shape()[0] : -1;
  for (const std::vector<Tensor>* list : {&x, &y})
    for (const Tensor& t : *list)
      if (t.rank() == 0 || t.shape()[0] != examples)
        fail("distribute::fit: x and y must have the same number of examples (first dimension), got shapes ",
             x[0].shape(), " and ", t.shape());
  if (options.batch_size <= 0 || options.batch_size % ranks != 0)
    fail("distribute::fit: batch_size ", options.batch_size,
         " is the global batch and must be a positive multiple "
         "of the ",
         ranks, " ranks");

  std::optional<Tensor> weights = options.sample_weight;
  if (weights && (weights->rank() == 0 || weights->shape()[0] != examples))
    fail("distribute::fit: sample_weight has shape ", weights->shape(), " but x has ", examples, " examples");
  std::vector<Tensor> train_x = x, train_y = y;
  if (options.validation_split > 0 && options.validation_split < 1) {
    // Keras holds out the last examples, before shuffling; every rank evaluates them all.
    const int64_t kept = nn::detail::examples_kept_for_training(examples, options.validation_split);
    if (kept > 0 && kept < examples) {
      options.validation_data.clear();
      for (std::vector<Tensor>* list : {&train_x, &train_y})
        for (Tensor& t : *list) {
          options.validation_data.push_back(rows(t, kept, examples - kept));
          t = rows(t, 0, kept);
        }
      if (weights) {
        options.validation_data.push_back(rows(*weights, kept, examples - kept));
        weights = rows(*weights, 0, kept);
      }
      examples = kept;
      options.validation_split = 0;
    }
  }
  const int64_t per_rank = examples / ranks;
  if (per_rank == 0)
    fail("distribute::fit: ", examples, " training examples cannot be shared by ", ranks, " ranks");
  for (std::vector<Tensor>* list : {&train_x, &train_y})
    for (Tensor& t : *list) t = every_nth_row(t, g.rank, ranks, per_rank);
  if (weights) options.sample_weight = every_nth_row(*weights, g.rank, ranks, per_rank);
  options.batch_size /= ranks;
  // A model not built yet is built on one example, its new variables taking rank 0's
  // values as they are created.
  if (model.variables().empty()) {
    std::vector<Tensor> one_example;
    for (const Tensor& t : train_x) one_example.push_back(rows(t, 0, 1));
    const MirroredScope mirrored;
    model.call_all(one_example);
  }
  return fit_as_replica(model, options,
                        [&](nn::FitOptions o) { return model.fit(train_x, train_y, std::move(o)); });
}

std::shared_ptr<nn::callbacks::History> fit(nn::Model& model, const data::Dataset& dataset,
                                            nn::FitOptions options) {
  const detail::Group& g = detail::group("distribute::fit");
  if (model.variables().empty())
    fail<FailedPreconditionError>("distribute::fit: build model '", model.name(),
                                  "' (call it once) before training it on a Dataset");
  // Each batch is shared: rank r takes its rows r, r + n, ... (a last, smaller batch
  // gives some ranks one row fewer).
  const int rank = g.rank, ranks = g.size;
  const data::Dataset shared = dataset.map([rank, ranks](const data::Element& batch) {
    data::Element mine;
    for (const Tensor& t : batch) {
      const int64_t batch_rows = t.rank() ? t.shape()[0] : 0;
      if (batch_rows < ranks)
        fail("distribute::fit: a batch of ", batch_rows, " examples (shape ", t.shape(),
             ") cannot be shared by ", ranks, " ranks");
      mine.push_back(every_nth_row(t, rank, ranks, (batch_rows - rank + ranks - 1) / ranks));
    }
    return mine;
  });
  return fit_as_replica(model, options, [&](nn::FitOptions o) { return model.fit(shared, std::move(o)); });
}

}  // namespace ef::distribute
