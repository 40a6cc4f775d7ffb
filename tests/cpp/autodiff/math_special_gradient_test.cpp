// Gradients of the special functions, cumulative_logsumexp, the truncating modulo, atan2 and the composites
// xlogy, xdivy, xlog1py, log_sigmoid, nan_to_num against float64 central differences,
// first and second order; and the conventions where they are pinned (x == 0 in the
// xlogy family, non-finite inputs of nan_to_num, i1e at 0, polygamma's order).
#include <functional>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::rand64;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  double lo, hi;  // away from poles and the ends of the domain
};

TEST(MathSpecialGradients, UnaryOps) {
  std::vector<UnaryCase> cases = {
      {"asinh", [](auto& x) { return asinh(x); }, -2, 2},
      {"acosh", [](auto& x) { return acosh(x); }, 1.5, 3},
      {"atanh", [](auto& x) { return atanh(x); }, -0.8, 0.8},
      {"lgamma", [](auto& x) { return lgamma(x); }, 0.3, 4},
      {"lgamma (negative)", [](auto& x) { return lgamma(x); }, -0.9, -0.1},
      {"digamma", [](auto& x) { return digamma(x); }, 0.3, 4},
      {"digamma (negative)", [](auto& x) { return digamma(x); }, -1.8, -1.2},
      {"erfc", [](auto& x) { return erfc(x); }, -2, 2},
      {"erfinv", [](auto& x) { return erfinv(x); }, -0.9, 0.9},
      {"bessel_i0e", [](auto& x) { return bessel_i0e(x); }, -3, 3},
      {"bessel_i1e", [](auto& x) { return bessel_i1e(x); }, -3, 3},
      {"bessel_i0e (asymptotic)", [](auto& x) { return bessel_i0e(x); }, 21, 30},
      {"bessel_i1e (asymptotic)", [](auto& x) { return bessel_i1e(x); }, -30, -21},
      {"log_sigmoid", [](auto& x) { return log_sigmoid(x); }, -4, 4},
      {"nan_to_num", [](auto& x) { return nan_to_num(x); }, -2, 2},
  };
  int64_t seed = 1;
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(c.name);
    Fn f = [&](const std::vector<Tensor>& in) { return c.op(in[0]); };
    expect_gradients(f, {rand64({2, 3}, seed++, c.lo, c.hi)});
  }
}

TEST(MathSpecialGradients, BinaryOpsWithBroadcasting) {
  struct BinaryCase {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> op;
    double x_lo, x_hi, y_lo, y_hi;
  };
  std::vector<BinaryCase> cases = {
      {"atan2", [](auto& a, auto& b) { return atan2(a, b); }, -2, 2, 0.5, 2},
      {"atan2 (left half)", [](auto& a, auto& b) { return atan2(a, b); }, 0.5, 2, -2, 2},
      {"truncatemod", [](auto& a, auto& b) { return truncatemod(a, b); }, 0.1, 0.9, 1.1, 2},
      {"xlogy", [](auto& a, auto& b) { return xlogy(a, b); }, -2, 2, 0.5, 3},
      {"xdivy", [](auto& a, auto& b) { return xdivy(a, b); }, -2, 2, 0.5, 3},
      {"xlog1py", [](auto& a, auto& b) { return xlog1py(a, b); }, -2, 2, -0.5, 3},
  };
  int64_t seed = 100;
  for (const BinaryCase& c : cases) {
    SCOPED_TRACE(c.name);
    Fn f = [&](const std::vector<Tensor>& in) { return c.op(in[0], in[1]); };
    expect_gradients(f, {rand64({2, 3}, seed++, c.x_lo, c.x_hi), rand64({3}, seed++, c.y_lo, c.y_hi)});
  }
}

