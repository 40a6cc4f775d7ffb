// where (select with three-way broadcasting, and the one-argument coordinate form)
// and one_hot.
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// ---- select: where(condition, x, y) ----
void infer_select(const OpCall& call, OutputMetas& out) {
  const Tensor& c = call.inputs[0];
  detail::check_dtype(call, c.dtype(), cpu::kBoolType, "condition");
  detail::check_same_dtype(call, 1, 2, "x", "y");
  Shape shape = broadcast_shapes(broadcast_shapes(c.shape(), call.inputs[1].shape(), call.op.name),
                                 call.inputs[2].shape(), call.op.name);
  out.add(call.inputs[1].dtype(), shape);
}

void select_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  auto layout = cpu::make_layout<4>(out.shape(), {call.inputs[0].impl(), call.inputs[1].impl(), call.inputs[2].impl()});
  const bool* cond = cpu::typed_data<bool>(call.inputs[0]);
  detail::dispatch_word(out.dtype(), [&](auto tag) {  // it only picks elements: any dtype by its width
    using T = typename decltype(tag)::type;
    const T* x = cpu::typed_data<T>(call.inputs[1]);
    const T* y = cpu::typed_data<T>(call.inputs[2]);
    T* dst = cpu::typed_output<T>(out);
    cpu::parallel_rows(layout, cpu::kCheapElementNs, [&](int64_t n, const int64_t* off, const int64_t* st) {
      T* o = dst + off[0];
      const bool* c = cond + off[1];
      const T* a = x + off[2];
      const T* b = y + off[3];
      const int64_t sc = st[1], sa = st[2], sb = st[3];
      if (sc == 1 && sa == 1 && sb == 1) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = c[i * sc] ? a[i * sa] : b[i * sb];
      }
    });
  });
}

// Gradient: to x where the condition holds, to y elsewhere (zeros in the other
// places), in the broadcast shape (the tape sums it down); the condition gets none.
std::vector<Tensor> select_grad(const GradCall& call) {
  const Tensor& c = call.forward.inputs[0];
  const Tensor& g = call.output_grads[0];
  return {Tensor(), ef::where(c, g, 0), ef::where(c, 0, g)};
}

const OpDef& kSelect = define_op({
    .name = "select",
    .infer = infer_select,
    .kernels = {select_cpu, cuda::elementwise_kernel},
    .gradient = select_grad,
    .jvp = detail::jvp_linear<value_bit(1) | value_bit(2)>,
    .traits = {.elementwise = true, .complex = true},
});

// ---- where(condition): coordinates of the non-zero elements ----

// Calls fn(flat_index) for each non-zero element of x, in row-major order.
template <class Fn>
void for_each_true(const Tensor& x, Fn&& fn) {
  Tensor dense = detail::host_values(x);
  dispatch_dtype(dense.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = cpu::typed_data<T>(dense);
    for (int64_t i = 0, n = dense.num_elements(); i < n; ++i)
      if (p[i] != T(0)) fn(i);
  });
}

void infer_where_true(const OpCall& call, OutputMetas& out) {
  const Tensor& c = call.inputs[0];
  // The row count depends on the values: known eagerly, unknown while building a graph.
  int64_t n = kUnknownDim;
  if (!c.is_symbolic()) {
    n = 0;
    for_each_true(c, [&](int64_t) { ++n; });
  }
  out.add(DType::Int64, Shape{n, c.rank()});
}

void where_true_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& c = call.inputs[0];
  const Shape& shape = c.shape();
  const int rank = shape.rank();
  int64_t* dst = cpu::typed_output<int64_t>(outputs[0]);
  for_each_true(c, [&](int64_t flat) {
    for (int i = rank - 1; i >= 0; --i) {
      dst[i] = flat % shape[i];
      flat /= shape[i];
    }
    dst += rank;
  });
}

const OpDef& kWhereTrue = define_op({
    .name = "where",
    .infer = infer_where_true,
    .kernels = {where_true_cpu, detail::computed_on_host<where_true_cpu>},
    .not_differentiable = "its output holds integer coordinates",
});

// ---- one_hot(indices, depth, on_value, off_value, axis, dtype) ----
enum OneHotAttr { kDepth, kOn, kOff, kAxis, kDType };

int one_hot_axis(const OpCall& call) {
  const Tensor& ind = call.inputs[0];
  int64_t axis = call.attrs.get_int(kAxis);
  if (axis < -1 || axis > ind.rank())
    fail(call.op.name, ": argument 'axis' = ", axis, " must be -1 or in [0, ", ind.rank(),
         "] for indices of shape ", ind.shape());
  return static_cast<int>(axis == -1 ? ind.rank() : axis);
}

