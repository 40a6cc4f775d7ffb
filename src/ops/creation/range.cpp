// range, linspace and eye: tensors computed from attributes alone.
#include <algorithm>
#include <cmath>
#include <utility>

#include "eagerflow/ops/creation.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// ---- range(start, limit, delta) ----
enum RangeAttr { kStart, kLimit, kDelta, kRangeDType };

double attr_number(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

int64_t range_length(const OpCall& call) {
  const Attrs& a = call.attrs;
  DType dtype = a.get_dtype(kRangeDType);
  if (is_integer(dtype)) {
    int64_t start = a.get_int(kStart), limit = a.get_int(kLimit), delta = a.get_int(kDelta);
    if (delta == 0) fail(call.op.name, ": argument 'delta' must not be 0");
    if ((delta > 0 && start >= limit) || (delta < 0 && start <= limit)) return 0;
    // ceil(|limit - start| / |delta|) without overflow.
    __int128 span = static_cast<__int128>(limit) - start;
    __int128 d = delta;
    __int128 n = (span + d - (delta > 0 ? 1 : -1)) / d;
    return static_cast<int64_t>(n);
  }
  double start = attr_number(a[kStart]), limit = attr_number(a[kLimit]), delta = attr_number(a[kDelta]);
  if (delta == 0) fail(call.op.name, ": argument 'delta' must not be 0");
  if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    fail(call.op.name, ": start, limit and delta must be finite (got ", start, ", ", limit, ", ", delta, ")");
  double n = std::ceil((limit - start) / delta);
  if (n <= 0) return 0;
  if (n > 9e18) fail<ResourceExhaustedError>(call.op.name, ": the range has too many elements (", n, ")");
  return static_cast<int64_t>(n);
}

void infer_range(const OpCall& call, OutputMetas& out) {
  DType dtype = call.attrs.get_dtype(kRangeDType);
  detail::check_dtype(call, dtype, cpu::kNumericTypes, "dtype");
  Shape shape{range_length(call)};
  validate_shape(shape, call.op.name, "output", size_of(dtype));
  out.add(dtype, shape);
}

void range_cpu(const OpCall& call, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = cpu::typed_output<T>(out);
    int64_t n = out.num_elements();
    if constexpr (std::is_integral_v<T>) {
      int64_t start = call.attrs.get_int(kStart), delta = call.attrs.get_int(kDelta);
      // i * delta alone may overflow (start = INT64_MIN, delta = 2^62) although every
      // element fits: compute modulo 2^64, which gives the exact in-range value.
      auto ustart = static_cast<uint64_t>(start), udelta = static_cast<uint64_t>(delta);
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<T>(static_cast<int64_t>(ustart + static_cast<uint64_t>(i) * udelta));
    } else {
      double start = attr_number(call.attrs[kStart]), delta = attr_number(call.attrs[kDelta]);
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<double>(i) * delta);
    }
  });
}

const OpDef& kRange = define_op({
    .name = "range",
    .attr_names = {"start", "limit", "delta", "dtype"},
    .infer = infer_range,
    .kernels = {range_cpu, detail::computed_on_host<range_cpu>},
    .not_differentiable = "creates a tensor from attributes; it has no tensor inputs",
});

// ---- linspace(start, stop, num) ----
enum LinspaceAttr { kLinStart, kLinStop, kNum, kLinDType };

void infer_linspace(const OpCall& call, OutputMetas& out) {
  DType dtype = call.attrs.get_dtype(kLinDType);
  detail::check_dtype(call, dtype, cpu::kFloatTypes, "dtype");
  int64_t num = call.attrs.get_int(kNum);
  if (num < 0) fail(call.op.name, ": argument 'num' must be non-negative, got ", num);
  Shape shape{num};
  validate_shape(shape, call.op.name, "output", size_of(dtype));
  out.add(dtype, shape);
}

void linspace_cpu(const OpCall& call, std::span<Tensor> outputs) {
  double start = call.attrs.get_float(kLinStart), stop = call.attrs.get_float(kLinStop);
  int64_t num = call.attrs.get_int(kNum);
  cpu::dispatch_in<cpu::kFloatTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = cpu::typed_output<T>(outputs[0]);
    double step = num > 1 ? (stop - start) / static_cast<double>(num - 1) : 0;
    for (int64_t i = 0; i < num; ++i) p[i] = static_cast<T>(start + step * static_cast<double>(i));
    if (num > 1) p[num - 1] = static_cast<T>(stop);  // exact end point, as NumPy
  });
}

const OpDef& kLinspace = define_op({
    .name = "linspace",
    .attr_names = {"start", "stop", "num", "dtype"},
    .infer = infer_linspace,
    .kernels = {linspace_cpu, detail::computed_on_host<linspace_cpu>},
    .not_differentiable = "creates a tensor from attributes; it has no tensor inputs",
});

// ---- eye(rows, columns) ----
enum EyeAttr { kRows, kColumns, kEyeDType };

