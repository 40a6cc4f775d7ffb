// Drivers for elementwise ops. An op supplies only a scalar functor, e.g.
//   struct AddFn { template <class T> T operator()(T a, T b) const { return a + b; } };
// and the driver handles dtypes, broadcasting, strides, vectorization and threads.
// Functors that need attrs take them in a constructor: explicit SomeFn(const Attrs&).
#pragma once

#include <span>
#include <type_traits>

#include "backends/cpu/strided_loop.h"
#include "backends/cpu/vector_math.h"
#include "eagerflow/runtime/op_def.h"

namespace ef::cpu {

template <class F>
F make_functor(const Attrs& attrs) {
  if constexpr (std::is_constructible_v<F, const Attrs&>) return F(attrs);
  else return F{};
}

// Rough nanoseconds per element, used to decide when to split work across threads.
inline constexpr double kCheapElementNs = 0.5;     // add, compare, select
inline constexpr double kExpensiveElementNs = 4.0;  // exp, tanh, erf, ...

// Note [rows may alias]: the row loops take no __restrict pointers, so `out` may be an
// input's own buffer (element i of both at the same address: the graph executor's
// in-place reuse, OpTraits::in_place). Each iteration reads its input elements before
// writing out[i], and `#pragma omp simd` asserts there is no dependence between
// iterations (true for equal addresses), so the loops vectorize as before.
template <class Out, class In, class F>
inline void unary_row(const F& f, int64_t n, Out* out, const In* in, int64_t si) {
  if (si == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = f(in[i * si]);
  }
}

template <class Out, class T, class F>
inline void binary_row(const F& f, int64_t n, Out* out, const T* a, int64_t sa, const T* b, int64_t sb) {
  if (sa == 1 && sb == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const T bv = *b;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
  } else if (sa == 0 && sb == 1) {
    const T av = *a;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i * sa], b[i * sb]);
  }
}

template <class T>
const T* typed_data(const Tensor& t) {
  return static_cast<const T*>(t.impl()->storage->data()) + t.impl()->offset;
}
template <class T>
T* typed_output(Tensor& t) {
  return static_cast<T*>(t.impl()->storage->data()) + t.impl()->offset;
}

// Out = F(In) elementwise for input dtype T.
template <class F, class T>
void run_unary(const F& f, const Tensor& in, Tensor& out, double cost) {
  using Out = std::decay_t<decltype(f(T{}))>;
  const T* src = typed_data<T>(in);
  Out* dst = typed_output<Out>(out);
  if (in.impl()->is_contiguous()) {
    parallel_for(out.num_elements(), cost,
                 [&](int64_t b, int64_t e) { unary_row(f, e - b, dst + b, src + b, 1); });
    return;
  }
  auto layout = make_layout<2>(out.shape(), {in.impl()});
  parallel_rows(layout, cost, [&](int64_t n, const int64_t* off, const int64_t* st) {
    unary_row(f, n, dst + off[0], src + off[1], st[1]);
  });
}

template <class F, class T>
void run_binary(const F& f, const Tensor& a, const Tensor& b, Tensor& out, double cost) {
  using Out = std::decay_t<decltype(f(T{}, T{}))>;
  const T* pa = typed_data<T>(a);
  const T* pb = typed_data<T>(b);
  Out* dst = typed_output<Out>(out);
  const TensorImpl& ia = *a.impl();
  const TensorImpl& ib = *b.impl();
  // Fast paths: same shapes, or one side a single element; both contiguous.
  const bool a_scalar = ia.shape.num_elements() == 1, b_scalar = ib.shape.num_elements() == 1;
  if ((ia.shape == ib.shape || a_scalar || b_scalar) && ia.is_contiguous() && ib.is_contiguous() &&
      (ia.shape == out.shape() || a_scalar) && (ib.shape == out.shape() || b_scalar)) {
    const int64_t sa = a_scalar ? 0 : 1, sb = b_scalar ? 0 : 1;
    parallel_for(out.num_elements(), cost, [&](int64_t s, int64_t e) {
      binary_row(f, e - s, dst + s, pa + s * sa, sa, pb + s * sb, sb);
    });
    return;
  }
  auto layout = make_layout<3>(out.shape(), {a.impl(), b.impl()});
  parallel_rows(layout, cost, [&](int64_t n, const int64_t* off, const int64_t* st) {
    binary_row(f, n, dst + off[0], pa + off[1], st[1], pb + off[2], st[2]);
  });
}

