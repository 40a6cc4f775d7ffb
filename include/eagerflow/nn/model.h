// Model: a Layer made of layers that knows how to train itself (Keras' compile / fit /
// evaluate / predict), on the same tape, optimizers, metrics and Dataset as a custom
// training loop.
//
//   ef::nn::Sequential model;                      // a Model
//   model.add(ef::nn::Dense(64, {.activation = "relu"}));
//   model.add(ef::nn::Dense(10));
//   model.compile({.optimizer = std::make_shared<ef::optim::Adam>(1e-3),
//                  .loss = std::make_shared<ef::nn::losses::SparseCategoricalCrossentropy>(
//                      ef::nn::losses::LossOptions{.from_logits = true}),
//                  .metrics = {std::make_shared<ef::nn::metrics::SparseCategoricalAccuracy>()}});
//   auto history = model.fit(images, labels, {.epochs = 5, .validation_split = 0.1});
//   ef::nn::Logs test = model.evaluate(test_images, test_labels);
//
// Note [fit runs a function]: as in Keras, fit's training step is an ef::function by
// default (traced once per batch shape; variables, optimizer slots and counters are
// created on the first trace: Note [variables created by functions]), or runs eagerly
// with run_eagerly. Both give the same numbers. train_step and test_step are the
// customisation path: override them to change what one step does.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagerflow/data/dataset.h"
#include "eagerflow/graph/function.h"
#include "eagerflow/nn/callbacks.h"
#include "eagerflow/nn/layer.h"
#include "eagerflow/nn/losses.h"
#include "eagerflow/nn/metrics.h"
#include "eagerflow/optim/optimizer.h"

namespace ef::nn {

struct CompileOptions {
  std::shared_ptr<optim::Optimizer> optimizer;
  std::shared_ptr<losses::Loss> loss;
  std::vector<std::shared_ptr<metrics::Metric>> metrics;
  bool run_eagerly = false;  // train and test steps run eagerly instead of as functions
  bool jit_compile = false;  // the step functions compile their fused kernels
  // Models of several outputs (Note [several inputs and outputs]): a loss per output
  // (empty: `loss` for each), the weights of their sum (empty: 1 each), and metrics per
  // output (empty: none; `metrics` is for single-output models).
  std::vector<std::shared_ptr<losses::Loss>> output_losses;
  std::vector<double> loss_weights;
  std::vector<std::vector<std::shared_ptr<metrics::Metric>>> output_metrics;
  // Keras' weighted_metrics: these see the batch's sample weights (class weights folded
  // in); `metrics` and `output_metrics` see none, as in Keras. A weighted metric whose
  // name an unweighted one has is logged as "weighted_<name>".
  std::vector<std::shared_ptr<metrics::Metric>> weighted_metrics;
  std::vector<std::vector<std::shared_ptr<metrics::Metric>>> output_weighted_metrics;
};

// Note [several inputs and outputs]: a model of k inputs and m outputs (a Functional)
// trains on batches (x_1, ..., x_k, y_1, ..., y_m[, sample_weight]): fit and evaluate
// take lists, a Dataset gives such flat elements. Its loss is the weighted sum of the
// outputs' losses; the logs hold "loss", "<output>_loss" for each output and
// "<output>_<metric>" for each output's metrics, <output> naming the layer that gives
// it (Keras' names).

struct FitOptions {
  int64_t batch_size = 32;  // for tensors; a Dataset is already batched
  int epochs = 1;
  // 0: silent, 1: a progress bar per epoch, 2: one line per epoch; -1 (auto): 1 on a
  // terminal, 2 otherwise.
  int verbose = -1;
  std::vector<std::shared_ptr<callbacks::Callback>> callbacks;
  // The last fraction of x and y (before shuffling) is held out for validation.
  double validation_split = 0;
  // (x, y) or (x, y, sample_weight), or a batched Dataset of such elements.
  std::vector<Tensor> validation_data;
  std::optional<data::Dataset> validation_dataset;
  bool shuffle = true;  // each epoch, for tensors
  std::optional<int64_t> seed;
  int initial_epoch = 0;
  std::optional<int64_t> steps_per_epoch;  // default: one pass over the data
  std::optional<Tensor> sample_weight;     // per example, for tensors
  std::map<int64_t, double> class_weight;  // per class id, multiplies sample weights
};

class Model : public Layer {
 public:
  explicit Model(std::string name = "model") : Layer(std::move(name)) {}

