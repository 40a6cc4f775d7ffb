// ef.keras.layers without weights (eagerflow/nn/simple_layers.h), under Keras' names
// and arguments.
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace nn = ef::nn;

// An int or a sequence of ints, as a list.
std::vector<int64_t> ints_of(py::handle value, const char* what) {
  if (py::isinstance<py::int_>(value)) return {int64_of(value, what)};
  std::vector<int64_t> out;
  for (py::handle item : value) {
    if (py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item))
      for (py::handle inner : item) out.push_back(int64_of(inner, what));  // ((top, bottom), (left, right))
    else
      out.push_back(int64_of(item, what));
  }
  return out;
}

template <class L>
py::class_<L, nn::Layer, std::shared_ptr<L>> layer_class(py::module_& m, const char* name,
                                                         const char* doc = "") {
  return py::class_<L, nn::Layer, std::shared_ptr<L>>(m, name, doc);
}

}  // namespace

namespace {

bool is_activation_name(const std::string& name) {
  try {
    (void)nn::Activation(name);
    return true;
  } catch (const ef::Error&) {
    return false;
  }
}

// Whether `obj` is eagerflow's own function of that name (ef.nn.relu, ef.math.tanh, ...).
bool is_builtin_function(py::handle obj, const std::string& name) {
  for (const char* module : {"eagerflow", "eagerflow.nn", "eagerflow.math"}) {
    py::object found = py::getattr(py::module_::import(module), name.c_str(), py::none());
    if (found.is(obj)) return true;
  }
  return false;
}

}  // namespace

nn::Activation activation_of(py::handle obj, const char* layer, const char* arg) {
  if (obj.is_none()) return nn::Activation();
  if (py::isinstance<py::str>(obj)) return nn::Activation(obj.cast<std::string>());
  if (PyCallable_Check(obj.ptr())) {
    std::string name =
        py::hasattr(obj, "__name__") ? py::str(obj.attr("__name__")).cast<std::string>() : "custom";
    // eagerflow's own functions become the built-in activation of their name, which a
    // config saves and loads by name. A function of the user's keeps its __name__ for
    // the config, renamed when it shares a built-in's, so that loading fails loudly
    // ("unknown activation") instead of silently putting the built-in in its place.
    if (is_activation_name(name)) {
      if (is_builtin_function(obj, name)) return nn::Activation(name);
      name = "custom_" + name;
    }
    auto fn = std::make_shared<PyRef>(py::reinterpret_borrow<py::object>(obj));
    return nn::Activation(
        [fn](const ef::Tensor& x) {
          py::gil_scoped_acquire gil;
          return to_tensor(fn->object(x));
        },
        name);
  }
  throw py::type_error(std::string(layer) + ": " + arg +
                       " must be None, a name such as \"relu\", or a function of a tensor, got " +
                       std::string(py::str(py::type::of(obj).attr("__name__"))));
}

