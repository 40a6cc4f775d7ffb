#include "eagerflow/runtime/dispatch.h"
#include "eagerflow/runtime/profiler.h"

#include "runtime/dispatch_internal.h"

#include "backends/cpu/storage_convert.h"
#include "backends/cuda/copy.h"

#include <algorithm>
#include <utility>

namespace ef {
namespace {

// Note [complex dtypes] (core/dtype.h): only ops that declare complex support see
// complex tensors, and only on the CPU for now.
void check_complex(const OpCall& call, const OutputMetas* metas) {
  auto refuse = [&](std::string_view what, size_t i, DType dtype, const Shape& shape) {
    fail<UnimplementedError>(
        call.op.name, ": ", what, " ", i, " is ", dtype, " (shape ", shape,
        "), and this op has no complex version; take ef::real and ef::imag and compute on those");
  };
  if (!metas) {
    for (size_t i = 0; i < call.inputs.size(); ++i) {
      const Tensor& t = call.inputs[i];
      if (!is_complex(t.dtype())) continue;
      if (!call.op.traits.complex) refuse("input", i, t.dtype(), t.shape());
      if (t.device().type != DeviceType::CPU)
        fail<UnimplementedError>(call.op.name, ": input ", i, " is ", t.dtype(), " on ", t.device(),
                                 ": complex tensors are computed on the CPU only so far");
    }
    return;
  }
  for (size_t i = 0; i < metas->size(); ++i)
    if (is_complex((*metas)[i].dtype) && !call.op.traits.complex)
      refuse("output", i, (*metas)[i].dtype, (*metas)[i].shape);
}

// Checks what every op needs of its inputs: defined, not symbolic outside graph
// mode, complex only where the op takes it. Returns whether they are on more than one device (resolved by
// with_host_scalars_moved).
bool check_inputs(const OpCall& call, bool building) {
  const Tensor* first = nullptr;
  bool mixed = false, complex = false;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    if (!t.defined()) fail(call.op.name, ": input ", i, " is an undefined tensor");
    complex |= is_complex(t.dtype());
    if (t.is_symbolic() && t.impl()->symbolic->released_by_tape())
      fail<FailedPreconditionError>(
          call.op.name, ": input ", i, " (dtype ", t.dtype(), ", shape ", t.shape(),
          ") is a value that a gradient tape did not keep, because the gradient function of the op that "
          "produced or read it declared that it does not read it; that op's gradient_uses is wrong "
          "(Note [gradient uses] in op_def.h)");
    if (!building && t.is_symbolic())
      fail(call.op.name, ": input ", i,
           " is a symbolic tensor (from graph mode) but the op is being executed eagerly");
    if (!first)
      first = &t;
    else
      mixed |= t.device() != first->device();
  }
  if (complex) [[unlikely]]
    check_complex(call, nullptr);
  return mixed;
}

// The inputs of a call whose inputs are on several devices, with the 0-d host tensors
// (Python numbers, constants) copied to the device of the others, as TensorFlow and
// PyTorch let scalars follow. Any other mix of devices is an error naming both.
std::vector<Tensor> with_host_scalars_moved(const OpCall& call) {
  auto host_scalar = [](const Tensor& t) {
    return !t.is_symbolic() && t.device().type == DeviceType::CPU && t.rank() == 0;
  };
  size_t anchor = call.inputs.size();  // the first input that is not a host scalar
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    if (host_scalar(t)) continue;
    if (anchor == call.inputs.size())
      anchor = i;
    else if (t.device() != call.inputs[anchor].device())
      fail(call.op.name, ": inputs are on different devices: input ", anchor, " is on ",
           call.inputs[anchor].device(), ", input ", i, " is on ", t.device(), "; copy one with .to(device)");
  }
  const Device target = call.inputs[anchor].device();  // mixed: some input is not a host scalar
  std::vector<Tensor> moved(call.inputs.begin(), call.inputs.end());
  for (Tensor& t : moved)
    if (host_scalar(t)) t = t.to(target);
  return moved;
}

