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
py::class_<L, nn::Layer, std::shared_ptr<L>> layer_class(py::module_& m, const char* name) {
  return py::class_<L, nn::Layer, std::shared_ptr<L>>(m, name);
}

}  // namespace

void bind_simple_layers(py::module_& keras) {
  layer_class<nn::ActivationLayer>(keras, "Activation")
      .def(py::init([](const std::string& activation, py::handle name) {
             return std::make_shared<nn::ActivationLayer>(nn::Activation(activation),
                                                          name_or(name, "activation"));
           }),
           "activation"_a, "name"_a = py::none());
  layer_class<nn::ReLU>(keras, "ReLU")
      .def(py::init([](std::optional<double> max_value, double negative_slope, double threshold,
                       py::handle name) {
             return std::make_shared<nn::ReLU>(max_value, negative_slope, threshold, name_or(name, "re_lu"));
           }),
           "max_value"_a = py::none(), "negative_slope"_a = 0.0, "threshold"_a = 0.0, "name"_a = py::none());
  layer_class<nn::LeakyReLU>(keras, "LeakyReLU")
      .def(py::init([](double negative_slope, py::handle name) {
             return std::make_shared<nn::LeakyReLU>(negative_slope, name_or(name, "leaky_re_lu"));
           }),
           "negative_slope"_a = 0.3, "name"_a = py::none());
  layer_class<nn::ELU>(keras, "ELU")
      .def(py::init([](double alpha, py::handle name) {
             return std::make_shared<nn::ELU>(alpha, name_or(name, "elu"));
           }),
           "alpha"_a = 1.0, "name"_a = py::none());
  layer_class<nn::Softmax>(keras, "Softmax")
      .def(py::init([](int64_t axis, py::handle name) {
             return std::make_shared<nn::Softmax>(axis, name_or(name, "softmax"));
           }),
           "axis"_a = -1, "name"_a = py::none());
  layer_class<nn::Reshape>(keras, "Reshape")
      .def(py::init([](py::handle target_shape, py::handle name) {
             return std::make_shared<nn::Reshape>(ints_of(target_shape, "target_shape"),
                                                  name_or(name, "reshape"));
           }),
           "target_shape"_a, "name"_a = py::none());
  layer_class<nn::Permute>(keras, "Permute")
      .def(py::init([](py::handle dims, py::handle name) {
             return std::make_shared<nn::Permute>(ints_of(dims, "dims"), name_or(name, "permute"));
           }),
           "dims"_a, "name"_a = py::none());
  layer_class<nn::RepeatVector>(keras, "RepeatVector")
      .def(py::init([](int64_t n, py::handle name) {
             return std::make_shared<nn::RepeatVector>(n, name_or(name, "repeat_vector"));
           }),
           "n"_a, "name"_a = py::none());
  layer_class<nn::GlobalPooling>(keras, "_GlobalPooling");
  using Kind = nn::GlobalPooling::Kind;
  for (auto [python_name, kind] : {std::pair{"GlobalAveragePooling1D", Kind::kAverage1D},
                                   {"GlobalAveragePooling2D", Kind::kAverage2D},
                                   {"GlobalMaxPooling1D", Kind::kMax1D},
                                   {"GlobalMaxPooling2D", Kind::kMax2D}})
    keras.def(
        python_name,
        [kind](bool keepdims, py::handle name) {
          return std::make_shared<nn::GlobalPooling>(kind, keepdims, name_or(name, ""));
        },
        "keepdims"_a = false, "name"_a = py::none());
  layer_class<nn::ZeroPadding2D>(keras, "ZeroPadding2D")
      .def(py::init([](py::handle padding, py::handle name) {
             return std::make_shared<nn::ZeroPadding2D>(ints_of(padding, "padding"),
                                                        name_or(name, "zero_padding2d"));
           }),
           "padding"_a = 1, "name"_a = py::none());
  layer_class<nn::Cropping2D>(keras, "Cropping2D")
      .def(py::init([](py::handle cropping, py::handle name) {
             return std::make_shared<nn::Cropping2D>(ints_of(cropping, "cropping"),
                                                     name_or(name, "cropping2d"));
           }),
           "cropping"_a = 0, "name"_a = py::none());
  layer_class<nn::UpSampling2D>(keras, "UpSampling2D")
      .def(py::init([](py::handle size, py::handle name) {
             return std::make_shared<nn::UpSampling2D>(ints_of(size, "size"), name_or(name, "up_sampling2d"));
           }),
           "size"_a = 2, "name"_a = py::none());
  layer_class<nn::Recurrent>(keras, "_Recurrent").def_property_readonly("units", &nn::Recurrent::units);
  using Cell = nn::Recurrent::Cell;
  for (auto [python_name, cell] :
       {std::pair{"SimpleRNN", Cell::kSimpleRNN}, {"LSTM", Cell::kLSTM}, {"GRU", Cell::kGRU}})
    keras.def(
        python_name,
        [cell](int64_t units, const std::string& activation, const std::string& recurrent_activation,
               bool use_bias, py::handle kernel_initializer, py::handle recurrent_initializer,
               py::handle bias_initializer, bool unit_forget_bias, bool return_sequences, bool go_backwards,
               bool reset_after, py::handle name) {
          nn::RecurrentOptions o;
          o.activation = nn::Activation(activation);
          o.recurrent_activation = nn::Activation(recurrent_activation);
          o.use_bias = use_bias;
          o.kernel_initializer = initializer_of(kernel_initializer);
          o.recurrent_initializer = initializer_of(recurrent_initializer);
          o.bias_initializer = initializer_of(bias_initializer);
          o.unit_forget_bias = unit_forget_bias;
          o.return_sequences = return_sequences;
          o.go_backwards = go_backwards;
          o.reset_after = reset_after;
          o.name = name_or(name, "");
          return std::make_shared<nn::Recurrent>(cell, units, std::move(o));
        },
        "units"_a, "activation"_a = "tanh", "recurrent_activation"_a = "sigmoid", "use_bias"_a = true,
        "kernel_initializer"_a = "glorot_uniform", "recurrent_initializer"_a = "orthogonal",
        "bias_initializer"_a = "zeros", "unit_forget_bias"_a = true, "return_sequences"_a = false,
        "go_backwards"_a = false, "reset_after"_a = true, "name"_a = py::none());
  layer_class<nn::Conv1D>(keras, "Conv1D")
      .def(py::init([](int64_t filters, int64_t kernel_size, int64_t strides, const std::string& padding,
                       int64_t dilation_rate, py::handle activation, bool use_bias,
                       py::handle kernel_initializer, py::handle bias_initializer, py::handle name) {
             nn::Conv1DOptions o;
             o.strides = strides;
             o.padding = padding;
             o.dilation_rate = dilation_rate;
             if (!activation.is_none()) o.activation = nn::Activation(activation.cast<std::string>());
             o.use_bias = use_bias;
             o.kernel_initializer = initializer_of(kernel_initializer);
             o.bias_initializer = initializer_of(bias_initializer);
             o.name = name_or(name, "conv1d");
             return std::make_shared<nn::Conv1D>(filters, kernel_size, std::move(o));
           }),
           "filters"_a, "kernel_size"_a, "strides"_a = 1, "padding"_a = "valid", "dilation_rate"_a = 1,
           "activation"_a = py::none(), "use_bias"_a = true, "kernel_initializer"_a = "glorot_uniform",
           "bias_initializer"_a = "zeros", "name"_a = py::none());
  layer_class<nn::Pool1D>(keras, "_Pool1D");
  for (auto [python_name, max] : {std::pair{"MaxPooling1D", true}, {"AveragePooling1D", false}})
    keras.def(
        python_name,
        [max](int64_t pool_size, std::optional<int64_t> strides, const std::string& padding,
              py::handle name) {
          return std::make_shared<nn::Pool1D>(max, pool_size, strides, padding, name_or(name, ""));
        },
        "pool_size"_a = 2, "strides"_a = py::none(), "padding"_a = "valid", "name"_a = py::none());
  layer_class<nn::GaussianNoise>(keras, "GaussianNoise")
      .def(py::init([](double stddev, std::optional<int64_t> seed, py::handle name) {
             return std::make_shared<nn::GaussianNoise>(stddev, seed, name_or(name, "gaussian_noise"));
           }),
           "stddev"_a, "seed"_a = py::none(), "name"_a = py::none());
}

}  // namespace efpy
