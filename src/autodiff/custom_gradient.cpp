// custom_gradient (Note [custom gradients] in custom_gradient.h).
#include "eagerflow/autodiff/custom_gradient.h"

#include <optional>
#include <sstream>

#include "autodiff/tape_internal.h"
#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/runtime/context.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// Note [custom gradients in graphs]: a graph cannot yet hold a custom gradient function,
// so while a graph is being built (ef.function, graph mode) f's outputs pass through
// this identity, whose gradient raises. Without it a traced f would be differentiated
// through its own ops, giving the ordinary gradient instead of the custom one: a
// silently wrong number.
void infer_identity(const OpCall& call, OutputMetas& out) {
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

void identity_view(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  outputs[0] = detail::make_view(x, x.shape(), x.strides(), x.impl()->offset);
}

std::vector<Tensor> custom_gradient_in_graph_gradient(const GradCall&) {
  fail<UnimplementedError>(
      "custom_gradient: a function with a custom gradient was traced into a graph (ef.function or graph "
      "mode), "
      "where its gradient cannot be used yet; call it eagerly to differentiate it, or trace only code that "
      "is not "
      "differentiated through it");
}

const OpDef& kCustomGradientInGraph = define_op({
    .name = "custom_gradient_in_graph",
    .infer = infer_identity,
    .kernels = {identity_view},
    .gradient = custom_gradient_in_graph_gradient,
    .gradient_uses = kGradientReadsNoValues,
    .traits = {.view = true},
});

std::string variable_names(const std::vector<Variable>& variables) {
  std::ostringstream os;
  for (size_t i = 0; i < variables.size(); ++i) os << (i ? ", '" : "'") << variables[i].name() << "'";
  return os.str();
}

// Runs f's gradient for one backward pass and checks what it returned.
std::vector<Tensor> call_gradient(const WithGradients& result, const std::vector<Tensor>& inputs,
                                  const std::vector<Variable>& variables, const std::vector<Tensor>& variable_values,
                                  std::span<const Tensor> output_grads) {
  std::vector<Tensor> grads =
      result.gradient(std::vector<Tensor>(output_grads.begin(), output_grads.end()), variables);
  const size_t expected = inputs.size() + variables.size();
  if (grads.size() != expected)
    fail("custom_gradient: the gradient function returned ", grads.size(), " gradients; expected one per input (",
         inputs.size(), ")", variables.empty() ? "" : " followed by one per trainable variable read (",
         variables.empty() ? "" : std::to_string(variables.size()) + ")");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    const Tensor& x = i < inputs.size() ? inputs[i] : variable_values[i - inputs.size()];
    if (grads[i].shape() != x.shape())
      fail("custom_gradient: the gradient for ",
           i < inputs.size() ? "input " + std::to_string(i) : "variable '" + variables[i - inputs.size()].name() + "'",
           " has shape ", grads[i].shape(), " but the ", i < inputs.size() ? "input" : "variable", " has shape ",
           x.shape());
  }
  return grads;
}

// Runs f's jvp for one forward-mode pass: `tangents` has one per recorded input (f's
// inputs, then the variables it read); checks what the jvp returned.
std::vector<Tensor> call_jvp(const WithGradients& result, const std::vector<Tensor>& inputs,
                             const std::vector<Variable>& variables, std::span<const Tensor> tangents) {
  for (size_t v = 0; v < variables.size(); ++v)
    if (tangents[inputs.size() + v].defined())
      fail<UnimplementedError>("custom_gradient: a forward accumulator has a tangent for variable '",
                               variables[v].name(),
                               "', which the function reads, but its jvp function receives only the inputs' "
                               "tangents; pass the variable's value as an input instead");
  std::vector<Tensor> input_tangents;
  for (size_t i = 0; i < inputs.size(); ++i)
    input_tangents.push_back(tangents[i].defined() || !detail::is_differentiable(inputs[i].dtype())
                                 ? tangents[i]
                                 : zeros_like(inputs[i]));
  std::vector<Tensor> out = result.jvp(input_tangents);
  if (out.size() != result.outputs.size())
    fail("custom_gradient: the jvp function returned ", out.size(), " tangents; expected one per output (",
         result.outputs.size(), ")");
  for (size_t k = 0; k < out.size(); ++k) {
    const Tensor& y = result.outputs[k];
    if (out[k].defined() && (out[k].shape() != y.shape() || out[k].dtype() != y.dtype()))
      fail("custom_gradient: the jvp function's tangent for output ", k, " has dtype ", out[k].dtype(),
           " and shape ", out[k].shape(), " but the output has dtype ", y.dtype(), " and shape ", y.shape());
  }
  return out;
}

}  // namespace

