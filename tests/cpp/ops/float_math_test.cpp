// Accuracy of our float32 exp, tanh and sigmoid (backends/cpu/float_math.h), run through
// the ops, so through the vectorized kernels that ship: the error in ulp against the
// double-precision libm result over a dense sweep of float32 bit patterns, the edges
// of each function's ranges, and the special values.
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// |got - want| in units of the float32 spacing at want (2^-149 in the subnormal range).
// A want that rounds to +-inf or a NaN must be matched exactly.
double ulp_error(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : kInf;
  if (std::isinf(static_cast<float>(want))) return got == static_cast<float>(want) ? 0 : kInf;
  if (!std::isfinite(got)) return kInf;
  const double magnitude = std::fabs(want);
  const double ulp = magnitude < FLT_MIN ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::ilogb(magnitude) - 23);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

struct Worst {
  double ulp = 0;
  float at = 0;
};

// The largest ulp error of op over xs (in chunks, to keep the tensors small).
Worst max_ulp_error(const std::function<Tensor(const Tensor&)>& op, double (*reference)(double),
                    const std::vector<float>& xs) {
  Worst worst;
  constexpr size_t kChunk = size_t{1} << 22;
  for (size_t begin = 0; begin < xs.size(); begin += kChunk) {
    const size_t n = std::min(kChunk, xs.size() - begin);
    std::vector<float> chunk(xs.begin() + begin, xs.begin() + begin + n);
    const std::vector<float> got = op(constant(chunk, {static_cast<int64_t>(n)})).to_vector<float>();
    for (size_t i = 0; i < n; ++i) {
      const double e = ulp_error(got[i], reference(chunk[i]));
      if (e > worst.ulp) worst = {e, chunk[i]};
    }
  }
  return worst;
}

// Every 97th float32 bit pattern (both signs, all exponents), finite values only.
std::vector<float> sweep() {
  std::vector<float> xs;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 97) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isfinite(x)) xs.push_back(x);
  }
  return xs;
}

// The 2000 floats on each side of every center (and the centers).
std::vector<float> neighbourhoods(const std::vector<float>& centers) {
  std::vector<float> xs;
  for (float c : centers) {
    xs.push_back(c);
    float lo = c, hi = c;
    for (int k = 0; k < 2000; ++k) {
      lo = std::nextafter(lo, -kInf);
      hi = std::nextafter(hi, kInf);
      xs.push_back(lo);
      xs.push_back(hi);
    }
  }
  return xs;
}

// Where the reduction's n = round(x / ln 2) changes, for the n of interest.
std::vector<float> reduction_boundaries(int from, int to, float scale) {
  std::vector<float> xs;
  for (int n = from; n <= to; ++n) xs.push_back(static_cast<float>((n + 0.5) * std::log(2.0) / scale));
  return xs;
}

double exp_ref(double x) { return std::exp(x); }
double tanh_ref(double x) { return std::tanh(x); }
double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }

Tensor exp_op(const Tensor& x) { return exp(x); }
Tensor tanh_op(const Tensor& x) { return tanh(x); }
Tensor sigmoid_op(const Tensor& x) { return sigmoid(x); }

void report(const char* what, const Worst& w) {
  std::printf("[ max error ] %s: %.3f ulp at x = %.9g\n", what, w.ulp, static_cast<double>(w.at));
}

TEST(FloatMath, ExpWithinTwoUlpEverywhere) {
  const Worst dense = max_ulp_error(exp_op, exp_ref, sweep());
  report("exp, every 97th float", dense);
  EXPECT_LE(dense.ulp, 2.0) << "at x = " << dense.at;
  // 0 and the tiniest inputs, the last finite result (88.72), the last normal result
  // (-87.34), the last nonzero result (-103.97), the clamps at +-104, and where n changes
  // sign or the scaling splits 2^n differently.
  std::vector<float> centers = {0.0f, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN, -FLT_MIN, 1e-7f, -1e-7f,
                                88.7228394f, -87.3365479f, -103.972076f, -103.278931f, 104.0f, -104.0f};
  for (float b : reduction_boundaries(-151, 151, 1.0f)) centers.push_back(b);
  const Worst edges = max_ulp_error(exp_op, exp_ref, neighbourhoods(centers));
  report("exp, edges", edges);
  EXPECT_LE(edges.ulp, 2.0) << "at x = " << edges.at;
}

TEST(FloatMath, TanhWithinTwoUlpEverywhere) {
  const Worst dense = max_ulp_error(tanh_op, tanh_ref, sweep());
  report("tanh, every 97th float", dense);
  EXPECT_LE(dense.ulp, 2.0) << "at x = " << dense.at;
  // 0 and tiny inputs (tanh x = x), the clamp of 2|x| at 40, where s - 1 stops being
  // exact (2|x| = 24.5 ln 2), where tanh rounds to 1 (~9.01), and where n changes.
  std::vector<float> centers = {0.0f,  -0.0f,  FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN, -FLT_MIN, 1e-4f, -1e-4f,
                                20.0f, -20.0f, 8.49098f,     -8.49098f,     9.01f,   -9.01f};
  for (float b : reduction_boundaries(-60, 60, 2.0f)) centers.push_back(b);
  const Worst edges = max_ulp_error(tanh_op, tanh_ref, neighbourhoods(centers));
  report("tanh, edges", edges);
  EXPECT_LE(edges.ulp, 2.0) << "at x = " << edges.at;
}

