// reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_any, reduce_all. Each op is
// one Reducer (identity, vectorized row and column steps, merge); the driver in
// src/backends/cpu/reduce.h does strides, fast paths, blocking and threads.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/reduce.h"
#include "backends/cuda/kernels.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/math/complex.h"
#include "ops/op_helpers.h"
#include "ops/reduction/axes_util.h"
#include "ops/reduction/sum_reducer.h"

namespace ef {
namespace {

using namespace cpu;

enum ReduceAttr { kAxis, kKeepDims };

using detail::SumR;
using detail::Wide;

template <class T>
struct ProdR {
  using Acc = Wide<T>;
  static Acc identity() { return 1; }
  static Acc row(const T* p, int64_t n, int64_t s) {
    Acc acc = 1;
    if (s == 1) {
#pragma omp simd reduction(* : acc)
      for (int64_t i = 0; i < n; ++i) acc *= static_cast<Acc>(p[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) acc *= static_cast<Acc>(p[i * s]);
    }
    return acc;
  }
  static Acc merge(Acc a, Acc b) { return a * b; }
  static void columns(Acc* __restrict acc, const T* __restrict p, int64_t n) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) acc[j] *= static_cast<Acc>(p[j]);
  }
  static T finish(Acc a) { return static_cast<T>(a); }
};

// Maximum (IsMax) or minimum. NaN propagates: a NaN anywhere makes the result NaN.
template <class T, bool IsMax>
struct ExtremeR {
  using Acc = T;
  static T identity() {
    if constexpr (std::is_floating_point_v<T>)
      return IsMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else return IsMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  // b replaces a when it is more extreme or NaN; a NaN in a is never replaced.
  static T merge(T a, T b) {
    bool better = IsMax ? b > a : b < a;
    if constexpr (std::is_floating_point_v<T>) better = better || b != b;
    return better ? b : a;
  }
  static T row(const T* p, int64_t n, int64_t s) {
    if (s != 1) {
      T m = identity();
      for (int64_t i = 0; i < n; ++i) m = merge(m, p[i * s]);
      return m;
    }
    bool nan = false;
    T m = extreme_contiguous<IsMax>(p, n, identity(), nan);
    if constexpr (std::is_floating_point_v<T>)
      if (nan) return std::numeric_limits<T>::quiet_NaN();
    return m;
  }
  static void columns(T* __restrict acc, const T* __restrict p, int64_t n) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) acc[j] = merge(acc[j], p[j]);
  }
  static T finish(T a) { return a; }
};

template <class T, bool IsAny>
struct LogicalR {
  using Acc = bool;
  static bool identity() { return !IsAny; }
  static bool row(const T* p, int64_t n, int64_t s) {
    int acc = !IsAny;
    if constexpr (IsAny) {
#pragma omp simd reduction(| : acc)
      for (int64_t i = 0; i < n; ++i) acc |= static_cast<int>(p[i * s]);
    } else {
#pragma omp simd reduction(& : acc)
      for (int64_t i = 0; i < n; ++i) acc &= static_cast<int>(p[i * s]);
    }
    return acc != 0;
  }
  static bool merge(bool a, bool b) { return IsAny ? (a || b) : (a && b); }
  static void columns(bool* __restrict acc, const T* __restrict p, int64_t n) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) acc[j] = IsAny ? (acc[j] || p[j]) : (acc[j] && p[j]);
  }
  static T finish(bool a) { return a; }
};

// Inference shared by every reduction. NonEmpty: the reduction has no identity for
// integers (max/min), so reducing an empty axis of an integer tensor is an error.
template <DTypeSet Set, bool NonEmpty = false>
void infer_reduce(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  detail::check_dtype(call, x.dtype(), Set, "input_tensor");
  const Dims& attr = call.attrs.get_ints(kAxis);
  Dims axes = detail::checked_reduction_axes(std::span<const int64_t>(attr.data(), attr.size()), x.rank(),
                                             call.op.name);
  Shape shape = detail::reduced_shape(x.shape(), axes, call.attrs.get_bool(kKeepDims));
  if (NonEmpty && is_integer(x.dtype()) && shape.num_elements() != 0) {
    for (int64_t a : axes)
      if (x.shape()[static_cast<int>(a)] == 0)
        fail(call.op.name, ": cannot reduce the empty axis ", a, " of an integer tensor of shape ", x.shape(),
             " (dtype ", x.dtype(), "): the result has no identity value");
  }
  out.add(x.dtype(), std::move(shape));
}