void bind_simple_layers(py::module_& keras) {
  layer_class<nn::ActivationLayer>(
      keras, "Activation",
      R"doc(Applies an activation function, given by Keras name or as a function, as a layer.

>>> ef.keras.layers.Activation("relu")(ef.constant([-1., 2.])).numpy()
array([0., 2.], dtype=float32)
>>> ef.keras.layers.Activation(ef.nn.relu)(ef.constant([-1., 2.])).numpy()
array([0., 2.], dtype=float32)

Args:
  activation: A name: "linear", "relu", "relu6", "sigmoid", "tanh", "softmax",
    "log_softmax", "elu", "selu", "gelu", "softplus", "softsign",
    "leaky_relu", "swish" or "silu"; a function of a tensor; or None (linear).
  name: The layer's name (default "activation").

Raises:
  InvalidArgumentError: an unknown name (the message lists the known ones).
  TypeError: activation is none of these.
)doc")
      .def(py::init([](py::handle activation, py::handle name) {
             return std::make_shared<nn::ActivationLayer>(activation_of(activation, "Activation"),
                                                          name_or(name, "activation"));
           }),
           "activation"_a, "name"_a = py::none());
  layer_class<nn::ReLU>(keras, "ReLU", R"doc(The rectified linear unit with Keras' options.

min(x, max_value) for x >= threshold, negative_slope * (x - threshold) below.

>>> ef.keras.layers.ReLU(max_value=6.)(ef.constant([-1., 2., 8.])).numpy()
array([0., 2., 6.], dtype=float32)

Args:
  max_value: None (no upper bound), or the largest output.
  negative_slope: The slope below the threshold (default 0).
  threshold: Where the linear part starts (default 0).
  name: The layer's name (default "re_lu").
)doc")
      .def(py::init([](std::optional<double> max_value, double negative_slope, double threshold,
                       py::handle name) {
             return std::make_shared<nn::ReLU>(max_value, negative_slope, threshold, name_or(name, "re_lu"));
           }),
           "max_value"_a = py::none(), "negative_slope"_a = 0.0, "threshold"_a = 0.0, "name"_a = py::none());
  layer_class<nn::LeakyReLU>(keras, "LeakyReLU", R"doc(Leaky ReLU: x for x >= 0, negative_slope * x below.

>>> ef.keras.layers.LeakyReLU()(ef.constant([-1., 2.])).numpy()
array([-0.3,  2. ], dtype=float32)

Args:
  negative_slope: The slope for negative inputs (default 0.3, as Keras).
  name: The layer's name (default "leaky_re_lu").
)doc")
      .def(py::init([](double negative_slope, py::handle name) {
             return std::make_shared<nn::LeakyReLU>(negative_slope, name_or(name, "leaky_re_lu"));
           }),
           "negative_slope"_a = 0.3, "name"_a = py::none());
  layer_class<nn::ELU>(keras, "ELU", R"doc(Exponential linear unit: x for x > 0, alpha * (exp(x) - 1) below.

>>> ef.keras.layers.ELU()(ef.constant([0., 2.])).numpy()
array([0., 2.], dtype=float32)

Args:
  alpha: The scale of the negative part (default 1).
  name: The layer's name (default "elu").
)doc")
      .def(py::init([](double alpha, py::handle name) {
             return std::make_shared<nn::ELU>(alpha, name_or(name, "elu"));
           }),
           "alpha"_a = 1.0, "name"_a = py::none());
  layer_class<nn::Softmax>(keras, "Softmax", R"doc(Softmax over one axis, as a layer.

>>> ef.keras.layers.Softmax()(ef.constant([[1., 1.]])).numpy()
array([[0.5, 0.5]], dtype=float32)

Args:
  axis: The axis to normalize (default -1).
  name: The layer's name (default "softmax").
)doc")
      .def(py::init([](int64_t axis, py::handle name) {
             return std::make_shared<nn::Softmax>(axis, name_or(name, "softmax"));
           }),
           "axis"_a = -1, "name"_a = py::none());
  layer_class<nn::Reshape>(keras, "Reshape",
                           R"doc(Reshapes each example to target_shape (the batch axis stays).

>>> ef.keras.layers.Reshape((3, -1))(ef.zeros([4, 6])).shape
TensorShape([4, 3, 2])

Args:
  target_shape: A tuple of ints (without the batch axis); one may be -1.
  name: The layer's name (default "reshape").
)doc")
      .def(py::init([](py::handle target_shape, py::handle name) {
             return std::make_shared<nn::Reshape>(ints_of(target_shape, "target_shape"),
                                                  name_or(name, "reshape"));
           }),
           "target_shape"_a, "name"_a = py::none());
  layer_class<nn::Permute>(
      keras, "Permute",
      R"doc(Permutes the axes of each example; dims count from 1 (the batch axis stays first).

>>> ef.keras.layers.Permute((2, 1))(ef.zeros([4, 3, 5])).shape
TensorShape([4, 5, 3])

Args:
  dims: A tuple, a permutation of 1..rank-1.
  name: The layer's name (default "permute").
)doc")
      .def(py::init([](py::handle dims, py::handle name) {
             return std::make_shared<nn::Permute>(ints_of(dims, "dims"), name_or(name, "permute"));
           }),
           "dims"_a, "name"_a = py::none());
  layer_class<nn::RepeatVector>(
      keras, "RepeatVector",
      R"doc(Repeats each example n times along a new axis: [batch, features] -> [batch, n, features].

>>> ef.keras.layers.RepeatVector(3)(ef.zeros([4, 5])).shape
TensorShape([4, 3, 5])

Args:
  n: The number of repetitions.
  name: The layer's name (default "repeat_vector").
)doc")
      .def(py::init([](int64_t n, py::handle name) {
             return std::make_shared<nn::RepeatVector>(n, name_or(name, "repeat_vector"));
           }),
           "n"_a, "name"_a = py::none());
  layer_class<nn::GlobalPooling>(keras, "_GlobalPooling",
                                 "A global pooling layer (made by GlobalAveragePooling1D, ...).");
  using Kind = nn::GlobalPooling::Kind;
  struct GlobalPoolingDef {
    const char* python_name;
    Kind kind;
    const char* doc;
  };
  for (auto [python_name, kind, doc] :
       {GlobalPoolingDef{"GlobalAveragePooling1D", Kind::kAverage1D,
                         R"doc(Averages [batch, steps, channels] over the steps: [batch, channels].

>>> ef.keras.layers.GlobalAveragePooling1D()(ef.ones([2, 7, 3])).shape
TensorShape([2, 3])

Args:
  keepdims: If True, keep the steps axis with size 1.
  name: The layer's name (default "global_average_pooling1d").
)doc"},
        GlobalPoolingDef{"GlobalAveragePooling2D", Kind::kAverage2D,
                         R"doc(Averages NHWC images over height and width: [batch, channels].

>>> ef.keras.layers.GlobalAveragePooling2D()(ef.ones([2, 4, 4, 3])).shape
TensorShape([2, 3])

Args:
  keepdims: If True, keep height and width with size 1.
  name: The layer's name (default "global_average_pooling2d").
)doc"},
        GlobalPoolingDef{
            "GlobalMaxPooling1D", Kind::kMax1D,
            R"doc(Takes the maximum of [batch, steps, channels] over the steps: [batch, channels].

>>> ef.keras.layers.GlobalMaxPooling1D()(ef.ones([2, 7, 3])).shape
TensorShape([2, 3])

Args:
  keepdims: If True, keep the steps axis with size 1.
  name: The layer's name (default "global_max_pooling1d").
)doc"},
        GlobalPoolingDef{"GlobalMaxPooling2D", Kind::kMax2D,
                         R"doc(Takes the maximum of NHWC images over height and width: [batch, channels].

>>> ef.keras.layers.GlobalMaxPooling2D(keepdims=True)(ef.ones([2, 4, 4, 3])).shape
TensorShape([2, 1, 1, 3])

Args:
  keepdims: If True, keep height and width with size 1.
  name: The layer's name (default "global_max_pooling2d").
)doc"}})
    keras.def(
        python_name,
        [kind](bool keepdims, py::handle name) {
          return std::make_shared<nn::GlobalPooling>(kind, keepdims, name_or(name, ""));
        },
        doc, "keepdims"_a = false, "name"_a = py::none());
  layer_class<nn::ZeroPadding2D>(keras, "ZeroPadding2D",
                                 R"doc(Adds rows and columns of zeros around NHWC images.

>>> ef.keras.layers.ZeroPadding2D((1, 2))(ef.ones([1, 2, 2, 1])).shape
TensorShape([1, 4, 6, 1])

Args:
  padding: An int (all four sides), (rows, cols) (each on both sides), or
    ((top, bottom), (left, right)). Default 1.
  name: The layer's name (default "zero_padding2d").
)doc")
      .def(py::init([](py::handle padding, py::handle name) {
             return std::make_shared<nn::ZeroPadding2D>(ints_of(padding, "padding"),
                                                        name_or(name, "zero_padding2d"));
           }),
           "padding"_a = 1, "name"_a = py::none());
  layer_class<nn::Cropping2D>(keras, "Cropping2D",
                              R"doc(Removes rows and columns from the edges of NHWC images.

>>> ef.keras.layers.Cropping2D(((1, 0), (0, 2)))(ef.ones([1, 4, 4, 1])).shape
TensorShape([1, 3, 2, 1])

Args:
  cropping: An int (all four sides), (rows, cols) (each on both sides), or
    ((top, bottom), (left, right)). Default 0.
  name: The layer's name (default "cropping2d").
)doc")
      .def(py::init([](py::handle cropping, py::handle name) {
             return std::make_shared<nn::Cropping2D>(ints_of(cropping, "cropping"),
                                                     name_or(name, "cropping2d"));
           }),
           "cropping"_a = 0, "name"_a = py::none());
  layer_class<nn::UpSampling2D>(
      keras, "UpSampling2D",
      R"doc(Repeats each pixel of NHWC images size = (rows, cols) times (nearest neighbour).

>>> ef.keras.layers.UpSampling2D()(ef.ones([1, 2, 3, 1])).shape
TensorShape([1, 4, 6, 1])

Args:
  size: An int or a pair (rows, cols) (default 2).
  name: The layer's name (default "up_sampling2d").
)doc")
      .def(py::init([](py::handle size, py::handle name) {
             return std::make_shared<nn::UpSampling2D>(ints_of(size, "size"), name_or(name, "up_sampling2d"));
           }),
           "size"_a = 2, "name"_a = py::none());
  layer_class<nn::Recurrent>(keras, "_Recurrent", "A recurrent layer (made by SimpleRNN, LSTM or GRU).")
      .def_property_readonly("units", &nn::Recurrent::units, "The size of the state (and of each output).")
      .def("__call__", &call_recurrent,
           R"doc(Runs the layer over `inputs` [batch, steps, features].

Args:
  inputs: A tensor, or a KerasTensor (the functional API).
  initial_state: None (zeros), or the states to start from: [h, c] for LSTM,
    [h] (or h) otherwise, each [batch, units].
  mask: None, or a bool [batch, steps] tensor; masked steps keep the states
    and repeat the previous output (eager calls; models pass masks on their own).
  training: Unused (no dropout yet).

Returns:
  The output, or [output, final states...] with return_state.
)doc",
           "inputs"_a, "initial_state"_a = py::none(), "mask"_a = py::none(), "training"_a = false)
      .def("reset_states", &nn::Recurrent::reset_states, "Zeroes a stateful layer's states.");
  using Cell = nn::Recurrent::Cell;
  struct RecurrentDef {
    const char* python_name;
    Cell cell;
    const char* doc;
  };
  for (auto [python_name, cell, doc] :
       {RecurrentDef{
            "SimpleRNN", Cell::kSimpleRNN,
            R"doc(A fully connected recurrent layer: h = activation(x @ kernel + h @ recurrent_kernel + bias).

Inputs are [batch, steps, features]; the output is the last step's state [batch,
units], or every step's [batch, steps, units] with return_sequences. Weights use
Keras' layout: kernel [features, 1 * units], recurrent_kernel [units, 1 * units],
bias [units]. The gradient is backpropagation through time.

>>> ef.keras.layers.SimpleRNN(4)(ef.ones([2, 5, 3])).shape
TensorShape([2, 4])

Args:
  units: The size of the state.
  activation: The output activation: a Keras name, a function of a tensor, or
    None (linear) (default "tanh").
  recurrent_activation: Unused by SimpleRNN (default "sigmoid").
  use_bias: Whether to add biases (default True).
  kernel_initializer: a Keras name, an Initializer, or a function (shape, dtype) -> tensor (default "glorot_uniform").
  recurrent_initializer: The same forms (default "orthogonal").
  bias_initializer: The same forms (default "zeros").
  unit_forget_bias: Unused by SimpleRNN (default True).
  return_sequences: Whether to return every step's output (default False).
  return_state: Whether to return [output, final states...] (default False).
  go_backwards: Whether to run over the steps in reverse (outputs too).
  stateful: Whether each call starts from the last call's final states (fixed
    batch size; reset_states() zeroes them) (default False).
  zero_output_for_mask: Whether masked steps output zeros instead of the
    previous output (default False).
  reset_after: Unused by SimpleRNN (default True).
  name: The layer's name (default "simple_rnn").
)doc"},
        RecurrentDef{
            "LSTM", Cell::kLSTM,
            R"doc(Long short-term memory (Hochreiter and Schmidhuber), with Keras' gate order i, f, c, o.

Inputs are [batch, steps, features]; the output is the last step's state [batch,
units], or every step's [batch, steps, units] with return_sequences. Weights use
Keras' layout: kernel [features, 4 * units], recurrent_kernel [units, 4 * units],
bias [4 * units]. The gradient is backpropagation through time.

>>> ef.keras.layers.LSTM(4, return_sequences=True)(ef.ones([2, 5, 3])).shape
TensorShape([2, 5, 4])

Args:
  units: The size of the state.
  activation: The output activation: a Keras name, a function of a tensor, or
    None (linear) (default "tanh").
  recurrent_activation: The gates' activation, in the same forms (default
    "sigmoid").
  use_bias: Whether to add biases (default True).
  kernel_initializer: a Keras name, an Initializer, or a function (shape, dtype) -> tensor (default "glorot_uniform").
  recurrent_initializer: The same forms (default "orthogonal").
  bias_initializer: The same forms (default "zeros").
  unit_forget_bias: Whether the forget gate's bias starts at 1 (default True).
  return_sequences: Whether to return every step's output (default False).
  return_state: Whether to return [output, final states...] (default False).
  go_backwards: Whether to run over the steps in reverse (outputs too).
  stateful: Whether each call starts from the last call's final states (fixed
    batch size; reset_states() zeroes them) (default False).
  zero_output_for_mask: Whether masked steps output zeros instead of the
    previous output (default False).
  reset_after: Unused by LSTM (default True).
  name: The layer's name (default "lstm").
)doc"},
        RecurrentDef{"GRU", Cell::kGRU,
                     R"doc(Gated recurrent unit, with Keras' gate order z, r, h.

Inputs are [batch, steps, features]; the output is the last step's state [batch,
units], or every step's [batch, steps, units] with return_sequences. Weights use
Keras' layout: kernel [features, 3 * units], recurrent_kernel [units, 3 * units],
bias [2, 3 * units] (the input and the recurrent bias; [3 * units] with
reset_after=False). The gradient is backpropagation through time.

