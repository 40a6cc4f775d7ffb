// libFuzzer target over the public op API. The input bytes are a program: a mode byte
// (eager, or shape-only graph building with symbolic tensors that may have unknown
// dimensions) and then up to kMaxSteps op calls, each picking an op from kOps and
// drawing its operands from a small pool of tensors and its attributes from the bytes.
//
// Every ef::Error is an accepted outcome. A finding is anything else: a crash, an
// ASan/UBSan report, another exception type, or a result that breaks the invariants
// check_result() verifies (views inside their storage, readable elements, a failure
// that should have been reported for a definitely invalid shape).
//
// To add an op, add one line to kOps (see the EF_FUZZ_* helpers below).
#include <eagerflow/eagerflow.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_input.h"

namespace ef_fuzz {
namespace {

using ef::DType;
using ef::Shape;
using ef::Tensor;

constexpr int kMaxSteps = 16;
constexpr int kPoolSize = 6;
// Valid shapes beyond this many elements are not requested: they are legitimate
// allocations, only slow, not bugs. Invalid ones (negative, overflowing) always are.
constexpr int64_t kMaxElements = int64_t{1} << 20;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "\n*** op_fuzzer finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// What a shape argument means for an eager call: small and valid, definitely invalid
// (the op must throw), or valid but too large to be worth computing. Mirrors
// validate_shape: zero dimensions count as 1 in the overflow check, as in NumPy.
enum class ShapeKind { kSmall, kInvalid, kHuge };
ShapeKind classify(const Shape& shape, size_t element_size = 1) {
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
float to_float(double d) {
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
Tensor make_tensor(FuzzInput& in, bool symbolic) {
  DType dtype = in.dtype();
  Shape shape = in.small_shape();
  if (symbolic) {
    for (int64_t& d : shape.dims())
      if (in.pick(3) == 0) d = ef::kUnknownDim;
    return ef::symbolic_tensor(dtype, shape);
  }
  return ef::dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return make_values<T>(in, shape);
  });
}

// Checks what every result must satisfy and touches every element, so that ASan sees
// views that reach outside their storage and UBSan sees invalid bools.
void check_result(const Tensor& t, bool symbolic, const char* op) {
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

// ---- the op table: one line per op ----
using OpFn = Tensor (*)(State&);
struct FuzzOp {
  const char* name;
  OpFn run;
};
#define EF_FUZZ_UNARY(f) {#f, [](State& s) { return ef::f(s.tensor()); }}
#define EF_FUZZ_BINARY(f) {#f, [](State& s) { return ef::f(s.operand(), s.operand()); }}
#define EF_FUZZ_OP(name, ...) {name, [](State& s) -> Tensor { __VA_ARGS__ }}

// Returns an undefined tensor to mean "skipped" (an argument would have been huge).
const FuzzOp kOps[] = {
    // binary math and comparisons (broadcasting, numbers of every C++ type)
    EF_FUZZ_BINARY(add), EF_FUZZ_BINARY(subtract), EF_FUZZ_BINARY(multiply), EF_FUZZ_BINARY(divide),
    EF_FUZZ_BINARY(floordiv), EF_FUZZ_BINARY(floormod), EF_FUZZ_BINARY(pow), EF_FUZZ_BINARY(maximum),
    EF_FUZZ_BINARY(minimum), EF_FUZZ_BINARY(squared_difference), EF_FUZZ_BINARY(equal),
    EF_FUZZ_BINARY(not_equal), EF_FUZZ_BINARY(less), EF_FUZZ_BINARY(less_equal), EF_FUZZ_BINARY(greater),
    EF_FUZZ_BINARY(greater_equal), EF_FUZZ_BINARY(logical_and), EF_FUZZ_BINARY(logical_or),
    EF_FUZZ_BINARY(logical_xor),
    // unary math
    EF_FUZZ_UNARY(logical_not), EF_FUZZ_UNARY(negative), EF_FUZZ_UNARY(abs), EF_FUZZ_UNARY(sign),
    EF_FUZZ_UNARY(square), EF_FUZZ_UNARY(reciprocal), EF_FUZZ_UNARY(exp), EF_FUZZ_UNARY(expm1),
    EF_FUZZ_UNARY(log), EF_FUZZ_UNARY(log1p), EF_FUZZ_UNARY(sqrt), EF_FUZZ_UNARY(rsqrt), EF_FUZZ_UNARY(sin),
    EF_FUZZ_UNARY(cos), EF_FUZZ_UNARY(tan), EF_FUZZ_UNARY(asin), EF_FUZZ_UNARY(acos), EF_FUZZ_UNARY(atan),
    EF_FUZZ_UNARY(sinh), EF_FUZZ_UNARY(cosh), EF_FUZZ_UNARY(tanh), EF_FUZZ_UNARY(erf), EF_FUZZ_UNARY(floor),
    EF_FUZZ_UNARY(ceil), EF_FUZZ_UNARY(round), EF_FUZZ_UNARY(isnan), EF_FUZZ_UNARY(isinf),
    EF_FUZZ_UNARY(isfinite), EF_FUZZ_UNARY(zeros_like), EF_FUZZ_UNARY(ones_like),
    EF_FUZZ_OP("clip_by_value", return ef::clip_by_value(s.tensor(), s.operand(), s.operand());),
    EF_FUZZ_OP("cast", return ef::cast(s.tensor(), s.in.dtype());),
    // operators and Tensor members
    EF_FUZZ_OP("operator-", return -s.tensor();),
    EF_FUZZ_OP("item/bool", {
      const Tensor& t = s.tensor();
      if (s.in.flag()) return ef::constant(t.item<double>());
      return ef::constant(static_cast<bool>(t));
    }),
    // creation
    EF_FUZZ_OP("fill", {
      auto shape = s.shape_arg();
      if (!shape) return Tensor();
      if (s.in.flag()) return ef::fill(*shape, s.operand(), s.in.dtype());
      return ef::fill(*shape, s.operand());
    }),
    EF_FUZZ_OP("zeros", {
      auto shape = s.shape_arg();
      return shape ? s.expect_thrown(*shape, ef::zeros(*shape, s.in.dtype())) : Tensor();
    }),
    EF_FUZZ_OP("ones", {
      auto shape = s.shape_arg();
      return shape ? s.expect_thrown(*shape, ef::ones(*shape, s.in.dtype())) : Tensor();
    }),
    EF_FUZZ_OP("range", {
      double start = s.in.number(), limit = s.in.number(), delta = s.in.number();
      if (std::isfinite(start) && std::isfinite(limit) && std::isfinite(delta) && delta != 0 &&
          (limit - start) / delta > static_cast<double>(kMaxElements) && (limit - start) / delta < 9e18)
        return Tensor();
      if (s.in.flag()) return ef::range(start, limit, delta, s.in.dtype());
      return ef::range(start, limit, delta);
    }),
    EF_FUZZ_OP("range_int", {
      int64_t start = s.in.integer(), limit = s.in.integer(), delta = s.in.integer();
      __int128 n = delta == 0 ? 0 : (static_cast<__int128>(limit) - start) / delta;
      if (n > kMaxElements && n < (__int128{1} << 62)) return Tensor();
      return ef::range(start, limit, delta);
    }),
    EF_FUZZ_OP("linspace", {
      double start = s.in.number(), stop = s.in.number();
      int64_t num = s.in.integer();
      if (num > kMaxElements && num < (int64_t{1} << 61)) return Tensor();
      return ef::linspace(start, stop, num, s.in.dtype());
    }),
    EF_FUZZ_OP("eye", {
      int64_t rows = s.in.integer(), cols = s.in.flag() ? -1 : s.in.integer();
      if (classify(Shape{rows, cols < 0 ? rows : cols}) == ShapeKind::kHuge) return Tensor();
      return ef::eye(rows, cols, s.in.dtype());
    }),
    EF_FUZZ_OP("constant", {
      Shape shape = s.in.small_shape();
      return ef::dispatch_dtype(s.in.dtype(), [&](auto tag) {
        return make_values<typename decltype(tag)::type>(s.in, shape);
      });
    }),
};

}  // namespace
}  // namespace ef_fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ef::set_num_threads(2);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ef_fuzz;
  FuzzInput in(data, size);
  uint8_t mode = in.byte();
  State state{in, (mode & 3) == 3, {}};
  ef::InferenceOnlyBuilder builder;
  std::optional<ef::BuildScope> scope;
  if (state.symbolic) scope.emplace(&builder);

  for (int i = 0; i < kPoolSize; ++i) state.pool.push_back(make_tensor(in, state.symbolic));
  for (int step = 0; step < kMaxSteps && !in.empty(); ++step) {
    const FuzzOp& op = kOps[in.u16() % std::size(kOps)];
    size_t slot = in.pick(kPoolSize);
    try {
      Tensor out = op.run(state);
      if (!out.defined()) continue;  // skipped: an argument would have been huge
      check_result(out, state.symbolic, op.name);
      state.pool[slot] = out;
    } catch (const ef::Error&) {
      // Rejected cleanly: the expected outcome for bad arguments.
    } catch (const std::exception& e) {
      finding(std::string(op.name) + " threw a non-ef exception: " + e.what());
    } catch (...) {
      finding(std::string(op.name) + " threw a non-std exception");
    }
  }
  return 0;
}