template <template <class> class R, DTypeSet Set>
void reduce_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  const Dims& attr = call.attrs.get_ints(kAxis);
  Dims axes = normalize_axes(std::span<const int64_t>(attr.data(), attr.size()), x.rank(), call.op.name, false);
  dispatch_in<Set>(x.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu::reduce<R<T>, T>(x, axes, outputs[0]);
  });
}

template <class T> using MaxR = ExtremeR<T, true>;
template <class T> using MinR = ExtremeR<T, false>;
template <class T> using AnyR = LogicalR<T, true>;
template <class T> using AllR = LogicalR<T, false>;

template <template <class> class R, DTypeSet Set, bool NonEmpty = false>
OpDef reduction_op(std::string_view name) {
  OpDef def;
  def.name = name;
  def.attr_names = {"axis", "keepdims"};
  def.infer = infer_reduce<Set, NonEmpty>;
  def.kernels[static_cast<int>(DeviceType::CPU)] = reduce_kernel<R, Set>;
  def.kernels[static_cast<int>(DeviceType::CUDA)] = cuda::reduce_kernel;
  def.traits.reduction = true;
  def.batch = [](const BatchCall& call) { return detail::batch_shifting_axes(call, kAxis); };
  return def;
}

// ---- Gradients ----

// The forward call's reduction axes, normalized and sorted.
Dims grad_axes(const GradCall& call) {
  const Dims& attr = call.forward.attrs.get_ints(kAxis);
  return normalize_axes(std::span<const int64_t>(attr.data(), attr.size()), call.forward.inputs[0].rank(),
                        call.forward.op.name, false);
}

// `t`, shaped like the forward output, with the reduced axes restored as size 1 (the
// keepdims shape), so that it broadcasts against the input.
Tensor with_kept_dims(const GradCall& call, const Tensor& t, const Dims& axes) {
  if (call.forward.attrs.get_bool(kKeepDims)) return t;
  Tensor r = t;
  for (int64_t a : axes) r = expand_dims(r, a);  // ascending: each axis is final-rank
  return r;
}

// `t` (keepdims shape) broadcast to the input's shape.
Tensor to_input_shape(const GradCall& call, const Tensor& t) {
  const Tensor& x = call.forward.inputs[0];
  if (x.shape().is_fully_defined()) return broadcast_to(t, x.shape());
  return add(t, zeros_like(x));  // partly known shape (graph mode)
}

// d sum(x)/dx = 1: the gradient is copied to every reduced element.
std::vector<Tensor> reduce_sum_grad(const GradCall& call) {
  return {to_input_shape(call, with_kept_dims(call, call.output_grads[0], grad_axes(call)))};
}

// Ties (as TensorFlow): the gradient is split equally among all the elements equal to
// the extreme, g * [x == y] / (number of such elements). Shared by max and min.
std::vector<Tensor> reduce_extreme_grad(const GradCall& call) {
  const Tensor& x = call.forward.inputs[0];
  const Dims axes = grad_axes(call);
  Tensor y = with_kept_dims(call, call.outputs[0], axes);
  Tensor g = with_kept_dims(call, call.output_grads[0], axes);
  Tensor indicators = cast(equal(x, y), x.dtype());
  Tensor count = reduce_sum(indicators, Axes(axes), true);
  return {multiply(divide(indicators, count), g)};
}

