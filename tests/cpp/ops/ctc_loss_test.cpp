// ctc_loss: hand-counted alignments, lengths, blanks, the first-order gradient against
// float64 finite differences (forward mode too), the refused second derivative, and bad
// input. Parity with PyTorch's ctc_loss: tests/python/test_ctc_loss.py.
#include <cmath>

#include <eagerflow/ops/nn.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::expect_meta;
using testing::rand64;

TEST(CtcLoss, CountsEveryAlignment) {
  // Uniform logits over 3 classes give every path of T frames probability 3^-T.
  // Label "1" over 2 frames: "1 1", "1 _", "_ 1". Label "1 1" over 3 frames needs a blank
  // between: only "1 _ 1". Label "1 2" over 3 frames: "1 1 2", "1 2 2", "1 _ 2", "_ 1 2",
  // "1 2 _". No label over 2 frames: "_ _".
  Tensor two = zeros({2, 1, 3}, DType::Float64), three = zeros({3, 1, 3}, DType::Float64);
  EXPECT_NEAR(ctc_loss(constant({{1}}), two, constant({1}), constant({2})).item<double>(), std::log(3.0),
              1e-14);
  EXPECT_NEAR(ctc_loss(constant({{1, 1}}), three, constant({2}), constant({3})).item<double>(),
              std::log(27.0), 1e-14);
  EXPECT_NEAR(ctc_loss(constant({{1, 2}}), three, constant({2}), constant({3})).item<double>(),
              std::log(27.0 / 5.0), 1e-14);
  EXPECT_NEAR(ctc_loss(constant({{1, 2}}), two, constant({0}), constant({2})).item<double>(), std::log(9.0),
              1e-14);
  // Lengths cut the batch entries: frames and labels past them do not count.
  Tensor batch = concat({zeros({3, 1, 3}, DType::Float64), zeros({3, 1, 3}, DType::Float64)}, 1);
  Tensor losses = ctc_loss(constant({{1, 2}, {1, 1}}), batch, constant({1, 2}), constant({2, 3}));
  expect_meta(losses, {2}, DType::Float64);
  EXPECT_NEAR(losses.to_vector<double>()[0], std::log(3.0), 1e-14);
  EXPECT_NEAR(losses.to_vector<double>()[1], std::log(27.0), 1e-14);
  // The blank may be any class; negative counts from the end. Batch-major logits.
  EXPECT_NEAR(ctc_loss(constant({{0}}), two, constant({1}), constant({2}), true, 2).item<double>(),
              std::log(3.0), 1e-14);
  EXPECT_NEAR(ctc_loss(constant({{0}}), transpose(two, {1, 0, 2}), constant({1}), constant({2}), false, -1)
                  .item<double>(),
              std::log(3.0), 1e-14);
}

TEST(CtcLoss, ASequenceNoAlignmentFitsIsInfinite) {
  // "1 1" needs three frames.
  Tensor logits = rand64({2, 1, 4}, 1);
  GradientTape tape;
  tape.watch(logits);
  Tensor loss = ctc_loss(constant({{1, 1}}), logits, constant({2}), constant({2}));
  EXPECT_TRUE(std::isinf(loss.item<double>()));
  for (double g : tape.gradient(loss, logits).to_vector<double>()) EXPECT_TRUE(std::isnan(g));
}

TEST(CtcLoss, GradientMatchesFiniteDifferences) {
  Tensor logits = rand64({6, 3, 5}, 2, -2, 2);
  Tensor labels = constant({{1, 3, 3}, {2, 4, 0}, {4, 0, 0}});
  Tensor label_length = constant({3, 2, 1}), logit_length = constant({6, 5, 3});
  expect_gradients(
      [&](const std::vector<Tensor>& a) {
        return ctc_loss(labels, a[0], label_length, logit_length) * constant({1.0, -0.5, 2.0});
      },
      {logits}, 1);
  // Frames past a sequence's length get no gradient.
  GradientTape tape;
  tape.watch(logits);
  Tensor g = tape.gradient(reduce_sum(ctc_loss(labels, logits, label_length, logit_length)), logits);
  for (double v : slice(g, {3, 2, 0}, {-1, 1, -1}).to_vector<double>()) EXPECT_EQ(v, 0.0);
}

TEST(CtcLoss, TheSecondDerivativeIsRefused) {
  Tensor logits = rand64({3, 1, 3}, 3);
  GradientTape outer;
  outer.watch(logits);
  Tensor g;
  {
    GradientTape inner;
    inner.watch(logits);
    g = inner.gradient(ctc_loss(constant({{1}}), logits, constant({1}), constant({3})), logits);
  }
  EXPECT_ERROR(outer.gradient(reduce_sum(g * g), logits), UnimplementedError, "ctc_loss",
               "second derivative");
}

TEST(CtcLoss, BadArgumentsNameTheArgument) {
  Tensor logits = zeros({4, 2, 3});
  Tensor labels = constant({{1, 2}, {2, 1}});
  Tensor two = constant({2, 2});
  EXPECT_ERROR(ctc_loss(labels, zeros({4, 3}), two, two), InvalidArgumentError, "ctc_loss", "'logits'",
               "rank 3");
  EXPECT_ERROR(ctc_loss(constant({1, 2}), logits, two, two), InvalidArgumentError, "ctc_loss", "'labels'");
  EXPECT_ERROR(ctc_loss(constant({{1, 2}}), logits, two, two), InvalidArgumentError, "ctc_loss",
               "batch sizes");
  EXPECT_ERROR(ctc_loss(labels, logits, constant({2}), two), InvalidArgumentError, "ctc_loss",
               "'label_length'");
  EXPECT_ERROR(ctc_loss(labels, logits, two, constant({2.0f, 2.0f})), InvalidArgumentError, "ctc_loss",
               "'logit_length'");
  EXPECT_ERROR(ctc_loss(labels, logits, two, two, true, 3), InvalidArgumentError, "ctc_loss",
               "'blank_index'");
  EXPECT_ERROR(ctc_loss(labels, logits, constant({3, 2}), two), InvalidArgumentError, "ctc_loss",
               "'label_length'", "3");
  EXPECT_ERROR(ctc_loss(labels, logits, two, constant({2, 5})), InvalidArgumentError, "ctc_loss",
               "'logit_length'", "5");
  EXPECT_ERROR(ctc_loss(constant({{1, 0}, {2, 1}}), logits, two, two), InvalidArgumentError, "ctc_loss",
               "'labels'", "blank");
  EXPECT_ERROR(ctc_loss(constant({{1, 3}, {2, 1}}), logits, two, two), InvalidArgumentError, "ctc_loss",
               "'labels'", "3");
}

}  // namespace
}  // namespace ef
