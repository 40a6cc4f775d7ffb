// The op fuzzer's harness: the tensor pool and argument drawing (State), the size
// classification that keeps valid-but-huge requests out, and the invariants every
// result must satisfy (check_result). The op table and the entry point are in
// op_fuzzer.cpp.
#pragma once

#include <eagerflow/eagerflow.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_input.h"

namespace ef_fuzz {

using ef::DType;
using ef::Shape;
using ef::Tensor;

constexpr int kMaxSteps = 16;
constexpr int kPoolSize = 6;
// Valid shapes beyond this many elements are not requested: they are legitimate
// allocations, only slow, not bugs. Invalid ones (negative, overflowing) always are.
constexpr int64_t kMaxElements = int64_t{1} << 20;

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\n*** op_fuzzer finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// What a shape argument means for an eager call: small and valid, definitely invalid
// (the op must throw), or valid but too large to be worth computing. Mirrors
// validate_shape: zero dimensions count as 1 in the overflow check, as in NumPy.
enum class ShapeKind { kSmall, kInvalid, kHuge };
inline ShapeKind classify(const Shape& shape, size_t element_size = 1) {
  if (shape.rank() > ef::kMaxRank) return ShapeKind::kInvalid;
  // Saturating at 2^64 (factors capped at 2^62) keeps the products inside __int128.
  constexpr __int128 kCap = __int128{1} << 64;
  __int128 elements = 1, extent = static_cast<__int128>(element_size);
  for (int64_t d : shape) {
    if (d < 0) return ShapeKind::kInvalid;
    int64_t factor = std::min<int64_t>(d, int64_t{1} << 62);
    elements = std::min(elements * factor, kCap);
    extent = std::min(extent * std::max<int64_t>(factor, 1), kCap);
  }
  if (extent > std::numeric_limits<int64_t>::max()) return ShapeKind::kInvalid;
  return elements > kMaxElements ? ShapeKind::kHuge : ShapeKind::kSmall;
}

// double → float without UB: out-of-range finite values become ±FLT_MAX.
inline float to_float(double d) {
  if (std::isfinite(d)) d = std::clamp(d, -double{FLT_MAX}, double{FLT_MAX});
  return static_cast<float>(d);
}

struct State {
  FuzzInput& in;
  bool symbolic;
  std::vector<Tensor> pool;

