// The functional API in Python (eagerflow/nn/functional.h): keras.Input, KerasTensor,
// Functional models, the merge layers, and Layer.__call__'s dispatch between tensors,
// lists of tensors and symbolic inputs.
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace nn = ef::nn;
constexpr ef::CallSite kPython{};

bool is_sequence(py::handle obj) { return py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj); }

// A symbolic output, holding on to the Python layer that made it and the Python inputs:
// a Python subclass of Layer must outlive its calls, or its call() would be lost before
// the Functional model that runs it exists.
py::object symbolic(const nn::KerasTensor& tensor, py::handle layer, py::handle inputs) {
  py::object out = py::cast(tensor);
  out.attr("_keras_layer") = layer;
  out.attr("_keras_inputs") = inputs;
  return out;
}

py::object symbolic_call(nn::Layer& self, py::handle layer, py::handle inputs) {
  std::vector<nn::KerasTensor> args;
  if (is_sequence(inputs)) {
    for (py::handle item : inputs) {
      if (!py::isinstance<nn::KerasTensor>(item))
        throw py::type_error("layer '" + self.name() +
                             "': a list of inputs mixes KerasTensors with other values; make constants "
                             "part of a layer, or pass every input through keras.Input");
      args.push_back(item.cast<nn::KerasTensor>());
    }
  } else {
    args.push_back(inputs.cast<nn::KerasTensor>());
  }
  std::vector<nn::KerasTensor> outputs = self.call_all(args, kPython);
  if (outputs.size() == 1) return symbolic(outputs[0], layer, inputs);
  py::list out;
  for (const nn::KerasTensor& t : outputs) out.append(symbolic(t, layer, inputs));
  return out;
}

// Whether `inputs` is a list of separate inputs (tensors, arrays, KerasTensors) rather
// than nested numbers that make one tensor.
bool is_input_list(py::handle inputs) {
  if (!is_sequence(inputs) || py::len(inputs) == 0) return false;
  py::object ndarray = py::module_::import("numpy").attr("ndarray");
  for (py::handle item : inputs)
    if (!py::isinstance<ef::Tensor>(item) && !py::isinstance<ef::Variable>(item) &&
        !py::isinstance<nn::KerasTensor>(item) && !py::isinstance(item, ndarray))
      return false;
  return true;
}

bool has_symbolic(py::handle inputs) {
  if (py::isinstance<nn::KerasTensor>(inputs)) return true;
  if (!is_sequence(inputs)) return false;
  for (py::handle item : inputs)
    if (py::isinstance<nn::KerasTensor>(item)) return true;
  return false;
}

py::object outputs_of(std::vector<ef::Tensor> outputs) {
  if (outputs.size() == 1) return py::cast(outputs[0]);
  return py::cast(outputs);
}

// Shapes for Python: None for unknown dimensions.
py::object tensor_shape(const ef::Shape& shape) {
  return py::module_::import("eagerflow._shape").attr("TensorShape")(shape_tuple(shape));
}

template <class M>
void bind_merge(py::module_& keras, const char* name, const char* default_name, const char* doc) {
  py::class_<M, nn::Merge, std::shared_ptr<M>>(keras, name, doc)
      .def(py::init([default_name](py::handle layer_name) {
             return std::make_shared<M>(name_or(layer_name, default_name));
           }),
           "name"_a = py::none());
}

// MultiHeadAttention's Keras call: (query, value, key=None, attention_mask=None,
// use_causal_mask=False) as the layer's list of inputs; a causal mask comes from a
// CausalMask layer, so that symbolic calls record it too.
py::object attention_call(py::object self, py::object query, py::object value, py::object key,
                          py::object attention_mask, bool return_attention_scores, bool training,
                          bool use_causal_mask) {
  auto& layer = self.cast<nn::MultiHeadAttention&>();
  py::list inputs;
  inputs.append(query);
  inputs.append(value);
  if (!key.is_none() || !attention_mask.is_none() || use_causal_mask)
    inputs.append(key.is_none() ? value : key);
  if (use_causal_mask) {
    py::list mask_inputs;
    mask_inputs.append(query);
    mask_inputs.append(value);
    if (!attention_mask.is_none()) mask_inputs.append(attention_mask);
    py::object causal = py::cast(std::make_shared<nn::CausalMask>(layer.name() + "_causal_mask"));
    attention_mask = call_layer(causal.cast<nn::Layer&>(), causal, mask_inputs, false);
  }
  if (!attention_mask.is_none()) inputs.append(attention_mask);
  if (!return_attention_scores) return call_layer(layer, self, inputs, training);
  if (has_symbolic(inputs))
    throw py::type_error(
        "layer '" + layer.name() +
        "': return_attention_scores works on tensors, not in a functional model's definition");
  std::vector<ef::Tensor> args;
  std::vector<ef::Shape> shapes;
  for (py::handle item : inputs) {
    args.push_back(to_tensor(item));
    shapes.push_back(args.back().shape());
  }
  layer.build_for(shapes, args[0].dtype());
  auto [out, scores] = layer.attend(args, training);
  return py::make_tuple(out, scores);
}

}  // namespace

