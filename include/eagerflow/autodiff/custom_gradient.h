// custom_gradient: give a function its own gradient.
//
//   auto log1pexp = ef::custom_gradient([](const ef::Tensor& x) {
//     ef::Tensor e = ef::exp(x);
//     return ef::WithGradient{ef::log(1 + e), [e](const ef::Tensor& dy) { return dy * (1 - 1 / (1 + e)); }};
//   });
//   ef::grad(log1pexp)(ef::constant(100.f));   // 1.0, where the plain formula's gradient is nan
//
// Note [custom gradients]: f runs eagerly as usual (tapes record its ops), then each
// recording tape gets one extra entry from f's inputs to its outputs whose gradient is
// the function f returned. The outputs are fresh tensors (views of what f computed), so
// backprop reaches f's inputs only through that entry. Because f's own ops were recorded,
// a gradient function written with differentiable ops on tensors f computed (e above)
// can itself be differentiated: outer tapes give higher-order derivatives through it.
// Trainable variables f reads are extra inputs of the entry; the gradient function
// receives them and returns their gradients after the inputs'.
//
// Forward mode (ForwardAccumulator, jvp) gets the outputs' tangents from the gradient
// function, transposed (one backward pass, differentiated), unless f also returns a jvp
// function, as JAX's custom_jvp and PyTorch's autograd.Function.jvp give: it maps the
// inputs' tangents (zeros for an input without one) to the outputs' tangents, and its
// ops are differentiated in turn (forward-over-forward, reverse-over-forward). A jvp
// function does not see the variables f reads: a tangent on one of them is an error.
#pragma once

#include <functional>
#include <type_traits>
#include <vector>

#include "eagerflow/autodiff/function_transforms.h"
#include "eagerflow/runtime/variable.h"

namespace ef {

// What a custom-gradient function of one tensor returns: its output, the map from the
// output's gradient to the input's, and optionally the map from the input's tangent to
// the output's (forward mode).
struct WithGradient {
  Tensor output;
  std::function<Tensor(const Tensor& output_grad)> gradient;
  std::function<Tensor(const Tensor& input_tangent)> jvp = nullptr;
};

// What a custom-gradient function of several tensors returns: its outputs, and the map
// from one gradient per output to one gradient per input (undefined for none), followed
// by one per trainable variable the function read, in first-read order. The gradient
// may take the variables as a second argument; without it, reading one is an error.
// The optional jvp maps one tangent per input to one per output.
struct WithGradients {
  using Gradient =
      std::function<std::vector<Tensor>(const std::vector<Tensor>& output_grads, const std::vector<Variable>& variables)>;
  using Jvp = std::function<std::vector<Tensor>(const std::vector<Tensor>& input_tangents)>;

  template <class G>
  WithGradients(std::vector<Tensor> outputs_, G gradient_, Jvp jvp_ = nullptr)
      : outputs(std::move(outputs_)), jvp(std::move(jvp_)) {
    if constexpr (std::is_invocable_v<G&, const std::vector<Tensor>&, const std::vector<Variable>&>) {
      gradient = std::move(gradient_);
      takes_variables = true;
    } else {
      gradient = [g = std::move(gradient_)](const std::vector<Tensor>& dys, const std::vector<Variable>&) {
        return std::vector<Tensor>(g(dys));
      };
    }
  }

  std::vector<Tensor> outputs;
  Gradient gradient;
  Jvp jvp;
  bool takes_variables = false;
};

// f with its gradient replaced by the one f returns (Note [custom gradients]).
UnaryFunction custom_gradient(std::function<WithGradient(const Tensor&)> f);
TensorsFunction custom_gradient(std::function<WithGradients(const std::vector<Tensor>&)> f);

}  // namespace ef
