// SimpleRNN, LSTM and GRU (eagerflow/nn/recurrent.h).
#include "eagerflow/nn/recurrent.h"

#include "eagerflow/graph/function.h"

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/runtime/context.h"

namespace ef::nn {
namespace {

const char* cell_name(Recurrent::Cell cell, bool keras) {
  switch (cell) {
    case Recurrent::Cell::kSimpleRNN:
      return keras ? "SimpleRNN" : "simple_rnn";
    case Recurrent::Cell::kLSTM:
      return keras ? "LSTM" : "lstm";
    case Recurrent::Cell::kGRU:
      return keras ? "GRU" : "gru";
  }
  return "";
}

// A [batch, n * units] tensor as its n gates [batch, units]. One split, not n slices:
// its gradient is one concat, where slices' would be n zero-padded copies summed.
std::vector<Tensor> gates_of(const Tensor& z, int64_t n) { return split(z, n, 1); }

}  // namespace

Recurrent::Recurrent(Cell cell, int64_t units, RecurrentOptions options)
    : Layer(options.name.empty() ? cell_name(cell, false) : options.name),
      cell_(cell),
      units_(units),
      options_(std::move(options)) {
  if (units <= 0) fail(cell_name(cell, true), ": units must be positive, got ", units);
}

std::string Recurrent::class_name() const { return cell_name(cell_, true); }

void Recurrent::build(const Shape& input_shape) {
  if (input_shape.rank() != 3)
    fail("layer '", name(), "': expects inputs [batch, steps, features], got shape ", input_shape);
  const int64_t features = input_shape[2], width = gates() * units_;
  kernel_ = add_weight("kernel", {features, width}, options_.kernel_initializer);
  recurrent_kernel_ = add_weight("recurrent_kernel", {units_, width}, options_.recurrent_initializer);
  if (!options_.use_bias) return;
  if (cell_ == Cell::kGRU && options_.reset_after) {
    bias_ = add_weight("bias", {2, width}, options_.bias_initializer);
  } else if (cell_ == Cell::kLSTM && options_.unit_forget_bias) {
    // Keras: the bias initializer for the i, c, o gates, ones for the forget gate.
    const Initializer& init = options_.bias_initializer;
    const int64_t u = units_;
    bias_ = add_weight("bias", {width}, Initializer("unit_forget_bias", [init, u](const Shape&, DType dtype) {
                         return concat({init({u}, dtype), ones({u}, dtype), init({2 * u}, dtype)}, 0);
                       }));
  } else {
    bias_ = add_weight("bias", {width}, options_.bias_initializer);
  }
}

void Recurrent::build_inputs(const std::vector<Shape>& input_shapes) {
  const size_t states = static_cast<size_t>(state_count());
  if (input_shapes.size() != 1 && input_shapes.size() != 1 + states)
    fail("layer '", name(), "' takes [inputs] or [inputs, ", states == 2 ? "h, c" : "h",
         "] (initial states), got ", input_shapes.size(), " tensors");
  build(input_shapes[0]);
  if (!options_.stateful) return;
  const int64_t batch = input_shapes[0][0];
  if (batch == kUnknownDim)
    fail("layer '", name(), "' is stateful and needs a known batch size, got inputs of shape ",
         input_shapes[0]);
  InitScope init;  // built inside a function: on its first trace
  for (size_t k = 0; k < states; ++k)
    states_.emplace_back(zeros({batch, units_}, dtype()), name() + "/state_" + std::to_string(k), false);
}

void Recurrent::reset_states() {
  if (!options_.stateful)
    fail<FailedPreconditionError>("layer '", name(), "': reset_states() on a layer that is not stateful");
  for (Variable& state : states_) state.assign(zeros_like(state.value()));
}

Tensor Recurrent::call(const Tensor& inputs, bool) { return only_output(run({inputs}, std::nullopt)); }

std::vector<Tensor> Recurrent::call_inputs(const std::vector<Tensor>& inputs, bool) {
  return run(inputs, std::nullopt);
}

std::vector<Tensor> Recurrent::call_masked(const std::vector<Tensor>& inputs, const Tensor& mask, bool) {
  return run(inputs, mask);
}

std::optional<Tensor> Recurrent::compute_mask(const std::vector<Tensor>&,
                                              const std::optional<Tensor>& mask) const {
  return options_.return_sequences ? mask : std::nullopt;
}

std::vector<Tensor> Recurrent::run(const std::vector<Tensor>& args, const std::optional<Tensor>& mask) {
  const Tensor& inputs = args.at(0);
  const Shape& s = inputs.shape();
  if (s.rank() != 3) fail("layer '", name(), "': expects inputs [batch, steps, features], got shape ", s);
  const int64_t batch = s[0], steps = s[1], width = gates() * units_;
  if (steps == 0) fail("layer '", name(), "': the inputs have no steps (shape ", s, ")");
  // The steps are unrolled, so their number must be known (a symbolic batch may not be).
  if (steps == kUnknownDim)
    fail("layer '", name(), "': the number of steps must be known, got inputs of shape ", s,
         " (give keras.Input a fixed sequence length)");
  const size_t state_inputs = args.size() - 1;
  if (state_inputs != 0 && state_inputs != static_cast<size_t>(state_count()))
    fail("layer '", name(), "' takes ", state_count(), " initial state(s), got ", state_inputs);
  for (size_t k = 1; k < args.size(); ++k) {
    const Shape& state = args[k].shape();
    if (state.rank() != 2 || state[1] != units_ ||
        (state[0] != batch && state[0] != kUnknownDim && batch != kUnknownDim))
      fail("layer '", name(), "': initial state ", k - 1, " must be [batch, units] = [", batch, ", ", units_,
           "], got shape ", state);
  }
  if (mask) {
    const Shape& m = mask->shape();
    if (mask->dtype() != DType::Bool || m.rank() != 2 ||
        (m[0] != batch && m[0] != kUnknownDim && batch != kUnknownDim) ||
        (m[1] != steps && m[1] != kUnknownDim && steps != kUnknownDim))
      fail("layer '", name(), "': the mask must be a bool [batch, steps] = [", batch, ", ", steps,
           "] tensor, got ", mask->dtype(), " ", m);
  }
  if (options_.stateful && !states_.empty() && batch != kUnknownDim && states_[0].shape()[0] != batch)
    fail("layer '", name(), "' is stateful with batch size ", states_[0].shape()[0],
         " and got inputs of shape ", s);
  // Every step's input projection in one matmul: [batch * steps, features] x kernel.
  Tensor projected = reshape(matmul(reshape(inputs, {-1, s[2]}), *kernel_), {batch, steps, width});
  Tensor input_bias, recurrent_bias;
  if (bias_) {
    if (cell_ == Cell::kGRU && options_.reset_after) {
      input_bias = reshape(slice(*bias_, {0, 0}, {1, -1}), {width});
      recurrent_bias = reshape(slice(*bias_, {1, 0}, {1, -1}), {width});
    } else {
      input_bias = *bias_;
    }
    projected = projected + input_bias;
  }
  const Activation& act = options_.activation;
  const Activation& gate_act = options_.recurrent_activation;
  Tensor h, c;
  if (state_inputs != 0) {
    h = args[1];
    if (cell_ == Cell::kLSTM) c = args[2];
  } else if (options_.stateful) {
    h = states_[0].value();
    if (cell_ == Cell::kLSTM) c = states_[1].value();
  }
  // Zero states [batch, units]; of a symbolic batch, shaped after the inputs.
  Tensor zero_state;  // only when the states or a mask's first outputs start from it
  const DeviceScope on_inputs(projected.device());  // zero states on the inputs' device, not the scope's
  if (!h.defined() || mask)
    zero_state = batch != kUnknownDim
                     ? zeros({batch, units_}, projected.dtype())
                     : zeros_like(reshape(slice(projected, {0, 0, 0}, {-1, 1, units_}), {-1, units_}));
  if (!h.defined()) h = c = zero_state;
  // With a mask: what a masked step outputs (the previous output, as Keras' rnn).
  Tensor output = mask ? zero_state : Tensor();
  // GRU without reset_after: h meets the z and r columns of the recurrent kernel
  // directly, the candidate's columns only after the reset gate scaled it.
  const bool reset_before = cell_ == Cell::kGRU && !options_.reset_after;
  Tensor gates_kernel, candidate_kernel;
  if (reset_before) {
    gates_kernel = slice(*recurrent_kernel_, {0, 0}, {-1, 2 * units_});
    candidate_kernel = slice(*recurrent_kernel_, {0, 2 * units_}, {-1, units_});
  }
  // The steps' projections [batch, width] by one unstack (its gradient one stack, where
  // a slice per step would pad each step's gradient to the whole sequence).
  const std::vector<Tensor> step_inputs = unstack(projected, 1);
  std::vector<Tensor> outputs;
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t t = options_.go_backwards ? steps - 1 - i : i;
    const Tensor& x = step_inputs[static_cast<size_t>(t)];
    Tensor new_h, new_c;
    if (reset_before) {
      const std::vector<Tensor> xg = gates_of(x, 3), rg = gates_of(matmul(h, gates_kernel), 2);
      const Tensor update = gate_act(xg[0] + rg[0]);
      const Tensor reset = gate_act(xg[1] + rg[1]);
      const Tensor candidate = act(xg[2] + matmul(reset * h, candidate_kernel));
      new_h = update * h + (1.0 - update) * candidate;
    } else {
      Tensor r = matmul(h, *recurrent_kernel_);
      switch (cell_) {
        case Cell::kSimpleRNN:
          new_h = act(x + r);
          break;
        case Cell::kLSTM: {
          const std::vector<Tensor> z = gates_of(x + r, 4);
          const Tensor in = gate_act(z[0]), forget = gate_act(z[1]);
          const Tensor candidate = act(z[2]), out = gate_act(z[3]);
          new_c = forget * c + in * candidate;
          new_h = out * act(new_c);
          break;
        }
        case Cell::kGRU: {
          if (recurrent_bias.defined()) r = r + recurrent_bias;
          const std::vector<Tensor> xg = gates_of(x, 3), rg = gates_of(r, 3);
          const Tensor update = gate_act(xg[0] + rg[0]);
          const Tensor reset = gate_act(xg[1] + rg[1]);
          const Tensor candidate = act(xg[2] + reset * rg[2]);
          new_h = update * h + (1.0 - update) * candidate;
          break;
        }
      }
    }
    if (mask) {  // a masked step keeps the states and repeats the output
      const Tensor real = reshape(slice(*mask, {0, t}, {-1, 1}), {batch, 1});
      h = where(real, new_h, h);
      if (new_c.defined()) c = where(real, new_c, c);
      output = where(real, new_h, options_.zero_output_for_mask ? zeros_like(new_h) : output);
    } else {
      h = new_h;
      if (new_c.defined()) c = new_c;
      output = h;
    }
    if (options_.return_sequences) outputs.push_back(output);
  }
  if (options_.stateful) {
    states_[0].assign(h);
    if (cell_ == Cell::kLSTM) states_[1].assign(c);
  }
  std::vector<Tensor> results{options_.return_sequences ? stack(outputs, 1) : output};
  if (options_.return_state) {
    results.push_back(h);
    if (cell_ == Cell::kLSTM) results.push_back(c);
  }
  return results;
}

