#include "eagerflow/runtime/dispatch.h"

#include <utility>

namespace ef {
namespace {

// Checks what every op needs of its inputs: defined, not symbolic outside graph
// mode, all on one device.
void check_inputs(const OpCall& call, bool building) {
  const Tensor* first = nullptr;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    if (!t.defined()) fail(call.op.name, ": input ", i, " is an undefined tensor");
    if (!building && t.is_symbolic())
      fail(call.op.name, ": input ", i,
           " is a symbolic tensor (from graph mode) but the op is being executed eagerly");
    if (!first) first = &t;
    else if (t.device() != first->device())
      fail(call.op.name, ": inputs are on different devices: input 0 is on ", first->device(),
           ", input ", i, " is on ", t.device(), "; copy one with .to(device)");
  }
}

void run_kernel(const OpCall& call, const OutputMetas& metas, std::span<Tensor> outputs) {
  Device device = call.inputs.empty() ? Context::current().device : call.inputs[0].device();
  KernelFn kernel = call.op.kernels[static_cast<int>(device.type)];
  if (!kernel) fail<UnimplementedError>(call.op.name, ": no kernel for device ", device);
  if (!call.op.traits.view)
    for (size_t i = 0; i < outputs.size(); ++i)
      outputs[i] = detail::empty_tensor(metas[i].dtype, metas[i].shape, device, call.op.name);
  // Note [kernels are below the tape]: a kernel that calls public ops (say, to make an
  // input contiguous) is an implementation detail of its op; a tape records the op,
  // never what its kernel did inside.
  Context& ctx = Context::current();
  if (!ctx.recorder) [[likely]] {
    kernel(call, outputs);
    return;
  }
  OpRecorder* recorder = std::exchange(ctx.recorder, nullptr);
  try {
    kernel(call, outputs);
  } catch (...) {
    ctx.recorder = recorder;
    throw;
  }
  ctx.recorder = recorder;
}

}  // namespace

Tensor run_op(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
              const CallSite& where) {
  Context& ctx = Context::current();
  OpCall call{op, inputs, attrs};
  try {
    check_inputs(call, ctx.builder != nullptr);
    OutputMetas metas;
    op.infer(call, metas);
    if (metas.size() != 1) fail<InternalError>(op.name, ": run_op called on an op with ", metas.size(), " outputs");
    Tensor out;
    if (ctx.builder) {
      out = ctx.builder->build(call, metas).at(0);
    } else {
      run_kernel(call, metas, std::span<Tensor>(&out, 1));
    }
    if (ctx.recorder) ctx.recorder->record(call, std::span<const Tensor>(&out, 1));
    return out;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::vector<Tensor> run_op_multi(const OpDef& op, std::span<const Tensor> inputs,
                                 const Attrs& attrs, const CallSite& where) {
  Context& ctx = Context::current();
  OpCall call{op, inputs, attrs};
  try {
    check_inputs(call, ctx.builder != nullptr);
    OutputMetas metas;
    op.infer(call, metas);
    std::vector<Tensor> outs;
    if (ctx.builder) {
      outs = ctx.builder->build(call, metas);
    } else {
      outs.resize(metas.size());
      run_kernel(call, metas, outs);
    }
    if (ctx.recorder) ctx.recorder->record(call, outs);
    return outs;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