  // Sets the optimizer, loss and metrics. Throws InvalidArgumentError without an
  // optimizer or a loss.
  void compile(CompileOptions options);
  bool compiled() const { return compiled_.has_value(); }
  const CompileOptions& compile_options() const;

  // Trains on x and y (the first dimension indexes examples) or on a Dataset of
  // (x, y) / (x, y, sample_weight) batches. Returns the History.
  std::shared_ptr<callbacks::History> fit(const Tensor& x, const Tensor& y, FitOptions options = {},
                                          CallSite where = CallSite::current());
  std::shared_ptr<callbacks::History> fit(const data::Dataset& dataset, FitOptions options = {},
                                          CallSite where = CallSite::current());
  // A model of several inputs or outputs (Note [several inputs and outputs]).
  std::shared_ptr<callbacks::History> fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y,
                                          FitOptions options = {}, CallSite where = CallSite::current());
  // The loss and metrics over the data (batches of batch_size), training off;
  // sample_weight (per example) weighs the loss and the weighted metrics.
  Logs evaluate(const Tensor& x, const Tensor& y, int64_t batch_size = 32, int verbose = 0,
                const std::vector<std::shared_ptr<callbacks::Callback>>& callbacks = {},
                const std::optional<Tensor>& sample_weight = std::nullopt,
                CallSite where = CallSite::current());
  Logs evaluate(const data::Dataset& dataset, int verbose = 0,
                const std::vector<std::shared_ptr<callbacks::Callback>>& callbacks = {},
                CallSite where = CallSite::current());
  Logs evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, int64_t batch_size = 32,
                int verbose = 0, const std::vector<std::shared_ptr<callbacks::Callback>>& callbacks = {},
                const std::optional<Tensor>& sample_weight = std::nullopt,
                CallSite where = CallSite::current());
  // The model's outputs for x, computed batch by batch and concatenated.
  Tensor predict(const Tensor& x, int64_t batch_size = 32, CallSite where = CallSite::current());
  // Every output, for models of several inputs or outputs.
  std::vector<Tensor> predict_all(const std::vector<Tensor>& x, int64_t batch_size = 32,
                                  CallSite where = CallSite::current());

  // How many tensors the model takes and gives: 1 and 1 unless it says otherwise
  // (Functional), and the outputs' names in logs (Note [several inputs and outputs]).
  virtual size_t input_count() const { return 1; }
  virtual size_t output_count() const { return 1; }
  virtual std::vector<std::string> output_names() const { return {name()}; }
  // One step on one batch; returns the step's loss and metrics (the metrics are reset
  // first, as Keras' reset_metrics=True).
  Logs train_on_batch(const Tensor& x, const Tensor& y,
                      const std::optional<Tensor>& sample_weight = std::nullopt,
                      CallSite where = CallSite::current()) {
    return on_batch(true, x, y, sample_weight, where);
  }
  Logs test_on_batch(const Tensor& x, const Tensor& y,
                     const std::optional<Tensor>& sample_weight = std::nullopt,
                     CallSite where = CallSite::current()) {
    return on_batch(false, x, y, sample_weight, where);
  }

  // Set by a callback to end fit after the current epoch.
  bool stop_training = false;

  // Keras' table: each layer (tracked child module) with its output shape (for a model
  // that has been called: known for Sequential, "?" where the layer's shape cannot be
  // worked out alone) and parameter count, then the totals.
  // `type_name` names each layer's class (default: its C++ class name).
  std::string summary(int line_length = 72,
                      const std::function<std::string(const Module&)>& type_name = nullptr) const;

  // The compiled loss of one batch: the loss plus the model's regularization (none yet).
  Tensor compute_loss(const Tensor& y_true, const Tensor& y_pred, const std::optional<Tensor>& sample_weight);
  // The same for several outputs: the weighted sum, and each output's loss in
  // `output_losses` when given. An output's mask (`masks`, Note [masks]) weighs its
  // per-step losses as Keras does: masked steps count for nothing, and an averaging loss
  // averages over the real steps only.
  Tensor compute_loss(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred,
                      const std::optional<Tensor>& sample_weight,
                      std::vector<Tensor>* output_losses = nullptr,
                      const std::vector<std::optional<Tensor>>& masks = {});
  // The mask of each output of the model's latest call (Note [masks]; none where an
  // output has none, and none for a subclassed model): fit's and evaluate's steps weigh
  // an output's loss and metrics by it, as Keras does.
  const std::vector<std::optional<Tensor>>& output_masks() const { return output_masks_; }
  // The compiled metrics: reset, and their current results (with "loss").
  void reset_metrics();
  std::map<std::string, Tensor> metric_results() const;
  // Every compiled metric with the name of its result in the logs: the loss tracker
  // ("loss"), each output's loss tracker, then the metrics (empty before compile).
  // metric_results() reads them; a distributed fit sums their states over the ranks.
  std::vector<std::pair<std::string, std::shared_ptr<metrics::Metric>>> logged_metrics() const;
  // Forgets the traced train and test steps (Note [fit runs a function]): the next fit
  // or evaluate traces them again, for a change their trace cannot see (gradients
  // synchronized over processes, say).
  void reset_step_functions();

 protected:
  // One training step on `batch` ((x, y) or (x, y, sample_weight)): forward under a
  // tape, compiled loss, gradients, the optimizer's update, the metrics. Returns the
  // running metric results by name. Runs inside an ef::function unless run_eagerly.
  virtual std::map<std::string, Tensor> train_step(const data::Element& batch);
  // One evaluation step: forward (training off), loss, metrics.
  virtual std::map<std::string, Tensor> test_step(const data::Element& batch);
  // Kept by a call of a Sequential or functional model for output_masks().
  void set_output_masks(std::vector<std::optional<Tensor>> masks) { output_masks_ = std::move(masks); }

 private:
  // A step traced as a function (Note [fit runs a function]) and the names of its
  // outputs, in order (set by its trace).
  struct StepFunction {
    Function function;
    std::shared_ptr<std::vector<std::string>> names;
  };
  struct Compiled {
    CompileOptions options;
    std::shared_ptr<metrics::Mean> loss_tracker;
    std::vector<std::shared_ptr<metrics::Mean>> output_loss_trackers;  // several outputs only
    std::vector<std::string> output_names;
    // Every compiled metric with its logged name, in Keras' order: the unweighted ones,
    // then the weighted ones.
    struct NamedMetric {
      std::string name;
      std::shared_ptr<metrics::Metric> metric;
      size_t output;  // the output whose targets and predictions it sees
      bool weighted;  // sees the sample weights
    };
    std::vector<NamedMetric> metrics;
    std::optional<StepFunction> train_function, test_function;
  };
  // The loss tracker and the metrics, updated with one batch's results.
  void update_metrics(const data::Element& batch, const Tensor& y_pred, const Tensor& loss);
  // The parts of a batch (Note [several inputs and outputs]), checked.
  struct BatchParts {
    std::vector<Tensor> x, y;
    std::optional<Tensor> sample_weight;
  };
  BatchParts split_batch(const data::Element& batch, const char* step) const;
  // The forward pass on a batch's inputs: every output, and in `masks` (when given)
  // each output's mask.
  std::vector<Tensor> forward(const std::vector<Tensor>& x, bool training,
                              std::vector<std::optional<Tensor>>* masks = nullptr);
  void update_all_metrics(const BatchParts& parts, const std::vector<Tensor>& y_pred, const Tensor& loss,
                          const std::vector<Tensor>& output_losses,
                          const std::vector<std::optional<Tensor>>& masks);
  std::map<std::string, Tensor> run_step(bool training, const data::Element& batch);
  Logs on_batch(bool training, const Tensor& x, const Tensor& y, const std::optional<Tensor>& sample_weight,
                CallSite where);
  Logs run_evaluation(const data::Dataset& dataset, int verbose,
                      const std::vector<std::shared_ptr<callbacks::Callback>>& callbacks, bool notify);
  Compiled& compiled(const char* what);
  std::optional<Compiled> compiled_;
  std::vector<std::optional<Tensor>> output_masks_;
};

}  // namespace ef::nn