// Runs `kernel` with the tape's recorder suspended (Note [kernels are below the tape]:
// a kernel that calls public ops, say to make an input contiguous, is an implementation
// detail of its op; a tape records the op, never what its kernel did inside).
void call_kernel(KernelFn kernel, const OpCall& call, std::span<Tensor> outputs) {
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

bool involves_storage_only(const OpCall& call, const OutputMetas& metas) {
  for (const Tensor& t : call.inputs)
    if (is_storage_only(t.dtype())) return true;
  for (size_t i = 0; i < metas.size(); ++i)
    if (is_storage_only(metas[i].dtype)) return true;
  return false;
}

// `t`'s values in dtype `to`, on the tensor's own device: a storage-only dtype widened
// to its compute dtype (exact), or compute results narrowed to a storage-only dtype.
Tensor converted(const Tensor& t, DType to, std::string_view op) {
  if (t.device().type == DeviceType::CPU) return cpu::storage_converted(t, to, op);
  return cuda::converted(t, to, op);
}

// Notes [half-precision dtypes] (eagerflow/core/half.h) and [small integer dtypes]
// (eagerflow/core/dtype.h): the op's kernel runs on its storage-only inputs widened to
// their compute dtypes, and its storage-only outputs are its results narrowed: float32
// rounded to nearest even, int32 and int64 keeping their low bits. The same on every
// device.
void run_widened(KernelFn kernel, const OpCall& call, const OutputMetas& metas, std::span<Tensor> outputs,
                 Device device) {
  std::vector<Tensor> inputs(call.inputs.begin(), call.inputs.end());
  for (Tensor& t : inputs)
    if (is_storage_only(t.dtype())) t = converted(t, compute_dtype(t.dtype()), call.op.name);
  std::vector<Tensor> wide(outputs.size());
  for (size_t i = 0; i < wide.size(); ++i)
    wide[i] = detail::empty_tensor(compute_dtype(metas[i].dtype), metas[i].shape, device, call.op.name);
  call_kernel(kernel, OpCall{call.op, inputs, call.attrs}, wide);
  for (size_t i = 0; i < wide.size(); ++i) {
    if (!is_storage_only(metas[i].dtype))
      outputs[i] = std::move(wide[i]);
    else if (wide[i].dtype() == compute_dtype(metas[i].dtype))
      outputs[i] = converted(wide[i], metas[i].dtype, call.op.name);
    else
      fail<InternalError>(call.op.name, ": output ", i, " should have been ", compute_dtype(metas[i].dtype),
                          " while computing in it for ", metas[i].dtype, ", but the kernel made it ",
                          wide[i].dtype());
  }
}

// `donor`: the input whose buffer output 0 may take (run_op_reusing), or null. Only
// the executor's entry passes one; the public path instantiates Reusing = false.
template <bool Reusing>
void run_kernel(const OpCall& call, const OutputMetas& metas, std::span<Tensor> outputs, const Tensor* donor) {
  Device device = call.inputs.empty() ? Context::current().device : call.inputs[0].device();
  KernelFn kernel = call.op.kernels[static_cast<int>(device.type)];
  if (!kernel) fail<UnimplementedError>(call.op.name, ": no kernel for device ", device);
  const profiler::detail::OpTimer timer(call.op.name, device, call.inputs);
  if (!call.op.traits.view && involves_storage_only(call, metas)) [[unlikely]] {
    run_widened(kernel, call, metas, outputs, device);
    return;
  }
  if (!call.op.traits.view)
    for (size_t i = 0; i < outputs.size(); ++i) {
      if constexpr (Reusing) {
        if (i == 0 && donor && detail::can_reuse_buffer(call.op, *donor, metas[0].dtype, metas[0].shape)) {
          outputs[0] = detail::make_view(*donor, donor->shape(), donor->strides(), donor->impl()->offset);
          continue;
        }
      }
      outputs[i] = detail::empty_tensor(metas[i].dtype, metas[i].shape, device, call.op.name);
    }
  call_kernel(kernel, call, outputs);
}

// Infers the outputs of `call`, then builds or executes it into `outputs` (resized by
// `size_outputs` once the output count is known) and records it.
template <bool Reusing = false, class SizeOutputs>
void dispatch(const OpCall& given, SizeOutputs&& size_outputs, const Tensor* donor = nullptr) {
  Context& ctx = Context::current();
  OpCall call = given;
  std::vector<Tensor> moved;
  if (check_inputs(call, ctx.builder != nullptr)) [[unlikely]] {
    moved = with_host_scalars_moved(call);
    call.inputs = moved;
  }
  OutputMetas metas;
  call.op.infer(call, metas);
  if (!call.op.traits.complex)
    for (size_t i = 0; i < metas.size(); ++i)
      if (is_complex(metas[i].dtype)) [[unlikely]]
        check_complex(call, &metas);
  std::span<Tensor> outputs = size_outputs(metas.size());
  if (ctx.builder) {
    std::vector<Tensor> built = ctx.builder->build(call, metas);
    if (built.size() != outputs.size())
      fail<InternalError>(call.op.name, ": the graph builder returned ", built.size(), " outputs, expected ",
                          outputs.size());
    std::move(built.begin(), built.end(), outputs.begin());
  } else {
    run_kernel<Reusing>(call, metas, outputs, donor);
  }
  if (ctx.recorder) ctx.recorder->record(call, outputs);
}

// run_op_multi, and run_op_reusing when Reusing (output 0 may take `donor`'s buffer).
template <bool Reusing>
std::vector<Tensor> run_multi(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
                              const CallSite& where, const Tensor* donor = nullptr) {
  std::vector<Tensor> outs;
  try {
    dispatch<Reusing>(
        OpCall{op, inputs, attrs},
        [&](size_t count) {
          outs.resize(count);
          return std::span<Tensor>(outs);
        },
        donor);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return outs;
}

}  // namespace

Tensor run_op(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, const CallSite& where) {
  Tensor out;
  try {
    dispatch(OpCall{op, inputs, attrs}, [&](size_t count) {
      if (count != 1) fail<InternalError>(op.name, ": run_op called on an op with ", count, " outputs");
      return std::span<Tensor>(&out, 1);
    });
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return out;
}

std::vector<Tensor> run_op_multi(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
                                 const CallSite& where) {
  return run_multi<false>(op, inputs, attrs, where);
}

namespace detail {

bool can_reuse_buffer(const OpDef& op, const Tensor& input, DType dtype, const Shape& shape) {
  const TensorImpl* impl = input.impl();
  return op.traits.in_place && !op.traits.view && impl && impl->storage && !impl->storage->wraps_foreign_memory() &&
         impl->dtype == dtype && impl->shape == shape && impl->is_contiguous();
}

std::vector<Tensor> run_op_reusing(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, size_t donor,
                                   const CallSite& where) {
  if (donor >= inputs.size())
    fail<InternalError>(op.name, ": run_op_reusing: input ", donor, " donated, but the op has ", inputs.size(),
                        " inputs");
  return run_multi<true>(op, inputs, attrs, where, &inputs[donor]);
}

}  // namespace detail
}  // namespace ef
