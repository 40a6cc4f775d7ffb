// ef.keras (layers, initializers, losses, metrics) and ef.Module over eagerflow/nn.
// Python subclasses of Module and Layer are C++ modules underneath: the trampolines
// below forward build() and call() to Python, so Sequential, checkpoints and
// variables() treat Python and C++ layers alike.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace nn = ef::nn;
constexpr ef::CallSite kPython{};

// Exposes the protected build() and call() so Python's super().build(...) reaches them.
struct LayerAccess : nn::Layer {
  using nn::Layer::build;
  using nn::Layer::call;
};

// None (linear), a Keras name, or a Python function of a tensor.
nn::Activation activation_of(py::handle obj) {
  if (obj.is_none()) return nn::Activation();
  if (py::isinstance<py::str>(obj)) return nn::Activation(obj.cast<std::string>());
  if (PyCallable_Check(obj.ptr())) {
    auto fn = std::make_shared<PyRef>(py::reinterpret_borrow<py::object>(obj));
    std::string name = py::hasattr(obj, "__name__") ? py::str(obj.attr("__name__")).cast<std::string>() : "custom";
    return nn::Activation(
        [fn](const ef::Tensor& x) {
          py::gil_scoped_acquire gil;
          return to_tensor(fn->object(x));
        },
        name);
  }
  throw py::type_error("activation must be None, a name such as \"relu\", or a function of a tensor");
}

nn::losses::Reduction reduction_of(const std::string& name) {
  if (name == "none") return nn::losses::Reduction::kNone;
  if (name == "sum") return nn::losses::Reduction::kSum;
  if (name == "sum_over_batch_size" || name == "auto") return nn::losses::Reduction::kSumOverBatchSize;
  throw ef::InvalidArgumentError("reduction must be \"sum_over_batch_size\", \"sum\" or \"none\", got \"" + name + "\"");
}

void bind_module(py::module_& m) {
  py::class_<nn::Module, std::shared_ptr<nn::Module>>(m, "Module", py::dynamic_attr())
      .def(py::init([](py::handle name) { return std::make_shared<nn::Module>(name_or(name, "module")); }),
           "name"_a = py::none())
      .def_property_readonly("name", &nn::Module::name)
      .def_property_readonly("variables", &nn::Module::variables)
      .def_property_readonly("trainable_variables", &nn::Module::trainable_variables)
      .def_property_readonly("non_trainable_variables", &nn::Module::non_trainable_variables)
      .def("named_variables", &nn::Module::named_variables)
      .def_property_readonly("_named_children",
                             [](const nn::Module& self) {
                               py::list out;
                               for (auto& [name, child] : self.named_children()) out.append(py::make_tuple(name, child));
                               return out;
                             })
      .def("_track_variable", &nn::Module::track_variable, "name"_a, "variable"_a)
      .def("_track_module",
           [](nn::Module& self, const std::string& name, std::shared_ptr<nn::Module> module) {
             self.track_module(name, std::move(module));
           })
      .def("_untrack", &nn::Module::untrack)
      .def("summary", [](const nn::Module& self) { py::print(self.summary(), "end"_a = ""); });

  py::class_<nn::Layer, nn::Module, PyLayer, std::shared_ptr<nn::Layer>>(m, "Layer", py::dynamic_attr())
      .def(py::init([](py::handle name) { return std::make_shared<PyLayer>(name_or(name, "layer")); }),
           "name"_a = py::none())
      .def(
          "__call__",
          [](nn::Layer& self, TensorArg inputs, bool training) {
            return self(inputs.value, training, kPython);
          },
          "inputs"_a, "training"_a = false)
      .def(
          "build",
          [](nn::Layer& self, ShapeArg input_shape) { (self.*(&LayerAccess::build))(input_shape.value); },
          "input_shape"_a)
      .def(
          "call",
          [](nn::Layer& self, TensorArg inputs, bool training) {
            return (self.*(&LayerAccess::call))(inputs.value, training);
          },
          "inputs"_a, "training"_a = false)
      .def_property_readonly("built", &nn::Layer::built)
      .def("get_config",
           [](const nn::Layer& self) {
             // A Python subclass's super().get_config() is the base one (a virtual call would
             // come back to the Python override).
             const bool python_class =
                 dynamic_cast<const PyLayer*>(&self) || dynamic_cast<const PyLayerOf<nn::Model>*>(&self);
             return dict_of_config(python_class ? self.nn::Layer::get_config() : self.get_config());
           })
      .def_property_readonly("_class_name", &nn::Layer::class_name)
      .def_property_readonly("dtype", &nn::Layer::dtype)
      .def_property_readonly("compute_dtype", &nn::Layer::compute_dtype)
      .def_property_readonly("variable_dtype", &nn::Layer::dtype)
      // Keras' dtype= argument: a policy or its name, set before the first call.
      .def_property(
          "dtype_policy", [](const nn::Layer& self) { return self.dtype_policy(); },
          [](nn::Layer& self, py::handle policy) {
            self.set_dtype_policy(py::isinstance<nn::Policy>(policy)
                                      ? policy.cast<nn::Policy>()
                                      : nn::Policy(policy.cast<std::string>()));
          })
      .def(
          "add_weight",
          [](nn::Layer& self, const std::string& name, ShapeArg shape, py::handle initializer,
             bool trainable) {
            return self.add_weight(name, shape.value, initializer_of(initializer), trainable);
          },
          "name"_a, "shape"_a, "initializer"_a = "glorot_uniform", "trainable"_a = true);
}

