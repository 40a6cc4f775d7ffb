// ef.keras.callbacks over eagerflow/nn/callbacks.h. The Python package
// (eagerflow/keras/callbacks.py) turns Keras' names and arguments into these; Python
// subclasses of Callback are C++ ones underneath.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace nn = ef::nn;
namespace cb = ef::nn::callbacks;

// Python callbacks: each event calls the Python method with a dict of the logs; changes
// a Python on_epoch_end makes to its dict reach the callbacks after it.
class PyCallback : public cb::Callback {
 public:
  void on_train_begin(const nn::Logs& logs) override { event("on_train_begin", logs); }
  void on_train_end(const nn::Logs& logs) override { event("on_train_end", logs); }
  void on_epoch_begin(int epoch, const nn::Logs& logs) override { event("on_epoch_begin", logs, epoch); }
  void on_epoch_end(int epoch, nn::Logs& logs) override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const cb::Callback*>(this), "on_epoch_end");
    if (!f) return;
    py::dict d = dict_of(logs);
    f(epoch, d);
    for (auto [name, value] : d) logs[py::str(name)] = value.cast<double>();
  }
  void on_train_batch_begin(int64_t batch, const nn::Logs& logs) override {
    event("on_train_batch_begin", logs, batch);
  }
  void on_train_batch_end(int64_t batch, const nn::Logs& logs) override {
    event("on_train_batch_end", logs, batch);
  }
  void on_test_begin(const nn::Logs& logs) override { event("on_test_begin", logs); }
  void on_test_end(const nn::Logs& logs) override { event("on_test_end", logs); }
  void on_test_batch_end(int64_t batch, const nn::Logs& logs) override {
    event("on_test_batch_end", logs, batch);
  }

 private:
  void event(const char* name, const nn::Logs& logs, std::optional<int64_t> index = std::nullopt) {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const cb::Callback*>(this), name);
    if (!f) return;
    if (index)
      f(*index, dict_of(logs));
    else
      f(dict_of(logs));
  }
};

cb::Mode mode_of(const std::string& mode) {
  if (mode == "auto") return cb::Mode::kAuto;
  if (mode == "min") return cb::Mode::kMin;
  if (mode == "max") return cb::Mode::kMax;
  throw ef::InvalidArgumentError("mode must be \"auto\", \"min\" or \"max\", got \"" + mode + "\"");
}

}  // namespace

