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

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_harness.h"

namespace ef_fuzz {
namespace {

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
    // shapes and views
    EF_FUZZ_OP("operator[]", return s.tensor()[s.in.integer()];),
    EF_FUZZ_OP("contiguous", return s.tensor().contiguous();),
    EF_FUZZ_OP("reshape", {
      const Tensor& x = s.tensor();
      Shape shape = s.in.shape();
      return ef::reshape(x, shape);
    }),
    EF_FUZZ_OP("transpose", {
      const Tensor& x = s.tensor();
      if (s.in.flag()) return ef::transpose(x);
      return ef::transpose(x, s.perm(x.rank()));
    }),
    EF_FUZZ_OP("expand_dims", {
      const Tensor& x = s.tensor();
      return ef::expand_dims(x, s.in.axis(x.rank() + 1));
    }),
    EF_FUZZ_OP("squeeze", {
      const Tensor& x = s.tensor();
      return ef::squeeze(x, s.axes(x.rank()));
    }),
    EF_FUZZ_OP("strided_slice", {
      const Tensor& x = s.tensor();
      std::vector<int64_t> begin = s.ints(), end = s.ints(), strides = s.ints();
      ef::StridedSliceMasks m{s.in.byte(), s.in.byte(), s.in.pick(4) == 0 ? s.in.byte() : 0,
                              s.in.pick(4) == 0 ? s.in.byte() : 0, s.in.pick(3) == 0 ? s.in.byte() : 0};
      return ef::strided_slice(x, begin, end, strides, m);
    }),
    EF_FUZZ_OP("slice", {
      const Tensor& x = s.tensor();
      std::vector<int64_t> begin = s.ints(), size = s.ints();
      return ef::slice(x, begin, size);
    }),
    EF_FUZZ_OP("broadcast_to", {
      const Tensor& x = s.tensor();
      auto shape = s.shape_arg();
      return shape ? ef::broadcast_to(x, *shape) : Tensor();
    }),
    EF_FUZZ_UNARY(identity),
    EF_FUZZ_OP("reverse", {
      const Tensor& x = s.tensor();
      return ef::reverse(x, s.axes(x.rank()));
    }),
    // joining, splitting, padding
    EF_FUZZ_OP("concat", {
      std::vector<Tensor> values = s.tensors();
      return ef::concat(values, s.in.axis(values.empty() ? 1 : values[0].rank()));
    }),
    EF_FUZZ_OP("stack", {
      std::vector<Tensor> values = s.tensors();
      return ef::stack(values, s.in.axis(values.empty() ? 1 : values[0].rank() + 1));
    }),
    EF_FUZZ_OP("unstack", {
      const Tensor& x = s.tensor();
      return s.one_of(ef::unstack(x, s.in.axis(x.rank())), "unstack");
    }),
    EF_FUZZ_OP("split", {
      const Tensor& x = s.tensor();
      if (s.in.flag()) return s.one_of(ef::split(x, s.in.integer(), s.in.axis(x.rank())), "split");
      std::vector<int64_t> sizes = s.ints();
      return s.one_of(ef::split(x, sizes, s.in.axis(x.rank())), "split");
    }),
    EF_FUZZ_OP("tile", {
      const Tensor& x = s.tensor();
      return ef::tile(x, s.ints());
    }),
    EF_FUZZ_OP("pad", {
      const Tensor& x = s.tensor();
      std::vector<std::pair<int64_t, int64_t>> paddings(s.in.pick(4) == 0 ? s.in.pick(7) : x.rank());
      for (auto& p : paddings) p = {s.in.integer(), s.in.integer()};
      static const char* kModes[] = {"CONSTANT", "REFLECT", "SYMMETRIC", "constant", "WRAP"};
      std::string mode = kModes[s.in.pick(5)];
      return ef::pad(x, paddings, mode, s.operand());
    }),
    // indexing
    EF_FUZZ_OP("gather", {
      const Tensor& params = s.tensor();
      const Tensor& indices = s.tensor();
      return ef::gather(params, indices, s.in.axis(params.rank()), s.in.pick(4) == 0 ? s.in.integer() : 0);
    }),
    EF_FUZZ_OP("gather_nd", {
      const Tensor& params = s.tensor();
      const Tensor& indices = s.tensor();
      return ef::gather_nd(params, indices, s.in.pick(4) == 0 ? s.in.integer() : 0);
    }),
    EF_FUZZ_OP("scatter_nd", {
      const Tensor& indices = s.tensor();
      const Tensor& updates = s.tensor();
      auto shape = s.shape_arg();
      return shape ? ef::scatter_nd(indices, updates, *shape) : Tensor();
    }),
    EF_FUZZ_OP("tensor_scatter_nd_add", {
      const Tensor& tensor = s.tensor();
      const Tensor& indices = s.tensor();
      const Tensor& updates = s.tensor();
      return ef::tensor_scatter_nd_add(tensor, indices, updates);
    }),
    EF_FUZZ_OP("where3", {
      const Tensor& condition = s.tensor();
      return ef::where(condition, s.operand(), s.operand());
    }),
    EF_FUZZ_OP("where1", return ef::where(s.tensor());),
    EF_FUZZ_OP("one_hot", {
      const Tensor& indices = s.tensor();
      int64_t depth = s.in.integer();
      ef::TensorOrScalar on = s.operand(), off = s.operand();
      return ef::one_hot(indices, depth, on, off, s.in.axis(indices.rank() + 1), s.in.dtype());
    }),
    // sorting
    EF_FUZZ_OP("top_k", {
      const Tensor& x = s.tensor();
      ef::TopKResult r = ef::top_k(x, s.in.integer(), s.in.flag());
      return s.one_of({r.values, r.indices}, "top_k");
    }),
    EF_FUZZ_OP("sort", {
      const Tensor& x = s.tensor();
      return ef::sort(x, s.in.axis(x.rank()), s.direction());
    }),
    EF_FUZZ_OP("argsort", {
      const Tensor& x = s.tensor();
      return ef::argsort(x, s.in.axis(x.rank()), s.direction());
    }),
    // reductions
#define EF_FUZZ_REDUCE(f) {#f, [](State& s) { const Tensor& x = s.tensor(); return ef::f(x, s.axes(x.rank()), s.in.flag()); }}
    EF_FUZZ_REDUCE(reduce_sum), EF_FUZZ_REDUCE(reduce_prod), EF_FUZZ_REDUCE(reduce_max), EF_FUZZ_REDUCE(reduce_min),
    EF_FUZZ_REDUCE(reduce_any), EF_FUZZ_REDUCE(reduce_all), EF_FUZZ_REDUCE(reduce_mean),
    EF_FUZZ_REDUCE(reduce_logsumexp), EF_FUZZ_REDUCE(reduce_variance), EF_FUZZ_REDUCE(reduce_std),
#undef EF_FUZZ_REDUCE
    EF_FUZZ_OP("argmax", {
      const Tensor& x = s.tensor();
      return ef::argmax(x, s.in.axis(x.rank()), s.in.dtype());
    }),
    EF_FUZZ_OP("argmin", {
      const Tensor& x = s.tensor();
      return ef::argmin(x, s.in.axis(x.rank()), s.in.dtype());
    }),
    EF_FUZZ_OP("cumsum", {
      const Tensor& x = s.tensor();
      return ef::cumsum(x, s.in.axis(x.rank()), s.in.flag(), s.in.flag());
    }),
    EF_FUZZ_OP("cumprod", {
      const Tensor& x = s.tensor();
      return ef::cumprod(x, s.in.axis(x.rank()), s.in.flag(), s.in.flag());
    }),
    // linear algebra
    EF_FUZZ_OP("matmul", {
      const Tensor& a = s.tensor();
      const Tensor& b = s.tensor();
      const bool ta = s.in.flag(), tb = s.in.flag();
      // Skipped when the products would take long: about |a| |b| / k multiply-adds,
      // which for integers are plain loops, near 1 us each under the fuzzer's
      // instrumentation (a 40 s input was found).
      if (a.rank() >= 2 && b.rank() >= 2) {
        const double k = static_cast<double>(std::max<int64_t>(1, ta ? a.dim(-2) : a.dim(-1)));
        if (static_cast<double>(a.num_elements()) * static_cast<double>(b.num_elements()) / k > 2e6) return Tensor();
      }
      return ef::matmul(a, b, ta, tb);
    }),
    EF_FUZZ_OP("tensordot", {
      const Tensor& a = s.tensor();
      const Tensor& b = s.tensor();
      // As for matmul, but bounding |a| |b| itself (the contracted size comes later).
      if (static_cast<double>(a.num_elements()) * static_cast<double>(b.num_elements()) > 2e6) return Tensor();
      if (s.in.flag()) return ef::tensordot(a, b, s.in.integer());
      return ef::tensordot(a, b, ef::TensordotAxes(s.in.axes(a.rank()), s.in.axes(b.rank())));
    }),
    EF_FUZZ_OP("norm", {
      const Tensor& x = s.tensor();
      static const char* kNames[] = {"euclidean", "fro", "nuc", "bogus"};
      ef::linalg::NormOrd ord = s.in.flag() ? ef::linalg::NormOrd(kNames[s.in.pick(4)]) : ef::linalg::NormOrd(s.in.number());
      return ef::linalg::norm(x, ord, s.axes(x.rank()), s.in.flag());
    }),
    // nn
    EF_FUZZ_UNARY(sigmoid), EF_FUZZ_UNARY(relu), EF_FUZZ_UNARY(relu6), EF_FUZZ_UNARY(elu), EF_FUZZ_UNARY(selu),
    EF_FUZZ_UNARY(softplus), EF_FUZZ_UNARY(softsign),
    EF_FUZZ_OP("leaky_relu", return ef::leaky_relu(s.tensor(), s.in.number());),
    EF_FUZZ_OP("gelu", return ef::gelu(s.tensor(), s.in.flag());),
    EF_FUZZ_OP("softmax", {
      const Tensor& x = s.tensor();
      return ef::softmax(x, s.in.axis(x.rank()));
    }),
    EF_FUZZ_OP("log_softmax", {
      const Tensor& x = s.tensor();
      return ef::log_softmax(x, s.in.axis(x.rank()));
    }),
    EF_FUZZ_OP("softmax_cross_entropy_with_logits", {
      const Tensor& labels = s.tensor();
      const Tensor& logits = s.tensor();
      return ef::softmax_cross_entropy_with_logits(labels, logits, s.in.axis(logits.rank()));
    }),
    EF_FUZZ_OP("sparse_softmax_cross_entropy_with_logits",
               return ef::sparse_softmax_cross_entropy_with_logits(s.tensor(), s.tensor());),
    EF_FUZZ_OP("sigmoid_cross_entropy_with_logits",
               return ef::sigmoid_cross_entropy_with_logits(s.tensor(), s.tensor());),
    EF_FUZZ_OP("bias_add", {
      const Tensor& value = s.tensor();
      const Tensor& bias = s.tensor();
      return ef::bias_add(value, bias, s.in.flag() ? "NHWC" : (s.in.flag() ? "NCHW" : "bogus"));
    }),
    EF_FUZZ_OP("l2_normalize", {
      const Tensor& x = s.tensor();
      return ef::l2_normalize(x, s.axes(x.rank()), s.in.number());
    }),
    EF_FUZZ_OP("dropout", {
      const Tensor& x = s.tensor();
      double rate = s.in.number();
      std::optional<Shape> noise;
      if (s.in.pick(4) == 0) noise = s.in.shape();
      return ef::dropout(x, rate, s.in.integer(), noise);
    }),
    // convolution and pooling: window attributes are 0-4 (often hostile) integers;
    // operands over 4096 elements are skipped to bound the work
#define EF_FUZZ_PADDING (s.in.flag() ? "SAME" : (s.in.flag() ? "VALID" : "same"))
#define EF_FUZZ_SMALL(t) if ((t).num_elements() > 4096) return Tensor();
    EF_FUZZ_OP("conv2d", {
      const Tensor& x = s.tensor();
      const Tensor& w = s.tensor();
      EF_FUZZ_SMALL(x) EF_FUZZ_SMALL(w)
      return ef::conv2d(x, w, s.ints(), EF_FUZZ_PADDING, s.ints());
    }),
    EF_FUZZ_OP("conv2d_backprop_input", {
      auto sizes = s.shape_arg();
      const Tensor& w = s.tensor();
      const Tensor& dy = s.tensor();
      // Only small valid sizes: num_elements() of an overflowing shape is itself undefined.
      if (!sizes || classify(*sizes) != ShapeKind::kSmall || sizes->num_elements() > 4096) return Tensor();
      EF_FUZZ_SMALL(w)
      return ef::conv2d_backprop_input(*sizes, w, dy, s.ints(), EF_FUZZ_PADDING, s.ints());
    }),
    EF_FUZZ_OP("conv2d_backprop_filter", {
      const Tensor& x = s.tensor();
      auto sizes = s.shape_arg();
      const Tensor& dy = s.tensor();
      // Only small valid sizes: num_elements() of an overflowing shape is itself undefined.
      if (!sizes || classify(*sizes) != ShapeKind::kSmall || sizes->num_elements() > 4096) return Tensor();
      EF_FUZZ_SMALL(x)
      return ef::conv2d_backprop_filter(x, *sizes, dy, s.ints(), EF_FUZZ_PADDING, s.ints());
    }),
    EF_FUZZ_OP("max_pool2d", {
      const Tensor& x = s.tensor();
      EF_FUZZ_SMALL(x)
      return ef::max_pool2d(x, s.ints(), s.ints(), EF_FUZZ_PADDING);
    }),
    EF_FUZZ_OP("avg_pool2d", {
      const Tensor& x = s.tensor();
      EF_FUZZ_SMALL(x)
      return ef::avg_pool2d(x, s.ints(), s.ints(), EF_FUZZ_PADDING);
    }),
    EF_FUZZ_OP("max_pool2d_grad", {
      const Tensor& x = s.tensor();
      const Tensor& g = s.tensor();
      EF_FUZZ_SMALL(x)
      if (s.in.flag()) return ef::max_pool2d_grad(x, g, s.ints(), s.ints(), EF_FUZZ_PADDING);
      return ef::max_pool2d_grad_grad(x, g, s.ints(), s.ints(), EF_FUZZ_PADDING);
    }),
    EF_FUZZ_OP("avg_pool2d_grad", {
      auto sizes = s.shape_arg();
      const Tensor& g = s.tensor();
      // Only small valid sizes: num_elements() of an overflowing shape is itself undefined.
      if (!sizes || classify(*sizes) != ShapeKind::kSmall || sizes->num_elements() > 4096) return Tensor();
      return ef::avg_pool2d_grad(*sizes, g, s.ints(), s.ints(), EF_FUZZ_PADDING);
    }),
    EF_FUZZ_OP("batch_normalization", {
      const Tensor& x = s.tensor();
      const Tensor& mean = s.tensor();
      const Tensor& variance = s.tensor();
      return ef::batch_normalization(x, mean, variance, s.in.flag() ? s.tensor() : Tensor(),
                                     s.in.flag() ? s.tensor() : Tensor(), s.in.number());
    }),
#undef EF_FUZZ_SMALL
#undef EF_FUZZ_PADDING
    // random
    EF_FUZZ_OP("random::uniform", {
      auto shape = s.shape_arg();
      if (!shape) return Tensor();
      ef::TensorOrScalar lo = s.operand();
      std::optional<ef::TensorOrScalar> hi;
      if (s.in.flag()) hi = s.operand();
      return ef::random::uniform(*shape, lo, hi, s.in.dtype(), s.in.integer());
    }),
    EF_FUZZ_OP("random::normal", {
      auto shape = s.shape_arg();
      return shape ? ef::random::normal(*shape, s.in.number(), s.in.number(), s.in.dtype(), s.in.integer()) : Tensor();
    }),
    EF_FUZZ_OP("random::truncated_normal", {
      auto shape = s.shape_arg();
      return shape ? ef::random::truncated_normal(*shape, s.in.number(), s.in.number(), s.in.dtype(), s.in.integer())
                   : Tensor();
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
      return make_values_of(s.in, s.in.dtype(), shape);
    }),
};

// Runs one op call, turning every outcome other than a value or an ef::Error into a
// finding. Returns nullopt when the op threw an ef::Error.
std::optional<Tensor> guarded(const FuzzOp& op, State& state) {
  try {
    return op.run(state);
  } catch (const ef::Error&) {
    return std::nullopt;  // rejected cleanly: the expected outcome for bad arguments
  } catch (const std::exception& e) {
    finding(std::string(op.name) + " threw a non-ef exception: " + e.what());
  } catch (...) {
    finding(std::string(op.name) + " threw a non-std exception");
  }
}

// Eager results must agree with what shape inference alone predicted.
void check_against_inference(const Tensor& eager, const Tensor& inferred, const char* op) {
  if (!inferred.defined() || !inferred.is_symbolic()) return;
  bool same = eager.dtype() == inferred.dtype() && eager.rank() == inferred.rank();
  for (int i = 0; same && i < eager.rank(); ++i)
    same = inferred.shape()[i] == ef::kUnknownDim || inferred.shape()[i] == eager.shape()[i];
  if (!same)
    finding(std::string(op) + ": eager result " + eager.to_string() + " differs from inference " +
            inferred.to_string());
}

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
    // Eagerly, first run the call through inference alone (same bytes, so the same
    // arguments): it bounds the output size before anything is allocated, and the
    // eager result must match it.
    std::optional<Tensor> inferred;
    if (!state.symbolic) {
      FuzzInput saved = in;
      {
        ef::InferenceOnlyBuilder dry;
        ef::BuildScope dry_scope(&dry);
        inferred = guarded(op, state);
      }
      in = saved;
      if (inferred && inferred->defined() && inferred->num_elements() > kMaxElements) continue;
    }
    std::optional<Tensor> out = guarded(op, state);
    if (!out || !out->defined()) continue;  // an ef::Error, or skipped: an argument would be huge
    check_result(*out, op.name);
    if (inferred) check_against_inference(*out, *inferred, op.name);
    state.pool[slot] = *out;
  }
  return 0;
}