void bind_layers(py::module_& m) {
  py::class_<nn::Dense, nn::Layer, std::shared_ptr<nn::Dense>>(m, "Dense")
      .def(py::init([](int64_t units, py::handle activation, bool use_bias, py::handle kernel_initializer,
                       py::handle bias_initializer, py::handle name) {
             return std::make_shared<nn::Dense>(
                 units, nn::DenseOptions{activation_of(activation), use_bias, initializer_of(kernel_initializer),
                                         initializer_of(bias_initializer), name_or(name, "dense")});
           }),
           "units"_a, "activation"_a = py::none(), "use_bias"_a = true, "kernel_initializer"_a = "glorot_uniform",
           "bias_initializer"_a = "zeros", "name"_a = py::none())
      .def_property_readonly("units", &nn::Dense::units)
      .def_property_readonly("kernel", &nn::Dense::kernel)
      .def_property_readonly("bias", &nn::Dense::bias);
  py::class_<nn::Flatten, nn::Layer, std::shared_ptr<nn::Flatten>>(m, "Flatten")
      .def(py::init([](py::handle name) { return std::make_shared<nn::Flatten>(name_or(name, "flatten")); }),
           "name"_a = py::none());
  py::class_<nn::Dropout, nn::Layer, std::shared_ptr<nn::Dropout>>(m, "Dropout")
      .def(py::init([](double rate, std::optional<int64_t> seed, py::handle name) {
             return std::make_shared<nn::Dropout>(rate, seed, name_or(name, "dropout"));
           }),
           "rate"_a, "seed"_a = py::none(), "name"_a = py::none());
  py::class_<nn::LayerNormalization, nn::Layer, std::shared_ptr<nn::LayerNormalization>>(m, "LayerNormalization")
      .def(py::init([](int64_t axis, double epsilon, bool center, bool scale, py::handle beta_initializer,
                       py::handle gamma_initializer, py::handle name) {
             return std::make_shared<nn::LayerNormalization>(nn::LayerNormalizationOptions{
                 axis, epsilon, center, scale, initializer_of(beta_initializer), initializer_of(gamma_initializer),
                 name_or(name, "layer_normalization")});
           }),
           "axis"_a = -1, "epsilon"_a = 1e-3, "center"_a = true, "scale"_a = true, "beta_initializer"_a = "zeros",
           "gamma_initializer"_a = "ones", "name"_a = py::none());
  py::class_<nn::Embedding, nn::Layer, std::shared_ptr<nn::Embedding>>(m, "Embedding")
      .def(py::init([](int64_t input_dim, int64_t output_dim, py::handle embeddings_initializer, py::handle name) {
             nn::EmbeddingOptions options{.name = name_or(name, "embedding")};
             if (!embeddings_initializer.is_none()) options.embeddings_initializer = initializer_of(embeddings_initializer);
             return std::make_shared<nn::Embedding>(input_dim, output_dim, std::move(options));
           }),
           "input_dim"_a, "output_dim"_a, "embeddings_initializer"_a = py::none(), "name"_a = py::none())
      .def_property_readonly("embeddings", &nn::Embedding::embeddings);
  py::class_<nn::Conv2D, nn::Layer, std::shared_ptr<nn::Conv2D>>(m, "Conv2D")
      .def(py::init([](int64_t filters, py::handle kernel_size, py::handle strides, const std::string& padding,
                       py::handle dilation_rate, py::handle activation, bool use_bias, py::handle kernel_initializer,
                       py::handle bias_initializer, py::handle name) {
             return std::make_shared<nn::Conv2D>(
                 filters, to_ints(kernel_size, "kernel_size"),
                 nn::Conv2DOptions{to_ints(strides, "strides"), padding, to_ints(dilation_rate, "dilation_rate"),
                                   activation_of(activation), use_bias, initializer_of(kernel_initializer),
                                   initializer_of(bias_initializer), name_or(name, "conv2d")});
           }),
           "filters"_a, "kernel_size"_a, "strides"_a = 1, "padding"_a = "valid", "dilation_rate"_a = 1,
           "activation"_a = py::none(), "use_bias"_a = true, "kernel_initializer"_a = "glorot_uniform",
           "bias_initializer"_a = "zeros", "name"_a = py::none())
      .def_property_readonly("kernel", &nn::Conv2D::kernel)
      .def_property_readonly("bias", &nn::Conv2D::bias);
  auto pool = [&]<class Pool>(const char* name) {
    py::class_<Pool, nn::Layer, std::shared_ptr<Pool>>(m, name).def(
        py::init([](py::handle pool_size, py::handle strides, const std::string& padding, py::handle layer_name) {
          nn::Pool2DOptions options;
          if (!strides.is_none()) options.strides = to_ints(strides, "strides");
          options.padding = padding;
          if (!layer_name.is_none()) options.name = layer_name.cast<std::string>();
          return std::make_shared<Pool>(to_ints(pool_size, "pool_size"), std::move(options));
        }),
        "pool_size"_a = 2, "strides"_a = py::none(), "padding"_a = "valid", "name"_a = py::none());
  };
  pool.operator()<nn::MaxPool2D>("MaxPool2D");
  pool.operator()<nn::AveragePool2D>("AveragePool2D");
  py::class_<nn::BatchNormalization, nn::Layer, std::shared_ptr<nn::BatchNormalization>>(m, "BatchNormalization")
      .def(py::init([](int64_t axis, double momentum, double epsilon, bool center, bool scale,
                       py::handle beta_initializer, py::handle gamma_initializer, py::handle moving_mean_initializer,
                       py::handle moving_variance_initializer, py::handle name) {
             return std::make_shared<nn::BatchNormalization>(nn::BatchNormalizationOptions{
                 axis, momentum, epsilon, center, scale, initializer_of(beta_initializer),
                 initializer_of(gamma_initializer), initializer_of(moving_mean_initializer),
                 initializer_of(moving_variance_initializer), name_or(name, "batch_normalization")});
           }),
           "axis"_a = -1, "momentum"_a = 0.99, "epsilon"_a = 1e-3, "center"_a = true, "scale"_a = true,
           "beta_initializer"_a = "zeros", "gamma_initializer"_a = "ones", "moving_mean_initializer"_a = "zeros",
           "moving_variance_initializer"_a = "ones", "name"_a = py::none())
      .def_property_readonly("moving_mean", &nn::BatchNormalization::moving_mean)
      .def_property_readonly("moving_variance", &nn::BatchNormalization::moving_variance);
  py::class_<nn::Sequential, nn::Model, std::shared_ptr<nn::Sequential>>(m, "Sequential", py::dynamic_attr())
      .def(py::init([](py::handle name) {
             return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Layer>>{},
                                                     name_or(name, "sequential"));
           }),
           "name"_a = py::none())
      .def("_add", [](nn::Sequential& self, std::shared_ptr<nn::Layer> layer) { self.add(std::move(layer)); })
      .def_property_readonly("layers", &nn::Sequential::layers);
}

