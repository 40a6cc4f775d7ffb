// ef.keras' Model training API over eagerflow/nn/model.h (the callbacks are in
// keras_callbacks.cpp). The Python package (eagerflow/keras/models.py) turns Keras' names
// and arguments into these; Python subclasses of Model are C++ ones underneath.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

#ifdef EF_HAVE_DISTRIBUTE
#include "eagerflow/distribute/model_fit.h"
#endif

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace nn = ef::nn;
namespace cb = ef::nn::callbacks;
constexpr ef::CallSite kPython{};

struct ModelAccess : nn::Model {
  using nn::Model::test_step;
  using nn::Model::train_step;
};

// A Python train_step / test_step returns a dict of tensors (Keras: metric results).
std::map<std::string, ef::Tensor> results_of(const py::object& out, const char* step) {
  if (!py::isinstance<py::dict>(out))
    throw py::type_error(std::string(step) + " must return a dict of metric results, got " +
                         std::string(py::str(py::type::of(out).attr("__name__"))));
  std::map<std::string, ef::Tensor> results;
  for (auto [name, value] : out.cast<py::dict>()) results[py::str(name)] = to_tensor(value);
  return results;
}

class PyModel : public PyLayerOf<nn::Model> {
 public:
  using PyLayerOf<nn::Model>::PyLayerOf;

 protected:
  std::map<std::string, ef::Tensor> train_step(const ef::data::Element& batch) override {
    return step("train_step", batch, true);
  }
  std::map<std::string, ef::Tensor> test_step(const ef::data::Element& batch) override {
    return step("test_step", batch, false);
  }

 private:
  std::map<std::string, ef::Tensor> step(const char* name, const ef::data::Element& batch, bool training) {
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const nn::Model*>(this), name);
    if (!override) return training ? nn::Model::train_step(batch) : nn::Model::test_step(batch);
    return results_of(override(py::tuple(py::cast(batch))), name);
  }
};

// A Python function (y_true, y_pred) -> per-example losses, as a Loss (Keras' custom losses).
class FunctionLoss : public nn::losses::Loss {
 public:
  FunctionLoss(std::string name, py::object fn)
      : Loss(std::move(name), {}), fn_(std::make_shared<PyRef>(fn)) {}

 protected:
  ef::Tensor per_example(const ef::Tensor& y_true, const ef::Tensor& y_pred) const override {
    py::gil_scoped_acquire gil;
    return to_tensor(fn_->object(y_true, y_pred));
  }

 private:
  std::shared_ptr<PyRef> fn_;
};

std::vector<ef::Tensor> tensors_or_empty(py::handle obj) {
  std::vector<ef::Tensor> out;
  if (obj.is_none()) return out;
  for (py::handle item : obj) out.push_back(to_tensor(item));
  return out;
}

py::object config_value(const ef::nn::ConfigValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::nullptr_t>)
          return py::none();
        else if constexpr (std::is_same_v<V, std::shared_ptr<ef::nn::Config>>)
          return dict_of_config(*v);
        else if constexpr (std::is_same_v<V, std::vector<int64_t>>)
          return py::list(py::cast(v));
        else
          return py::cast(v);
      },
      value);
}

}  // namespace

ef::nn::Config config_of(const py::dict& dict, const std::string& who) {
  ef::nn::Config config;
  for (auto [k, v] : dict) {
    const std::string key = py::str(k);
    if (v.is_none())
      config.set(key, ef::nn::ConfigValue(nullptr));
    else if (py::isinstance<py::bool_>(v))
      config.set(key, v.cast<bool>());
    else if (py::isinstance<py::int_>(v))
      config.set(key, int64_of(v, key.c_str()));
    else if (py::isinstance<py::float_>(v))
      config.set(key, v.cast<double>());
    else if (py::isinstance<py::str>(v))
      config.set(key, ef::nn::ConfigValue(v.cast<std::string>()));
    else if (py::isinstance<py::dict>(v))
      config.set(key, config_of(v.cast<py::dict>(), who));
    else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
      std::vector<int64_t> ints;
      for (py::handle e : v) {
        if (!py::isinstance<py::int_>(e) || py::isinstance<py::bool_>(e))
          throw py::type_error(who + ": \"" + key + "\" must be a list of ints to be saved");
        ints.push_back(int64_of(e, key.c_str()));
      }
      config.set(key, ef::nn::ConfigValue(std::move(ints)));
    } else {
      throw py::type_error(who + ": \"" + key + "\" is a " +
                           std::string(py::str(py::type::of(v).attr("__name__"))) +
                           "; configs hold None, bools, numbers, strings, lists of ints and dicts");
    }
  }
  return config;
}

