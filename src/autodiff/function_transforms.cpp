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

std::pair<Tensor, std::vector<Tensor>> value_and_gradients(const TensorFunction& f, const std::vector<int>& params,
                                                           const std::vector<Tensor>& args) {
  std::vector<size_t> which = selected(params, args.size());
  std::vector<Tensor> sources;
  for (size_t i : which) sources.push_back(args[i]);
  GradientTape tape;
  for (const Tensor& s : sources) tape.watch(s);
  Tensor value = f(args);
  std::vector<Tensor> grads = tape.gradient(value, sources, Tensor(), UnconnectedGradients::Zero);
  return {value, grads};
}

std::pair<Tensor, VariableGradients> implicit_value_and_gradients_of(const std::function<Tensor()>& f) {
  GradientTape tape;
  Tensor value = f();
  std::vector<Variable> variables = tape.watched_variables();
  if (variables.empty())
    fail("implicit_gradients: the function read no trainable variables, so there is nothing to differentiate");
  std::vector<Tensor> grads = tape.gradient(value, variables);
  VariableGradients pairs;
  for (size_t i = 0; i < variables.size(); ++i) pairs.emplace_back(grads[i], variables[i]);
  return {value, std::move(pairs)};
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

GradientsFunction gradients_function(TensorFunction f, std::vector<int> params) {
  return [f = std::move(f), params = std::move(params)](const std::vector<Tensor>& args) {
    return value_and_gradients(f, params, args).second;
  };
}

ValueAndGradientsFunction value_and_gradients_function(TensorFunction f, std::vector<int> params) {
  return [f = std::move(f), params = std::move(params)](const std::vector<Tensor>& args) {
    return value_and_gradients(f, params, args);
  };
}

std::function<std::pair<Tensor, VariableGradients>()> implicit_value_and_gradients(std::function<Tensor()> f) {
  return [f = std::move(f)] { return implicit_value_and_gradients_of(f); };
}

std::function<std::pair<Tensor, VariableGradients>(const std::vector<Tensor>&)> implicit_value_and_gradients(
    TensorFunction f) {
  return [f = std::move(f)](const std::vector<Tensor>& args) {
    return implicit_value_and_gradients_of([&] { return f(args); });
  };
}

std::function<VariableGradients()> implicit_gradients(std::function<Tensor()> f) {
  return [f = std::move(f)] { return implicit_value_and_gradients_of(f).second; };
}

std::function<VariableGradients(const std::vector<Tensor>&)> implicit_gradients(TensorFunction f) {
  return [f = std::move(f)](const std::vector<Tensor>& args) {
    return implicit_value_and_gradients_of([&] { return f(args); }).second;
  };
}

}  // namespace ef