void bind_initializers(py::module_& m) {
  py::class_<nn::Initializer>(m, "Initializer")
      .def(py::init([](py::handle spec) { return initializer_of(spec); }), "identifier"_a)
      .def(
          "__call__",
          [](const nn::Initializer& self, ShapeArg shape, DTypeArg dtype) {
            return self(shape.value, dtype.value.value_or(ef::DType::Float32));
          },
          "shape"_a, "dtype"_a = py::none())
      .def_property_readonly("name", &nn::Initializer::name)
      .def("__repr__", [](const nn::Initializer& self) { return "<Initializer " + self.name() + ">"; });
  namespace init = nn::initializers;
  py::module_ sub = m.def_submodule("initializers");
  sub.def("zeros", &init::zeros);
  sub.def("ones", &init::ones);
  sub.def("constant", &init::constant, "value"_a = 0.0);
  sub.def("random_normal", &init::random_normal, "mean"_a = 0.0, "stddev"_a = 0.05, "seed"_a = py::none());
  sub.def("random_uniform", &init::random_uniform, "minval"_a = -0.05, "maxval"_a = 0.05, "seed"_a = py::none());
  sub.def("truncated_normal", &init::truncated_normal, "mean"_a = 0.0, "stddev"_a = 0.05, "seed"_a = py::none());
  for (auto [name, fn] : {std::pair{"glorot_uniform", &init::glorot_uniform}, {"glorot_normal", &init::glorot_normal},
                          {"he_normal", &init::he_normal}, {"he_uniform", &init::he_uniform},
                          {"lecun_normal", &init::lecun_normal}})
    sub.def(name, fn, "seed"_a = py::none());
}