TensorsFunction custom_gradient(std::function<WithGradients(const std::vector<Tensor>&)> f) {
  return [f = std::move(f)](const std::vector<Tensor>& inputs) -> std::vector<Tensor> {
    if (Context::current().builder) {  // Note [custom gradients in graphs]
      std::vector<Tensor> outputs = f(inputs).outputs;
      for (Tensor& out : outputs)
        if (out.defined()) out = run_op(kCustomGradientInGraph, {out}, {}, CallSite::current());
      return outputs;
    }
    // Without a recording tape nobody will ask for the gradient.
    if (!detail::tapes_recording()) return f(inputs).outputs;

    std::optional<WithGradients> result;
    std::vector<Variable> variables;
    std::vector<Tensor> variable_values;
    {
      detail::VariableReadLog reads;
      result.emplace(f(inputs));
      variables = std::move(reads.variables);
      variable_values = std::move(reads.values);
    }
    if (!result->gradient) fail("custom_gradient: the function returned no gradient function");
    if (!variables.empty() && !result->takes_variables)
      fail("custom_gradient: the function read the trainable variables ", variable_names(variables),
           ", so its gradient function must take them (C++: a second argument, Python: `variables=`) and return "
           "their gradients after the inputs'");
    for (size_t i = 0; i < result->outputs.size(); ++i)
      if (!result->outputs[i].defined()) fail("custom_gradient: output ", i, " of the function is undefined");

    // Fresh outputs, so that backprop reaches the inputs only through the custom entry.
    std::vector<Tensor> outputs;
    outputs.reserve(result->outputs.size());
    for (const Tensor& out : result->outputs) outputs.push_back(stop_gradient(out));

    std::vector<Tensor> recorded_inputs = inputs;
    recorded_inputs.insert(recorded_inputs.end(), variable_values.begin(), variable_values.end());
    auto shared = std::make_shared<const WithGradients>(std::move(*result));
    auto gradient = std::make_shared<const detail::CustomGradientFn>(
        [shared, inputs, variables,
         variable_values = std::move(variable_values)](std::span<const Tensor> output_grads) {
          return call_gradient(*shared, inputs, variables, variable_values, output_grads);
        });
    if (!shared->jvp) {
      detail::record_custom_gradient(recorded_inputs, outputs, std::move(gradient));
      return outputs;
    }
    const detail::CustomJvpFn jvp = [&](std::span<const Tensor> tangents) {
      return call_jvp(*shared, inputs, variables, tangents);
    };
    detail::record_custom_gradient(recorded_inputs, outputs, std::move(gradient), &jvp);
    return outputs;
  };
}

UnaryFunction custom_gradient(std::function<WithGradient(const Tensor&)> f) {
  TensorsFunction general = custom_gradient([f = std::move(f)](const std::vector<Tensor>& inputs) {
    WithGradient result = f(inputs[0]);
    if (!result.gradient) fail("custom_gradient: the function returned no gradient function");
    WithGradients::Jvp jvp;
    if (result.jvp)
      jvp = [j = std::move(result.jvp)](const std::vector<Tensor>& tangents) {
        return std::vector<Tensor>{j(tangents[0])};
      };
    return WithGradients(
        {result.output},
        [g = std::move(result.gradient)](const std::vector<Tensor>& dys) {
          return std::vector<Tensor>{g(dys[0])};
        },
        std::move(jvp));
  });
  return [general = std::move(general)](const Tensor& x) { return general({x})[0]; };
}

}  // namespace ef