py::object call_layer(nn::Layer& self, py::handle layer, py::handle inputs, bool training, py::handle mask) {
  if (has_symbolic(inputs)) {
    if (!mask.is_none())
      throw py::type_error("layer '" + self.name() +
                           "': mask= is for eager calls; in a functional model masks pass from layer to "
                           "layer on their own (keras.layers.Masking, Embedding(mask_zero=True))");
    return symbolic_call(self, layer, inputs);
  }
  const std::optional<ef::Tensor> mask_tensor =
      mask.is_none() ? std::nullopt : std::optional(to_tensor(mask, ef::DType::Bool));
  std::vector<ef::Tensor> args;
  if (is_input_list(inputs)) {
    for (py::handle item : inputs) args.push_back(to_tensor(item));
  } else {
    // Through call_all, so that a layer of several outputs (Bidirectional without a
    // merge) gives them all.
    args.push_back(to_tensor(inputs));
  }
  return outputs_of(self.call_all(args, mask_tensor, training, kPython));
}

py::object call_recurrent(py::object self, py::object inputs, py::object initial_state, py::object mask,
                          bool training) {
  if (initial_state.is_none()) return call_layer(self.cast<nn::Layer&>(), self, inputs, training, mask);
  py::list all;
  all.append(inputs);
  if (py::isinstance<py::list>(initial_state) || py::isinstance<py::tuple>(initial_state)) {
    for (py::handle state : initial_state) all.append(state);
  } else {
    all.append(initial_state);
  }
  return call_layer(self.cast<nn::Layer&>(), self, all, training, mask);
}