template <class LossClass>
void bind_loss_class(py::module_& m, const char* name) {
  py::class_<LossClass, nn::losses::Loss, std::shared_ptr<LossClass>>(m, name).def(
      py::init([](bool from_logits, const std::string& reduction) {
        return LossClass(nn::losses::LossOptions{from_logits, reduction_of(reduction)});
      }),
      "from_logits"_a = false, "reduction"_a = "sum_over_batch_size");
}

void bind_losses(py::module_& m) {
  py::module_ sub = m.def_submodule("losses");
  py::class_<nn::losses::Loss, std::shared_ptr<nn::losses::Loss>>(sub, "Loss")
      .def(
          "__call__",
          [](const nn::losses::Loss& self, TensorArg y_true, TensorArg y_pred, py::handle sample_weight) {
            return self(y_true.value, y_pred.value, optional_tensor(sample_weight), kPython);
          },
          "y_true"_a, "y_pred"_a, "sample_weight"_a = py::none())
      .def_property_readonly("name", &nn::losses::Loss::name);
  bind_loss_class<nn::losses::MeanSquaredError>(sub, "MeanSquaredError");
  bind_loss_class<nn::losses::MeanAbsoluteError>(sub, "MeanAbsoluteError");
  bind_loss_class<nn::losses::BinaryCrossentropy>(sub, "BinaryCrossentropy");
  bind_loss_class<nn::losses::CategoricalCrossentropy>(sub, "CategoricalCrossentropy");
  bind_loss_class<nn::losses::SparseCategoricalCrossentropy>(sub, "SparseCategoricalCrossentropy");
  bind_loss_class<nn::losses::KLDivergence>(sub, "KLDivergence");
  bind_loss_class<nn::losses::Poisson>(sub, "Poisson");
  bind_loss_class<nn::losses::LogCosh>(sub, "LogCosh");
  bind_loss_class<nn::losses::CosineSimilarity>(sub, "CosineSimilarity");
  py::class_<nn::losses::Huber, nn::losses::Loss, std::shared_ptr<nn::losses::Huber>>(sub, "Huber")
      .def(py::init([](double delta, const std::string& reduction) {
             return std::make_shared<nn::losses::Huber>(
                 delta, nn::losses::LossOptions{false, reduction_of(reduction)});
           }),
           "delta"_a = 1.0, "reduction"_a = "sum_over_batch_size");
  sub.def(
      "huber",
      [](TensorArg y_true, TensorArg y_pred, double delta) {
        return nn::losses::huber(y_true.value, y_pred.value, delta, kPython);
      },
      "y_true"_a, "y_pred"_a, "delta"_a = 1.0);
  auto regression = [&](const char* name, auto fn) {
    sub.def(
        name, [fn](TensorArg y_true, TensorArg y_pred) { return fn(y_true.value, y_pred.value, kPython); },
        "y_true"_a, "y_pred"_a);
  };
  regression("mean_squared_error", &nn::losses::mean_squared_error);
  regression("mean_absolute_error", &nn::losses::mean_absolute_error);
  regression("kl_divergence", &nn::losses::kl_divergence);
  regression("poisson", &nn::losses::poisson);
  regression("log_cosh", &nn::losses::log_cosh);
  regression("cosine_similarity", &nn::losses::cosine_similarity);
  auto classification = [&](const char* name, auto fn) {
    sub.def(
        name,
        [fn](TensorArg y_true, TensorArg y_pred, bool from_logits) {
          return fn(y_true.value, y_pred.value, from_logits, kPython);
        },
        "y_true"_a, "y_pred"_a, "from_logits"_a = false);
  };
  classification("binary_crossentropy", &nn::losses::binary_crossentropy);
  classification("categorical_crossentropy", &nn::losses::categorical_crossentropy);
  classification("sparse_categorical_crossentropy", &nn::losses::sparse_categorical_crossentropy);
}