TEST(MathSpecialGradients, CumulativeLogsumexp) {
  int64_t seed = 300;
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true})
      for (int64_t axis : {0, 1}) {
        SCOPED_TRACE(::testing::Message()
                     << "exclusive " << exclusive << " reverse " << reverse << " axis " << axis);
        Fn f = [&](const std::vector<Tensor>& in) {
          return cumulative_logsumexp(in[0], axis, exclusive, reverse);
        };
        // An exclusive scan's first output is -inf: differences and second order do not
        // apply there, so those cases check the gradient of the finite outputs only.
        if (exclusive) {
          Fn finite = [&](const std::vector<Tensor>& in) {
            Tensor y = f(in);
            return where(isfinite(y), y, 0);
          };
          expect_gradients(finite, {rand64({3, 4}, seed++, -2, 2)}, 1);
        } else {
          expect_gradients(f, {rand64({3, 4}, seed++, -2, 2)});
        }
      }
}

// Where an output gradient is exactly 0 (here: an output of 0 in sum(y^2)), a second
// derivative goes through the gradient's dependence on it. TensorFlow's formula masks
// the log of g with `where` and lost that dependence: finite, wrong second derivatives
// (Note [cumulative_logsumexp gradient]).
TEST(MathSpecialGradients, CumulativeLogsumexpSecondOrderThroughZeroOutputGradients) {
  // Zeros at the corners: the first element scanned along either axis, either way.
  Tensor x = constant({{0.0, 0.5, -1.0, 0.0}, {1.5, -0.3, 0.2, 0.7}, {0.0, 0.4, -0.6, 0.0}});
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true})
      for (int64_t axis : {0, 1}) {
        SCOPED_TRACE(::testing::Message()
                     << "exclusive " << exclusive << " reverse " << reverse << " axis " << axis);
        Fn f = [&](const std::vector<Tensor>& in) {
          Tensor y = cumulative_logsumexp(in[0], axis, exclusive, reverse);
          if (exclusive) y = where(isfinite(y), y, 0);  // the first output is -inf
          return square(y);
        };
        expect_gradients(f, {x});
        // Third order, which goes through the gradient's own gradient in v.
        Fn g = [&](const std::vector<Tensor>& in) {
          GradientTape tape;
          tape.watch(in[0]);
          Tensor y = cumulative_logsumexp(in[0], axis, exclusive, reverse);
          Tensor s = reduce_sum(square(where(isfinite(y), y, 0)));
          return tape.gradient(s, in[0]);
        };
        expect_gradients(g, {x});
      }
  // A NaN in the output gradient propagates.
  GradientTape tape;
  Tensor v = constant({1.0, 2.0, 3.0});
  tape.watch(v);
  Tensor y = cumulative_logsumexp(v) * constant({1.0, std::nan(""), 1.0});
  std::vector<double> dv = tape.gradient(y, v).to_vector<double>();
  EXPECT_TRUE(std::isnan(dv[0]) && std::isnan(dv[1]) && !std::isnan(dv[2]));
}

