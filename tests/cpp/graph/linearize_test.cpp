// linearize: the value and the traced JVP agree with ForwardAccumulator's, for several
// tangents from one trace, and the errors.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using testing::rand64;

std::vector<Tensor> layer(const std::vector<Tensor>& a) {
  return {reduce_sum(tanh(matmul(a[0], a[1])), 1), sin(a[1])};
}

TEST(Linearize, MatchesTheAccumulatorForEveryTangent) {
  const std::vector<Tensor> primals{rand64({3, 4}, 1), rand64({4, 2}, 2)};
  Linearized l = linearize(layer, primals);
  expect_values(l.outputs[0], layer(primals)[0].to_vector<double>(), 1e-15);
  for (int64_t seed : {3, 5}) {
    const std::vector<Tensor> tangents{rand64({3, 4}, seed), rand64({4, 2}, seed + 1)};
    const std::vector<Tensor> want = jvp(layer, primals, tangents).second;
    const std::vector<Tensor> got = l.jvp(tangents);
    ASSERT_EQ(got.size(), 2u);
    expect_values(got[0], want[0].to_vector<double>(), 1e-12);
    expect_values(got[1], want[1].to_vector<double>(), 1e-12);
  }
}

TEST(Linearize, TheJvpStaysAtThePointLinearizeRanF) {
  // Note [linearize at one point]: the JVP graph read the variable at each call (12
  // became 60 after v = 10) and ran f's assignments again on every call.
  Variable v(constant(2.0), "v");
  Variable counter(constant(0.0), "counter", /*trainable=*/false);
  auto f = [&](const std::vector<Tensor>& a) {
    counter.assign_add(constant(1.0));
    return std::vector<Tensor>{a[0] * a[0] * v};
  };
  Linearized l = linearize(f, {constant(3.0)});
  v.assign(constant(10.0));
  EXPECT_EQ(l.jvp({constant(1.0)})[0].item<double>(), 12.0);
  EXPECT_EQ(l.jvp({constant(0.5)})[0].item<double>(), 6.0);
  EXPECT_EQ(counter.value().item<double>(), 1.0);

  // A random op would draw new numbers on each call: each would linearize another f.
  auto noisy = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0] * random::uniform({}, 0, 1, DType::Float64)};
  };
  EXPECT_ERROR(linearize(noisy, {constant(3.0)}), UnimplementedError, "linearize",
               "random op 'random_uniform'");
  // So would a read of a variable f assigns: it no longer holds what f read.
  auto moving = [&](const std::vector<Tensor>& a) {
    Tensor y = a[0] * v;
    v.assign_add(constant(1.0));
    return std::vector<Tensor>{y};
  };
  EXPECT_ERROR(linearize(moving, {constant(3.0)}), UnimplementedError, "linearize", "variable 'v'",
               "also assigns");
}

TEST(Linearize, Errors) {
  EXPECT_ERROR(linearize(layer, {testing::i64({1}), rand64({4, 2}, 2)}), InvalidArgumentError, "primal 0",
               "int64");
  auto to_index = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{argmax(a[0])}; };
  EXPECT_ERROR(linearize(to_index, {rand64({3}, 1)}), InvalidArgumentError, "output 0", "not a float");
  Linearized l = linearize(layer, {rand64({3, 4}, 1), rand64({4, 2}, 2)});
  EXPECT_ERROR(l.jvp({rand64({3, 4}, 1)}), InvalidArgumentError, "1 tangents for 2 primals");
}

}  // namespace
}  // namespace ef
