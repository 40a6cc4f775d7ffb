#include "eagerflow/autodiff/recompute_grad.h"

#include <memory>

#include "autodiff/tape_internal.h"
#include "eagerflow/autodiff/custom_gradient.h"
#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/runtime/context.h"
#include "ops/random/random_stream.h"
#include "runtime/state_writes.h"

namespace ef {
namespace {

// While it lives, this thread's ops are not recorded (by tapes or forward
// accumulators), but variable reads still reach the tapes and the open read logs: the
// entry recompute_grad records learns which variables f read, and tapes that watch
// accessed variables see them.
class OnlyVariableReads : public OpRecorder {
 public:
  OnlyVariableReads() : saved_(Context::current().recorder) { Context::current().recorder = this; }
  ~OnlyVariableReads() override { Context::current().recorder = saved_; }
  OnlyVariableReads(const OnlyVariableReads&) = delete;
  OnlyVariableReads& operator=(const OnlyVariableReads&) = delete;

  void record(const OpCall&, std::span<const Tensor>) override {}
  void variable_read(const Variable& variable, const Tensor& value) override {
    if (saved_) saved_->variable_read(variable, value);
  }

 private:
  OpRecorder* saved_;
};

// What the gradient needs to run f again as it ran the first time.
struct Recomputation {
  TensorsFunction f;
  std::vector<Tensor> inputs;
  std::vector<detail::RandomStream> random_streams;  // drawn by the forward pass
  Device device;                                     // the device scope then
  std::optional<DType> autocast;                     // and the autocast dtype
};

// d(sum_i <f(inputs)_i, output_grads_i>) / d(inputs, variables), by running f again.
std::vector<Tensor> recomputed_gradients(const Recomputation& r, const std::vector<Tensor>& output_grads,
                                         const std::vector<Variable>& variables) {
  const DeviceScope device(r.device);
  const AutoCastScope autocast(r.autocast);
  const detail::StateWritesRefused no_writes(
      "recompute_grad runs the function again for its gradient, and the first run already changed the state");
  const detail::RandomStreamLog replay(r.random_streams, "recompute_grad");
  GradientTape tape(/*persistent=*/false, /*watch_accessed_variables=*/false);
  std::vector<GradientTape::Source> sources;
  // A fresh tensor per input position: an input passed twice, or also read as a
  // variable, gets each position's own partial derivative (the outer backprop adds them).
  std::vector<Tensor> fresh;
  for (const Tensor& x : r.inputs) {
    fresh.push_back(identity(x));
    tape.watch(fresh.back());
    sources.emplace_back(fresh.back());
  }
  for (const Variable& v : variables) {
    tape.watch(v);
    sources.emplace_back(v);
  }
  const std::vector<Tensor> outputs = r.f(fresh);
  replay.check_all_replayed();
  if (outputs.size() != output_grads.size())
    fail<FailedPreconditionError>("recompute_grad: the function gave ", outputs.size(),
                                  " outputs when run again, ", output_grads.size(), " the first time");
  std::vector<Tensor> targets, seeds;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (output_grads[i].defined() && detail::is_differentiable(outputs[i].dtype())) {
      targets.push_back(outputs[i]);
      seeds.push_back(output_grads[i]);
    }
  if (targets.empty()) return std::vector<Tensor>(sources.size());
  return tape.gradient(targets, sources, seeds);
}

}  // namespace

// A custom gradient (Note [custom gradients]) whose forward pass records no ops and
// whose gradient is the rerun's: custom_gradient learns the variables f reads, cuts the
// outputs off f's ops and records the one entry.
TensorsFunction recompute_grad(TensorsFunction f) {
  if (!f) fail("recompute_grad: the function is empty");
  TensorsFunction recorded = custom_gradient([f](const std::vector<Tensor>& inputs) {
    const Context& ctx = Context::current();
    auto r = std::make_shared<Recomputation>(Recomputation{f, inputs, {}, ctx.device, ctx.autocast_dtype});
    std::vector<Tensor> outputs;
    {
      const OnlyVariableReads unrecorded;
      const detail::RandomStreamLog drawn(r->random_streams);
      outputs = f(inputs);
    }
    return WithGradients(std::move(outputs), [r](const std::vector<Tensor>& output_grads,
                                                 const std::vector<Variable>& variables) {
      return recomputed_gradients(*r, output_grads, variables);
    });
  });
  return [f = std::move(f), recorded = std::move(recorded)](const std::vector<Tensor>& inputs) {
    // Nobody will ask for this call's gradient (forward accumulators see f's ops), or a
    // graph gives f its own.
    if (Context::current().builder || !detail::tapes_recording()) return f(inputs);
    return recorded(inputs);
  };
}

UnaryFunction recompute_grad(UnaryFunction f) {
  if (!f) fail("recompute_grad: the function is empty");
  TensorsFunction general = recompute_grad(TensorsFunction(
      [f = std::move(f)](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0])}; }));
  return [general = std::move(general)](const Tensor& x) { return general({x})[0]; };
}

}  // namespace ef
