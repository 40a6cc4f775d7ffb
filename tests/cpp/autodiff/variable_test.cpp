// Variables: state, assignment errors, and how tapes see their reads.
#include <cmath>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

TEST(Variable, HoldsAndAssignsState) {
  Variable w(ones({2, 2}), "w");
  EXPECT_EQ(w.name(), "w");
  EXPECT_TRUE(w.trainable());
  w.assign_add(ones({2, 2}));
  expect_values(w.value(), {2, 2, 2, 2});
  w.assign_sub(fill({2, 2}, 0.5f));
  expect_values(w, {1.5, 1.5, 1.5, 1.5});
  Variable alias = w;  // a handle to the same state
  alias.assign(zeros({2, 2}));
  expect_values(w.value(), {0, 0, 0, 0});
  EXPECT_TRUE(alias.same_as(w));
}

TEST(Variable, ShapeAndDtypeChangesAreErrors) {
  Variable w(ones({2, 2}), "w");
  EXPECT_ERROR(w.assign(ones({3})), InvalidArgumentError, "assign", "'w'", "[2, 2]", "[3]");
  EXPECT_ERROR(w.assign(ones({2, 2}, DType::Float64)), InvalidArgumentError, "float32", "float64");
  EXPECT_ERROR(Variable(Tensor(), "v"), InvalidArgumentError, "undefined");
}

TEST(Variable, UsableWhereATensorIs) {
  Variable w(constant({1.f, 2.f}), "w");
  expect_values(w * w, {1, 4});
  expect_values(w + 1, {2, 3});
  expect_values(add(w, w), {2, 4});
  expect_values(reduce_sum(w), {3});
}

TEST(Variable, TapesWatchTrainableVariablesTheySeeRead) {
  // The recitation's first GradientTape program.
  Variable w(constant({{1.f}}), "w");
  GradientTape tape;
  Tensor loss = w * w;
  Tensor grad = tape.gradient(loss, w);
  EXPECT_EQ(grad.to_string(), "Tensor([[2.]], shape=(1, 1), dtype=float32)");
}

TEST(Variable, WatchAccessedVariablesCanBeTurnedOff) {
  Variable w(constant(3.0), "w"), v(constant(2.0), "v"), frozen(constant(5.0), "frozen", /*trainable=*/false);
  {
    GradientTape tape(/*persistent=*/true, /*watch_accessed_variables=*/false);
    tape.watch(v);
    Tensor y = w * v * frozen;
    EXPECT_FALSE(tape.gradient(y, w).defined());
    EXPECT_DOUBLE_EQ(tape.gradient(y, v).item<double>(), 15);
    ASSERT_EQ(tape.watched_variables().size(), 1u);
    EXPECT_TRUE(tape.watched_variables()[0].same_as(v));
  }
  {
    GradientTape tape(true);
    Tensor y = w * v * frozen;
    EXPECT_FALSE(tape.gradient(y, frozen).defined());  // not trainable: not watched
    std::vector<Tensor> g = tape.gradient(y, std::vector<Variable>{w, v});
    EXPECT_DOUBLE_EQ(g[0].item<double>(), 10);
    EXPECT_DOUBLE_EQ(g[1].item<double>(), 15);
    EXPECT_EQ(tape.watched_variables().size(), 2u);
  }
}

TEST(Variable, GradientSumsOverReadsAcrossAssignments) {
  Variable w(constant(2.0), "w");
  GradientTape tape;
  Tensor first = w * 3;   // reads 2.0
  w.assign(constant(5.0));
  Tensor second = w * w;  // reads 5.0
  // d/dw of 3w + w^2, each read at its own value: 3 + 2 * 5.
  EXPECT_DOUBLE_EQ(tape.gradient(first + second, w).item<double>(), 13);
}

TEST(Variable, NoisySquareTrainsTowardZero) {
  // The seed's training loop on x^2 (without the noise): x -= 0.9 * grad.
  Variable x(constant(2.0), "x");
  for (int i = 0; i < 20; ++i) {
    GradientTape tape;
    Tensor loss = x * x;
    x.assign_sub(0.9 * tape.gradient(loss, x));
  }
  // Each step multiplies x by 1 - 0.9 * 2 = -0.8.
  EXPECT_NEAR(x.value().item<double>(), 2 * std::pow(-0.8, 20), 1e-12);
}

}  // namespace
}  // namespace ef
