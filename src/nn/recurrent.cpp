// SimpleRNN, LSTM and GRU (eagerflow/nn/recurrent.h).
#include "eagerflow/nn/recurrent.h"

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"

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

// Columns [k * units, (k + 1) * units) of a [batch, n * units] tensor: gate k.
Tensor gate(const Tensor& z, int k, int64_t units) { return slice(z, {0, k * units}, {-1, units}); }

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

Tensor Recurrent::call(const Tensor& inputs, bool) {
  const Shape& s = inputs.shape();
  if (s.rank() != 3) fail("layer '", name(), "': expects inputs [batch, steps, features], got shape ", s);
  const int64_t batch = s[0], steps = s[1], width = gates() * units_;
  if (steps == 0) fail("layer '", name(), "': the inputs have no steps (shape ", s, ")");
  // Every step's input projection in one matmul: [batch * steps, features] x kernel.
  Tensor projected = reshape(matmul(reshape(inputs, {batch * steps, s[2]}), *kernel_), {batch, steps, width});
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
  Tensor h = zeros({batch, units_}, projected.dtype()), c = h;
  // GRU without reset_after: h meets the z and r columns of the recurrent kernel
  // directly, the candidate's columns only after the reset gate scaled it.
  const bool reset_before = cell_ == Cell::kGRU && !options_.reset_after;
  Tensor gates_kernel, candidate_kernel;
  if (reset_before) {
    gates_kernel = slice(*recurrent_kernel_, {0, 0}, {-1, 2 * units_});
    candidate_kernel = slice(*recurrent_kernel_, {0, 2 * units_}, {-1, units_});
  }
  std::vector<Tensor> outputs;
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t t = options_.go_backwards ? steps - 1 - i : i;
    const Tensor x = reshape(slice(projected, {0, t, 0}, {-1, 1, -1}), {batch, width});
    if (reset_before) {
      const Tensor r = matmul(h, gates_kernel);
      const Tensor update = gate_act(gate(x, 0, units_) + gate(r, 0, units_));
      const Tensor reset = gate_act(gate(x, 1, units_) + gate(r, 1, units_));
      const Tensor candidate = act(gate(x, 2, units_) + matmul(reset * h, candidate_kernel));
      h = update * h + (1.0 - update) * candidate;
      if (options_.return_sequences) outputs.push_back(h);
      continue;
    }
    Tensor r = matmul(h, *recurrent_kernel_);
    switch (cell_) {
      case Cell::kSimpleRNN:
        h = act(x + r);
        break;
      case Cell::kLSTM: {
        const Tensor z = x + r;
        const Tensor in = gate_act(gate(z, 0, units_)), forget = gate_act(gate(z, 1, units_));
        const Tensor candidate = act(gate(z, 2, units_)), out = gate_act(gate(z, 3, units_));
        c = forget * c + in * candidate;
        h = out * act(c);
        break;
      }
      case Cell::kGRU: {
        if (recurrent_bias.defined()) r = r + recurrent_bias;
        const Tensor update = gate_act(gate(x, 0, units_) + gate(r, 0, units_));
        const Tensor reset = gate_act(gate(x, 1, units_) + gate(r, 1, units_));
        const Tensor candidate = act(gate(x, 2, units_) + reset * gate(r, 2, units_));
        h = update * h + (1.0 - update) * candidate;
        break;
      }
    }
    if (options_.return_sequences) outputs.push_back(h);
  }
  return options_.return_sequences ? stack(outputs, 1) : h;
}

Config Recurrent::get_config() const {
  Config c = Layer::get_config();
  c.set("units", units_)
      .set("activation", options_.activation.config_name(name()))
      .set("use_bias", options_.use_bias)
      .set("return_sequences", options_.return_sequences)
      .set("go_backwards", options_.go_backwards)
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
  o.go_backwards = c.get<bool>("go_backwards", who, false);
  o.kernel_initializer = Initializer::from_layer_config(c, "kernel_initializer", who, "glorot_uniform");
  o.recurrent_initializer = Initializer::from_layer_config(c, "recurrent_initializer", who, "orthogonal");
  o.bias_initializer = Initializer::from_layer_config(c, "bias_initializer", who, "zeros");
  o.unit_forget_bias = c.get<bool>("unit_forget_bias", who, true);
  o.reset_after = c.get<bool>("reset_after", who, true);
  o.name = c.get<std::string>("name", who, std::string(cell_name(cell, false)));
  return std::make_shared<Recurrent>(cell, c.get<int64_t>("units", who), std::move(o));
}

}  // namespace ef::nn