void infer_one_hot(const OpCall& call, OutputMetas& out) {
  const Tensor& ind = call.inputs[0];
  detail::check_dtype(call, ind.dtype(), cpu::kIntTypes, "indices");
  int64_t depth = call.attrs.get_int(kDepth);
  if (depth < 0) fail(call.op.name, ": argument 'depth' must be non-negative, got ", depth);
  int axis = one_hot_axis(call);
  if (ind.rank() + 1 > kMaxRank)
    fail(call.op.name, ": the result would have more than ", kMaxRank, " dimensions (indices shape ", ind.shape(), ")");
  Shape shape = ind.shape();
  shape.dims().insert(axis, depth);
  DType dtype = call.attrs.get_dtype(kDType);
  validate_shape(shape, call.op.name, "output", size_of(dtype), /*allow_unknown=*/true);
  out.add(dtype, shape);
}

template <class T>
T attr_as(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<T>(*i);
  return static_cast<T>(std::get<double>(v));
}

void one_hot_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Tensor& ind = call.inputs[0];
  const int axis = one_hot_axis(call);
  const int64_t depth = call.attrs.get_int(kDepth);
  const Shape& s = ind.shape();
  const int64_t outer = detail::product(s.begin(), s.begin() + axis, "one_hot");
  const int64_t inner = detail::product(s.begin() + axis, s.end(), "one_hot");
  Tensor dense = detail::materialize(ind);
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T on = attr_as<T>(call.attrs[kOn]), off = attr_as<T>(call.attrs[kOff]);
    T* dst = cpu::typed_output<T>(out);
    std::fill(dst, dst + out.num_elements(), off);
    cpu::dispatch_in<cpu::kIntTypes>(dense.dtype(), call.op.name, [&](auto itag) {
      using I = typename decltype(itag)::type;
      const I* idx = cpu::typed_data<I>(dense);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t v = idx[o * inner + i];
          if (v >= 0 && v < depth) dst[(o * depth + v) * inner + i] = on;  // others stay off, as TF
        }
    });
  });
}

// On CUDA devices: where(indices == position along the new axis, on, off), composed
// of the device's kernels; out-of-range indices match no position (all off), as on
// the CPU and in TensorFlow.
void one_hot_cuda(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Tensor& ind = call.inputs[0];
  const int axis = one_hot_axis(call);
  const int64_t depth = call.attrs.get_int(kDepth);
  Dims shape(static_cast<size_t>(ind.rank() + 1), 1);
  shape[static_cast<size_t>(axis)] = depth;
  Tensor positions = reshape(range(0, depth, 1, ind.dtype()), Shape(shape)).to(ind.device());
  Tensor hit = equal(expand_dims(ind, axis), positions);
  auto number = [&](size_t attr) -> TensorOrScalar {
    const AttrValue& v = call.attrs[attr];
    if (const int64_t* i = std::get_if<int64_t>(&v)) return *i;
    return std::get<double>(v);
  };
  const Tensor on = scalar_tensor(number(kOn), out.dtype(), call.op.name);
  const Tensor off = scalar_tensor(number(kOff), out.dtype(), call.op.name);
  outputs[0] = where(hit, on, off);
}

// The new axis counts among the element's: -1 (last) stays, others move past the batch.
std::vector<Tensor> batch_one_hot(const BatchCall& call) {
  Attrs attrs = call.attrs();
  const int64_t axis = attrs.get_int(kAxis);
  if (axis >= 0) attrs.set(kAxis, axis + 1);
  return detail::run_batched(call, {call.input(0)}, attrs);
}

const OpDef& kOneHot = define_op({
    .name = "one_hot",
    .attr_names = {"depth", "on_value", "off_value", "axis", "dtype"},
    .infer = infer_one_hot,
    .kernels = {one_hot_cpu, one_hot_cuda},
    .not_differentiable = "its output does not depend differentiably on the integer indices",
    .batch = batch_one_hot,
});

}  // namespace

Tensor where(const Tensor& condition, const TensorOrScalar& x, const TensorOrScalar& y, CallSite where) {
  if (x.is_tensor() && y.is_tensor()) return run_op(kSelect, {condition, x.tensor(), y.tensor()}, {}, where);
  Tensor a, b;
  try {
    std::tie(a, b) = resolve_operands(x, y, "where");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return run_op(kSelect, {condition, a, b}, {}, where);
}

Tensor where(const Tensor& condition, CallSite where) { return run_op(kWhereTrue, {condition}, {}, where); }

Tensor one_hot(const Tensor& indices, int64_t depth, const TensorOrScalar& on_value, const TensorOrScalar& off_value,
               int64_t axis, DType dtype, CallSite where) {
  AttrValue on, off;
  try {
    on = detail::fill_value_for(on_value, dtype, "one_hot");
    off = detail::fill_value_for(off_value, dtype, "one_hot");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return run_op(kOneHot, {indices}, {depth, on, off, axis, dtype}, where);
}

}  // namespace ef
