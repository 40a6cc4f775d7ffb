#include "eagerflow/autodiff/function_transforms.h"

#include "eagerflow/autodiff/gradient_tape.h"

namespace ef {
namespace {

// The arguments at `params` (all when empty); throws for an index out of range.
std::vector<size_t> selected(const std::vector<int>& params, size_t count) {
  std::vector<size_t> out;
  if (params.empty()) {
    for (size_t i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  for (int p : params) {
    if (p < 0 || static_cast<size_t>(p) >= count)
      fail("gradients_function: parameter index ", p, " is out of range for a call with ", count, " arguments");
    out.push_back(static_cast<size_t>(p));
  }
  return out;
}

// f's outputs and the gradients of their sum with respect to the selected arguments.
std::pair<std::vector<Tensor>, std::vector<Tensor>> value_and_gradients(const TensorsFunction& f,
                                                                        const std::vector<int>& params,
                                                                        UnconnectedGradients unconnected,
                                                                        const std::vector<Tensor>& args) {
  std::vector<GradientTape::Source> sources;
  for (size_t i : selected(params, args.size())) sources.emplace_back(args[i]);
  GradientTape tape;
  for (const GradientTape::Source& s : sources) tape.watch(std::get<Tensor>(s));
  std::vector<Tensor> values = f(args);
  std::vector<Tensor> grads = tape.gradient(values, sources, {}, unconnected);
  return {std::move(values), std::move(grads)};
}

TensorsFunction as_tensors_function(TensorFunction f) {
  return [f = std::move(f)](const std::vector<Tensor>& args) { return std::vector<Tensor>{f(args)}; };
}

// f's outputs and the gradients of their sum with respect to every trainable variable f reads.
std::pair<std::vector<Tensor>, VariableGradients> implicit_value_and_gradients_of(
    const std::function<std::vector<Tensor>()>& f) {
  GradientTape tape;
  std::vector<Tensor> values = f();
  std::vector<Variable> variables = tape.watched_variables();
  if (variables.empty())
    fail("implicit_gradients: the function read no trainable variables, so there is nothing to differentiate");
  std::vector<Tensor> grads =
      tape.gradient(values, std::vector<GradientTape::Source>(variables.begin(), variables.end()));
  VariableGradients pairs;
  for (size_t i = 0; i < variables.size(); ++i) pairs.emplace_back(grads[i], variables[i]);
  return {std::move(values), std::move(pairs)};
}

// The same for f of one output.
std::pair<Tensor, VariableGradients> implicit_value_and_gradient_of(const std::function<Tensor()>& f) {
  auto [values, pairs] = implicit_value_and_gradients_of([&f] { return std::vector<Tensor>{f()}; });
  return {values[0], std::move(pairs)};
}

}  // namespace

UnaryFunction grad(UnaryFunction f) {
  return [f = std::move(f)](const Tensor& x) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = f(x);
    return tape.gradient(y, x, Tensor(), UnconnectedGradients::Zero);
  };
}

GradientsFunction gradients_function(TensorsFunction f, std::vector<int> params,
                                     UnconnectedGradients unconnected) {
  return [f = std::move(f), params = std::move(params), unconnected](const std::vector<Tensor>& args) {
    return value_and_gradients(f, params, unconnected, args).second;
  };
}

GradientsFunction gradients_function(TensorFunction f, std::vector<int> params,
                                     UnconnectedGradients unconnected) {
  return gradients_function(as_tensors_function(std::move(f)), std::move(params), unconnected);
}

std::function<std::pair<std::vector<Tensor>, std::vector<Tensor>>(const std::vector<Tensor>&)>
value_and_gradients_function(TensorsFunction f, std::vector<int> params, UnconnectedGradients unconnected) {
  return [f = std::move(f), params = std::move(params), unconnected](const std::vector<Tensor>& args) {
    return value_and_gradients(f, params, unconnected, args);
  };
}

ValueAndGradientsFunction value_and_gradients_function(TensorFunction f, std::vector<int> params,
                                                       UnconnectedGradients unconnected) {
  return [f = as_tensors_function(std::move(f)), params = std::move(params),
          unconnected](const std::vector<Tensor>& args) {
    auto [values, grads] = value_and_gradients(f, params, unconnected, args);
    return std::pair<Tensor, std::vector<Tensor>>(values[0], std::move(grads));
  };
}

std::function<std::pair<Tensor, VariableGradients>()> implicit_value_and_gradients(std::function<Tensor()> f) {
  return [f = std::move(f)] { return implicit_value_and_gradient_of(f); };
}

std::function<std::pair<std::vector<Tensor>, VariableGradients>()> implicit_value_and_gradients(
    std::function<std::vector<Tensor>()> f) {
  return [f = std::move(f)] { return implicit_value_and_gradients_of(f); };
}

std::function<std::pair<Tensor, VariableGradients>(const std::vector<Tensor>&)> implicit_value_and_gradients(
    TensorFunction f) {
  return [f = std::move(f)](const std::vector<Tensor>& args) {
    return implicit_value_and_gradient_of([&] { return f(args); });
  };
}

std::function<VariableGradients()> implicit_gradients(std::function<Tensor()> f) {
  return [f = std::move(f)] { return implicit_value_and_gradient_of(f).second; };
}

std::function<VariableGradients()> implicit_gradients(std::function<std::vector<Tensor>()> f) {
  return [f = std::move(f)] { return implicit_value_and_gradients_of(f).second; };
}

std::function<VariableGradients(const std::vector<Tensor>&)> implicit_gradients(TensorFunction f) {
  return [f = std::move(f)](const std::vector<Tensor>& args) {
    return implicit_value_and_gradient_of([&] { return f(args); }).second;
  };
}

}  // namespace ef