// A set of dtypes, as a bit mask, so an op's supported dtypes are written once and
// serve both its inference (error messages) and its kernel (which instantiations exist).
using DTypeSet = uint32_t;
constexpr DTypeSet dtype_bit(DType t) { return 1u << static_cast<int>(t); }
// Float16 and BFloat16 are accepted wherever float32 is; no kernel computes in them
// (Note [half-precision dtypes] in eagerflow/core/half.h), so dispatch_in never sees them.
inline constexpr DTypeSet kHalfTypes = dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16);
inline constexpr DTypeSet kFloatTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64) | kHalfTypes;
// Likewise the small integer dtypes wherever int32 is (Note [small integer dtypes]).
inline constexpr DTypeSet kSmallIntTypes = dtype_bit(DType::Int8) | dtype_bit(DType::UInt8) |
                                           dtype_bit(DType::Int16) | dtype_bit(DType::UInt16) |
                                           dtype_bit(DType::UInt32);
inline constexpr DTypeSet kIntTypes = dtype_bit(DType::Int32) | dtype_bit(DType::Int64) | kSmallIntTypes;
inline constexpr DTypeSet kNumericTypes = kFloatTypes | kIntTypes;
inline constexpr DTypeSet kBoolType = dtype_bit(DType::Bool);
inline constexpr DTypeSet kAllTypes = kNumericTypes | kBoolType;
constexpr bool contains(DTypeSet set, DType t) { return (set & dtype_bit(t)) != 0; }

// Calls fn(TypeTag<T>) for the dtype `t`, instantiating only the dtypes in Set.
template <DTypeSet Set, class Fn>
void dispatch_in(DType t, std::string_view op, Fn&& fn) {
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (contains(Set, dtype_of<T>)) fn(tag);
    else fail<UnimplementedError>(op, ": no CPU kernel for dtype ", t);
  });
}

template <class F, DTypeSet Set, bool Expensive = false>
void unary_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const F f = make_functor<F>(call.attrs);
  dispatch_in<Set>(call.inputs[0].dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_unary<F, T>(f, call.inputs[0], outputs[0], Expensive ? kExpensiveElementNs : kCheapElementNs);
  });
}

template <class F, DTypeSet Set, bool Expensive = false>
void binary_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const F f = make_functor<F>(call.attrs);
  dispatch_in<Set>(call.inputs[0].dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_binary<F, T>(f, call.inputs[0], call.inputs[1], outputs[0],
                     Expensive ? kExpensiveElementNs : kCheapElementNs);
  });
}

// Block function (Note [elementwise blocks] in op_def.h) of the elementwise op computed
// by functor F with Arity inputs, for the dtypes in Set. It calls the same row loops as
// the kernels above, so a fused chain computes bit for bit what the ops compute alone.
template <class F, DTypeSet Set, int Arity>
void elementwise_block(DType dtype, int64_t n, void* out, std::span<const void* const> in,
                       std::span<const bool> in_is_scalar) {
  static_assert(Arity == 1 || Arity == 2);
  const F f{};
  dispatch_in<Set>(dtype, "elementwise block", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = static_cast<T*>(out);
    const T* a = static_cast<const T*>(in[0]);
    const int64_t sa = in_is_scalar[0] ? 0 : 1;
    if constexpr (Arity == 1) {
      unary_row(f, n, dst, a, sa);
    } else {
      binary_row(f, n, dst, a, sa, static_cast<const T*>(in[1]), in_is_scalar[1] ? 0 : 1);
    }
  });
}

}  // namespace ef::cpu