void bind_callbacks(py::module_& keras) {
  py::module_ sub = keras.def_submodule("callbacks");
  py::class_<cb::Callback, PyCallback, std::shared_ptr<cb::Callback>>(
      sub, "Callback", py::dynamic_attr(),
      R"doc(The base class of Keras callbacks, which Model.fit / evaluate / predict call.

Subclass it and override the events you need; `logs` is a dict of names
("loss", "accuracy", "val_loss", "learning_rate", ...) to floats, and entries an
on_epoch_end adds reach the callbacks after it. self.model is the model; setting
self.model.stop_training = True ends fit after the epoch.

>>> class Losses(ef.keras.callbacks.Callback):
...     def __init__(self):
...         super().__init__()
...         self.seen = []
...     def on_epoch_end(self, epoch, logs=None):
...         self.seen.append(sorted(logs))
>>> model = ef.keras.Sequential([ef.keras.layers.Dense(1)])
>>> model.compile(optimizer="sgd", loss="mse")
>>> losses = Losses()
>>> _ = model.fit(np.ones((8, 2), np.float32), np.zeros((8, 1), np.float32), epochs=2, verbose=0,
...               callbacks=[losses])
>>> losses.seen
[['loss'], ['loss']]
)doc")
      .def(py::init<>())
      .def_property_readonly(
          "model", [](const cb::Callback& self) { return py::cast(&self.model()); },
          "The model being trained, evaluated or run (set by fit / evaluate / predict).")
      .def(
          "on_train_begin", [](cb::Callback&, py::handle) {}, "Called once at the start of fit.",
          "logs"_a = py::none())
      .def(
          "on_train_end", [](cb::Callback&, py::handle) {},
          "Called once at the end of fit, with the last logs.", "logs"_a = py::none())
      .def(
          "on_epoch_begin", [](cb::Callback&, int, py::handle) {},
          "Called at the start of epoch `epoch` (from 0).", "epoch"_a, "logs"_a = py::none())
      .def(
          "on_epoch_end", [](cb::Callback&, int, py::handle) {},
          "Called at the end of epoch `epoch` with its training and validation results; entries added to "
          "`logs` reach later callbacks.",
          "epoch"_a, "logs"_a = py::none())
      .def(
          "on_train_batch_begin", [](cb::Callback&, int64_t, py::handle) {},
          "Called before training batch `batch` (from 0 in each epoch).", "batch"_a, "logs"_a = py::none())
      .def(
          "on_train_batch_end", [](cb::Callback&, int64_t, py::handle) {},
          "Called after training batch `batch` with its results (\"loss\", metrics).", "batch"_a,
          "logs"_a = py::none())
      .def(
          "on_test_begin", [](cb::Callback&, py::handle) {},
          "Called at the start of evaluate (and validation).", "logs"_a = py::none())
      .def(
          "on_test_end", [](cb::Callback&, py::handle) {}, "Called at the end of evaluate (and validation).",
          "logs"_a = py::none())
      .def(
          "on_test_batch_end", [](cb::Callback&, int64_t, py::handle) {},
          "Called after evaluation batch `batch` with its results.", "batch"_a, "logs"_a = py::none());
  py::class_<cb::History, cb::Callback, std::shared_ptr<cb::History>>(sub, "_History")
      .def_property_readonly("history", &cb::History::history)
      .def_property_readonly("epoch", &cb::History::epochs);
  py::class_<cb::EarlyStopping, cb::Callback, std::shared_ptr<cb::EarlyStopping>>(
      sub, "EarlyStopping", R"doc(Stops training when a monitored value has stopped improving.

>>> stop = ef.keras.callbacks.EarlyStopping(monitor="val_loss", patience=3,
...                                         restore_best_weights=True)

Args:
  monitor: The log name to watch (default "val_loss").
  min_delta: An improvement must beat the best value by more than this.
  patience: Epochs without improvement before stopping (default 0).
  verbose: Ignored.
  mode: "auto" (larger is better for names containing "acc", smaller
    otherwise), "min" or "max".
  baseline: None, or a value to beat within `patience` epochs.
  restore_best_weights: If True, the model ends with the best epoch's weights.
  start_from_epoch: Epochs before this one are not judged (default 0).

Raises:
  InvalidArgumentError: patience < 0, a bad mode, or (during fit) a monitor
    name the logs lack (the message lists the names they have).
)doc")
      .def(py::init([](std::string monitor, double min_delta, int patience, int verbose,
                       const std::string& mode, std::optional<double> baseline, bool restore_best_weights,
                       int start_from_epoch) {
             (void)verbose;
             return std::make_shared<cb::EarlyStopping>(
                 cb::EarlyStoppingOptions{std::move(monitor), min_delta, patience, mode_of(mode), baseline,
                                          restore_best_weights, start_from_epoch});
           }),
           "monitor"_a = "val_loss", "min_delta"_a = 0.0, "patience"_a = 0, "verbose"_a = 0,
           "mode"_a = "auto", "baseline"_a = py::none(), "restore_best_weights"_a = false,
           "start_from_epoch"_a = 0)
      .def_property_readonly("stopped_epoch", &cb::EarlyStopping::stopped_epoch,
                             "The epoch (from 0) after which training stopped; -1 if it did not stop early.")
      .def_property_readonly("best_epoch", &cb::EarlyStopping::best_epoch,
                             "The epoch (from 0) with the best monitored value; -1 before training.");
  py::class_<cb::TerminateOnNaN, cb::Callback, std::shared_ptr<cb::TerminateOnNaN>>(
      sub, "TerminateOnNaN", R"doc(Stops training after the first batch whose loss is NaN or infinite.

It prints "Batch <n>: invalid loss, terminating training" to stderr.

>>> callbacks = [ef.keras.callbacks.TerminateOnNaN()]
)doc")
      .def(py::init<>());
  py::class_<cb::CSVLogger, cb::Callback, std::shared_ptr<cb::CSVLogger>>(
      sub, "CSVLogger",
      R"doc(Writes each epoch's logs as a CSV row: "epoch" first, then the log names in order.

Each row is flushed when written.

>>> logger = ef.keras.callbacks.CSVLogger("training.csv")

Args:
  filename: The file's path (str or path-like).
  separator: One character between the fields (default ",").
  append: If True, continue an existing file instead of overwriting it.

Raises:
  InvalidArgumentError: a separator that is not one character.
)doc")
      .def(py::init([](py::handle filename, const std::string& separator, bool append) {
             if (separator.size() != 1)
               throw ef::InvalidArgumentError("CSVLogger: separator must be one character");
             return std::make_shared<cb::CSVLogger>(py::str(filename).cast<std::string>(), separator[0],
                                                    append);
           }),
           "filename"_a, "separator"_a = ",", "append"_a = false);
  py::class_<cb::ModelCheckpoint, cb::Callback, std::shared_ptr<cb::ModelCheckpoint>>(
      sub, "ModelCheckpoint",
      R"doc(Saves the model's weights after each epoch, or only when the monitored value improved.

The file is an atomic, checksummed checkpoint of the model (as save_weights
writes; load_weights or ef.train.Checkpoint(model=m).restore read it).

>>> checkpoint = ef.keras.callbacks.ModelCheckpoint("weights-{epoch}.safetensors",
...                                                 monitor="val_loss", save_best_only=True)

Args:
  filepath: The path; "{epoch}" in it is replaced by the epoch number (from 1).
  monitor: The log name to watch with save_best_only (default "val_loss").
  verbose: Ignored.
  save_best_only: If True, save only when the monitored value improved.
  mode: "auto" (larger is better for names containing "acc", smaller
    otherwise), "min" or "max".

Raises:
  InvalidArgumentError: an empty path, a bad mode, or (during fit, with
    save_best_only) a monitor name the logs lack.
)doc")
      .def(py::init([](py::handle filepath, std::string monitor, int verbose, bool save_best_only,
                       const std::string& mode) {
             (void)verbose;
             return std::make_shared<cb::ModelCheckpoint>(
                 py::str(filepath).cast<std::string>(),
                 cb::ModelCheckpointOptions{std::move(monitor), save_best_only, mode_of(mode)});
           }),
           "filepath"_a, "monitor"_a = "val_loss", "verbose"_a = 0, "save_best_only"_a = false,
           "mode"_a = "auto")
      .def_property_readonly("saved", &cb::ModelCheckpoint::saved, "The paths written so far, in order.");
  py::class_<cb::LearningRateScheduler, cb::Callback, std::shared_ptr<cb::LearningRateScheduler>>(
      sub, "LearningRateScheduler",
      R"doc(Sets the optimizer's learning rate at the start of each epoch from a schedule.

The rate is logged as "learning_rate". The optimizer must have a constant rate
(not a schedule object).

>>> scheduler = ef.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.9)

Args:
  schedule: A function (epoch, current rate) -> new rate, or epoch -> rate; the
    rate must be finite and >= 0.
  verbose: Ignored.
)doc")
      .def(py::init([](py::function schedule, int verbose) {
             (void)verbose;
             auto fn = std::make_shared<PyRef>(schedule);
             // Keras calls schedule(epoch, lr), or schedule(epoch) for a function of one argument.
             const bool two =
                 py::len(py::module_::import("inspect").attr("signature")(schedule).attr("parameters")) >= 2;
             return std::make_shared<cb::LearningRateScheduler>([fn, two](int epoch, double lr) {
               py::gil_scoped_acquire gil;
               return py::float_(two ? fn->object(epoch, lr) : fn->object(epoch)).cast<double>();
             });
           }),
           "schedule"_a, "verbose"_a = 0);
  py::class_<cb::ReduceLROnPlateau, cb::Callback, std::shared_ptr<cb::ReduceLROnPlateau>>(
      sub, "ReduceLROnPlateau",
      R"doc(Multiplies the learning rate by `factor` when the monitored value stops improving.

After `patience` epochs without improvement the rate becomes max(rate * factor,
min_lr); `cooldown` epochs then pass before counting again. The rate is logged
as "learning_rate".

>>> reduce = ef.keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=2)