void bind_functional(py::module_& keras) {
  py::class_<nn::KerasTensor>(keras, "KerasTensor", py::dynamic_attr(),
                              R"doc(A symbolic tensor of a functional model: a dtype and a shape whose
first (batch) dimension is unknown, and the layer call that gives it. Made by
keras.Input and by calling layers on KerasTensors; it holds no values.

>>> x = ef.keras.Input(shape=(4,))
>>> ef.keras.layers.Dense(3)(x).shape
TensorShape([None, 3])
)doc")
      .def_property_readonly(
          "shape", [](const nn::KerasTensor& t) { return tensor_shape(t.shape()); },
          "The shape, None where a dimension is unknown (the batch's always).")
      .def_property_readonly("dtype", &nn::KerasTensor::dtype, "The dtype.")
      .def_property_readonly("name", &nn::KerasTensor::name, "The name of the layer that gives it.")
      .def("__repr__", [](const nn::KerasTensor& t) {
        return "<KerasTensor shape=" + std::string(py::repr(tensor_shape(t.shape()))) +
               ", dtype=" + std::string(ef::name(t.dtype())) + ", name=" + t.name() + ">";
      });

  keras.def(
      "_input",
      [](ShapeArg shape, ef::DType dtype, py::handle name) {
        return nn::Input(shape.value, dtype, name.is_none() ? "" : name.cast<std::string>(), kPython);
      },
      "shape"_a, "dtype"_a, "name"_a = py::none());

  py::class_<nn::Functional, nn::Model, std::shared_ptr<nn::Functional>>(
      keras, "Functional", py::dynamic_attr(),
      "The C++ base of functional models (use keras.Model(inputs, outputs)).")
      .def(py::init([](std::vector<nn::KerasTensor> inputs, std::vector<nn::KerasTensor> outputs,
                       py::handle name) {
             return std::make_shared<nn::Functional>(std::move(inputs), std::move(outputs),
                                                     name_or(name, "model"), kPython);
           }),
           "inputs"_a, "outputs"_a, "name"_a = py::none())
      .def_property_readonly("_inputs", &nn::Functional::inputs)
      .def_property_readonly("_outputs", &nn::Functional::outputs)
      .def_property_readonly(
          "layers", &nn::Functional::layers,
          "The model's layers (its InputLayers first), each once, in the order of their calls.")
      .def(
          "_call_all",
          [](nn::Functional& self, TensorListArg inputs, bool training) {
            return self.call_all(inputs.value, training, kPython);
          },
          "inputs"_a, "training"_a = false);

  py::class_<nn::InputLayer, nn::Layer, std::shared_ptr<nn::InputLayer>>(
      keras, "InputLayer",
      "The layer behind keras.Input: checks a batch against the input's dtype and shape.");

  py::class_<nn::Merge, nn::Layer, std::shared_ptr<nn::Merge>>(keras, "_Merge");
  bind_merge<nn::Add>(keras, "Add", "add", R"doc(Adds a list of tensors elementwise, broadcasting as ef.add.

>>> ef.keras.layers.Add()([ef.ones([2]), ef.constant([1., 2.])]).numpy()
array([2., 3.], dtype=float32)
)doc");
  bind_merge<nn::Subtract>(keras, "Subtract", "subtract",
                           R"doc(The first of exactly two tensors minus the second.

>>> ef.keras.layers.Subtract()([ef.ones([2]), ef.constant([1., 2.])]).numpy()
array([ 0., -1.], dtype=float32)
)doc");
  bind_merge<nn::Multiply>(keras, "Multiply", "multiply", R"doc(Multiplies a list of tensors elementwise.

>>> ef.keras.layers.Multiply()([ef.constant([2., 3.]), ef.constant([4., 5.])]).numpy()
array([ 8., 15.], dtype=float32)
)doc");
  bind_merge<nn::Average>(keras, "Average", "average", R"doc(The elementwise mean of a list of tensors.

>>> ef.keras.layers.Average()([ef.constant([2., 3.]), ef.constant([4., 5.])]).numpy()
array([3., 4.], dtype=float32)
)doc");
  bind_merge<nn::Maximum>(keras, "Maximum", "maximum", R"doc(The elementwise maximum of a list of tensors.

>>> ef.keras.layers.Maximum()([ef.constant([2., 6.]), ef.constant([4., 5.])]).numpy()
array([4., 6.], dtype=float32)
)doc");
  bind_merge<nn::Minimum>(keras, "Minimum", "minimum", R"doc(The elementwise minimum of a list of tensors.

>>> ef.keras.layers.Minimum()([ef.constant([2., 6.]), ef.constant([4., 5.])]).numpy()
array([2., 5.], dtype=float32)
)doc");
  py::class_<nn::Concatenate, nn::Layer, std::shared_ptr<nn::Concatenate>>(
      keras, "Concatenate", R"doc(Joins a list of tensors along `axis` (the last by default).

>>> ef.keras.layers.Concatenate()([ef.ones([2, 1]), ef.zeros([2, 2])]).shape
TensorShape([2, 3])
)doc")
      .def(py::init([](int64_t axis, py::handle name) {
             return std::make_shared<nn::Concatenate>(axis, name_or(name, "concatenate"));
           }),
           "axis"_a = -1, "name"_a = py::none())
      .def_property_readonly("axis", &nn::Concatenate::axis);

  py::class_<nn::MultiHeadAttention, nn::Layer, std::shared_ptr<nn::MultiHeadAttention>>(
      keras, "MultiHeadAttention", R"doc(Scaled dot-product attention over several heads, with Keras' weights.

Call it as layer(query, value, key=None, attention_mask=None,
return_attention_scores=False, training=False, use_causal_mask=False) on
[batch, steps, features] tensors; attention_mask is [batch, query steps, value
steps], true where attending is allowed.

>>> mha = ef.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
>>> x = ef.ones([3, 5, 8])
>>> mha(x, x).shape
TensorShape([3, 5, 8])
>>> mha(x, x, return_attention_scores=True)[1].shape
TensorShape([3, 2, 5, 5])

Args:
  num_heads: The number of heads.
  key_dim: The size of each head for query and key.
  value_dim: The size of each head for value (default key_dim).
  dropout: Dropout rate on the attention probabilities, in training.
  use_bias: Whether the projections have biases.
  output_shape: The output's features (default the query's).
  kernel_initializer, bias_initializer: Initializers of the projections.
  seed: Seed of the dropout.
  name: The layer's name.
)doc")
      .def(py::init([](int64_t num_heads, int64_t key_dim, std::optional<int64_t> value_dim, double dropout,
                       bool use_bias, std::optional<int64_t> output_shape, py::handle kernel_initializer,
                       py::handle bias_initializer, std::optional<int64_t> seed, py::handle name) {
             nn::MultiHeadAttentionOptions o;
             o.value_dim = value_dim;
             o.dropout = dropout;
             o.use_bias = use_bias;
             o.output_shape = output_shape;
             o.kernel_initializer = initializer_of(kernel_initializer);
             o.bias_initializer = initializer_of(bias_initializer);
             o.seed = seed;
             o.name = name_or(name, "multi_head_attention");
             return std::make_shared<nn::MultiHeadAttention>(num_heads, key_dim, std::move(o));
           }),
           "num_heads"_a, "key_dim"_a, "value_dim"_a = py::none(), "dropout"_a = 0.0, "use_bias"_a = true,
           "output_shape"_a = py::none(), "kernel_initializer"_a = "glorot_uniform",
           "bias_initializer"_a = "zeros", "seed"_a = py::none(), "name"_a = py::none())
      .def("__call__", &attention_call, "query"_a, "value"_a, "key"_a = py::none(),
           "attention_mask"_a = py::none(), "return_attention_scores"_a = false, "training"_a = false,
           "use_causal_mask"_a = false, "Attends from query to value (see the class).")
      .def_property_readonly("num_heads", &nn::MultiHeadAttention::num_heads)
      .def_property_readonly("key_dim", &nn::MultiHeadAttention::key_dim);

  py::class_<nn::Attention, nn::Layer, std::shared_ptr<nn::Attention>>(
      keras, "Attention", R"doc(Dot-product (Luong) attention: softmax(query · keyᵀ) · value.

Call it on [query, value] or [query, value, key] ([batch, steps, features]).
score_mode "concat" scores with the sum of tanh(query + key) instead; use_scale
learns a scalar factor of the scores.

>>> q, v = ef.ones([2, 3, 4]), ef.ones([2, 5, 4])
>>> ef.keras.layers.Attention()([q, v]).shape
TensorShape([2, 3, 4])
)doc")
      .def(py::init([](bool use_scale, const std::string& score_mode, double dropout,
                       std::optional<int64_t> seed, py::handle name) {
             return std::make_shared<nn::Attention>(use_scale, score_mode, dropout, seed,
                                                    name_or(name, "attention"));
           }),
           "use_scale"_a = false, "score_mode"_a = "dot", "dropout"_a = 0.0, "seed"_a = py::none(),
           "name"_a = py::none());
  py::class_<nn::TimeDistributed, nn::Layer, std::shared_ptr<nn::TimeDistributed>>(
      keras, "TimeDistributed",
      R"doc(Applies a layer to every step of [batch, steps, ...] inputs, with the same weights.

>>> ef.keras.layers.TimeDistributed(ef.keras.layers.Dense(2))(ef.ones([4, 3, 5])).shape
TensorShape([4, 3, 2])
)doc")
      .def(py::init([](std::shared_ptr<nn::Layer> layer, py::handle name) {
             return std::make_shared<nn::TimeDistributed>(std::move(layer),
                                                          name_or(name, "time_distributed"));
           }),
           "layer"_a, "name"_a = py::none(), py::keep_alive<1, 2>())
      .def_property_readonly("layer", &nn::TimeDistributed::layer, "The wrapped layer.");
  py::class_<nn::Bidirectional, nn::Layer, std::shared_ptr<nn::Bidirectional>>(
      keras, "Bidirectional",
      R"doc(Runs a recurrent layer forwards and a copy backwards, and merges the outputs.

merge_mode: "concat" (default), "sum", "mul", "ave", or None for a list of both.

>>> rnn = ef.keras.layers.LSTM(4, return_sequences=True)
>>> ef.keras.layers.Bidirectional(rnn)(ef.ones([2, 3, 5])).shape
TensorShape([2, 3, 8])
)doc")
      .def(py::init([](std::shared_ptr<nn::Layer> layer, py::handle merge_mode, py::handle name) {
             return std::make_shared<nn::Bidirectional>(
                 std::move(layer), merge_mode.is_none() ? "" : merge_mode.cast<std::string>(),
                 name_or(name, "bidirectional"));
           }),
           "layer"_a, "merge_mode"_a = "concat", "name"_a = py::none(), py::keep_alive<1, 2>())
      .def("__call__", &call_recurrent,
           "Applies both directions to `inputs` [batch, steps, features]; initial_state: the forward "
           "then the backward layer's initial states; mask: a bool [batch, steps] tensor (eager calls).",
           "inputs"_a, "initial_state"_a = py::none(), "mask"_a = py::none(), "training"_a = false)
      .def_property_readonly("forward_layer", &nn::Bidirectional::forward_layer, "The forward layer.")
      .def_property_readonly("backward_layer", &nn::Bidirectional::backward_layer,
                             "The backward copy (go_backwards flipped).");
  py::class_<nn::CausalMask, nn::Layer, std::shared_ptr<nn::CausalMask>>(
      keras, "CausalMask",
      R"doc(The mask of causal attention as a layer (MultiHeadAttention's use_causal_mask).

[query, value] give a bool [1, query steps, value steps] mask, true where the
value step is not after the query step; a third input is and-ed with it.

>>> ef.keras.layers.CausalMask()([ef.ones([1, 2, 1]), ef.ones([1, 2, 1])]).numpy()[0]
array([[ True, False],
       [ True,  True]])
)doc")
      .def(py::init([](py::handle name) {
             return std::make_shared<nn::CausalMask>(name_or(name, "causal_mask"));
           }),
           "name"_a = py::none());
}

}  // namespace efpy
