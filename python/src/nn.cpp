// ef.keras (layers, initializers) and ef.Module over eagerflow/nn; losses and metrics
// are in losses.cpp and metrics.cpp.
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

void bind_module(py::module_& m) {
  py::class_<nn::Module, std::shared_ptr<nn::Module>>(
      m, "Module", py::dynamic_attr(),
      R"doc(A container of variables and sub-modules, for models written by subclassing.

Assigning a Module, a Variable, or a list/tuple of them to a public attribute
tracks it under the attribute's name, so `variables`, `trainable_variables`,
named_variables() and checkpoints see it (paths such as "encoder/dense/kernel").

>>> class Affine(ef.Module):
...     def __init__(self):
...         super().__init__(name="affine")
...         self.w = ef.Variable(ef.ones([2, 2]))
...         self.b = ef.Variable(ef.zeros([2]))
...     def __call__(self, x):
...         return ef.matmul(x, self.w) + self.b
>>> [path for path, _ in Affine().named_variables()]
['w', 'b']

Args:
  name: The module's name (default "module").
)doc")
      .def(py::init([](py::handle name) { return std::make_shared<nn::Module>(name_or(name, "module")); }),
           "name"_a = py::none())
      .def_property_readonly("name", &nn::Module::name, "The module's name.")
      .def_property_readonly("variables", &nn::Module::variables,
                             "Every Variable of the module and its sub-modules, as a list.")
      .def_property_readonly("trainable_variables", &nn::Module::trainable_variables,
                             "The trainable Variables of the module and its sub-modules, as a list.")
      .def_property_readonly("non_trainable_variables", &nn::Module::non_trainable_variables,
                             "The non-trainable Variables (e.g. BatchNormalization's moving statistics).")
      .def("named_variables", &nn::Module::named_variables,
           "A list of (path, Variable) pairs, the paths being the keys checkpoints use "
           "(\"dense/kernel\", ...).")
      .def_property_readonly("_named_children",
                             [](const nn::Module& self) {
                               py::list out;
                               for (auto& [name, child] : self.named_children())
                                 out.append(py::make_tuple(name, child));
                               return out;
                             })
      .def("_track_variable", &nn::Module::track_variable, "name"_a, "variable"_a)
      .def("_track_module",
           [](nn::Module& self, const std::string& name, std::shared_ptr<nn::Module> module) {
             self.track_module(name, std::move(module));
           })
      .def("_untrack", &nn::Module::untrack)
      .def(
          "summary", [](const nn::Module& self) { py::print(self.summary(), "end"_a = ""); },
          "Prints a table of the variables' paths, shapes, dtypes and parameter counts.");

  py::class_<nn::Layer, nn::Module, PyLayer, std::shared_ptr<nn::Layer>>(
      m, "Layer", py::dynamic_attr(),
      R"doc(The base class of Keras layers: a Module mapping one tensor to one tensor.

Subclass it and override build(input_shape), which creates the variables with
add_weight on the first call (when the input's shape is known), and
call(inputs, training=False). Calling the layer builds it once, casts inputs to
its compute dtype under a mixed-precision policy, then runs call.

>>> class Scale(ef.keras.layers.Layer):
...     def build(self, input_shape):
...         self.factor = self.add_weight("factor", [input_shape[-1]], "ones")
...     def call(self, inputs, training=False):
...         return inputs * self.factor
>>> Scale()(ef.ones([2, 3])).shape
TensorShape([2, 3])

Args:
  name: The layer's name (default "layer").
)doc")
      .def(py::init([](py::handle name) { return std::make_shared<PyLayer>(name_or(name, "layer")); }),
           "name"_a = py::none())
      .def(
          "__call__",
          [](py::object self, py::handle inputs, bool training, py::handle mask) {
            return call_layer(self.cast<nn::Layer&>(), self, inputs, training, mask);
          },
          R"doc(Builds the layer on first use, then applies it to `inputs`.

Args:
  inputs: One tensor-like; a list of tensors for layers of several inputs
    (Concatenate, Add, ...); or KerasTensors (the functional API: keras.Input),
    which record the call instead of computing.
  training: Whether to run in training mode (Dropout, BatchNormalization,
    GaussianNoise behave differently).
  mask: None, or a bool [batch, steps] tensor saying which steps of the
    first input are real (eager calls; models pass masks on their own).

Returns:
  A Tensor (a list for layers of several outputs), or KerasTensors for
  symbolic inputs.
)doc",
          "inputs"_a, "training"_a = false, "mask"_a = py::none())
      .def(
          "compute_mask",
          [](const nn::Layer& self, py::handle inputs, py::handle mask) -> std::optional<ef::Tensor> {
            std::vector<ef::Tensor> args;
            if (py::isinstance<py::list>(inputs) || py::isinstance<py::tuple>(inputs)) {
              for (py::handle item : inputs) args.push_back(to_tensor(item));
            } else {
              args.push_back(to_tensor(inputs));
            }
            const std::optional<ef::Tensor> previous =
                mask.is_none() ? std::nullopt : std::optional(to_tensor(mask, ef::DType::Bool));
            return self.compute_mask(args, previous);
          },
          "The mask of the layer's output for `inputs` carrying `mask` (None: no mask).", "inputs"_a,
          "mask"_a = py::none())
      .def_property_readonly("supports_masking", &nn::Layer::supports_masking,
                             "Whether the layer passes a mask on to the layers after it.")
      .def(
          "build",
          [](nn::Layer& self, ShapeArg input_shape) { (self.*(&LayerAccess::build))(input_shape.value); },
          "Creates the layer's variables for inputs of `input_shape` (a tuple); override it. "
          "The base version creates none.",
          "input_shape"_a)
      .def(
          "call",
          [](nn::Layer& self, TensorArg inputs, bool training) {
            return (self.*(&LayerAccess::call))(inputs.value, training);
          },
          "The layer's computation on a built layer: override it (call the layer, not this).", "inputs"_a,
          "training"_a = false)
      .def_property_readonly("built", &nn::Layer::built,
                             "Whether the variables exist (after the first call).")
      .def(
          "get_config",
          [](const nn::Layer& self) {
            // A Python subclass's super().get_config() is the base one (a virtual call would
            // come back to the Python override).
            const bool python_class =
                dynamic_cast<const PyLayer*>(&self) || dynamic_cast<const PyLayerOf<nn::Model>*>(&self);
            return dict_of_config(python_class ? self.nn::Layer::get_config() : self.get_config());
          },
          "The layer's constructor arguments as a dict (Keras' get_config), for from_config and saving.")
      .def_property_readonly("_class_name", &nn::Layer::class_name)
      .def_property_readonly(
          "dtype", &nn::Layer::dtype,
          "The dtype of the layer's variables: its policy's variable dtype, else the first "
          "floating input's, else float32.")
      .def_property_readonly("compute_dtype", &nn::Layer::compute_dtype,
                             "The dtype call() computes in: the policy's compute dtype, else dtype.")
      .def_property_readonly("variable_dtype", &nn::Layer::dtype, "The same as dtype.")
      // Keras' dtype= argument: a policy or its name, set before the first call.
      .def_property(
          "dtype_policy", [](const nn::Layer& self) { return self.dtype_policy(); },
          [](nn::Layer& self, py::handle policy) {
            self.set_dtype_policy(py::isinstance<nn::Policy>(policy)
                                      ? policy.cast<nn::Policy>()
                                      : nn::Policy(policy.cast<std::string>()));
          },
          "The mixed-precision Policy (None without one); set it (a Policy or a name such as "
          "\"float32\") before the first call.")
      .def(
          "add_weight",
          [](nn::Layer& self, const std::string& name, ShapeArg shape, py::handle initializer,
             bool trainable) {
            return self.add_weight(name, shape.value, initializer_of(initializer), trainable);
          },
          R"doc(Creates a variable "<layer>/<name>" in the layer's dtype and tracks it under `name`.

Args:
  name: The variable's name within the layer.
  shape: A list or tuple of ints.
  initializer: a Keras name ("glorot_uniform", "zeros", ...), an
    Initializer, or a function (shape, dtype) -> tensor
    (default "glorot_uniform").
  trainable: Whether the variable is trainable (default True).

Returns:
  The new Variable.
)doc",
          "name"_a, "shape"_a, "initializer"_a = "glorot_uniform", "trainable"_a = true);
}

