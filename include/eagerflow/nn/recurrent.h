// Recurrent layers (Keras' SimpleRNN, LSTM, GRU) over [batch, steps, features] inputs,
// with Keras' weight layout, so checkpoints and configs line up with Keras':
//   kernel [features, k * units], recurrent_kernel [units, k * units], bias [k * units]
//   (GRU with reset_after, Keras' default: [2, 3 * units], the input and the recurrent
//   bias), gates in Keras' order: LSTM i, f, c, o; GRU z, r, h.
// The output is the last step's state [batch, units], or every step's
// [batch, steps, units] with return_sequences. The steps are a loop of ops, so the
// gradient is backpropagation through time, and inside ef::function the loop unrolls.
//
//   model.add(ef::nn::LSTM(64, {.return_sequences = true}));
//   auto lstm = ef::nn::LSTM(64, {.return_state = true});
//   auto outs = lstm->call_all({x, h0, c0});   // [output, h, c]; the states start at h0, c0
//
// With a mask (Note [masks] in layer.h) a masked step leaves the states as they were
// and repeats the previous output (zeros with zero_output_for_mask), as Keras does.
// A stateful layer starts each call from the last call's final states (fixed batch
// size; reset_states() zeroes them).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagerflow/nn/activations.h"
#include "eagerflow/nn/layer.h"

namespace ef::nn {

struct RecurrentOptions {
  Activation activation = "tanh";
  Activation recurrent_activation = "sigmoid";  // LSTM and GRU gates
  bool use_bias = true;
  bool return_sequences = false;
  bool return_state = false;  // the outputs are [output, final states...] (LSTM: h, c)
  bool go_backwards = false;  // the steps in reverse order (outputs too, as Keras)
  bool stateful = false;
  bool zero_output_for_mask = false;  // masked steps output zeros (else the previous output)
  Initializer kernel_initializer = "glorot_uniform";
  Initializer recurrent_initializer = "orthogonal";
  Initializer bias_initializer = "zeros";
  bool unit_forget_bias = true;  // LSTM: the forget gate's bias starts at 1
  // GRU: the reset gate multiplies h @ recurrent_kernel (Keras' default, as cuDNN), or
  // with false h before it (the original GRU; one bias [3 * units]).
  bool reset_after = true;
  std::string name;  // default: "simple_rnn" / "lstm" / "gru"
};

class Recurrent : public Layer {
 public:
  enum class Cell { kSimpleRNN, kLSTM, kGRU };
  Recurrent(Cell cell, int64_t units, RecurrentOptions options = {});
  int64_t units() const { return units_; }
  std::string class_name() const override;
  Config get_config() const override;
  static std::shared_ptr<Recurrent> from_config(Cell cell, const Config& config);
  // How many state tensors a step carries: 2 for LSTM (h, c), else 1.
  int state_count() const { return cell_ == Cell::kLSTM ? 2 : 1; }
  // Zeroes a stateful layer's states; FailedPreconditionError for a layer that is not.
  void reset_states();
  // Bidirectional sets it to return_sequences, as Keras does.
  void set_zero_output_for_mask(bool zero) { options_.zero_output_for_mask = zero; }
  bool supports_masking() const override { return true; }
  std::optional<Tensor> compute_mask(const std::vector<Tensor>& inputs,
                                     const std::optional<Tensor>& mask) const override;

 protected:
  void build(const Shape& input_shape) override;
  void build_inputs(const std::vector<Shape>& input_shapes) override;
  Tensor call(const Tensor& inputs, bool training) override;
  // [inputs] or [inputs, initial states...] (Keras' initial_state).
  std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training) override;
  std::vector<Tensor> call_masked(const std::vector<Tensor>& inputs, const Tensor& mask,
                                  bool training) override;

 private:
  int gates() const { return cell_ == Cell::kLSTM ? 4 : cell_ == Cell::kGRU ? 3 : 1; }
  // The loop over the steps: [output, final states...].
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const std::optional<Tensor>& mask);
  Cell cell_;
  int64_t units_;
  RecurrentOptions options_;
  std::optional<Variable> kernel_, recurrent_kernel_, bias_;
  std::vector<Variable> states_;  // a stateful layer's carried states (not weights)
};

inline std::shared_ptr<Recurrent> SimpleRNN(int64_t units, RecurrentOptions options = {}) {
  return std::make_shared<Recurrent>(Recurrent::Cell::kSimpleRNN, units, std::move(options));
}
inline std::shared_ptr<Recurrent> LSTM(int64_t units, RecurrentOptions options = {}) {
  return std::make_shared<Recurrent>(Recurrent::Cell::kLSTM, units, std::move(options));
}
inline std::shared_ptr<Recurrent> GRU(int64_t units, RecurrentOptions options = {}) {
  return std::make_shared<Recurrent>(Recurrent::Cell::kGRU, units, std::move(options));
}

}  // namespace ef::nn