>>> ef.keras.layers.GRU(4)(ef.ones([2, 5, 3])).shape
TensorShape([2, 4])

Args:
  units: The size of the state.
  activation: The output activation: a Keras name, a function of a tensor, or
    None (linear) (default "tanh").
  recurrent_activation: The gates' activation, in the same forms (default
    "sigmoid").
  use_bias: Whether to add biases (default True).
  kernel_initializer: a Keras name, an Initializer, or a function (shape, dtype) -> tensor (default "glorot_uniform").
  recurrent_initializer: The same forms (default "orthogonal").
  bias_initializer: The same forms (default "zeros").
  unit_forget_bias: Unused by GRU (default True).
  return_sequences: Whether to return every step's output (default False).
  return_state: Whether to return [output, final states...] (default False).
  go_backwards: Whether to run over the steps in reverse (outputs too).
  stateful: Whether each call starts from the last call's final states (fixed
    batch size; reset_states() zeroes them) (default False).
  zero_output_for_mask: Whether masked steps output zeros instead of the
    previous output (default False).
  reset_after: Whether the reset gate multiplies h @ recurrent_kernel (True,
    Keras' default) or h before the matmul (False, the original GRU).
  name: The layer's name (default "gru").
)doc"}})
    keras.def(
        python_name,
        [cell, python_name](int64_t units, py::handle activation, py::handle recurrent_activation,
                            bool use_bias, py::handle kernel_initializer, py::handle recurrent_initializer,
                            py::handle bias_initializer, bool unit_forget_bias, bool return_sequences,
                            bool return_state, bool go_backwards, bool stateful, bool reset_after,
                            bool zero_output_for_mask, py::handle name) {
          nn::RecurrentOptions o;
          o.activation = activation_of(activation, python_name);
          o.recurrent_activation = activation_of(recurrent_activation, python_name, "recurrent_activation");
          o.use_bias = use_bias;
          o.kernel_initializer = initializer_of(kernel_initializer);
          o.recurrent_initializer = initializer_of(recurrent_initializer);
          o.bias_initializer = initializer_of(bias_initializer);
          o.unit_forget_bias = unit_forget_bias;
          o.return_sequences = return_sequences;
          o.return_state = return_state;
          o.go_backwards = go_backwards;
          o.stateful = stateful;
          o.reset_after = reset_after;
          o.zero_output_for_mask = zero_output_for_mask;
          o.name = name_or(name, "");
          return std::make_shared<nn::Recurrent>(cell, units, std::move(o));
        },
        doc, "units"_a, "activation"_a = "tanh", "recurrent_activation"_a = "sigmoid", "use_bias"_a = true,
        "kernel_initializer"_a = "glorot_uniform", "recurrent_initializer"_a = "orthogonal",
        "bias_initializer"_a = "zeros", "unit_forget_bias"_a = true, "return_sequences"_a = false,
        "return_state"_a = false, "go_backwards"_a = false, "stateful"_a = false, "reset_after"_a = true,
        "zero_output_for_mask"_a = false, "name"_a = py::none());
  layer_class<nn::Conv1D>(
      keras, "Conv1D",
      R"doc(A 1-D convolution over [batch, steps, channels]: activation(conv1d(inputs, kernel) + bias).

kernel is [kernel_size, channels, filters] (Keras' layout).

>>> ef.keras.layers.Conv1D(8, 3, padding="causal")(ef.ones([2, 10, 4])).shape
TensorShape([2, 10, 8])

Args:
  filters: The number of output channels.
  kernel_size: An int.
  strides: An int (default 1).
  padding: "valid" (default), "same", or "causal" (zeros before the sequence
    only, so step t sees no later step).
  dilation_rate: An int (default 1).
  activation: None (linear), a Keras name such as "relu", or a function of a
    tensor.
  use_bias: Whether to add a bias (default True).
  kernel_initializer: a Keras name, an Initializer, or a function (shape, dtype) -> tensor
    (default "glorot_uniform").
  bias_initializer: The same forms (default "zeros").
  name: The layer's name (default "conv1d").
)doc")
      .def(py::init([](int64_t filters, int64_t kernel_size, int64_t strides, const std::string& padding,
                       int64_t dilation_rate, py::handle activation, bool use_bias,
                       py::handle kernel_initializer, py::handle bias_initializer, py::handle name) {
             nn::Conv1DOptions o;
             o.strides = strides;
             o.padding = padding;
             o.dilation_rate = dilation_rate;
             o.activation = activation_of(activation, "Conv1D");
             o.use_bias = use_bias;
             o.kernel_initializer = initializer_of(kernel_initializer);
             o.bias_initializer = initializer_of(bias_initializer);
             o.name = name_or(name, "conv1d");
             return std::make_shared<nn::Conv1D>(filters, kernel_size, std::move(o));
           }),
           "filters"_a, "kernel_size"_a, "strides"_a = 1, "padding"_a = "valid", "dilation_rate"_a = 1,
           "activation"_a = py::none(), "use_bias"_a = true, "kernel_initializer"_a = "glorot_uniform",
           "bias_initializer"_a = "zeros", "name"_a = py::none());
  layer_class<nn::Pool1D>(keras, "_Pool1D",
                          "A 1-D pooling layer (made by MaxPooling1D or AveragePooling1D).");
  struct Pool1DDef {
    const char* python_name;
    bool max;
    const char* doc;
  };
  for (auto [python_name, max, doc] :
       {Pool1DDef{"MaxPooling1D", true,
                  R"doc(Max pooling over pool_size windows of [batch, steps, channels]. Also MaxPool1D.

>>> ef.keras.layers.MaxPooling1D()(ef.ones([2, 10, 4])).shape
TensorShape([2, 5, 4])

Args:
  pool_size: An int (default 2).
  strides: None (pool_size) or an int.
  padding: "valid" (default) or "same".
  name: The layer's name (default "max_pooling1d").
)doc"},
        Pool1DDef{
            "AveragePooling1D", false,
            R"doc(Average pooling over pool_size windows of [batch, steps, channels]. Also AveragePool1D.

>>> ef.keras.layers.AveragePooling1D(3, strides=1, padding="same")(ef.ones([2, 10, 4])).shape
TensorShape([2, 10, 4])

Args:
  pool_size: An int (default 2).
  strides: None (pool_size) or an int.
  padding: "valid" (default) or "same".
  name: The layer's name (default "average_pooling1d").
)doc"}})
    keras.def(
        python_name,
        [max](int64_t pool_size, std::optional<int64_t> strides, const std::string& padding,
              py::handle name) {
          return std::make_shared<nn::Pool1D>(max, pool_size, strides, padding, name_or(name, ""));
        },
        doc, "pool_size"_a = 2, "strides"_a = py::none(), "padding"_a = "valid", "name"_a = py::none());
  layer_class<nn::GaussianNoise>(
      keras, "GaussianNoise",
      R"doc(Adds zero-mean normal noise of `stddev` while training; the identity otherwise.

>>> ef.keras.layers.GaussianNoise(0.1)(ef.ones([3])).numpy()
array([1., 1., 1.], dtype=float32)

Args:
  stddev: The noise's standard deviation.
  seed: None, or an int seed (see ef.random.set_seed).
  name: The layer's name (default "gaussian_noise").
)doc")
      .def(py::init([](double stddev, std::optional<int64_t> seed, py::handle name) {
             return std::make_shared<nn::GaussianNoise>(stddev, seed, name_or(name, "gaussian_noise"));
           }),
           "stddev"_a, "seed"_a = py::none(), "name"_a = py::none());
  layer_class<nn::Masking>(
      keras, "Masking",
      R"doc(Masks the steps of [batch, steps, features] inputs whose features all equal mask_value.

It zeroes those steps, and in a model the layers after it skip them: recurrent
layers keep their states there, GlobalAveragePooling1D leaves them out.

>>> x = ef.constant([[[1.0], [0.0], [2.0]]])
>>> ef.keras.layers.Masking().compute_mask(x).numpy()
array([[ True, False,  True]])

Args:
  mask_value: The value of padded steps (default 0.0).
  name: The layer's name (default "masking").
)doc")
      .def(py::init([](double mask_value, py::handle name) {
             return std::make_shared<nn::Masking>(mask_value, name_or(name, "masking"));
           }),
           "mask_value"_a = 0.0, "name"_a = py::none());
}

}  // namespace efpy