// sigmoid = 1 / (1 + e) or e / (1 + e) with e = exp(-|x|) (ops/nn/activations.cpp): the
// division and 1 + e add their roundings to exp's, hence the looser bound.
TEST(FloatMath, SigmoidWithinThreeUlpEverywhere) {
  const Worst dense = max_ulp_error(sigmoid_op, sigmoid_ref, sweep());
  report("sigmoid, every 97th float", dense);
  EXPECT_LE(dense.ulp, 3.0) << "at x = " << dense.at;
  const Worst edges = max_ulp_error(
      sigmoid_op, sigmoid_ref, neighbourhoods({0.0f, -0.0f, 1e-7f, -1e-7f, -87.3365479f, -103.972076f, 16.6355f}));
  report("sigmoid, edges", edges);
  EXPECT_LE(edges.ulp, 3.0) << "at x = " << edges.at;
}

// Exact results, bit for bit (the sign of zero included).
void expect_bits(const Tensor& got, const std::vector<float>& want) {
  const std::vector<float> g = got.to_vector<float>();
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(g[i])) << "element " << i << ": " << g[i];
    else EXPECT_EQ(std::bit_cast<uint32_t>(g[i]), std::bit_cast<uint32_t>(want[i])) << "element " << i << ": " << g[i] << ", want " << want[i];
  }
}

TEST(FloatMath, SpecialValues) {
  // 13 elements: a full vector of 8, and the rest through the loop's remainder.
  const std::vector<float> x = {kNaN,     -kNaN,   kInf,     -kInf, 0.0f,    -0.0f, 89.0f,
                                1e30f,    -104.0f, -1e30f,   FLT_MAX, -FLT_MAX, kNaN};
  const Tensor t = constant(x, {static_cast<int64_t>(x.size())});
  expect_bits(exp(t), {kNaN, kNaN, kInf, 0.0f, 1.0f, 1.0f, kInf, kInf, 0.0f, 0.0f, kInf, 0.0f, kNaN});
  expect_bits(tanh(t), {kNaN, kNaN, 1.0f, -1.0f, 0.0f, -0.0f, 1.0f, 1.0f, -1.0f, -1.0f, 1.0f, -1.0f, kNaN});
  expect_bits(sigmoid(t), {kNaN, kNaN, 1.0f, 0.0f, 0.5f, 0.5f, 1.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, kNaN});
  // Subnormal results: exp rounds like the exact result there (within an ulp of 2^-149),
  // and sigmoid(-100) = e^-100 / (1 + e^-100) keeps its tiny value instead of 0.
  const std::vector<double> tiny = {-88.0, -100.0, -103.0, -103.9};
  const Tensor t_tiny = constant(std::vector<float>(tiny.begin(), tiny.end()), {4});
  const std::vector<float> e = exp(t_tiny).to_vector<float>(), s = sigmoid(t_tiny).to_vector<float>();
  for (size_t i = 0; i < tiny.size(); ++i) {
    EXPECT_GT(e[i], 0.0f) << tiny[i];
    EXPECT_LE(ulp_error(e[i], std::exp(tiny[i])), 1.0) << tiny[i];
    EXPECT_LE(ulp_error(s[i], sigmoid_ref(tiny[i])), 1.0) << tiny[i];
  }
}

// The functions are inline straight-line code, so an element gets the same bits
// whether it lands in a vector lane or in the loop's scalar remainder: computed on a
// slice starting 1 to 8 elements later, every element keeps its value.
TEST(FloatMath, SameBitsInEveryLoopPosition) {
  const Tensor x = random::uniform({1003}, -30, 30, DType::Float32, 7);
  for (const auto& op : {exp_op, tanh_op, sigmoid_op}) {
    const std::vector<float> full = op(x).to_vector<float>();
    for (int64_t offset = 1; offset <= 8; ++offset) {
      const std::vector<float> part = op(slice(x, {offset}, {1003 - offset})).to_vector<float>();
      for (size_t i = 0; i < part.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(part[i]), std::bit_cast<uint32_t>(full[i + offset]))
            << "element " << i + offset << " at offset " << offset;
    }
  }
}

// Float64 keeps libm: double-precision results (within libmvec's 4 ulp), not float ones.
TEST(FloatMath, Float64StaysDoublePrecision) {
  const std::vector<double> x = {-700.0, -3.5, -0.25, 0.0, 1e-300, 0.5, 2.0, 20.0, 700.0};
  const std::vector<double> e = exp(constant(x, {9})).to_vector<double>();
  const std::vector<double> th = tanh(constant(x, {9})).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(e[i], std::exp(x[i]), 4 * DBL_EPSILON * std::exp(x[i])) << x[i];
    EXPECT_NEAR(th[i], std::tanh(x[i]), 4 * DBL_EPSILON * std::fabs(std::tanh(x[i])) + 1e-320) << x[i];
  }
}

}  // namespace
}  // namespace ef
