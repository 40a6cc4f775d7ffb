// Function transforms: functions that return the gradients of other functions.
//
//   auto f = [](const ef::Tensor& x) { return ef::pow(x, 3.0); };
//   auto d3f = ef::grad(ef::grad(ef::grad(f)));      // composes: the third derivative
//   d3f(ef::constant(1.0));                          // 6.0
//
//   auto dg = ef::gradients_function([](const std::vector<ef::Tensor>& a) { return a[0] * a[1]; });
//   dg({x, y});                                      // {y, x}
//
// Each call records on its own tape, so transforms nest (higher order) and run inside
// any outer tape.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable.h"

namespace ef {

using UnaryFunction = std::function<Tensor(const Tensor&)>;
using TensorFunction = std::function<Tensor(const std::vector<Tensor>&)>;
using TensorsFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
using GradientsFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
using ValueAndGradientsFunction =
    std::function<std::pair<Tensor, std::vector<Tensor>>(const std::vector<Tensor>&)>;

// (gradient, variable) for each trainable variable a function read, in first-read
// order; the gradient is undefined for a variable read but not connected to the value.
using VariableGradients = std::vector<std::pair<Tensor, Variable>>;

// x ↦ d(sum f(x))/dx, for f of one float tensor. Where f does not depend on x the
// gradient is zeros (the derivative of a constant), so grad can be applied any number
// of times.
UnaryFunction grad(UnaryFunction f);

// args ↦ gradients of sum(f(args)) with respect to the arguments at `params` (all
// arguments when empty). An argument f does not depend on gets an undefined tensor,
// or zeros with UnconnectedGradients::Zero.
GradientsFunction gradients_function(TensorFunction f, std::vector<int> params = {},
                                     UnconnectedGradients unconnected = UnconnectedGradients::None);
// The same for f with several outputs: the gradients of the sum of all of them
// (TensorFlow's rule), so gradients_function(gradients_function(f)) is the second
// derivative.
GradientsFunction gradients_function(TensorsFunction f, std::vector<int> params = {},
                                     UnconnectedGradients unconnected = UnconnectedGradients::None);

// args ↦ (f(args), gradients as gradients_function gives them).
ValueAndGradientsFunction value_and_gradients_function(
    TensorFunction f, std::vector<int> params = {},
    UnconnectedGradients unconnected = UnconnectedGradients::None);
std::function<std::pair<std::vector<Tensor>, std::vector<Tensor>>(const std::vector<Tensor>&)>
value_and_gradients_function(TensorsFunction f, std::vector<int> params = {},
                             UnconnectedGradients unconnected = UnconnectedGradients::None);

// args ↦ the gradients of sum(f(args)) with respect to every trainable variable f
// reads (the arguments are not differentiated). Throws InvalidArgumentError when f
// reads none. The nullary forms suit closures: implicit_gradients([&] { return loss(); })().
std::function<VariableGradients(const std::vector<Tensor>&)> implicit_gradients(TensorFunction f);
std::function<VariableGradients()> implicit_gradients(std::function<Tensor()> f);
// For f with several outputs: the gradients of the sum of all of them.
std::function<VariableGradients()> implicit_gradients(std::function<std::vector<Tensor>()> f);

// args ↦ (f(args), the gradients implicit_gradients gives).
std::function<std::pair<Tensor, VariableGradients>(const std::vector<Tensor>&)> implicit_value_and_gradients(
    TensorFunction f);
std::function<std::pair<Tensor, VariableGradients>()> implicit_value_and_gradients(std::function<Tensor()> f);
std::function<std::pair<std::vector<Tensor>, VariableGradients>()> implicit_value_and_gradients(
    std::function<std::vector<Tensor>()> f);

}  // namespace ef