Args:
  monitor: The log name to watch (default "val_loss").
  factor: The factor, in [0, 1) (default 0.1).
  patience: Epochs without improvement before reducing (default 10).
  verbose: Ignored.
  mode: "auto" (larger is better for names containing "acc", smaller
    otherwise), "min" or "max".
  min_delta: An improvement must beat the best value by more than this
    (default 1e-4).
  cooldown: Epochs to wait after a reduction (default 0).
  min_lr: The lowest rate (default 0).

Raises:
  InvalidArgumentError: factor outside [0, 1), patience < 0, a bad mode, or
    (during fit) a monitor name the logs lack.
)doc")
      .def(py::init([](std::string monitor, double factor, int patience, int verbose, const std::string& mode,
                       double min_delta, int cooldown, double min_lr) {
             (void)verbose;
             return std::make_shared<cb::ReduceLROnPlateau>(cb::ReduceLROnPlateauOptions{
                 std::move(monitor), factor, patience, mode_of(mode), min_delta, cooldown, min_lr});
           }),
           "monitor"_a = "val_loss", "factor"_a = 0.1, "patience"_a = 10, "verbose"_a = 0, "mode"_a = "auto",
           "min_delta"_a = 1e-4, "cooldown"_a = 0, "min_lr"_a = 0.0);

  py::class_<cb::TensorBoard, cb::Callback, std::shared_ptr<cb::TensorBoard>>(
      sub, "TensorBoard",
      R"doc(Writes what fit logs as TensorBoard event files, as Keras' TensorBoard callback.

log_dir/train gets "epoch_<name>" scalars (loss, metrics, learning_rate) each
epoch, "batch_<name>" scalars every update_freq batches, histograms of the
variables and the train step's graph; log_dir/validation gets the "val_" entries
as "epoch_<name>".

>>> tensorboard = ef.keras.callbacks.TensorBoard(log_dir="logs", histogram_freq=1)

Args:
  log_dir: The directory (default "logs").
  histogram_freq: Epochs between histograms of every variable; 0 for none.
  write_graph: Whether to write the traced train step's graph (default True).
  update_freq: "epoch" (default), "batch" (every batch) or an int n (every n
    batches) for the batch scalars.

Raises:
  InvalidArgumentError: an update_freq string other than "epoch" or "batch".
)doc")
      .def(py::init([](py::handle log_dir, int histogram_freq, bool write_graph, py::handle update_freq) {
             // Keras' update_freq: "epoch", "batch" (every batch) or a number of batches.
             int64_t every = 0;
             if (py::isinstance<py::str>(update_freq)) {
               const std::string name = update_freq.cast<std::string>();
               if (name == "batch")
                 every = 1;
               else if (name != "epoch")
                 throw ef::InvalidArgumentError(
                     "TensorBoard: update_freq must be 'epoch', 'batch' or an int, got '" + name + "'");
             } else {
               every = int64_of(update_freq, "update_freq");
             }
             return std::make_shared<cb::TensorBoard>(cb::TensorBoardOptions{
                 py::str(log_dir).cast<std::string>(), histogram_freq, write_graph, every});
           }),
           "log_dir"_a = "logs", "histogram_freq"_a = 0, "write_graph"_a = true, "update_freq"_a = "epoch")
      .def_property_readonly(
          "log_dir", [](const cb::TensorBoard& t) { return t.options().log_dir; }, "The log directory.");
}

}  // namespace efpy