// cumprod's gradient at zeros: exact at second and third order (Note [cumprod
// gradient]). The old gradient divided by x away from the zeros and patched the first
// zero, so its second derivative there missed the later elements' dependence on it.
TEST(MathSpecialGradients, CumprodHigherOrderThroughZeros) {
  // One zero, two zeros, zeros at the ends of lines along either axis, and none.
  std::vector<Tensor> xs = {constant({{1.5, 0.0, 2.0, -1.0}, {0.5, 2.0, 0.0, 3.0}, {2.0, -1.0, 1.5, 0.7}}),
                            constant({{0.0, 1.5, 0.0, 2.0}, {1.2, 0.0, 0.0, -1.0}, {0.0, 2.0, 0.5, 0.0}}),
                            constant({{0.0, 1.5, 2.0, 0.0}, {0.0, 2.0, -1.0, 0.5}, {0.3, 1.1, 2.0, 0.0}}),
                            rand64({3, 4}, 11, -2, 2)};
  Tensor w = rand64({3, 4}, 12, -1, 1);
  for (size_t c = 0; c < xs.size(); ++c)
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true})
        for (int64_t axis : {0, 1}) {
          SCOPED_TRACE(::testing::Message() << "case " << c << " exclusive " << exclusive << " reverse "
                                            << reverse << " axis " << axis);
          Fn f = [&](const std::vector<Tensor>& in) { return cumprod(in[0], axis, exclusive, reverse) * w; };
          expect_gradients(f, {xs[c]});
          Fn g = [&](const std::vector<Tensor>& in) {
            GradientTape tape;
            tape.watch(in[0]);
            Tensor s = reduce_sum(cumprod(in[0], axis, exclusive, reverse) * w);
            return tape.gradient(s, in[0]);
          };
          expect_gradients(g, {xs[c]});  // second and third order
        }
  // sum(cumprod(x)) = x0 + x0 x1 + x0 x1 x2: its Hessian times ones at [0, 2, 3] is
  // [x1 + 1 + x2, 1 + x2 + x0, x1 + x0] = [6, 4, 2] (the old gradient gave 0 first).
  for (auto [x, want] : {std::pair<Tensor, std::vector<double>>{constant({0.0, 2.0, 3.0}), {6, 4, 2}},
                         {constant({2.0, 0.0, 3.0}), {4, 6, 2}}}) {
    GradientTape outer;
    outer.watch(x);
    GradientTape inner;
    inner.watch(x);
    Tensor s = reduce_sum(cumprod(x));
    Tensor gsum = reduce_sum(inner.gradient(s, x));
    EXPECT_EQ(outer.gradient(gsum, x).to_vector<double>(), want);
  }
}

TEST(MathSpecialGradients, PolygammaInX) {
  Tensor n = constant({1.0, 2.0, 3.0});
  Fn f = [&](const std::vector<Tensor>& in) { return polygamma(n, in[0]); };
  expect_gradients(f, {rand64({2, 3}, 7, 0.5, 3)});
  // The order is an integer: asking for its gradient is an error, not a silent zero.
  GradientTape tape;
  tape.watch(n);
  Tensor y = polygamma(n, constant({1.0, 1.0, 1.0}));
  EXPECT_ERROR(tape.gradient(y, n), UnimplementedError, "polygamma", "order");
}

TEST(MathSpecialGradients, XlogyFamilyHasZeroGradientWhereXIsZero) {
  Tensor x = constant({0.0, 0.0, 2.0}), y = constant({0.0, -1.0, 4.0});
  for (auto op : {+[](const Tensor&a, const Tensor&b) { return xlogy(a, b); },
                  +[](const Tensor&a, const Tensor&b) { return xdivy(a, b); },
                  +[](const Tensor&a, const Tensor&b) { return xlog1py(a, b); }}) {
    GradientTape tape(true);
    tape.watch(x);
    tape.watch(y);
    Tensor z = op(x, y);
    std::vector<Tensor> g = tape.gradient(z, std::vector<Tensor>{x, y});
    std::vector<double> gx = g[0].to_vector<double>(), gy = g[1].to_vector<double>();
    EXPECT_EQ(gx[0], 0);
    EXPECT_EQ(gx[1], 0);
    EXPECT_EQ(gy[0], 0);
    EXPECT_EQ(gy[1], 0);
    EXPECT_NE(gy[2], 0);
  }
}

TEST(MathSpecialGradients, Conventions) {
  const double inf = std::numeric_limits<double>::infinity();
  {
    Tensor x = constant({std::nan(""), inf, -inf, 2.0});
    GradientTape tape;
    tape.watch(x);
    testing::expect_values(tape.gradient(nan_to_num(x), x), {0, 0, 0, 1});
  }
  {
    Tensor x = constant({0.0, -0.0});
    GradientTape tape;
    tape.watch(x);
    testing::expect_values(tape.gradient(bessel_i1e(x), x), {0.5, 0.5});
  }
}

}  // namespace
}  // namespace ef