void infer_eye(const OpCall& call, OutputMetas& out) {
  int64_t rows = call.attrs.get_int(kRows), cols = call.attrs.get_int(kColumns);
  if (rows < 0) fail(call.op.name, ": argument 'num_rows' must be non-negative, got ", rows);
  if (cols < 0) fail(call.op.name, ": argument 'num_columns' must be non-negative, got ", cols);
  Shape shape{rows, cols};
  validate_shape(shape, call.op.name, "output", size_of(call.attrs.get_dtype(kEyeDType)));
  out.add(call.attrs.get_dtype(kEyeDType), shape);
}

void eye_cpu(const OpCall&, std::span<Tensor> outputs) {
  Tensor& out = outputs[0];
  int64_t rows = out.shape()[0], cols = out.shape()[1];
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = cpu::typed_output<T>(out);
    std::fill(p, p + rows * cols, T(0));
    for (int64_t i = 0; i < std::min(rows, cols); ++i) p[i * cols + i] = T(1);
  });
}

const OpDef& kEye = define_op({
    .name = "eye",
    .attr_names = {"num_rows", "num_columns", "dtype"},
    .infer = infer_eye,
    .kernels = {eye_cpu, detail::computed_on_host<eye_cpu>},
    .not_differentiable = "creates a tensor from attributes; it has no tensor inputs",
});

AttrValue number_attr(const TensorOrScalar& v, DType dtype) {
  if (is_integer(dtype)) return scalar_tensor(v, dtype, "range").item<int64_t>();
  return v.is_integral() ? static_cast<double>(v.int_value()) : v.value();
}

// An argument's value as a number. Beside numbers range takes 0-d eager tensors, whose
// value is cast to `dtype` as TensorFlow casts them (a float truncates to an integer).
// A symbolic tensor has no value yet to make the attribute from.
TensorOrScalar number_of(const TensorOrScalar& v, const char* arg, DType dtype) {
  if (!v.is_tensor()) return v;
  const Tensor& t = v.tensor();
  if (!t.defined()) fail("range: argument '", arg, "' is an undefined tensor");
  if (t.is_symbolic())
    fail<UnimplementedError>(
        "range: argument '", arg,
        "' is a symbolic tensor (graph mode); range needs its value: give a number or an "
        "eager tensor");
  if (t.rank() != 0) fail("range: argument '", arg, "' must be a scalar (0-d tensor), got shape ", t.shape());
  if (!is_floating(t.dtype())) return t.item<int64_t>();
  const double x = t.item<double>();
  if (!is_integer(dtype)) return x;
  if (!std::isfinite(x) || std::abs(x) >= 0x1p63)
    fail("range: argument '", arg, "' = ", x, " cannot be cast to ", dtype);
  return static_cast<int64_t>(x);  // truncates, as cast
}

// The dtype an argument brings to range's inference: a tensor's own, a number's
// (C++: int → int32, double → float64; bool counts as int32).
DType argument_dtype(const TensorOrScalar& v, const char* arg) {
  if (!v.is_tensor()) return v.value_dtype() == DType::Bool ? DType::Int32 : v.value_dtype();
  if (!v.tensor().defined()) fail("range: argument '", arg, "' is an undefined tensor");
  return v.tensor().dtype();
}

}  // namespace

Tensor range(const TensorOrScalar& start, const TensorOrScalar& limit, const TensorOrScalar& delta, DType dtype,
             CallSite where) {
  try {
    return run_op(kRange, {},
                  {number_attr(number_of(start, "start", dtype), dtype),
                   number_attr(number_of(limit, "limit", dtype), dtype),
                   number_attr(number_of(delta, "delta", dtype), dtype), dtype},
                  where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

Tensor range(const TensorOrScalar& start, const TensorOrScalar& limit, const TensorOrScalar& delta,
             CallSite where) {
  // TensorFlow's rule: the widest of the arguments' dtypes in int32 < int64 < float16 <
  // bfloat16 < float32 < float64 (all C++ ints → int32, a double among them → float64).
  static constexpr DType kOrder[] = {DType::Int32,    DType::Int64,   DType::Float16,
                                     DType::BFloat16, DType::Float32, DType::Float64};
  int widest = 0;
  try {
    for (auto [value, arg] : {std::pair{&start, "start"}, {&limit, "limit"}, {&delta, "delta"}}) {
      const DType d = argument_dtype(*value, arg);
      const auto* it = std::find(std::begin(kOrder), std::end(kOrder), d);
      if (it == std::end(kOrder))
        fail("range: argument '", arg, "' has dtype ", d,
             "; without a dtype argument start, limit and delta must be int32, int64, float16, bfloat16, "
             "float32 or float64");
      widest = std::max(widest, static_cast<int>(it - std::begin(kOrder)));
    }
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return range(start, limit, delta, kOrder[widest], where);
}

Tensor linspace(double start, double stop, int64_t num, DType dtype, CallSite where) {
  return run_op(kLinspace, {}, {start, stop, num, dtype}, where);
}

Tensor eye(int64_t num_rows, int64_t num_columns, DType dtype, CallSite where) {
  return run_op(kEye, {}, {num_rows, num_columns == -1 ? num_rows : num_columns, dtype}, where);
}

}  // namespace ef
