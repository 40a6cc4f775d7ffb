// The trampolines that let Python subclasses of Layer and Model be C++ layers and
// models: build(), call() and (for models) train_step() / test_step() forward to Python
// when the subclass defines them.
#pragma once

#include <optional>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"

namespace efpy {

// Python values <-> layer configs (keras_model.cpp): dicts of None, bools, ints, floats,
// strings, lists of ints and nested dicts.
ef::nn::Config config_of(const py::dict& dict, const std::string& who);
py::dict dict_of_config(const ef::nn::Config& config);
// Keras logs (name -> number) as a dict.
py::dict dict_of(const ef::nn::Logs& logs);

template <class Base>
class PyLayerOf : public Base {
 public:
  using Base::Base;
  // A Python subclass is saved under its Python class name, with its get_config().
  std::string class_name() const override {
    py::gil_scoped_acquire gil;
    py::object self = py::cast(static_cast<const Base*>(this));
    return py::str(py::type::of(self).attr("__name__")).cast<std::string>();
  }
  ef::nn::Config get_config() const override {
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const Base*>(this), "get_config");
    if (!override) return Base::get_config();
    py::object out = override();
    if (!py::isinstance<py::dict>(out))
      throw py::type_error("layer '" + this->name() + "': get_config() must return a dict");
    return config_of(out.cast<py::dict>(), "layer '" + this->name() + "' get_config()");
  }
  void build(const ef::Shape& input_shape) override {
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const Base*>(this), "build");
    if (override) {
      override(py::module_::import("eagerflow._shape").attr("TensorShape")(shape_tuple(input_shape)));
      return;
    }
    Base::build(input_shape);
  }
  // Several inputs: a Python build() gets a list of shapes, call() a list of tensors
  // and may return a list (Keras' multi-input layers). One input goes to build/call.
  void build_inputs(const std::vector<ef::Shape>& input_shapes) override {
    if (input_shapes.size() == 1) return Base::build_inputs(input_shapes);
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const Base*>(this), "build");
    if (!override) return;  // the base build creates no variables
    py::list shapes;
    for (const ef::Shape& shape : input_shapes)
      shapes.append(py::module_::import("eagerflow._shape").attr("TensorShape")(shape_tuple(shape)));
    override(shapes);
  }
  std::vector<ef::Tensor> call_inputs(const std::vector<ef::Tensor>& inputs, bool training) override {
    using namespace pybind11::literals;
    if (inputs.size() == 1) return Base::call_inputs(inputs, training);
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const Base*>(this), "call");
    if (!override) return Base::call_inputs(inputs, training);
    if (!call_takes_training_) call_takes_training_ = takes_training(override);
    py::list args = py::cast(inputs);
    py::object out = *call_takes_training_ ? override(args, "training"_a = training) : override(args);
    std::vector<ef::Tensor> outputs;
    if (py::isinstance<py::list>(out) || py::isinstance<py::tuple>(out)) {
      for (py::handle item : out) outputs.push_back(to_tensor(item));
    } else {
      outputs.push_back(to_tensor(out));
    }
    return outputs;
  }
  ef::Tensor call(const ef::Tensor& inputs, bool training) override {
    using namespace pybind11::literals;
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const Base*>(this), "call");
    if (!override)
      throw ef::UnimplementedError("layer '" + this->name() + "' defines no call(inputs, training)");
    if (!call_takes_training_) call_takes_training_ = takes_training(override);
    py::object out = *call_takes_training_ ? override(inputs, "training"_a = training) : override(inputs);
    // One tensor out (Layer's contract in C++); a list would otherwise be stacked silently.
    if (py::isinstance<py::list>(out) || py::isinstance<py::tuple>(out) || out.is_none())
      throw py::type_error("layer '" + this->name() + "': call() must return one tensor, got " +
                           std::string(py::str(py::type::of(out).attr("__name__"))));
    return to_tensor(out);
  }

 private:
  // Keras passes `training` only to a call() that declares it (or takes **kwargs): the
  // seeds' models define call(self, input).
  static bool takes_training(const py::function& call) {
    py::object parameters = py::module_::import("inspect").attr("signature")(call).attr("parameters");
    if (parameters.contains("training")) return true;
    for (py::handle p : parameters.attr("values")())
      if (p.attr("kind").equal(py::module_::import("inspect").attr("Parameter").attr("VAR_KEYWORD")))
        return true;
    return false;
  }
  std::optional<bool> call_takes_training_;
};

using PyLayer = PyLayerOf<ef::nn::Layer>;

// A Keras name, an Initializer, or a Python function (shape, dtype) -> tensor (nn.cpp).
ef::nn::Initializer initializer_of(py::handle obj);
// Binds BatchNormalization's Keras constructor on `cls`, a class of layer L built from
// BatchNormalizationOptions: BatchNormalization itself (nn.cpp) and
// SyncBatchNormalization (distribute.cpp).
template <class L, class Class>
void def_batch_normalization_init(Class& cls, const char* default_name) {
  using namespace pybind11::literals;
  cls.def(py::init([default_name](int64_t axis, double momentum, double epsilon, bool center, bool scale,
                                  py::handle beta_initializer, py::handle gamma_initializer,
                                  py::handle moving_mean_initializer, py::handle moving_variance_initializer,
                                  py::handle name) {
            return std::make_shared<L>(ef::nn::BatchNormalizationOptions{
                axis, momentum, epsilon, center, scale, initializer_of(beta_initializer),
                initializer_of(gamma_initializer), initializer_of(moving_mean_initializer),
                initializer_of(moving_variance_initializer), name_or(name, default_name)});
          }),
          "axis"_a = -1, "momentum"_a = 0.99, "epsilon"_a = 1e-3, "center"_a = true, "scale"_a = true,
          "beta_initializer"_a = "zeros", "gamma_initializer"_a = "ones",
          "moving_mean_initializer"_a = "zeros", "moving_variance_initializer"_a = "ones",
          "name"_a = py::none());
}
// An activation argument: None (linear), a Keras name, or a Python function of a tensor;
// anything else is a TypeError naming the layer and the argument (keras_layers.cpp).
ef::nn::Activation activation_of(py::handle obj, const char* layer, const char* arg = "activation");

void bind_model(py::module_& keras);       // keras_model.cpp
void bind_callbacks(py::module_& keras);   // keras_callbacks.cpp: ef.keras.callbacks
void bind_functional(py::module_& keras);  // keras_functional.cpp
// Layer.__call__: `inputs` one tensor-like, a list of tensors, or KerasTensors
// (keras_functional.cpp); `layer` is self's Python object; `mask` None or the first
// input's [batch, steps] mask (eager calls only).
py::object call_layer(ef::nn::Layer& self, py::handle layer, py::handle inputs, bool training,
                      py::handle mask = py::none());
// The recurrent layers' __call__(inputs, initial_state, mask, training): the initial
// states follow the inputs in the list the layer takes.
py::object call_recurrent(py::object self, py::object inputs, py::object initial_state, py::object mask,
                          bool training);
void bind_simple_layers(py::module_& keras);     // keras_layers.cpp
void bind_conv_norm_layers(py::module_& keras);  // keras_conv_norm_layers.cpp

}  // namespace efpy