// d prod(x)/dx_i = the product of the other elements, computed (as TensorFlow's
// _ProdGrad) as exclusive cumulative products from the left and from the right along
// the reduced elements: no division, so zeros are handled exactly at first order.
// (The second derivative goes through cumprod's gradient: see its note on zeros.)
std::vector<Tensor> reduce_prod_grad(const GradCall& call) {
  const Tensor& x = call.forward.inputs[0];
  const Dims axes = grad_axes(call);
  Tensor g = to_input_shape(call, with_kept_dims(call, call.output_grads[0], axes));
  if (axes.empty()) return {g};
  if (axes.size() == 1) {
    const int64_t a = axes[0];
    return {multiply(g, multiply(cumprod(x, a, true, false), cumprod(x, a, true, true)))};
  }
  if (!x.shape().is_fully_defined())
    fail<UnimplementedError>("reduce_prod: the gradient over several axes needs a fully known input shape, got ",
                             x.shape());
  // Reduced axes first, flattened into one: [reduced, other].
  const int rank = x.rank();
  std::vector<int64_t> perm(axes.begin(), axes.end()), inverse(rank);
  int64_t reduced = 1, other = 1;
  for (int64_t a : axes) reduced *= x.shape()[static_cast<int>(a)];
  for (int i = 0, next = 0; i < rank; ++i) {
    if (next < static_cast<int>(axes.size()) && axes[next] == i) {
      ++next;
      continue;
    }
    perm.push_back(i);
    other *= x.shape()[i];
  }
  Dims permuted_dims;
  for (int i = 0; i < rank; ++i) {
    inverse[perm[i]] = i;
    permuted_dims.push_back(x.shape()[static_cast<int>(perm[i])]);
  }
  Tensor flat = reshape(transpose(x, perm), Shape{reduced, other});
  Tensor others = multiply(cumprod(flat, 0, true, false), cumprod(flat, 0, true, true));
  return {multiply(g, transpose(reshape(others, Shape(permuted_dims)), inverse))};
}

OpDef with_jvp(OpDef def, JvpFn jvp) {
  def.jvp = jvp;
  return def;
}

const OpDef& kReduceSum = define_op(
    with_jvp(detail::with_gradient(reduction_op<SumR, kNumericTypes>("reduce_sum"), reduce_sum_grad,
                                   kGradientReadsNoValues),  // x's shape only (Note [gradient uses])
             detail::jvp_linear<>));

// Each input element reaches one output element: the jvp sums the gradient's partial
// derivatives times the tangent over the same axes (detail::jvp_grouped).
std::vector<Tensor> grouped_jvp(const JvpCall& call) {
  return detail::jvp_grouped(call, [](const JvpCall& c, const Tensor& terms) {
    return run_op(kReduceSum, {terms}, c.forward.attrs, CallSite::current());
  });
}

const OpDef& kReduceProd = define_op(with_jvp(
    detail::with_gradient(reduction_op<ProdR, kNumericTypes>("reduce_prod"), reduce_prod_grad), grouped_jvp));
const OpDef& kReduceMax = define_op(with_jvp(
    detail::with_gradient(reduction_op<MaxR, kNumericTypes, true>("reduce_max"), reduce_extreme_grad),
    grouped_jvp));
const OpDef& kReduceMin = define_op(with_jvp(
    detail::with_gradient(reduction_op<MinR, kNumericTypes, true>("reduce_min"), reduce_extreme_grad),
    grouped_jvp));
// ---- sum_to_shape_of(x, like) ----
// The axes along which a tensor of `like`'s shape was broadcast to `x`'s: x's leading
// extra axes, and the axes where `like` has size 1 and x does not.
Dims broadcast_axes(const Shape& x, const Shape& like) {
  const int extra = x.rank() - like.rank();
  Dims axes;
  for (int i = 0; i < x.rank(); ++i)
    if (i < extra || (like[i - extra] == 1 && x[i] != 1)) axes.push_back(i);
  return axes;
}

// The output has `like`'s shape. Where a size of `like` is unknown, x's size 1 says it is
// 1 (`like` broadcasts to x); a definite size that does not broadcast is an error.
void infer_sum_to_shape_of(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  const Shape& like = call.inputs[1].shape();
  detail::check_dtype(call, x.dtype(), kNumericTypes, "x");
  const int extra = x.rank() - like.rank();
  bool ok = extra >= 0;
  Dims dims;
  for (int i = 0; ok && i < like.rank(); ++i) {
    const int64_t l = like[i], d = x.shape()[i + extra];
    ok = l == kUnknownDim || d == kUnknownDim || l == 1 || l == d;
    dims.push_back(l == kUnknownDim && d == 1 ? 1 : l);
  }
  if (!ok)
    fail(call.op.name, ": 'x' of shape ", x.shape(), " is not a broadcast of 'like' of shape ", like,
         ", so it cannot be summed back to that shape");
  out.add(x.dtype(), Shape(dims));
}