Config Recurrent::get_config() const {
  Config c = Layer::get_config();
  c.set("units", units_)
      .set("activation", options_.activation.config_name(name()))
      .set("use_bias", options_.use_bias)
      .set("return_sequences", options_.return_sequences)
      .set("return_state", options_.return_state)
      .set("go_backwards", options_.go_backwards)
      .set("stateful", options_.stateful)
      .set("zero_output_for_mask", options_.zero_output_for_mask)
      .set("kernel_initializer", options_.kernel_initializer.get_config())
      .set("recurrent_initializer", options_.recurrent_initializer.get_config())
      .set("bias_initializer", options_.bias_initializer.get_config());
  if (cell_ != Cell::kSimpleRNN)
    c.set("recurrent_activation", options_.recurrent_activation.config_name(name()));
  if (cell_ == Cell::kLSTM) c.set("unit_forget_bias", options_.unit_forget_bias);
  if (cell_ == Cell::kGRU) c.set("reset_after", options_.reset_after);
  return c;
}

std::shared_ptr<Recurrent> Recurrent::from_config(Cell cell, const Config& c) {
  const std::string who = std::string(cell_name(cell, true)) + " config";
  RecurrentOptions o;
  o.activation = Activation(c.get<std::string>("activation", who, std::string("tanh")));
  o.recurrent_activation =
      Activation(c.get<std::string>("recurrent_activation", who, std::string("sigmoid")));
  o.use_bias = c.get<bool>("use_bias", who, true);
  o.return_sequences = c.get<bool>("return_sequences", who, false);
  o.return_state = c.get<bool>("return_state", who, false);
  o.go_backwards = c.get<bool>("go_backwards", who, false);
  o.stateful = c.get<bool>("stateful", who, false);
  o.zero_output_for_mask = c.get<bool>("zero_output_for_mask", who, false);
  o.kernel_initializer = Initializer::from_layer_config(c, "kernel_initializer", who, "glorot_uniform");
  o.recurrent_initializer = Initializer::from_layer_config(c, "recurrent_initializer", who, "orthogonal");
  o.bias_initializer = Initializer::from_layer_config(c, "bias_initializer", who, "zeros");
  o.unit_forget_bias = c.get<bool>("unit_forget_bias", who, true);
  o.reset_after = c.get<bool>("reset_after", who, true);
  o.name = c.get<std::string>("name", who, std::string(cell_name(cell, false)));
  return std::make_shared<Recurrent>(cell, c.get<int64_t>("units", who), std::move(o));
}

}  // namespace ef::nn
