// Model's training API (eagerflow/nn/model.h).
#include "eagerflow/nn/model.h"

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/nn/functional.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/ops/scalar.h"
#include "eagerflow/runtime/context.h"
#include "eagerflow/utils/progbar.h"
#include "nn/sample_weight.h"
#include "nn/validation_split.h"

namespace ef::nn {
namespace {

// The first `n` examples of t, and the rest.
std::pair<Tensor, Tensor> split_examples(const Tensor& t, int64_t n) {
  std::vector<int64_t> begin(t.rank(), 0), size(t.rank(), -1);
  size[0] = n;
  Tensor head = slice(t, begin, size);
  begin[0] = n;
  size[0] = -1;
  return {head, slice(t, begin, size)};
}

// Per-example weights from sample_weight and class_weight (ids in y), or nothing.
std::optional<Tensor> example_weights(const Tensor& y, const FitOptions& options) {
  std::optional<Tensor> weights = options.sample_weight;
  if (options.class_weight.empty()) return weights;
  if (!is_integer(y.dtype()))
    fail("Model.fit: class_weight needs integer class ids in y, got dtype ", y.dtype());
  int64_t largest = 0;
  for (const auto& [id, w] : options.class_weight) {
    if (id < 0) fail("Model.fit: class_weight has the negative class id ", id);
    largest = std::max(largest, id);
  }
  const std::vector<int64_t> ids = cast(y, DType::Int64).to_vector<int64_t>();
  for (int64_t id : ids) largest = std::max(largest, id);
  std::vector<float> table(static_cast<size_t>(largest + 1), 1.0f);
  for (const auto& [id, w] : options.class_weight) table[static_cast<size_t>(id)] = static_cast<float>(w);
  Tensor per_class = gather(constant(table, Shape{static_cast<int64_t>(table.size())}).to(y.device()),
                            reshape(cast(y, DType::Int64), {-1}));
  if (y.rank() > 1) per_class = reshape(per_class, {y.shape()[0], -1});
  if (y.rank() > 1) per_class = reduce_mean(per_class, {1});
  return weights ? *weights * per_class : per_class;
}

// Note [batches go to the model's device]: fit, evaluate and predict run each step on
// the device of the model's variables, as Keras on TensorFlow copies a step's inputs to
// its device: the batch goes there, and the step runs under that device's scope (so
// what its ops make without inputs, dropout masks say, is made there too). So data read
// on the host trains a model built under a GPU device scope. (Ops themselves never copy
// between devices: they raise.) A model not built yet makes its variables in the
// current scope, so a GPU scope's batches go there; a model whose variables span
// devices places nothing. A batch already in place is not copied.
std::optional<Device> model_device(const Model& model) {
  const std::vector<Variable> vars = model.variables();
  const Device scope = Context::current().device;
  if (vars.empty()) return scope.type == DeviceType::CPU ? std::nullopt : std::optional<Device>(scope);
  const RecordingPaused unrecorded;  // looking where the values are is no use of them
  const Device first = vars.front().value().device();
  for (const Variable& v : vars)
    if (v.value().device() != first) return std::nullopt;
  return first;
}

data::Element placed_on(const data::Element& batch, const std::optional<Device>& device) {
  if (!device) return batch;
  data::Element placed = batch;
  for (Tensor& t : placed)
    if (t.device() != *device) t = t.to(*device);
  return placed;
}

int effective_verbose(int verbose) {
  if (verbose >= 0) return verbose;
  return isatty(fileno(stdout)) ? 1 : 2;
}

std::vector<std::pair<std::string, double>> progbar_values(const Logs& logs) {
  std::vector<std::pair<std::string, double>> values;
  if (auto it = logs.find("loss"); it != logs.end()) values.emplace_back("loss", it->second);
  for (const auto& [name, value] : logs)
    if (name != "loss") values.emplace_back(name, value);
  return values;
}

// "12/12 - loss: 0.1234 - accuracy: 0.9500": a pass's results, as a finished Progbar shows them.
void print_results(int64_t steps, const Logs& logs) {
  const std::string line = utils::Progbar(std::max<int64_t>(steps, 1), 30, 0, stdout, 0)
                               .render(std::max<int64_t>(steps, 1), progbar_values(logs), 0);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

Logs to_logs(const std::map<std::string, Tensor>& results) {
  Logs logs;
  for (const auto& [name, value] : results) logs[name] = cast(value, DType::Float64).item<double>();
  return logs;
}

}  // namespace

// ---- compile ----

void Model::compile(CompileOptions options) {
  if (!options.optimizer) fail("Model.compile: no optimizer given");
  const size_t outputs = output_count();
  auto check_count = [&](size_t given, const char* what) {
    if (given != 0 && given != outputs)
      fail("Model.compile: ", given, " ", what, " for model '", name(), "' of ", outputs, " output(s)");
  };
  check_count(options.output_losses.size(), "losses");
  check_count(options.loss_weights.size(), "loss weights");
  check_count(options.output_metrics.size(), "metric lists");
  check_count(options.output_weighted_metrics.size(), "weighted metric lists");
  for (const auto& loss : options.output_losses)
    if (!loss) fail("Model.compile: a loss is null");
  if (!options.loss && options.output_losses.empty()) fail("Model.compile: no loss given");
  if (outputs > 1 && (!options.metrics.empty() || !options.weighted_metrics.empty()))
    fail("Model.compile: model '", name(), "' has ", outputs,
         " outputs; give its metrics per output (output_metrics, output_weighted_metrics), not one list");
  const std::vector<std::string> output_names =
      outputs > 1 ? this->output_names() : std::vector<std::string>{};
  // Keras' names: "<output>_" before each name with several outputs, and "weighted_"
  // before a weighted metric's name that an unweighted one has.
  std::vector<Compiled::NamedMetric> named;
  auto taken = [&](const std::string& metric_name) {
    return metric_name == "loss" ||
           std::any_of(named.begin(), named.end(), [&](const auto& m) { return m.name == metric_name; });
  };
  auto add = [&](const std::shared_ptr<metrics::Metric>& metric, size_t output, bool weighted) {
    if (!metric) fail("Model.compile: a metric is null");
    const std::string prefix = outputs > 1 ? output_names[output] + "_" : "";
    std::string metric_name = prefix + metric->name();
    if (weighted && taken(metric_name)) metric_name = prefix + "weighted_" + metric->name();
    if (taken(metric_name)) fail("Model.compile: two metrics are named '", metric_name, "'");
    named.push_back({metric_name, metric, output, weighted});
  };
  for (const auto& metric : options.metrics) add(metric, 0, false);
  for (size_t i = 0; i < options.output_metrics.size(); ++i)
    for (const auto& metric : options.output_metrics[i]) add(metric, i, false);
  for (const auto& metric : options.weighted_metrics) add(metric, 0, true);
  for (size_t i = 0; i < options.output_weighted_metrics.size(); ++i)
    for (const auto& metric : options.output_weighted_metrics[i]) add(metric, i, true);
  // As Keras: under mixed_float16 the optimizer gets dynamic loss scaling (float16
  // gradients underflow without it).
  const std::optional<Policy> policy = dtype_policy();
  if (policy && policy->compute_dtype() == DType::Float16 && policy->is_mixed() &&
      !options.optimizer->loss_scaling() && options.optimizer->iterations() == 0)
    options.optimizer->enable_loss_scaling();
  Compiled c;
  c.options = std::move(options);
  c.loss_tracker = std::make_shared<metrics::Mean>("loss");
  c.output_names = output_names;
  c.metrics = std::move(named);
  for (const std::string& output : output_names)
    c.output_loss_trackers.push_back(std::make_shared<metrics::Mean>(output + "_loss"));
  compiled_ = std::move(c);
}

const CompileOptions& Model::compile_options() const {
  if (!compiled_) fail<FailedPreconditionError>("Model '", name(), "' is not compiled: call compile() first");
  return compiled_->options;
}

Model::Compiled& Model::compiled(const char* what) {
  if (!compiled_)
    fail<FailedPreconditionError>("Model.", what, ": model '", name(),
                                  "' is not compiled: call compile() first");
  return *compiled_;
}

// ---- steps ----

Tensor Model::compute_loss(const Tensor& y_true, const Tensor& y_pred,
                           const std::optional<Tensor>& sample_weight) {
  return compute_loss(std::vector<Tensor>{y_true}, std::vector<Tensor>{y_pred}, sample_weight);
}

namespace {

// The mask of output `i` when it weighs its per-step values (Note [masks]): a mask
// [batch, steps] of an output [batch, steps, units], whose per-step losses it matches.
std::optional<Tensor> per_step_mask(const std::vector<std::optional<Tensor>>& masks, size_t i,
                                    const Tensor& y_pred) {
  if (i >= masks.size() || !masks[i] || masks[i]->rank() + 1 != y_pred.rank()) return std::nullopt;
  return masks[i];
}

// The dtype of a loss or metric's weights: its values' (half predictions give float32).
DType weight_dtype(const Tensor& y_pred) {
  return y_pred.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
}

}  // namespace

Tensor Model::compute_loss(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred,
                           const std::optional<Tensor>& sample_weight, std::vector<Tensor>* output_losses,
                           const std::vector<std::optional<Tensor>>& masks) {
  const CompileOptions& o = compiled("compute_loss").options;
  if (y_true.size() != y_pred.size() || y_pred.empty())
    fail("Model.compute_loss: ", y_true.size(), " targets for ", y_pred.size(), " outputs");
  if (!o.output_losses.empty() && o.output_losses.size() != y_pred.size())
    fail("Model.compute_loss: ", y_pred.size(), " outputs for ", o.output_losses.size(), " compiled losses");
  Tensor total;
  for (size_t i = 0; i < y_pred.size(); ++i) {
    const losses::Loss& loss = o.output_losses.empty() ? *o.loss : *o.output_losses[i];
    const std::optional<Tensor> mask = per_step_mask(masks, i, y_pred[i]);
    const Tensor value =
        loss(y_true[i], y_pred[i],
             mask ? detail::masked_sample_weight(*mask, sample_weight, weight_dtype(y_pred[i]),
                                                 loss.reduction() == losses::Reduction::kSumOverBatchSize)
                  : sample_weight);
    if (output_losses) output_losses->push_back(value);
    const Tensor term = o.loss_weights.empty() ? value : value * o.loss_weights[i];
    total = i == 0 ? term : total + term;
  }
  return total;
}

void Model::reset_metrics() {
  Compiled& c = compiled("reset_metrics");
  c.loss_tracker->reset_state();
  for (const auto& tracker : c.output_loss_trackers) tracker->reset_state();
  for (const auto& m : c.metrics) m.metric->reset_state();
}

std::vector<std::pair<std::string, std::shared_ptr<metrics::Metric>>> Model::logged_metrics() const {
  std::vector<std::pair<std::string, std::shared_ptr<metrics::Metric>>> out;
  if (!compiled_) return out;
  const Compiled& c = *compiled_;
  out.emplace_back("loss", c.loss_tracker);
  for (const auto& tracker : c.output_loss_trackers) out.emplace_back(tracker->name(), tracker);
  for (const auto& m : c.metrics) out.emplace_back(m.name, m.metric);
  return out;
}

std::map<std::string, Tensor> Model::metric_results() const {
  std::map<std::string, Tensor> out;
  for (const auto& [name, metric] : logged_metrics()) out[name] = metric->result();
  return out;
}

void Model::reset_step_functions() {
  if (!compiled_) return;
  compiled_->train_function.reset();
  compiled_->test_function.reset();
}

namespace {
// The running loss weights each batch by its size, as Keras' does, so that the epoch's
// loss is the mean over examples even when the last batch is smaller.
void track_loss(metrics::Mean& tracker, const Tensor& loss, const Tensor& y_pred) {
  const double examples =
      y_pred.rank() > 0 && y_pred.shape()[0] >= 0 ? static_cast<double>(y_pred.shape()[0]) : 1.0;
  tracker.update_state(loss, scalar_tensor(examples, loss.dtype()));
}

}  // namespace

void Model::update_metrics(const data::Element& batch, const Tensor& y_pred, const Tensor& loss) {
  update_all_metrics(split_batch(batch, "update_metrics"), {y_pred}, loss, {}, {});
}

Model::BatchParts Model::split_batch(const data::Element& batch, const char* step) const {
  const size_t k = input_count(), m = output_count();
  if (batch.size() != k + m && batch.size() != k + m + 1) {
    if (k == 1 && m == 1)
      fail("Model.", step, ": a batch must be (x, y) or (x, y, sample_weight), got ", batch.size(),
           " tensors");
    fail("Model.", step, ": a batch of model '", name(), "' must be its ", k, " input(s), ", m,
         " target(s) and optionally sample_weight (", k + m, " or ", k + m + 1, " tensors), got ",
         batch.size());
  }
  BatchParts parts;
  parts.x.assign(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(k));
  parts.y.assign(batch.begin() + static_cast<std::ptrdiff_t>(k),
                 batch.begin() + static_cast<std::ptrdiff_t>(k + m));
  if (batch.size() > k + m) parts.sample_weight = batch.back();
  return parts;
}

std::vector<Tensor> Model::forward(const std::vector<Tensor>& x, bool training,
                                   std::vector<std::optional<Tensor>>* masks) {
  output_masks_.clear();
  std::vector<Tensor> outputs;
  if (x.size() == 1 && output_count() == 1) {
    outputs = {(*this)(x[0], training)};
  } else {
    outputs = call_all(x, training);
    if (outputs.size() != output_count())
      fail("model '", name(), "' gave ", outputs.size(), " outputs where it has ", output_count());
  }
  if (masks) {
    *masks = std::move(output_masks_);
    masks->resize(outputs.size());
  }
  output_masks_.clear();  // a traced step's masks belong to its trace
  return outputs;
}

void Model::update_all_metrics(const BatchParts& parts, const std::vector<Tensor>& y_pred, const Tensor& loss,
                               const std::vector<Tensor>& output_losses,
                               const std::vector<std::optional<Tensor>>& masks) {
  Compiled& c = compiled("update_metrics");
  track_loss(*c.loss_tracker, loss, y_pred[0]);
  for (size_t i = 0; i < c.output_loss_trackers.size() && i < output_losses.size(); ++i)
    track_loss(*c.output_loss_trackers[i], output_losses[i], y_pred[i]);
  // As Keras: an output's mask weighs all its metrics, the sample weights the weighted ones.
  auto weights_of = [&](size_t output, bool weighted) -> std::optional<Tensor> {
    const std::optional<Tensor> sample_weight = weighted ? parts.sample_weight : std::nullopt;
    const std::optional<Tensor> mask = per_step_mask(masks, output, y_pred[output]);
    if (!mask) return sample_weight;
    return detail::masked_sample_weight(*mask, sample_weight, weight_dtype(y_pred[output]),
                                        /*averaged=*/false);
  };
  for (const auto& m : c.metrics)
    m.metric->update(parts.y[m.output], y_pred[m.output], weights_of(m.output, m.weighted),
                     CallSite::current());
}

std::map<std::string, Tensor> Model::train_step(const data::Element& batch) {
  const BatchParts parts = split_batch(batch, "train_step");
  std::vector<Tensor> y_pred, output_losses, grads;
  std::vector<std::optional<Tensor>> masks;
  Tensor loss;
  std::vector<Variable> variables;
  optim::Optimizer& optimizer = *compiled("train_step").options.optimizer;
  {
    GradientTape tape;
    y_pred = forward(parts.x, /*training=*/true, &masks);
    loss = compute_loss(parts.y, y_pred, parts.sample_weight, &output_losses, masks);
    variables = trainable_variables();
    // Identities unless the optimizer scales the loss (Note [dynamic loss scaling]).
    grads = optimizer.get_unscaled_gradients(tape.gradient(optimizer.get_scaled_loss(loss), variables));
  }
  optimizer.apply_gradients(grads, variables);
  update_all_metrics(parts, y_pred, loss, output_losses, masks);
  return metric_results();
}

std::map<std::string, Tensor> Model::test_step(const data::Element& batch) {
  const BatchParts parts = split_batch(batch, "test_step");
  std::vector<std::optional<Tensor>> masks;
  const std::vector<Tensor> y_pred = forward(parts.x, /*training=*/false, &masks);
  std::vector<Tensor> output_losses;
  const Tensor loss = compute_loss(parts.y, y_pred, parts.sample_weight, &output_losses, masks);
  update_all_metrics(parts, y_pred, loss, output_losses, masks);
  return metric_results();
}

std::map<std::string, Tensor> Model::run_step(bool training, const data::Element& given) {
  const std::optional<Device> device = model_device(*this);  // Note [batches go to the model's device]
  const data::Element batch = placed_on(given, device);
  std::optional<DeviceScope> on_device;
  if (device) on_device.emplace(*device);
  Compiled& c = compiled(training ? "fit" : "evaluate");
  if (c.options.run_eagerly) return training ? train_step(batch) : test_step(batch);
  // Note [fit runs a function]. The names of the results are fixed by the first trace.
  std::optional<StepFunction>& step = training ? c.train_function : c.test_function;
  if (!step) {
    auto names = std::make_shared<std::vector<std::string>>();
    Function function(
        [this, training, names](const std::vector<Tensor>& args) {
          std::map<std::string, Tensor> results = training ? train_step(args) : test_step(args);
          std::vector<Tensor> values;
          names->clear();
          for (auto& [name, value] : results) {
            names->push_back(name);
            values.push_back(value);
          }
          return values;
        },
        training ? "train_function" : "test_function", std::nullopt, c.options.jit_compile);
    step = StepFunction{std::move(function), names};
  }
  const std::vector<Tensor> values = step->function(batch);
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < values.size() && i < step->names->size(); ++i) out[(*step->names)[i]] = values[i];
  return out;
}

// ---- fit ----

namespace {
// x and y of fit / evaluate: as many as the model takes and gives, each with the same
// number of examples. Returns that number.
// Per-example weights: a first dimension of the examples' count.
void check_sample_weight(const std::optional<Tensor>& sample_weight, int64_t examples, const char* what) {
  if (sample_weight && (sample_weight->rank() == 0 || sample_weight->shape()[0] != examples))
    fail("Model.", what, ": sample_weight has shape ", sample_weight->shape(), " but x has ", examples,
         " examples");
}

int64_t check_examples(const Model& model, const std::vector<Tensor>& x, const std::vector<Tensor>& y,
                       const char* what) {
  if (x.size() != model.input_count() || y.size() != model.output_count())
    fail("Model.", what, ": model '", model.name(), "' takes ", model.input_count(), " input(s) and gives ",
         model.output_count(), " output(s), got ", x.size(), " x and ", y.size(), " y tensors");
  auto label = [](const char* side, size_t i, size_t n) {
    return n == 1 ? std::string(side) : std::string(side) + "[" + std::to_string(i) + "]";
  };
  std::vector<std::pair<std::string, Tensor>> all;
  for (size_t i = 0; i < x.size(); ++i) all.emplace_back(label("x", i, x.size()), x[i]);
  for (size_t i = 0; i < y.size(); ++i) all.emplace_back(label("y", i, y.size()), y[i]);
  for (const auto& [name, t] : all) {
    if (!t.defined()) fail("Model.", what, ": ", name, " is an undefined tensor");
    if (t.rank() == 0) fail("Model.", what, ": ", name, " needs a first dimension indexing the examples");
  }
  const auto& [first_name, first] = all[0];
  for (const auto& [name, t] : all)
    if (t.shape()[0] != first.shape()[0])
      fail("Model.", what, ": ", first_name, " has ", first.shape()[0], " examples (shape ", first.shape(),
           ") but ", name, " has ", t.shape()[0], " (shape ", t.shape(), ")");
  return first.shape()[0];
}
}  // namespace

std::shared_ptr<callbacks::History> Model::fit(const Tensor& x, const Tensor& y, FitOptions options,
                                               CallSite where) {
  return fit(std::vector<Tensor>{x}, std::vector<Tensor>{y}, std::move(options), where);
}

std::shared_ptr<callbacks::History> Model::fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y,
                                               FitOptions options, CallSite where) {
  try {
    const int64_t n = check_examples(*this, x, y, "fit");
    if (options.batch_size <= 0) fail("Model.fit: batch_size must be positive, got ", options.batch_size);
    if (!options.class_weight.empty() && y.size() > 1)
      fail("Model.fit: class_weight is for models of one output; model '", name(), "' has ", y.size());
    if (!(options.validation_split >= 0 && options.validation_split < 1))
      fail("Model.fit: validation_split must be in [0, 1), got ", options.validation_split);
    check_sample_weight(options.sample_weight, n, "fit");
    std::vector<Tensor> train = x;
    train.insert(train.end(), y.begin(), y.end());
    if (std::optional<Tensor> weights = example_weights(y[0], options)) train.push_back(*weights);
    if (options.validation_split > 0) {
      const int64_t kept = detail::examples_kept_for_training(n, options.validation_split);
      if (kept <= 0 || kept == n)
        fail("Model.fit: validation_split ", options.validation_split, " of ", n,
             " examples leaves no training or no validation examples");
      std::vector<Tensor> held_out;
      for (Tensor& t : train) {
        auto [head, tail] = split_examples(t, kept);
        t = head;
        held_out.push_back(tail);
      }
      options.validation_data = held_out;
    }
    data::Dataset dataset = data::Dataset::from_tensor_slices(train);
    if (options.shuffle) dataset = dataset.shuffle(train[0].shape()[0], options.seed);
    dataset = dataset.batch(options.batch_size);
    return fit(dataset, std::move(options), where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::shared_ptr<callbacks::History> Model::fit(const data::Dataset& dataset, FitOptions options,
                                               CallSite where) {
  try {
    compiled("fit");
    if (options.epochs < 0 || options.initial_epoch < 0)
      fail("Model.fit: epochs and initial_epoch must be >= 0, got ", options.epochs, " and ",
           options.initial_epoch);
    if (options.steps_per_epoch && *options.steps_per_epoch <= 0)
      fail("Model.fit: steps_per_epoch must be positive, got ", *options.steps_per_epoch);
    const int64_t cardinality = dataset.cardinality();
    if (cardinality == data::kInfiniteCardinality && !options.steps_per_epoch)
      fail("Model.fit: the dataset repeats forever; give steps_per_epoch");
    std::optional<data::Dataset> validation = options.validation_dataset;
    if (!options.validation_data.empty()) {
      split_batch(options.validation_data, "fit (validation_data)");  // checks the count
      validation = data::Dataset::from_tensor_slices(options.validation_data)
                       .batch(std::max<int64_t>(options.batch_size, 1));
    }
    const int verbose = effective_verbose(options.verbose);
    auto history = std::make_shared<callbacks::History>();
    // History last, as in Keras: it records the logs as the other callbacks left them.
    std::vector<std::shared_ptr<callbacks::Callback>> all = options.callbacks;
    all.push_back(history);
    for (auto& cb : all) {
      if (!cb) fail("Model.fit: a callback is null");
      cb->set_model(this);
    }
    stop_training = false;
    for (auto& cb : all) cb->on_train_begin({});
    const int64_t steps =
        options.steps_per_epoch ? *options.steps_per_epoch : std::max<int64_t>(cardinality, 0);
    std::optional<data::Iterator> iterator;  // with steps_per_epoch, epochs continue one pass
    Logs logs;
    for (int epoch = options.initial_epoch; epoch < options.epochs && !stop_training; ++epoch) {
      reset_metrics();
      for (auto& cb : all) cb->on_epoch_begin(epoch, {});
      if (verbose) std::printf("Epoch %d/%d\n", epoch + 1, options.epochs), std::fflush(stdout);
      // Verbose 1: a bar redrawn on a terminal; 2: its final line only. Both end with the
      // validation results, as Keras' do.
      std::optional<utils::Progbar> bar;
      if (verbose && steps > 0) bar.emplace(steps, 30, 0.05, nullptr, verbose == 1 ? -1 : 0);
      logs.clear();
      int64_t step = 0;
      if (!iterator || !options.steps_per_epoch) iterator = dataset.make_iterator();
      data::Element batch;
      while ((!options.steps_per_epoch || step < *options.steps_per_epoch)) {
        if (!iterator->next(batch)) {
          if (!options.steps_per_epoch || step == 0) break;
          iterator = dataset.make_iterator();  // a finite dataset under steps_per_epoch starts over
          if (!iterator->next(batch)) break;
        }
        for (auto& cb : all) cb->on_train_batch_begin(step, logs);
        logs = to_logs(run_step(/*training=*/true, batch));
        ++step;
        if (bar && step < steps) bar->update(step, progbar_values(logs));
        for (auto& cb : all) cb->on_train_batch_end(step - 1, logs);
        if (stop_training) break;
      }
      if (step == 0) fail("Model.fit: the dataset gave no batches");
      if (validation) {
        const Logs val = run_evaluation(*validation, 0, {}, /*notify=*/false);
        for (const auto& [name, value] : val) logs["val_" + name] = value;
      }
      for (auto& cb : all) cb->on_epoch_end(epoch, logs);
      if (bar)
        bar->update(steps, progbar_values(logs));
      else if (verbose)
        print_results(step, logs);
    }
    for (auto& cb : all) cb->on_train_end(logs);
    return history;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

// ---- evaluate, predict, single batches ----

Logs Model::run_evaluation(const data::Dataset& dataset, int verbose,
                           const std::vector<std::shared_ptr<callbacks::Callback>>& callbacks, bool notify) {
  reset_metrics();
  for (auto& cb : callbacks) {
    if (!cb) fail("Model.evaluate: a callback is null");
    cb->set_model(this);
    if (notify) cb->on_test_begin({});
  }
  Logs logs;
  int64_t step = 0;
  for (const data::Element& batch : dataset) {
    logs = to_logs(run_step(/*training=*/false, batch));
    for (auto& cb : callbacks) cb->on_test_batch_end(step, logs);
    ++step;
  }
  if (step == 0) fail("Model.evaluate: the dataset gave no batches");
  for (auto& cb : callbacks)
    if (notify) cb->on_test_end(logs);
  if (verbose) print_results(step, logs);
  return logs;
}

Logs Model::evaluate(const Tensor& x, const Tensor& y, int64_t batch_size, int verbose,
                     const std::vector<std::shared_ptr<callbacks::Callback>>& callbacks,
                     const std::optional<Tensor>& sample_weight, CallSite where) {
  return evaluate(std::vector<Tensor>{x}, std::vector<Tensor>{y}, batch_size, verbose, callbacks,
                  sample_weight, where);
}

Logs Model::evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, int64_t batch_size,
                     int verbose, const std::vector<std::shared_ptr<callbacks::Callback>>& callbacks,
                     const std::optional<Tensor>& sample_weight, CallSite where) {
  try {
    const int64_t n = check_examples(*this, x, y, "evaluate");
    if (batch_size <= 0) fail("Model.evaluate: batch_size must be positive, got ", batch_size);
    check_sample_weight(sample_weight, n, "evaluate");
    std::vector<Tensor> all = x;
    all.insert(all.end(), y.begin(), y.end());
    if (sample_weight) all.push_back(*sample_weight);
    return evaluate(data::Dataset::from_tensor_slices(all).batch(batch_size), verbose, callbacks, where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Logs Model::evaluate(const data::Dataset& dataset, int verbose,
                     const std::vector<std::shared_ptr<callbacks::Callback>>& callbacks, CallSite where) {
  try {
    compiled("evaluate");
    return run_evaluation(dataset, verbose, callbacks, /*notify=*/true);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor Model::predict(const Tensor& x, int64_t batch_size, CallSite where) {
  return only_output(predict_all({x}, batch_size, where), where);
}

std::vector<Tensor> Model::predict_all(const std::vector<Tensor>& x, int64_t batch_size, CallSite where) {
  try {
    if (x.size() != input_count())
      fail("Model.predict: model '", name(), "' takes ", input_count(), " input(s), got ", x.size());
    for (const Tensor& t : x)
      if (!t.defined() || t.rank() == 0 || t.shape()[0] != x[0].shape()[0])
        fail("Model.predict: every x needs a first dimension indexing the same examples");
    if (batch_size <= 0) fail("Model.predict: batch_size must be positive, got ", batch_size);
    std::vector<std::vector<Tensor>> batches(output_count());
    const std::optional<Device> device = model_device(*this);  // Note [batches go to the model's device]
    std::optional<DeviceScope> on_device;
    if (device) on_device.emplace(*device);
    for (const data::Element& batch : data::Dataset::from_tensor_slices(x).batch(batch_size)) {
      const std::vector<Tensor> outputs = forward(placed_on(batch, device), /*training=*/false);
      for (size_t i = 0; i < outputs.size(); ++i) batches[i].push_back(outputs[i]);
    }
    if (batches[0].empty()) fail("Model.predict: x has no examples");
    std::vector<Tensor> results;
    for (const auto& parts : batches) results.push_back(parts.size() == 1 ? parts[0] : concat(parts, 0));
    return results;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Logs Model::on_batch(bool training, const Tensor& x, const Tensor& y,
                     const std::optional<Tensor>& sample_weight, CallSite where) {
  try {
    compiled(training ? "train_on_batch" : "test_on_batch");
    reset_metrics();
    data::Element batch = {x, y};
    if (sample_weight) batch.push_back(*sample_weight);
    return to_logs(run_step(training, batch));
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::nn
