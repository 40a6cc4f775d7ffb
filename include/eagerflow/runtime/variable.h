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
//
// While a graph is built (graph mode, or `function` tracing), reads and assignments
// become graph nodes that read or change the variable when the graph runs: the graph
// holds the variable by reference. A variable created in graph mode starts
// uninitialized; its initial value is assigned by the graph's
// global_variables_initializer(). Reading it before that is a FailedPreconditionError.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "eagerflow/core/tensor.h"

namespace ef {

// How an assignment combines the new value with the variable's.
enum class AssignKind { kAssign, kAdd, kSubtract };

class Variable {
 public:
  // Throws InvalidArgumentError for an undefined initial value, or a symbolic one
  // outside graph mode or with a partially known shape.
  explicit Variable(const Tensor& initial, std::string name = "", bool trainable = true);

  const std::string& name() const { return state_->name; }
  bool trainable() const { return state_->trainable; }
  DType dtype() const { return state_->dtype; }
  const Shape& shape() const { return state_->shape; }
  // False for a variable created in graph mode until its initializer has run.
  bool initialized() const { return state_->value.defined(); }

  // The current value; active tapes see the read. While a graph is built, a symbolic
  // tensor for the value when the graph runs.
  Tensor value() const;
  operator Tensor() const { return value(); }  // NOLINT: usable wherever a Tensor is

  // Replace the value; a different dtype or shape is an InvalidArgumentError naming both.
  // Return the new value (while a graph is built, a symbolic tensor: running it assigns).
  Tensor assign(const Tensor& value, CallSite where = CallSite::current());
  Tensor assign_add(const Tensor& delta, CallSite where = CallSite::current());
  Tensor assign_sub(const Tensor& delta, CallSite where = CallSite::current());

  // Note [autocast variables]: a variable a mixed-precision layer creates keeps its
  // float32 value (the master weights) and is read, inside that layer's call, in the
  // layer's compute dtype (Keras' AutoCastVariable): value() casts it to
  // Context::autocast_dtype when that is set, and the cast is on the tape, so gradients
  // come back in float32. Assigning a value of another float dtype to it converts.
  bool autocast() const { return state_->autocast; }
  void set_autocast(bool autocast) { state_->autocast = autocast; }

  // True when both handles refer to the same variable.
  bool same_as(const Variable& other) const { return state_ == other.state_; }
  // An identity for tapes and tooling, stable for the variable's life.
  const void* key() const { return state_.get(); }

 private:
  struct State {
    Tensor value;  // undefined until initialized (graph mode)
    DType dtype;
    Shape shape;
    std::string name;
    bool trainable;
    bool autocast = false;
  };
  Tensor checked_value(const char* op) const;
  Tensor update(const Tensor& value, AssignKind kind, const CallSite& where);
  std::shared_ptr<State> state_;
};

std::ostream& operator<<(std::ostream& os, const Variable& v);

// Reads of autocast variables in this thread come back in `dtype` (none: as stored) for
// the lifetime of the scope (Note [autocast variables]).
class AutoCastScope {
 public:
  explicit AutoCastScope(std::optional<DType> dtype);
  ~AutoCastScope();
  AutoCastScope(const AutoCastScope&) = delete;
  AutoCastScope& operator=(const AutoCastScope&) = delete;

 private:
  std::optional<DType> saved_;
};

}  // namespace ef
