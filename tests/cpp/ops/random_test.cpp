// Tests of the Philox generator, seed semantics, random distributions and dropout.
#include <cmath>
#include <numeric>

#include "core/philox.h"
#include "ops/random/philox_fill.h"
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;

// Known-answer vectors of Philox4x32-10 from the Random123 distribution
// (kat_vectors): counter, key → output.
TEST(RandomPhilox, KnownAnswerVectors) {
  EXPECT_EQ(philox::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (philox::Counter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox::philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (philox::Counter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (philox::Counter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  // block() lays out index and stream as the counter's low and high words.
  EXPECT_EQ(philox::block(0xffffffffffffffffull, 0xffffffffffffffffull, 0xffffffffffffffffull),
            (philox::Counter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

// The vectorized batch generator agrees with the scalar one, also across the 2^32
// boundary of the low counter word.
TEST(RandomPhilox, BatchMatchesScalar) {
  detail::PhiloxWords w;
  const uint64_t key = 0x0123456789abcdefull, stream = 0xfedcba9876543210ull, first = 0xffffffe0ull;
  detail::philox_batch(key, first, stream, w);
  for (int b = 0; b < detail::kPhiloxBatch; ++b) {
    philox::Counter c = philox::block(key, first + static_cast<uint64_t>(b), stream);
    for (int l = 0; l < 4; ++l) ASSERT_EQ(w.word[l][b], c[l]) << "block " << b << " word " << l;
  }
}

TEST(RandomPhilox, UniformConversions) {
  EXPECT_EQ(philox::uint32_to_float(0), 0.f);
  EXPECT_LT(philox::uint32_to_float(0xffffffffu), 1.f);
  EXPECT_EQ(philox::uint64_to_double(0, 0), 0.0);
  EXPECT_EQ(philox::uint64_to_double(0xffffffffu, 0xffffffffu), 1.0 - 0x1p-52);
  EXPECT_EQ(philox::uint64_to_double(1, 0), 0x1p-52);
  EXPECT_EQ(philox::uint32_to_float(0x7fffff), 1.f - 0x1p-23f);
}

bool same(const Tensor& a, const Tensor& b) { return a.to_vector<double>() == b.to_vector<double>(); }

TEST(RandomSeeds, GlobalSeedMakesProgramsRepeat) {
  auto program = [] {
    return std::vector<Tensor>{random::uniform({5}), random::normal({5}), random::uniform({5}, 0, 10, DType::Int32),
                               random::uniform({5}, 0, 1.0, DType::Float32, /*seed=*/3),
                               random::uniform({5}, 0, 1.0, DType::Float32, /*seed=*/3)};
  };
  random::set_seed(1234);
  std::vector<Tensor> first = program();
  random::set_seed(1234);
  std::vector<Tensor> second = program();
  for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(same(first[i], second[i])) << i;
  // Consecutive calls differ, including two calls with the same op seed (the pair's
  // stream continues).
  EXPECT_FALSE(same(first[0], random::uniform({5})));
  EXPECT_FALSE(same(first[3], first[4]));
  // Another global seed gives other numbers.
  random::set_seed(99);
  EXPECT_FALSE(same(first[0], random::uniform({5})));
}

TEST(RandomSeeds, WithoutSeedsValuesDiffer) {
  random::set_seed(std::nullopt);
  EXPECT_FALSE(same(random::uniform({8}), random::uniform({8})));
  // An op seed alone uses TensorFlow's default global seed: reproducible across runs,
  // and the same as after clearing the global seed again.
  Tensor a = random::uniform({8}, 0, 1.0, DType::Float32, 5);
  random::set_seed(std::nullopt);
  EXPECT_TRUE(same(a, random::uniform({8}, 0, 1.0, DType::Float32, 5)));
}

TEST(RandomSeeds, OpSeedAloneIsReproducibleAfterSetSeed) {
  random::set_seed(7);
  Tensor a = random::uniform({4}, 0, 1.0, DType::Float64, 11);
  Tensor b = random::uniform({4}, 0, 1.0, DType::Float64, 11);
  random::set_seed(7);
  EXPECT_TRUE(same(a, random::uniform({4}, 0, 1.0, DType::Float64, 11)));
  EXPECT_TRUE(same(b, random::uniform({4}, 0, 1.0, DType::Float64, 11)));
  // An explicit op seed never collides with a counter-assigned one of the same value.
  random::set_seed(7);
  Tensor implicit0 = random::uniform({4});
  random::set_seed(7);
  EXPECT_FALSE(same(implicit0, random::uniform({4}, 0, 1.0, DType::Float32, 0)));
}

TEST(RandomSeeds, SameAcrossThreadCounts) {
  const int saved = num_threads();
  auto draw = [] {
    random::set_seed(5);
    return std::vector<Tensor>{random::uniform({100003}), random::normal({100003}, 0, 1, DType::Float64),
                               random::truncated_normal({100003}),
                               random::uniform({100003}, -5, 5, DType::Int64)};
  };
  set_num_threads(1);
  std::vector<Tensor> one = draw();
  set_num_threads(2);
  std::vector<Tensor> two = draw();
  set_num_threads(4);
  std::vector<Tensor> four = draw();
  set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_TRUE(same(one[i], two[i])) << i;
    EXPECT_TRUE(same(one[i], four[i])) << i;
  }
  // Element i does not depend on the output's size: a prefix of a larger draw.
  random::set_seed(5);
  std::vector<double> small = random::uniform({10}).to_vector<double>();
  std::vector<double> big = one[0].to_vector<double>();
  EXPECT_TRUE(std::equal(small.begin(), small.end(), big.begin()));
}

struct Moments {
  double mean = 0, stddev = 0, min = INFINITY, max = -INFINITY;
};
Moments moments(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  Moments m;
  for (double x : v) m.mean += x, m.min = std::min(m.min, x), m.max = std::max(m.max, x);
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.stddev += (x - m.mean) * (x - m.mean);
  m.stddev = std::sqrt(m.stddev / static_cast<double>(v.size()));
  return m;
}

TEST(RandomDistributions, Uniform) {
  random::set_seed(42);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor u = random::uniform({100000}, -2, 4.0, dtype);
    expect_meta(u, {100000}, dtype);
    Moments m = moments(u);
    EXPECT_NEAR(m.mean, 1.0, 0.03);
    EXPECT_NEAR(m.stddev, 6 / std::sqrt(12.0), 0.02);
    EXPECT_GE(m.min, -2.0);
    EXPECT_LT(m.max, 4.0);
  }
  Tensor d = random::uniform({2, 3});  // default [0, 1) float32
  expect_meta(d, {2, 3}, DType::Float32);
  expect_meta(random::uniform({}), {}, DType::Float32);
  expect_meta(random::uniform({0, 5}), {0, 5}, DType::Float32);
}

TEST(RandomDistributions, UniformIntegers) {
  random::set_seed(42);
  Tensor u = random::uniform({100000}, 3, 10, DType::Int32);
  expect_meta(u, {100000}, DType::Int32);
  std::vector<int> counts(10, 0);
  for (int v : u.to_vector<int>()) {
    ASSERT_GE(v, 3);
    ASSERT_LT(v, 10);
    ++counts[v];
  }
  for (int v = 3; v < 10; ++v) EXPECT_NEAR(counts[v], 100000 / 7.0, 600) << v;
  // The full int64 range works without overflow.
  Tensor wide = random::uniform({1000}, INT64_MIN, INT64_MAX, DType::Int64);
  Moments m = moments(wide);
  EXPECT_LT(m.min, -1e18);
  EXPECT_GT(m.max, 1e18);
  Tensor neg = random::uniform({1000}, int64_t{-5}, int64_t{-3}, DType::Int64);
  for (int64_t v : neg.to_vector<int64_t>()) ASSERT_TRUE(v == -5 || v == -4);
}

TEST(RandomDistributions, NormalAndTruncated) {
  random::set_seed(3);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Moments n = moments(random::normal({100000}, 2.0, 3.0, dtype));
    EXPECT_NEAR(n.mean, 2.0, 0.05);
    EXPECT_NEAR(n.stddev, 3.0, 0.05);
    EXPECT_LT(n.min, 2.0 - 3 * 3.0);  // tails exist
    Tensor t = random::truncated_normal({100000}, 1.0, 0.5, dtype);
    expect_meta(t, {100000}, dtype);
    Moments tm = moments(t);
    EXPECT_GE(tm.min, 1.0 - 2 * 0.5);
    EXPECT_LE(tm.max, 1.0 + 2 * 0.5);
    EXPECT_NEAR(tm.mean, 1.0, 0.01);
    // The standard deviation of a normal truncated at 2 sigma is 0.8796 sigma.
    EXPECT_NEAR(tm.stddev, 0.8796 * 0.5, 0.01);
  }
  expect_values(random::normal({3}, 5.0, 0.0), {5, 5, 5});
}

TEST(RandomDistributions, Errors) {
  EXPECT_ERROR(random::uniform({2}, 0, std::nullopt, DType::Int32), InvalidArgumentError, "maxval", "int32");
  EXPECT_ERROR(random::uniform({2}, 5, 5, DType::Int32), InvalidArgumentError, "random_uniform_int",
               "minval < maxval");
  EXPECT_ERROR(random::uniform({2}, 0, 2.5, DType::Int32), InvalidArgumentError, "2.5");
  EXPECT_ERROR(random::uniform({2}, 2.0, 1.0), InvalidArgumentError, "random_uniform", "maxval");
  EXPECT_ERROR(random::uniform({2}, 0, INFINITY), InvalidArgumentError, "finite");
  EXPECT_ERROR(random::uniform({2}, 0, 1e300), InvalidArgumentError, "random_uniform", "float32");
  EXPECT_ERROR(random::normal({2}, 0.0, 1e300), InvalidArgumentError, "random_normal", "float32");
  // Bounds at the dtype's limits do not overflow.
  std::vector<double> wide = random::uniform({1000}, -1e308, 1e308, DType::Float64).to_vector<double>();
  for (double v : wide) ASSERT_TRUE(std::isfinite(v) && v >= -1e308 && v < 1e308) << v;
  EXPECT_ERROR(random::uniform({2}, 0, 1, DType::Bool), InvalidArgumentError, "random_uniform", "bool");
  EXPECT_ERROR(random::uniform({-1, 2}), InvalidArgumentError, "random_uniform", "shape");
  EXPECT_ERROR(random::uniform({2}, zeros({}), 1.0), InvalidArgumentError, "numbers");
  EXPECT_ERROR(random::normal({2}, 0.0, -1.0), InvalidArgumentError, "random_normal", "stddev");
  EXPECT_ERROR(random::truncated_normal({2}, NAN), InvalidArgumentError, "truncated_normal", "mean");
  EXPECT_ERROR(random::normal({2}, 0.0, 1.0, DType::Int32), InvalidArgumentError, "random_normal", "int32");
  EXPECT_ERROR(random::normal({1 << 30, 1 << 30, 1 << 30}), ResourceExhaustedError, "random_normal");
}

TEST(RandomOps, AreRandomAndNotDifferentiable) {
  for (const char* name : {"random_uniform", "random_uniform_int", "random_normal", "truncated_normal"}) {
    const OpDef& op = find_op(name);
    EXPECT_TRUE(op.traits.random) << name;
    EXPECT_FALSE(op.not_differentiable.empty()) << name;
  }
}

TEST(NnDropout, ScalesKeptValuesAndDropsAboutRate) {
  random::set_seed(8);
  Tensor x = ones({100000}, DType::Float64);
  std::vector<double> y = dropout(x, 0.3).to_vector<double>();
  int kept = 0;
  for (double v : y) {
    ASSERT_TRUE(v == 0 || std::fabs(v - 1 / 0.7) < 1e-12) << v;
    kept += v != 0;
  }
  EXPECT_NEAR(kept / 1e5, 0.7, 0.01);
  // rate 0 keeps everything unchanged.
  Tensor x32 = constant({1.f, 2.f});
  EXPECT_TRUE(same(dropout(x32, 0.0), x32));
  // Seeded dropout repeats after set_seed.
  random::set_seed(8);
  EXPECT_TRUE(same(dropout(x, 0.3), constant(y, {100000})));
}

TEST(NnDropout, NoiseShapeSharesDecisions) {
  random::set_seed(9);
  Tensor x = ones({50, 4});
  std::vector<float> y = dropout(x, 0.5, std::nullopt, Shape{50, 1}).to_vector<float>();
  for (int r = 0; r < 50; ++r)
    for (int c = 1; c < 4; ++c) ASSERT_EQ(y[r * 4 + c], y[r * 4]);
  EXPECT_ERROR(dropout(x, 0.5, std::nullopt, Shape{3, 1}), InvalidArgumentError, "dropout", "noise_shape", "[50, 4]");
}

TEST(NnDropout, Errors) {
  EXPECT_ERROR(dropout(ones({2}), 1.0), InvalidArgumentError, "dropout", "rate", "[0, 1)");
  EXPECT_ERROR(dropout(ones({2}), -0.1), InvalidArgumentError, "rate");
  EXPECT_ERROR(dropout(ones({2}), NAN), InvalidArgumentError, "rate");
  EXPECT_ERROR(dropout(constant({1, 2}), 0.5), InvalidArgumentError, "dropout", "int32");
  expect_meta(dropout(zeros({0, 3}), 0.5), {0, 3}, DType::Float32);
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

TEST(StatelessRandom, RepeatsForASeedAndIgnoresTheGlobalSeed) {
  random::set_seed(1);
  Tensor a = random::stateless_uniform({100}, {3, 4}, -1, 1, DType::Float64);
  random::set_seed(2);
  Tensor b = random::stateless_uniform({100}, {3, 4}, -1, 1, DType::Float64);
  random::set_seed(std::nullopt);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
  EXPECT_NE(a.to_vector<double>(), random::stateless_uniform({100}, {3, 5}, -1, 1, DType::Float64).to_vector<double>());
  // Not the stream of the stateful op with a matching op seed.
  EXPECT_NE(a.to_vector<double>(), random::uniform({100}, -1, 1, DType::Float64, 3).to_vector<double>());
  Tensor n = random::stateless_normal({1000}, {7, 0}, 0, 1, DType::Float64);
  EXPECT_EQ(n.to_vector<double>(), random::stateless_normal({1000}, {7, 0}, 0, 1, DType::Float64).to_vector<double>());
  EXPECT_NEAR(reduce_mean(n).item<double>(), 0.0, 0.1);
  Tensor t = random::stateless_truncated_normal({1000}, {7, 0}, 0, 1, DType::Float64);
  EXPECT_LE(reduce_max(abs(t)).item<double>(), 2.0);
  EXPECT_ERROR(random::stateless_uniform({2}, {1, 1}, 2, 1, DType::Int32), InvalidArgumentError, "minval");
}

}  // namespace
}  // namespace ef
