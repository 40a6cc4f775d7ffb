// The per-thread execution context.
//
// Note [thread-local context]: whether op calls execute (eager) or add graph nodes,
// which tapes record them, and the default device are properties of the calling
// thread, so several threads can use eagerflow at once, each in its own mode. The
// layers above install themselves through the two interfaces below (graph building
// and recording) with RAII scopes; the runtime does not depend on them.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "eagerflow/core/device.h"
#include "eagerflow/runtime/op_def.h"
#include "eagerflow/runtime/variable.h"

namespace ef {

// Receives op calls instead of executing them: graph mode, or shape-only inference.
// Variables route their reads, assignments and creation here too, so that a graph can
// read and change them when it runs rather than when it is built.
class OpBuilder {
 public:
  virtual ~OpBuilder() = default;
  // Returns symbolic outputs matching `outputs` (inference has already run).
  virtual std::vector<Tensor> build(const OpCall& call, const OutputMetas& outputs) = 0;
  // A symbolic tensor standing for the variable's value when the built code runs.
  virtual Tensor read_variable(const Variable& variable);
  // Builds the assignment; returns a symbolic tensor for the new value. The value has
  // been checked against the variable's dtype and shape.
  virtual Tensor assign_variable(const Variable& variable, const Tensor& value, AssignKind kind);
  // A variable was created while building, from `initial` (eager or symbolic). Returns
  // true when it takes an eager `initial` as its value now, false when the graph
  // initializes it when it runs.
  virtual bool variable_created(const Variable& variable, const Tensor& initial);
};

// Sees every op call that produced outputs while it is installed: gradient tapes.

class OpRecorder {
 public:
  virtual ~OpRecorder() = default;
  virtual void record(const OpCall& call, std::span<const Tensor> outputs) = 0;
  // A variable's value was read (tapes watch trainable variables they see read).
  virtual void variable_read(const Variable& variable, const Tensor& value) {
    (void)variable;
    (void)value;
  }
};

// Set while a function is traced on this thread (Note [variables created by functions]
// in graph/function.h).
struct FunctionTrace {
  std::string function;                // its name, for messages
  bool may_create_variables = false;   // only its first trace may
  OpBuilder* outer_builder = nullptr;  // what ran before the outermost trace (null: eager)
};

struct Context {
  OpBuilder* builder = nullptr;    // non-null: op calls build instead of execute
  OpRecorder* recorder = nullptr;  // non-null: op calls are recorded
  Device device = kCPU;            // where creation ops place new tensors
  const FunctionTrace* function_trace = nullptr;  // non-null: a function is being traced
  // Set: autocast variables read now come back in this dtype (Note [autocast variables]
  // in variable.h): a mixed-precision layer's call sets it to its compute dtype.
  std::optional<DType> autocast_dtype;

  // This thread's context. Defined in the library, not inline: an inline function's
  // thread_local would be a separate copy in each shared object that hides its
  // symbols (the Python extension does), so a scope set there would not be seen here.
  static Context& current();
};

// No gradient tape of this thread records or watches anything for the lifetime of the
// scope.
//
// Note [state updates are not recorded]: optimizers updating variables and slots,
// metrics accumulating, BatchNormalization's moving statistics and L-BFGS moving its
// iterate change state; no gradient is ever taken through those updates. Recording
// them would cost time and keep every step's temporaries alive on a persistent tape,
// so they run under RecordingPaused.
class RecordingPaused {
 public:
  RecordingPaused() : saved_(Context::current().recorder) { Context::current().recorder = nullptr; }
  ~RecordingPaused() { Context::current().recorder = saved_; }
  RecordingPaused(const RecordingPaused&) = delete;
  RecordingPaused& operator=(const RecordingPaused&) = delete;
  // The recorder that was active before the scope (null if none).
  OpRecorder* saved() const { return saved_; }

 private:
  OpRecorder* saved_;
};

// Installs `builder` for the current thread for the lifetime of the scope.
class BuildScope {
 public:
  explicit BuildScope(OpBuilder* builder) : saved_(Context::current().builder) {
    Context::current().builder = builder;
  }
  ~BuildScope() { Context::current().builder = saved_; }
  BuildScope(const BuildScope&) = delete;
  BuildScope& operator=(const BuildScope&) = delete;

 private:
  OpBuilder* saved_;
};

// Ops without tensor inputs (zeros, fill, ...) place their outputs on `device` for the
// lifetime of the scope, as TensorFlow's `with tf.device(...)`; ops with inputs run
// where their inputs are.
class DeviceScope {
 public:
  explicit DeviceScope(Device device) : saved_(Context::current().device) {
    Context::current().device = device;
  }
  ~DeviceScope() { Context::current().device = saved_; }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device saved_;
};

// Op calls execute now and no tape records them, whatever the thread was doing: for
// state that must change when the code runs, not when a graph built from it runs
// (checkpoints, an optimizer's host-side counters).
class EagerScope {
 public:
  EagerScope() = default;
  EagerScope(const EagerScope&) = delete;
  EagerScope& operator=(const EagerScope&) = delete;

 private:
  BuildScope eager_{nullptr};
  RecordingPaused not_recorded_;
};

// Builds symbolic tensors that carry only dtype and shape: runs any op sequence
// through inference alone. Proves that dispatch serves graph mode, and lets tools
// ask for output shapes without computing.
class InferenceOnlyBuilder : public OpBuilder {
 public:
  std::vector<Tensor> build(const OpCall& call, const OutputMetas& outputs) override;
  int ops_built() const { return ops_built_; }

 private:
  int ops_built_ = 0;
};

// A symbolic tensor of `dtype` and (possibly partial) `shape`, attached to nothing.
Tensor symbolic_tensor(DType dtype, Shape shape);

}  // namespace ef
