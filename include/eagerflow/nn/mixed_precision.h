// Mixed-precision policies (Keras' keras.mixed_precision): which dtype a layer
// computes in and which its variables are stored in.
//
//   ef::nn::set_global_policy(ef::nn::Policy("mixed_bfloat16"));
//   ef::nn::Sequential model(...);  // layers compute in bfloat16, keep float32 weights
//
// "mixed_float16" and "mixed_bfloat16" compute in the half dtype with float32
// variables (read in the half dtype inside the layer's call: Note [autocast variables]
// in eagerflow/runtime/variable.h), and a layer casts its floating inputs to its compute
// dtype, so its outputs come out in it. "float32", "float64", "float16" and "bfloat16"
// use one dtype for both. Losses compute in float32 when given half predictions. With
// float16, scale the loss (ef::optim::LossScaleOptimizer) so small gradients do not
// flush to zero.
//
// Without a global policy (the default) a layer follows its first input: its variables
// take that input's floating dtype and nothing is cast, as before policies existed.
#pragma once

#include <optional>
#include <string>

#include "eagerflow/core/dtype.h"

namespace ef::nn {

class Policy {
 public:
  // Throws InvalidArgumentError for a name other than those above.
  explicit Policy(const std::string& name);
  const std::string& name() const { return name_; }
  DType compute_dtype() const { return compute_; }
  DType variable_dtype() const { return variable_; }
  bool is_mixed() const { return compute_ != variable_; }
  bool operator==(const Policy& other) const { return name_ == other.name_; }

 private:
  std::string name_;
  DType compute_;
  DType variable_;
};

// The policy of every layer made without one of its own (process-wide, as in Keras).
void set_global_policy(const Policy& policy);
// Back to no global policy: layers follow their inputs' dtype.
void clear_global_policy();
// The global policy, or none when it was never set (or cleared).
std::optional<Policy> global_policy();

}  // namespace ef::nn