void bind_metrics(py::module_& m) {
  namespace metrics = nn::metrics;
  py::module_ sub = m.def_submodule("metrics");
  py::class_<metrics::Mean, nn::Module, std::shared_ptr<metrics::Mean>>(sub, "Mean")
      .def(py::init([](py::handle name, DTypeArg dtype) {
             return std::make_shared<metrics::Mean>(name_or(name, "mean"), dtype.value.value_or(ef::DType::Float32));
           }),
           "name"_a = py::none(), "dtype"_a = py::none())
      .def(
          "update_state",
          [](metrics::Mean& self, TensorArg values, py::handle sample_weight) {
            self.update_state(values.value, optional_tensor(sample_weight), kPython);
          },
          "values"_a, "sample_weight"_a = py::none())
      .def("result", &metrics::Mean::result)
      .def("reset_state", &metrics::Mean::reset_state);
  py::class_<metrics::MeanMetricWrapper, metrics::Mean, std::shared_ptr<metrics::MeanMetricWrapper>>(
      sub, "MeanMetricWrapper")
      .def(
          "update_state",
          [](metrics::MeanMetricWrapper& self, TensorArg y_true, TensorArg y_pred, py::handle sample_weight) {
            self.update_state(y_true.value, y_pred.value, optional_tensor(sample_weight), kPython);
          },
          "y_true"_a, "y_pred"_a, "sample_weight"_a = py::none());
  auto wrapper = [&]<class Metric>(const char* name, const char* default_name) {
    py::class_<Metric, metrics::MeanMetricWrapper, std::shared_ptr<Metric>>(sub, name).def(
        py::init([default_name](py::handle metric_name, DTypeArg dtype) {
          return std::make_shared<Metric>(name_or(metric_name, default_name),
                                          dtype.value.value_or(ef::DType::Float32));
        }),
        "name"_a = py::none(), "dtype"_a = py::none());
  };
  wrapper.operator()<metrics::Accuracy>("Accuracy", "accuracy");
  wrapper.operator()<metrics::CategoricalAccuracy>("CategoricalAccuracy", "categorical_accuracy");
  wrapper.operator()<metrics::SparseCategoricalAccuracy>("SparseCategoricalAccuracy", "sparse_categorical_accuracy");
  wrapper.operator()<metrics::MeanSquaredError>("MeanSquaredError", "mean_squared_error");
  wrapper.operator()<metrics::MeanAbsoluteError>("MeanAbsoluteError", "mean_absolute_error");
  py::class_<metrics::TopKCategoricalAccuracy, metrics::MeanMetricWrapper,
             std::shared_ptr<metrics::TopKCategoricalAccuracy>>(sub, "TopKCategoricalAccuracy")
      .def(py::init([](int64_t k, py::handle name, DTypeArg dtype) {
             return std::make_shared<metrics::TopKCategoricalAccuracy>(
                 k, false, name_or(name, "top_k_categorical_accuracy"),
                 dtype.value.value_or(ef::DType::Float32));
           }),
           "k"_a = 5, "name"_a = py::none(), "dtype"_a = py::none());
  sub.def(
      "SparseTopKCategoricalAccuracy",
      [](int64_t k, py::handle name, DTypeArg dtype) {
        return std::make_shared<metrics::TopKCategoricalAccuracy>(
            k, true, name_or(name, "sparse_top_k_categorical_accuracy"),
            dtype.value.value_or(ef::DType::Float32));
      },
      "k"_a = 5, "name"_a = py::none(), "dtype"_a = py::none());
  py::class_<metrics::BinaryAccuracy, metrics::MeanMetricWrapper, std::shared_ptr<metrics::BinaryAccuracy>>(
      sub, "BinaryAccuracy")
      .def(py::init([](py::handle name, DTypeArg dtype, double threshold) {
             return std::make_shared<metrics::BinaryAccuracy>(threshold, name_or(name, "binary_accuracy"),
                                                              dtype.value.value_or(ef::DType::Float32));
           }),
           "name"_a = py::none(), "dtype"_a = py::none(), "threshold"_a = 0.5);
}

