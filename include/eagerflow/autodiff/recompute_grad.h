// recompute_grad: gradient checkpointing. The function's intermediate results are not
// kept for backprop; the gradient runs the function again from its inputs.
//
//   auto block = ef::recompute_grad([&](const std::vector<ef::Tensor>& in) {
//     return std::vector<ef::Tensor>{ef::tanh(ef::matmul(in[0], w1)) * 2.0};
//   });
//   // Under a tape, block({x}) keeps x and its output, not the tanh's input.
//
// Note [recompute_grad]: as TensorFlow's tf.recompute_grad and JAX's checkpoint. Under a
// recording tape, f runs with its ops unrecorded (variable reads still reach the tapes),
// and the tapes get one entry from f's inputs and the trainable variables it read to its
// outputs, as custom_gradient records. That entry's gradient runs f again under a tape
// of its own and differentiates it, so the gradients equal f's own, at every order
// (outer tapes record the recomputation), at the cost of a second forward pass. The
// random ops in f draw the same numbers the second time (Note [recomputation replays
// random streams]); f must run the same random ops each time (fewer or more is an
// error), and a traced function's random ops inside f are refused. The rerun happens
// under the device scope and autocast of the first, with variable assignments refused
// (they happened in the first run: a BatchNormalization in training mode cannot be
// recomputed). Variables are read again in backward: assigning them between the two
// passes changes the gradient, as in TensorFlow. Without a recording tape, and while a
// function is traced into a graph, f simply runs (its gradient in a graph is its own).
#pragma once

#include "eagerflow/autodiff/function_transforms.h"

namespace ef {

TensorsFunction recompute_grad(TensorsFunction f);
UnaryFunction recompute_grad(UnaryFunction f);

}  // namespace ef