void bind_layers(py::module_& m) {
  py::class_<nn::Dense, nn::Layer, std::shared_ptr<nn::Dense>>(
      m, "Dense", R"doc(A densely connected layer: activation(inputs @ kernel + bias) over the last axis.

kernel is [input features, units]; inputs of rank > 2 are multiplied along their
last axis ([batch, ..., features] -> [batch, ..., units]).

>>> dense = ef.keras.layers.Dense(3, activation="relu")
>>> dense(ef.ones([2, 4])).shape, dense.kernel.shape
(TensorShape([2, 3]), TensorShape([4, 3]))

Args:
  units: The number of outputs.
  activation: None (linear), a Keras name ("relu", "sigmoid", "tanh", "softmax",
    "gelu", "swish", ...), or a Python function of a tensor.
  use_bias: Whether to add a bias (default True).
  kernel_initializer: a Keras name ("glorot_uniform", "zeros", ...), an
    Initializer, or a function (shape, dtype) -> tensor
    (default "glorot_uniform").
  bias_initializer: The same forms (default "zeros").
  name: The layer's name (default "dense").

Raises (when called):
  InvalidArgumentError: inputs of rank < 2, or another number of input features
    than the layer was built for.
)doc")
      .def(py::init([](int64_t units, py::handle activation, bool use_bias, py::handle kernel_initializer,
                       py::handle bias_initializer, py::handle name) {
             return std::make_shared<nn::Dense>(
                 units, nn::DenseOptions{activation_of(activation, "Dense"), use_bias,
                                         initializer_of(kernel_initializer), initializer_of(bias_initializer),
                                         name_or(name, "dense")});
           }),
           "units"_a, "activation"_a = py::none(), "use_bias"_a = true,
           "kernel_initializer"_a = "glorot_uniform", "bias_initializer"_a = "zeros", "name"_a = py::none())
      .def_property_readonly("units", &nn::Dense::units, "The number of outputs.")
      .def_property_readonly(
          "kernel", &nn::Dense::kernel,
          "The [input features, units] Variable (FailedPreconditionError before the first call).")
      .def_property_readonly(
          "bias", &nn::Dense::bias,
          "The [units] Variable (FailedPreconditionError before the first call or without bias).");
  py::class_<nn::Flatten, nn::Layer, std::shared_ptr<nn::Flatten>>(
      m, "Flatten", R"doc(Flattens each example: [batch, d1, d2, ...] -> [batch, d1 * d2 * ...].

>>> ef.keras.layers.Flatten()(ef.ones([2, 3, 4])).shape
TensorShape([2, 12])

Args:
  name: The layer's name (default "flatten").
)doc")
      .def(py::init([](py::handle name) { return std::make_shared<nn::Flatten>(name_or(name, "flatten")); }),
           "name"_a = py::none());
  py::class_<nn::Dropout, nn::Layer, std::shared_ptr<nn::Dropout>>(
      m, "Dropout", R"doc(Randomly zeroes inputs while training, scaling the rest by 1 / (1 - rate).

The identity when called with training=False (the default), as in inference.

>>> ef.keras.layers.Dropout(0.5)(ef.ones([4])).numpy()
array([1., 1., 1., 1.], dtype=float32)

Args:
  rate: A float in [0, 1), the fraction of inputs to drop.
  seed: None, or an int seed (see ef.random.set_seed).
  name: The layer's name (default "dropout").
)doc")
      .def(py::init([](double rate, std::optional<int64_t> seed, py::handle name) {
             return std::make_shared<nn::Dropout>(rate, seed, name_or(name, "dropout"));
           }),
           "rate"_a, "seed"_a = py::none(), "name"_a = py::none());
  py::class_<nn::LayerNormalization, nn::Layer, std::shared_ptr<nn::LayerNormalization>>(
      m, "LayerNormalization",
      R"doc(Normalizes each example over one axis: (x - mean) / sqrt(variance + epsilon) * gamma + beta.

mean and variance are computed per example over `axis`; gamma and beta (of that
axis' size) are learned.

>>> ef.keras.layers.LayerNormalization()(ef.constant([[1., 3.]])).shape
TensorShape([1, 2])

Args:
  axis: An int, the normalized axis (default -1; one axis only).
  epsilon: Added to the variance (default 1e-3).
  center: Whether to learn the offset beta (default True).
  scale: Whether to learn the factor gamma (default True).
  beta_initializer: a Keras name ("glorot_uniform", "zeros", ...), an
    Initializer, or a function (shape, dtype) -> tensor (default "zeros").
  gamma_initializer: The same forms (default "ones").
  name: The layer's name (default "layer_normalization").
)doc")
      .def(py::init([](int64_t axis, double epsilon, bool center, bool scale, py::handle beta_initializer,
                       py::handle gamma_initializer, py::handle name) {
             return std::make_shared<nn::LayerNormalization>(nn::LayerNormalizationOptions{
                 axis, epsilon, center, scale, initializer_of(beta_initializer), initializer_of(gamma_initializer),
                 name_or(name, "layer_normalization")});
           }),
           "axis"_a = -1, "epsilon"_a = 1e-3, "center"_a = true, "scale"_a = true,
           "beta_initializer"_a = "zeros", "gamma_initializer"_a = "ones", "name"_a = py::none());
  py::class_<nn::Embedding, nn::Layer, std::shared_ptr<nn::Embedding>>(
      m, "Embedding", R"doc(Looks up rows of an [input_dim, output_dim] table for integer ids.

[...] int32/int64 ids give [..., output_dim] vectors.

>>> ef.keras.layers.Embedding(10, 4)(ef.constant([[1, 2, 3]])).shape
TensorShape([1, 3, 4])

Args:
  input_dim: The number of ids (the vocabulary size); ids are in [0, input_dim).
  output_dim: The size of each vector.
  embeddings_initializer: None (uniform in [-0.05, 0.05], as Keras), or a Keras name ("glorot_uniform", "zeros", ...), an
    Initializer, or a function (shape, dtype) -> tensor.
  mask_zero: Whether id 0 is padding: the layers after it in a model then
    skip those steps (Masking's mask).
  name: The layer's name (default "embedding").

Raises (when called):
  InvalidArgumentError: an id outside [0, input_dim).
)doc")
      .def(py::init([](int64_t input_dim, int64_t output_dim, py::handle embeddings_initializer,
                       bool mask_zero, py::handle name) {
             nn::EmbeddingOptions options{.mask_zero = mask_zero, .name = name_or(name, "embedding")};
             if (!embeddings_initializer.is_none())
               options.embeddings_initializer = initializer_of(embeddings_initializer);
             return std::make_shared<nn::Embedding>(input_dim, output_dim, std::move(options));
           }),
           "input_dim"_a, "output_dim"_a, "embeddings_initializer"_a = py::none(), "mask_zero"_a = false,
           "name"_a = py::none())
      .def_property_readonly("embeddings", &nn::Embedding::embeddings,
                             "The [input_dim, output_dim] table Variable (after the first call).");
  py::class_<nn::Conv2D, nn::Layer, std::shared_ptr<nn::Conv2D>>(
      m, "Conv2D", R"doc(A 2-D convolution layer on NHWC images: activation(conv2d(inputs, kernel) + bias).

inputs [batch, height, width, channels]; kernel [kh, kw, channels, filters].

>>> conv = ef.keras.layers.Conv2D(8, 3, padding="same", activation="relu")
>>> conv(ef.ones([2, 5, 5, 3])).shape, conv.kernel.shape
(TensorShape([2, 5, 5, 8]), TensorShape([3, 3, 3, 8]))

Args:
  filters: The number of output channels.
  kernel_size: An int or a pair of ints (height, width).
  strides: An int or a pair of ints (default 1).
  padding: "valid" (default) or "same", in either case.
  activation: None (linear), a Keras name ("relu", "sigmoid", "tanh", "softmax",
    "gelu", "swish", ...), or a Python function of a tensor.
  dilation_rate: An int or a pair of ints (default 1).
  use_bias: Whether to add a bias (default True).
  kernel_initializer: a Keras name ("glorot_uniform", "zeros", ...), an
    Initializer, or a function (shape, dtype) -> tensor
    (default "glorot_uniform").
  bias_initializer: The same forms (default "zeros").
  name: The layer's name (default "conv2d").

Raises (when called):
  InvalidArgumentError: inputs not of rank 4, or another channel count than the
    layer was built for.
)doc")
      .def(
          py::init([](int64_t filters, py::handle kernel_size, py::handle strides, const std::string& padding,
                      py::handle dilation_rate, py::handle activation, bool use_bias,
                      py::handle kernel_initializer, py::handle bias_initializer, py::handle name) {
            return std::make_shared<nn::Conv2D>(
                filters, to_ints(kernel_size, "kernel_size"),
                nn::Conv2DOptions{
                    to_ints(strides, "strides"), padding, to_ints(dilation_rate, "dilation_rate"),
                    activation_of(activation, "Conv2D"), use_bias, initializer_of(kernel_initializer),
                    initializer_of(bias_initializer), name_or(name, "conv2d")});
          }),
          "filters"_a, "kernel_size"_a, "strides"_a = 1, "padding"_a = "valid", "dilation_rate"_a = 1,
          "activation"_a = py::none(), "use_bias"_a = true, "kernel_initializer"_a = "glorot_uniform",
          "bias_initializer"_a = "zeros", "name"_a = py::none())
      .def_property_readonly("kernel", &nn::Conv2D::kernel,
                             "The [kh, kw, channels, filters] Variable (after the first call).")
      .def_property_readonly("bias", &nn::Conv2D::bias, "The [filters] Variable (after the first call).");
  auto pool = [&]<class Pool>(const char* name, const char* doc) {
    py::class_<Pool, nn::Layer, std::shared_ptr<Pool>>(m, name, doc)
        .def(py::init([](py::handle pool_size, py::handle strides, const std::string& padding,
                         py::handle layer_name) {
               nn::Pool2DOptions options;
               if (!strides.is_none()) options.strides = to_ints(strides, "strides");
               options.padding = padding;
               if (!layer_name.is_none()) options.name = layer_name.cast<std::string>();
               return std::make_shared<Pool>(to_ints(pool_size, "pool_size"), std::move(options));
             }),
             "pool_size"_a = 2, "strides"_a = py::none(), "padding"_a = "valid", "name"_a = py::none());
  };
  pool.operator()<nn::MaxPool2D>("MaxPool2D",
                                 R"doc(Max pooling over pool_size windows of NHWC images (ef.nn.max_pool2d).

Also available as MaxPooling2D.

>>> ef.keras.layers.MaxPool2D()(ef.ones([1, 4, 4, 2])).shape
TensorShape([1, 2, 2, 2])

Args:
  pool_size: An int or a pair of ints (height, width) (default 2).
  strides: None (pool_size), an int or a pair of ints.
  padding: "valid" (default) or "same", in either case.
  name: The layer's name (default "max_pooling2d").
)doc");
  pool.operator()<nn::AveragePool2D>(
      "AveragePool2D", R"doc(Average pooling over pool_size windows of NHWC images (ef.nn.avg_pool2d).

Also available as AveragePooling2D. With "same" padding the mean counts
only the window's positions inside the input.

>>> ef.keras.layers.AveragePooling2D()(ef.ones([1, 4, 4, 2])).shape
TensorShape([1, 2, 2, 2])

Args:
  pool_size: An int or a pair of ints (height, width) (default 2).
  strides: None (pool_size), an int or a pair of ints.
  padding: "valid" (default) or "same", in either case.
  name: The layer's name (default "average_pooling2d").
)doc");
  py::class_<nn::BatchNormalization, nn::Layer, std::shared_ptr<nn::BatchNormalization>> batch_normalization(
      m, "BatchNormalization", R"doc(Normalizes over every axis but `axis`, with learned gamma and beta.

Training (training=True): normalizes with the batch's mean and population
variance and moves the moving statistics toward them,
moving = moving * momentum + batch * (1 - momentum). Inference (the default):
normalizes with the moving statistics. The moving statistics are non-trainable
and their updates are never recorded by tapes.

>>> bn = ef.keras.layers.BatchNormalization()
>>> bn(ef.ones([4, 3]), training=True).shape
TensorShape([4, 3])
>>> bn.moving_mean.numpy()
array([0.01, 0.01, 0.01], dtype=float32)

Args:
  axis: The feature axis (default -1).
  momentum: The moving statistics' momentum (default 0.99).
  epsilon: Added to the variance (default 1e-3).
  center: Whether to learn the offset beta (default True).
  scale: Whether to learn the factor gamma (default True).
  beta_initializer: a Keras name ("glorot_uniform", "zeros", ...), an
    Initializer, or a function (shape, dtype) -> tensor (default "zeros").
  gamma_initializer: The same forms (default "ones").
  moving_mean_initializer: The same forms (default "zeros").
  moving_variance_initializer: The same forms (default "ones").
  name: The layer's name (default "batch_normalization").
)doc");
  def_batch_normalization_init<nn::BatchNormalization>(batch_normalization, "batch_normalization");
  batch_normalization
      .def_property_readonly("moving_mean", &nn::BatchNormalization::moving_mean,
                             "The non-trainable moving mean Variable (after the first call).")
      .def_property_readonly("moving_variance", &nn::BatchNormalization::moving_variance,
                             "The non-trainable moving variance Variable (after the first call).");
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
  py::class_<nn::Initializer>(
      m, "Initializer", R"doc(How a layer fills a new variable; call it with a shape (and dtype) for a tensor.

Made from a Keras name ("glorot_uniform", "glorot_normal", "he_normal",
"he_uniform", "lecun_normal", "orthogonal", "zeros", "ones", "random_normal",
"random_uniform", "truncated_normal"), from another Initializer, or from a
Python function (shape, dtype) -> tensor. Fan-in and fan-out follow Keras (a
convolution kernel's receptive field multiplies both). Seeded initializers give
the same values on every call.

>>> ef.keras.initializers.Initializer("ones")([2], ef.float64).numpy()
array([1., 1.])

Args:
  identifier: A name, an Initializer, or a function (shape, dtype) -> tensor.

Raises:
  InvalidArgumentError: an unknown name (the message lists the known ones).
)doc")
      .def(py::init([](py::handle spec) { return initializer_of(spec); }), "identifier"_a)
      .def(
          "__call__",
          [](const nn::Initializer& self, ShapeArg shape, DTypeArg dtype) {
            return self(shape.value, dtype.value.value_or(ef::DType::Float32));
          },
          "A new tensor of `shape` (a list of ints) and floating `dtype` (default float32).", "shape"_a,
          "dtype"_a = py::none())
      .def_property_readonly("name", &nn::Initializer::name,
                             "The initializer's name (\"glorot_uniform\", ...).")
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
  py::class_<nn::Policy>(
      sub, "Policy",
      R"doc(A mixed-precision policy: the dtype a layer computes in and the one its variables use.

"mixed_float16" and "mixed_bfloat16" compute in the half dtype and keep float32
variables (read in the half dtype inside the layer's call); "float32",
"float64", "float16" and "bfloat16" use one dtype for both.

>>> policy = ef.keras.mixed_precision.Policy("mixed_bfloat16")
>>> policy.compute_dtype, policy.variable_dtype
(ef.bfloat16, ef.float32)

Args:
  name: One of the names above.

Raises:
  InvalidArgumentError: another name.
)doc")
      .def(py::init<const std::string&>(), "name"_a)
      .def_property_readonly("name", &nn::Policy::name, "The policy's name.")
      .def_property_readonly("compute_dtype", &nn::Policy::compute_dtype, "The dtype layers compute in.")
      .def_property_readonly("variable_dtype", &nn::Policy::variable_dtype, "The dtype of layers' variables.")
      .def("__eq__", &nn::Policy::operator==)
      .def("__repr__", [](const nn::Policy& p) { return "<Policy \"" + p.name() + "\">"; });
  sub.def(
      "set_global_policy",
      [](py::handle policy) {
        if (policy.is_none()) return nn::clear_global_policy();
        nn::set_global_policy(py::isinstance<nn::Policy>(policy) ? policy.cast<nn::Policy>()
                                                                 : nn::Policy(policy.cast<std::string>()));
      },
      R"doc(Sets the policy of every layer made from now on without one of its own (process-wide).

    ef.keras.mixed_precision.set_global_policy("mixed_bfloat16")

Args:
  policy: A Policy, a policy name, or None (no global policy: layers follow
    their first input's dtype).

Raises:
  InvalidArgumentError: an unknown policy name.
)doc");
  // Keras reports float32 when no policy was set; eagerflow's layers then follow their
  // inputs (float64 inputs give float64 weights), which float32 policy would not.
  sub.def(
      "global_policy", [] { return nn::global_policy().value_or(nn::Policy("float32")); },
      R"doc(Returns the global Policy; "float32" when none was set, as Keras reports it.

Without a set policy, layers actually follow their inputs' dtype (float64 inputs
give float64 weights), which a "float32" policy would not.
)doc");
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
  bind_callbacks(keras);
  bind_functional(keras);
  bind_layers(keras);
  bind_simple_layers(keras);
  bind_conv_norm_layers(keras);
  bind_progbar(keras);
}

}  // namespace efpy