// Progbar's layout; ef.keras.utils.Progbar writes it to sys.stdout so it interleaves
// with Python's own output.
void bind_progbar(py::module_& m) {
  py::class_<ef::utils::Progbar>(m, "_ProgbarLayout")
      .def(py::init([](int64_t target, int width) { return ef::utils::Progbar(target, width, 0, stdout, 0); }),
           "target"_a, "width"_a = 30)
      .def("render", &ef::utils::Progbar::render, "step"_a, "values"_a, "elapsed_seconds"_a);
}

}  // namespace

// A Keras name, an Initializer, or a Python function (shape, dtype) -> tensor.
nn::Initializer initializer_of(py::handle obj) {
  if (py::isinstance<nn::Initializer>(obj)) return obj.cast<nn::Initializer>();
  if (py::isinstance<py::str>(obj)) return nn::Initializer(obj.cast<std::string>());
  if (PyCallable_Check(obj.ptr())) {
    auto fn = std::make_shared<PyRef>(py::reinterpret_borrow<py::object>(obj));
    return nn::Initializer("custom", [fn](const ef::Shape& shape, ef::DType dtype) {
      py::gil_scoped_acquire gil;
      return to_tensor(fn->object(shape_tuple(shape), py::cast(dtype)), dtype);
    });
  }
  throw py::type_error(
      "an initializer must be a name such as \"zeros\", an Initializer, or a function (shape, dtype)");
}

void bind_mixed_precision(py::module_& keras) {
  py::module_ sub = keras.def_submodule("mixed_precision", "Policies (eagerflow/nn/mixed_precision.h)");
  py::class_<nn::Policy>(sub, "Policy")
      .def(py::init<const std::string&>(), "name"_a)
      .def_property_readonly("name", &nn::Policy::name)
      .def_property_readonly("compute_dtype", &nn::Policy::compute_dtype)
      .def_property_readonly("variable_dtype", &nn::Policy::variable_dtype)
      .def("__eq__", &nn::Policy::operator==)
      .def("__repr__", [](const nn::Policy& p) { return "<Policy \"" + p.name() + "\">"; });
  sub.def("set_global_policy", [](py::handle policy) {
    if (policy.is_none()) return nn::clear_global_policy();
    nn::set_global_policy(py::isinstance<nn::Policy>(policy) ? policy.cast<nn::Policy>()
                                                             : nn::Policy(policy.cast<std::string>()));
  });
  // Keras reports float32 when no policy was set; eagerflow's layers then follow their
  // inputs (float64 inputs give float64 weights), which float32 policy would not.
  sub.def("global_policy", [] { return nn::global_policy().value_or(nn::Policy("float32")); });
  sub.def("_global_policy_is_set", [] { return nn::global_policy().has_value(); });
}

void bind_nn(py::module_& m) {
  py::module_ keras = m.def_submodule("keras", "Layers, initializers, losses and metrics (eagerflow/nn)");
  bind_mixed_precision(keras);  // before Layer, whose dtype_policy returns a Policy
  bind_module(m);
  bind_initializers(keras);
  bind_losses(keras);
  bind_metrics(keras);
  bind_model(keras);  // after losses and metrics, before Sequential (a Model)
  bind_layers(keras);
  bind_simple_layers(keras);
  bind_progbar(keras);
}

}  // namespace efpy
