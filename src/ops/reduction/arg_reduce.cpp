// argmax / argmin: the index of the extreme value along one axis.
#include <limits>
#include <type_traits>

#include "backends/cpu/reduce.h"
#include "eagerflow/ops/reduction.h"
#include "ops/batch_helpers.h"
#include "ops/op_helpers.h"
#include "ops/reduction/axes_util.h"

namespace ef {
namespace {

using namespace cpu;

enum ArgAttr { kAxis, kOutputType };

void infer_arg_reduce(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), kAllTypes, "input");
  DType out_type = call.attrs.get_dtype(kOutputType);
  if (out_type != DType::Int32 && out_type != DType::Int64)
    fail(call.op.name, ": argument 'output_type' must be int32 or int64, got ", out_type);
  if (x.rank() == 0)
    fail(call.op.name, ": argument 'input' is a scalar (shape []); it needs at least one axis to reduce");
  int axis = normalize_axis(call.attrs.get_int(kAxis), x.rank(), call.op.name);
  int64_t n = x.shape()[axis];
  Shape shape = detail::reduced_shape(x.shape(), Dims{axis}, false);
  if (n == 0 && shape.num_elements() != 0)
    fail(call.op.name, ": cannot reduce the empty axis ", axis, " of a tensor of shape ", x.shape());
  if (out_type == DType::Int32 && n > std::numeric_limits<int32_t>::max())
    fail(call.op.name, ": axis ", axis, " of shape ", x.shape(), " is too long for output_type int32");
  out.add(out_type, std::move(shape));
}

// Index of the extreme of n elements p[0], p[s], ...: strict comparison keeps the first
// index on ties; the first NaN wins and ends the search.
template <bool IsMax, class T>
int64_t arg_extreme_scalar(const T* p, int64_t n, int64_t s);

// Unit stride: the extreme value of each block is found by a vectorized reduction (with
// a NaN flag), and only the block holding the overall winner is searched for its index.
template <bool IsMax, class T>
int64_t arg_extreme_contiguous(const T* p, int64_t n) {
  constexpr int64_t kBlock = 1024;
  int64_t best_block = -1;
  T best{};
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t w = std::min(kBlock, n - b0);
    const T* q = p + b0;
    bool nan = false;
    const T m = cpu::extreme_contiguous<IsMax>(q, w, q[0], nan);
    if (nan) return b0 + arg_extreme_scalar<IsMax>(q, w, 1);  // the first NaN of this block
    if (best_block < 0 || (IsMax ? m > best : m < best)) {
      best = m;
      best_block = b0;
    }
  }
  const T* q = p + best_block;
  int64_t i = 0;
  while (!(q[i] == best)) ++i;  // present: best is an element of this block
  return best_block + i;
}

template <bool IsMax, class T>
int64_t arg_extreme(const T* p, int64_t n, int64_t s) {
  if constexpr (!std::is_same_v<T, bool>)
    if (s == 1 && n >= 64) return arg_extreme_contiguous<IsMax>(p, n);
  return arg_extreme_scalar<IsMax>(p, n, s);
}

template <bool IsMax, class T>
int64_t arg_extreme_scalar(const T* p, int64_t n, int64_t s) {
  int64_t best = 0;
  T v = p[0];
  if constexpr (std::is_floating_point_v<T>)
    if (v != v) return 0;
  for (int64_t i = 1; i < n; ++i) {
    T c = p[i * s];
    if constexpr (std::is_floating_point_v<T>)
      if (c != c) return i;
    if (IsMax ? c > v : c < v) {
      v = c;
      best = i;
    }
  }
  return best;
}

template <bool IsMax>
void arg_reduce_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  const TensorImpl& in = *x.impl();
  Tensor& out = outputs[0];
  const int axis = normalize_axis(call.attrs.get_int(kAxis), x.rank(), call.op.name);
  const int64_t n = in.shape[axis], stride = in.strides[axis], count = out.num_elements();
  if (count == 0) return;
  // Output element o maps to the input offset of the other dimensions' multi-index.
  Dims sizes, strides;
  for (int i = 0; i < in.shape.rank(); ++i)
    if (i != axis) {
      sizes.push_back(in.shape[i]);
      strides.push_back(in.strides[i]);
    }
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = typed_data<T>(x);
    dispatch_in<kIntTypes>(out.dtype(), call.op.name, [&](auto out_tag) {
      using I = typename decltype(out_tag)::type;
      I* dst = typed_output<I>(out);
      parallel_for(count, static_cast<double>(n) * 0.5 + 5, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          int64_t off = 0, rest = o;
          for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
            off += (rest % sizes[i]) * strides[i];
            rest /= sizes[i];
          }
          dst[o] = static_cast<I>(arg_extreme<IsMax>(src + off, n, stride));
        }
      });
    });
  });
}

const OpDef& kArgMax = define_op({
    .name = "argmax",
    .attr_names = {"axis", "output_type"},
    .infer = infer_arg_reduce,
    .kernels = {arg_reduce_cpu<true>, cuda::arg_reduce_kernel},
    .not_differentiable = "its output is an integer index",
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kAxis); },
    .traits = {.reduction = true},
});

const OpDef& kArgMin = define_op({
    .name = "argmin",
    .attr_names = {"axis", "output_type"},
    .infer = infer_arg_reduce,
    .kernels = {arg_reduce_cpu<false>, cuda::arg_reduce_kernel},
    .not_differentiable = "its output is an integer index",
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kAxis); },
    .traits = {.reduction = true},
});

}  // namespace

Tensor argmax(const Tensor& x, int64_t axis, DType output_type, CallSite where) {
  return run_op(kArgMax, {x}, {axis, output_type}, where);
}
Tensor argmin(const Tensor& x, int64_t axis, DType output_type, CallSite where) {
  return run_op(kArgMin, {x}, {axis, output_type}, where);
}

}  // namespace ef
