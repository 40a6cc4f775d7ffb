// Variable: mutable state with a fixed dtype and shape — model weights.
//
//   ef::Variable w(ef::ones({2, 2}), "w");
//   ef::GradientTape tape;                 // trainable variables read here are watched
//   ef::Tensor loss = ef::reduce_sum(w * w);
//   ef::Tensor dw = tape.gradient(loss, w);  // 2 * w
//   w.assign_sub(0.1f * dw);
//
// Copies of a Variable are handles to the same state. Reading (value(), or using the
// Variable where a Tensor is expected) is seen by active gradient tapes. Assigning never
// writes into a tensor someone holds: the Variable points at a new tensor instead
// (Note [views] in core/tensor.h).
#pragma once

#include <memory>
#include <string>

#include "eagerflow/core/tensor.h"

namespace ef {

class Variable {
 public:
  // Throws InvalidArgumentError for an undefined or symbolic initial value.
  explicit Variable(const Tensor& initial, std::string name = "", bool trainable = true);

  const std::string& name() const { return state_->name; }
  bool trainable() const { return state_->trainable; }
  DType dtype() const { return state_->value.dtype(); }
  const Shape& shape() const { return state_->value.shape(); }

  // The current value; active tapes see the read.
  Tensor value() const;
  operator Tensor() const { return value(); }  // NOLINT: usable wherever a Tensor is

  // Replace the value; a different dtype or shape is an InvalidArgumentError naming both.
  void assign(const Tensor& value, CallSite where = CallSite::current());
  void assign_add(const Tensor& delta, CallSite where = CallSite::current());
  void assign_sub(const Tensor& delta, CallSite where = CallSite::current());

  // True when both handles refer to the same variable.
  bool same_as(const Variable& other) const { return state_ == other.state_; }
  // An identity for tapes and tooling, stable for the variable's life.
  const void* key() const { return state_.get(); }

 private:
  struct State {
    Tensor value;
    std::string name;
    bool trainable;
  };
  std::shared_ptr<State> state_;
};

std::ostream& operator<<(std::ostream& os, const Variable& v);

}  // namespace ef