  const Tensor& tensor() { return pool[in.pick(pool.size())]; }
  // A tensor operand, or one in four times a C++ number of a random type.
  ef::TensorOrScalar operand() {
    if (in.pick(4) != 0) return tensor();
    switch (in.pick(5)) {
      case 0: return to_float(in.number());
      case 1: return in.number();
      case 2: return static_cast<int32_t>(in.integer() & 0x7fffffff) - (in.flag() ? 1 << 30 : 0);
      case 3: return in.integer();
      default: return in.flag();
    }
  }
  // Passes `result` through; a finding if it was created eagerly from an invalid shape
  // (a negative or unknown dimension, rank > 8, or an element count that overflows).
  Tensor expect_thrown(const Shape& shape, Tensor result) {
    if (!symbolic && classify(shape, ef::size_of(result.dtype())) == ShapeKind::kInvalid)
      finding("creation op accepted the invalid shape " + shape.to_string());
    return result;
  }
  // A list of 0-4 integer attributes (sizes, begins, multiples, ...).
  std::vector<int64_t> ints() {
    std::vector<int64_t> out(in.pick(5));
    for (int64_t& v : out) v = in.integer();
    return out;
  }
  // A permutation-like list of axes for a tensor of `rank` (sometimes the wrong length).
  std::vector<int64_t> perm(int r) {
    size_t n = static_cast<size_t>(r);
    if (in.pick(8) == 0) n = in.pick(static_cast<size_t>(r) + 2);
    std::vector<int64_t> out(n);
    for (size_t i = 0; i < n; ++i) out[i] = in.flag() ? static_cast<int64_t>(i) : in.axis(r);
    if (n > 1 && in.flag()) std::swap(out[0], out[n - 1]);
    return out;
  }
  // An Axes argument: every axis, one axis, or a list.
  ef::Axes axes(int r) {
    switch (in.pick(3)) {
      case 0: return ef::Axes();
      case 1: return ef::Axes(in.axis(r));
      default: return ef::Axes(in.axes(r));
    }
  }
  // 0-3 tensors from the pool (for concat / stack).
  std::vector<Tensor> tensors() {
    std::vector<Tensor> out(in.pick(4));
    for (Tensor& t : out) t = tensor();
    return out;
  }
  std::string direction() {
    static const char* kDirections[] = {"ASCENDING", "DESCENDING", "ascending", ""};
    return kDirections[in.pick(4)];
  }
  // One of several outputs (all of which are checked first); undefined if there are none.
  Tensor one_of(const std::vector<Tensor>& outputs, const char* op);
  // A shape argument for a creation op; huge valid ones are replaced by a small one.
  std::optional<Shape> shape_arg() {
    Shape s = in.shape();
    if (classify(s) == ShapeKind::kHuge) return std::nullopt;
    return s;
  }
};

// A fresh tensor with values from the input: small valid shape, any dtype.
template <class T>
Tensor make_values(FuzzInput& in, const Shape& shape) {
  std::vector<T> values(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < values.size(); ++i) {  // by index: std::vector<bool> has no T&
    if constexpr (std::is_same_v<T, bool>) values[i] = in.flag();
    else if constexpr (std::is_same_v<T, float>) values[i] = to_float(in.number());
    else if constexpr (std::is_same_v<T, double>) values[i] = in.number();
    else values[i] = static_cast<T>(in.integer() % 1000);
  }
  return ef::constant(values, shape);
}
// make_values of any dtype: storage-only ones (half, small integer) are values of their
// compute dtype cast.
inline Tensor make_values_of(FuzzInput& in, DType dtype, const Shape& shape) {
  if (ef::is_storage_only(dtype)) return ef::cast(make_values_of(in, ef::compute_dtype(dtype), shape), dtype);
  return ef::dispatch_dtype(dtype,
                            [&](auto tag) { return make_values<typename decltype(tag)::type>(in, shape); });
}
inline Tensor make_tensor(FuzzInput& in, bool symbolic) {
  DType dtype = in.dtype();
  Shape shape = in.small_shape();
  if (symbolic) {
    for (int64_t& d : shape.dims())
      if (in.pick(3) == 0) d = ef::kUnknownDim;
    return ef::symbolic_tensor(dtype, shape);
  }
  return make_values_of(in, dtype, shape);
}

// Checks what every result must satisfy and touches every element, so that ASan sees
// views that reach outside their storage and UBSan sees invalid bools.
inline void check_result(const Tensor& t, const char* op) {
  bool symbolic = ef::Context::current().builder != nullptr;  // building a graph (or the dry run)
  if (!t.defined()) finding(std::string(op) + " returned an undefined tensor");
  if (t.rank() > ef::kMaxRank) finding(std::string(op) + " returned rank > kMaxRank");
  // While building, ops give symbolic tensors, but constants stay eager values.
  if (t.is_symbolic()) {
    if (!symbolic) finding(std::string(op) + " returned a symbolic tensor eagerly");
    return;
  }
  const ef::TensorImpl& impl = *t.impl();
  if (!impl.shape.is_fully_defined()) finding(std::string(op) + " returned an unknown dimension eagerly");
  if (impl.strides.size() != static_cast<size_t>(t.rank())) finding(std::string(op) + ": strides/rank mismatch");
  int64_t n = t.num_elements();
  if (n > 0) {
    int64_t lo = impl.offset, hi = impl.offset;
    for (int i = 0; i < t.rank(); ++i) {
      int64_t span = (impl.shape[i] - 1) * impl.strides[i];
      (span < 0 ? lo : hi) += span;
    }
    int64_t capacity = static_cast<int64_t>(impl.storage->nbytes() / ef::size_of(impl.dtype));
    if (lo < 0 || hi >= capacity)
      finding(std::string(op) + " returned a view outside its storage: " + t.shape().to_string());
    if (n <= kMaxElements) {
      std::vector<double> values = t.to_vector<double>();
      if (values.size() != static_cast<size_t>(n)) finding(std::string(op) + ": to_vector size mismatch");
    }
  }
  if (n <= 4096) (void)t.to_string();
}

inline Tensor State::one_of(const std::vector<Tensor>& outputs, const char* op) {
  for (const Tensor& t : outputs) check_result(t, op);
  return outputs.empty() ? Tensor() : outputs[in.pick(outputs.size())];
}

}  // namespace ef_fuzz