py::dict dict_of(const nn::Logs& logs) {
  py::dict d;
  for (const auto& [name, value] : logs) d[py::str(name)] = value;
  return d;
}

py::dict dict_of_config(const ef::nn::Config& config) {
  py::dict d;
  for (const auto& [key, value] : config.values) d[py::str(key)] = config_value(value);
  return d;
}

using MetricList = std::vector<std::shared_ptr<nn::metrics::Metric>>;

void bind_model(py::module_& keras) {
  py::class_<nn::Model, nn::Layer, PyModel, std::shared_ptr<nn::Model>>(keras, "Model", py::dynamic_attr(),
                                                                        "The C++ base of ef.keras.Model and "
                                                                        "ef.keras.Sequential (use those).")
      .def(py::init([](py::handle name) { return std::make_shared<PyModel>(name_or(name, "model")); }),
           "name"_a = py::none())
      .def(
          "_compile",
          [](nn::Model& self, std::shared_ptr<ef::optim::Optimizer> optimizer,
             std::shared_ptr<nn::losses::Loss> loss, MetricList metrics, bool run_eagerly, bool jit_compile,
             std::vector<std::shared_ptr<nn::losses::Loss>> output_losses, std::vector<double> loss_weights,
             std::vector<MetricList> output_metrics, MetricList weighted_metrics,
             std::vector<MetricList> output_weighted_metrics) {
            self.compile({std::move(optimizer), std::move(loss), std::move(metrics), run_eagerly, jit_compile,
                          std::move(output_losses), std::move(loss_weights), std::move(output_metrics),
                          std::move(weighted_metrics), std::move(output_weighted_metrics)});
          },
          "optimizer"_a, "loss"_a, "metrics"_a, "run_eagerly"_a, "jit_compile"_a, "output_losses"_a,
          "loss_weights"_a, "output_metrics"_a, "weighted_metrics"_a = MetricList{},
          "output_weighted_metrics"_a = std::vector<MetricList>{})
      .def_property_readonly("_compile_settings",
                             [](const nn::Model& self) -> py::object {
                               if (!self.compiled()) return py::none();
                               const nn::CompileOptions& o = self.compile_options();
                               return py::make_tuple(o.optimizer, o.loss, o.metrics, o.run_eagerly,
                                                     o.jit_compile, o.output_losses, o.loss_weights,
                                                     o.output_metrics, o.weighted_metrics,
                                                     o.output_weighted_metrics);
                             })
      .def_property_readonly(
          "metrics_names",
          [](const nn::Model& self) {
            std::vector<std::string> names;
            for (const auto& [name, metric] : self.logged_metrics()) names.push_back(name);
            return names;
          },
          "The names evaluate and train_on_batch report, in order: \"loss\", each output's loss\n"
          "(several outputs), then the metrics' (\"<output>_<metric>\" with several outputs), the\n"
          "weighted metrics last (\"weighted_<metric>\" where an unweighted one has the name).")
      .def_property_readonly("_input_count", &nn::Model::input_count)
      .def_property_readonly("_output_count", &nn::Model::output_count)
      .def_property_readonly("output_names", &nn::Model::output_names,
                             "The outputs' names in the logs (the layers that give them).")
      .def_property_readonly(
          "optimizer",
          [](const nn::Model& self) -> py::object {
            if (!self.compiled()) return py::none();
            return py::cast(self.compile_options().optimizer);
          },
          "The optimizer given to compile (None before compile).")
      .def_property_readonly(
          "compiled_loss",
          [](const nn::Model& self) -> py::object {
            if (!self.compiled()) return py::none();
            return py::cast(self.compile_options().loss);
          },
          "The Loss given to compile (None before compile).")
      .def_property_readonly(
          "metrics",
          [](const nn::Model& self) {
            MetricList out;
            for (const auto& [name, metric] : self.logged_metrics()) out.push_back(metric);
            return out;
          },
          "The metric objects the logs report, in metrics_names' order: the loss trackers, then\n"
          "the metrics given to compile (empty before compile).")
      .def(
          "_fit",
          [](nn::Model& self, py::handle x, py::handle y, py::object dataset, int64_t batch_size, int epochs,
             int verbose, std::vector<std::shared_ptr<cb::Callback>> callbacks, double validation_split,
             py::handle validation_data, py::object validation_dataset, bool shuffle,
             std::optional<int64_t> seed, int initial_epoch, std::optional<int64_t> steps_per_epoch,
             py::handle sample_weight, std::map<int64_t, double> class_weight, bool distributed) {
            nn::FitOptions o;
            o.batch_size = batch_size;
            o.epochs = epochs;
            o.verbose = verbose;
            o.callbacks = std::move(callbacks);
            o.validation_split = validation_split;
            o.validation_data = tensors_or_empty(validation_data);
            if (!validation_dataset.is_none())
              o.validation_dataset = validation_dataset.cast<ef::data::Dataset>();
            o.shuffle = shuffle;
            o.seed = seed;
            o.initial_epoch = initial_epoch;
            o.steps_per_epoch = steps_per_epoch;
            o.sample_weight = optional_tensor(sample_weight);
            o.class_weight = std::move(class_weight);
            if (distributed) {  // under MultiWorkerMirroredStrategy (Note [distributed fit])
#ifdef EF_HAVE_DISTRIBUTE
              if (!dataset.is_none())
                return ef::distribute::fit(self, dataset.cast<ef::data::Dataset>(), std::move(o));
              return ef::distribute::fit(self, tensors_or_empty(x), tensors_or_empty(y), std::move(o));
#else
              ef::fail<ef::UnimplementedError>("Model.fit: this eagerflow was built without MPI");
#endif
            }
            if (!dataset.is_none()) return self.fit(dataset.cast<ef::data::Dataset>(), std::move(o), kPython);
            return self.fit(tensors_or_empty(x), tensors_or_empty(y), std::move(o), kPython);
          },
          "x"_a, "y"_a, "dataset"_a, "batch_size"_a, "epochs"_a, "verbose"_a, "callbacks"_a,
          "validation_split"_a, "validation_data"_a, "validation_dataset"_a, "shuffle"_a, "seed"_a,
          "initial_epoch"_a, "steps_per_epoch"_a, "sample_weight"_a, "class_weight"_a,
          "distributed"_a = false)
      .def(
          "_evaluate",
          [](nn::Model& self, py::handle x, py::handle y, py::object dataset, int64_t batch_size, int verbose,
             std::vector<std::shared_ptr<cb::Callback>> callbacks, py::handle sample_weight) {
            if (!dataset.is_none()) {
              if (!sample_weight.is_none())
                throw ef::InvalidArgumentError(
                    "evaluate: sample_weight is for array data; a Dataset gives (x, y, sample_weight) "
                    "elements");
              return dict_of(self.evaluate(dataset.cast<ef::data::Dataset>(), verbose, callbacks, kPython));
            }
            return dict_of(self.evaluate(tensors_or_empty(x), tensors_or_empty(y), batch_size, verbose,
                                         callbacks, optional_tensor(sample_weight), kPython));
          },
          "x"_a, "y"_a, "dataset"_a, "batch_size"_a, "verbose"_a, "callbacks"_a,
          "sample_weight"_a = py::none())
      .def(
          "predict",
          [](nn::Model& self, TensorArg x, int64_t batch_size) {
            return self.predict(x.value, batch_size, kPython);
          },
          R"doc(Runs the model in inference mode over x, in batches, and concatenates the outputs.

>>> model = ef.keras.Sequential([ef.keras.layers.Dense(2)])
>>> model.predict(np.ones((5, 3), np.float32), batch_size=2).shape
TensorShape([5, 2])

Args:
  x: A tensor-like [samples, ...].
  batch_size: Samples per batch (default 32).

Returns:
  A Tensor [samples, ...] of the model's outputs.
)doc",
          "x"_a, "batch_size"_a = 32)
      .def(
          "_predict_all",
          [](nn::Model& self, py::handle x, int64_t batch_size) {
            return self.predict_all(tensors_or_empty(x), batch_size, kPython);
          },
          "x"_a, "batch_size"_a)
      .def(
          "_on_batch",
          [](nn::Model& self, bool training, TensorArg x, TensorArg y, py::handle sample_weight) {
            const std::optional<ef::Tensor> w = optional_tensor(sample_weight);
            return dict_of(training ? self.train_on_batch(x.value, y.value, w, kPython)
                                    : self.test_on_batch(x.value, y.value, w, kPython));
          },
          "training"_a, "x"_a, "y"_a, "sample_weight"_a)
      .def(
          "train_step",
          [](nn::Model& self, py::tuple data) {
            return (self.*(&ModelAccess::train_step))(data.cast<ef::data::Element>());
          },
          R"doc(One training step on a batch: forward, loss, gradients, update, metrics.

Override it in a subclass to customize fit (Keras' train_step); call the base
version for the default.

Args:
  data: A tuple (x, y) or (x, y, sample_weight) of tensors.

Returns:
  A dict of metric name -> scalar Tensor ("loss" and the compiled metrics).
)doc",
          "data"_a)
      .def(
          "test_step",
          [](nn::Model& self, py::tuple data) {
            return (self.*(&ModelAccess::test_step))(data.cast<ef::data::Element>());
          },
          R"doc(One evaluation step on a batch: forward in inference mode, loss, metrics.

Override it in a subclass to customize evaluate (Keras' test_step).

Args:
  data: A tuple (x, y) or (x, y, sample_weight) of tensors.

Returns:
  A dict of metric name -> scalar Tensor.
)doc",
          "data"_a)
      .def(
          "compute_loss",
          [](nn::Model& self, TensorArg y, TensorArg y_pred, py::handle sample_weight) {
            return self.compute_loss(y.value, y_pred.value, optional_tensor(sample_weight));
          },
          R"doc(Computes the compiled loss of predictions y_pred against targets y.

Args:
  y: The targets, a tensor-like.
  y_pred: The model's outputs, a tensor-like.
  sample_weight: None, or per-example weights.

Returns:
  A scalar Tensor.
)doc",
          "y"_a, "y_pred"_a, "sample_weight"_a = py::none())
      .def("reset_metrics", &nn::Model::reset_metrics, "Resets the state of every compiled metric.")
      .def("_metric_results", &nn::Model::metric_results)
      .def_readwrite("stop_training", &nn::Model::stop_training,
                     "Set it to True (from a callback) to end fit after the current epoch.")
      .def(
          "_summary",
          [](const nn::Model& self, int line_length) {
            return self.summary(line_length, [](const nn::Module& m) {
              py::gil_scoped_acquire gil;
              return py::str(py::type::of(py::cast(&m)).attr("__name__")).cast<std::string>();
            });
          },
          "line_length"_a = 72);

  // Configs and whole-model files (eagerflow/nn/config.h, eagerflow/io/model_file.h).
  keras.def(
      "_register_layer",
      [](const std::string& class_name, py::function factory) {
        auto fn = std::make_shared<PyRef>(factory);
        nn::register_layer(class_name, [fn](const nn::Config& config) {
          py::gil_scoped_acquire gil;
          return fn->object(dict_of_config(config)).cast<std::shared_ptr<nn::Layer>>();
        });
      },
      "class_name"_a, "factory"_a);
  keras.def("_unregister_layer", &nn::unregister_layer, "class_name"_a);
  keras.def(
      "_layer_from_config",
      [](const std::string& class_name, py::dict config) {
        return nn::layer_from_config(class_name, config_of(config, class_name + " config"));
      },
      "class_name"_a, "config"_a);
  keras.def(
      "_save_model",
      [](const nn::Model& model, const std::string& path) { ef::io::save_model(model, path, kPython); },
      "model"_a, "path"_a);
  keras.def(
      "_load_model",
      [](const std::string& path, bool compile) { return ef::io::load_model(path, compile, kPython); },
      "path"_a, "compile"_a = true);

  py::module_ losses = keras.attr("losses").cast<py::module_>();
  py::class_<FunctionLoss, nn::losses::Loss, std::shared_ptr<FunctionLoss>>(losses, "_FunctionLoss")
      .def(py::init(
          [](std::string name, py::function fn) { return std::make_shared<FunctionLoss>(name, fn); }));
}

}  // namespace efpy