// Runs reduce_sum's kernel over the axes that the inputs' actual shapes give. Nothing to
// sum (the shapes are equal, the usual case): the output is x itself, not a copy.
template <KernelFn kernel>
void sum_to_shape_of_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  const Shape& like = call.inputs[1].shape();
  Dims axes = broadcast_axes(x.shape(), like);
  if (axes.empty()) {
    outputs[0] = detail::make_view(x, x.shape(), x.strides(), x.impl()->offset);
    return;
  }
  outputs[0] = detail::empty_tensor(x.dtype(), like, x.device(), call.op.name);
  const Attrs attrs{std::move(axes), true};
  kernel(OpCall{kReduceSum, call.inputs.subspan(0, 1), attrs}, outputs);
}

// d/dx: the gradient (like's shape) broadcast back to x's shape, which x's value gives
// where its static shape is partial. `like` only lends its shape: no gradient.
std::vector<Tensor> sum_to_shape_of_grad(const GradCall& call) {
  const Tensor& x = call.forward.inputs[0];
  const Tensor& dy = call.output_grads[0];
  if (x.shape().is_fully_defined()) return {broadcast_to(dy, x.shape()), Tensor()};
  return {add(dy, zeros_like(x)), Tensor()};
}

// Batched x: its axes beyond `like`'s rank are summed first (they precede the batch's
// alignment otherwise), then the size-1 axes of like, with the batch kept.
std::vector<Tensor> batch_sum_to_shape_of(const BatchCall& call) {
  if (!call.is_batched(0)) return {};
  Tensor x = call.input(0);
  const int extra = detail::element_rank(call, 0) - detail::element_rank(call, 1);
  if (extra > 0) {
    std::vector<int64_t> leading;
    for (int i = 1; i <= extra; ++i) leading.push_back(i);
    x = reduce_sum(x, leading);
  }
  return {sum_to_shape_of(x, detail::batched_input(call, 1))};
}

const OpDef& kSumToShapeOf = define_op({
    .name = "sum_to_shape_of",
    .infer = infer_sum_to_shape_of,
    .kernels = {sum_to_shape_of_kernel<reduce_kernel<SumR, kNumericTypes>>,
                sum_to_shape_of_kernel<cuda::reduce_kernel>},
    .gradient = sum_to_shape_of_grad,
    .gradient_uses = {.inputs = value_bit(0), .outputs = kNoValues},
    .jvp = detail::jvp_linear<value_bit(0)>,
    .batch = batch_sum_to_shape_of,
    .traits = {.view = true},  // aliases x when nothing is summed
});

OpDef bool_output(OpDef def) {
  def.not_differentiable = "its input and output are bool";
  return def;
}
const OpDef& kReduceAny = define_op(bool_output(reduction_op<AnyR, kBoolType>("reduce_any")));
const OpDef& kReduceAll = define_op(bool_output(reduction_op<AllR, kBoolType>("reduce_all")));

Tensor run_reduction(const OpDef& op, const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return run_op(op, {x}, {detail::reduction_axes_attr(x, axis), keepdims}, where);
}

}  // namespace

Tensor reduce_sum(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  if (x.defined() && is_complex(x.dtype()))
    return detail::with_call_site(where,
                                  [&] { return detail::complex_reduce("reduce_sum", x, axis, keepdims); });
  return run_reduction(kReduceSum, x, axis, keepdims, where);
}
Tensor reduce_prod(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return run_reduction(kReduceProd, x, axis, keepdims, where);
}
Tensor reduce_max(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return run_reduction(kReduceMax, x, axis, keepdims, where);
}
Tensor reduce_min(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return run_reduction(kReduceMin, x, axis, keepdims, where);
}
Tensor reduce_any(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return run_reduction(kReduceAny, x, axis, keepdims, where);
}
Tensor reduce_all(const Tensor& x, const Axes& axis, bool keepdims, CallSite where) {
  return run_reduction(kReduceAll, x, axis, keepdims, where);
}
Tensor sum_to_shape_of(const Tensor& x, const Tensor& like, CallSite where) {
  return run_op(kSumToShapeOf, {x, like}, {}, where);
}

}  // namespace ef
