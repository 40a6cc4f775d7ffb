// Losses and metrics on hand-computed values; reductions, weights and errors. (Values
// against PyTorch's losses are in tests/python/test_nn.py.)
#include <functional>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
namespace losses = nn::losses;
namespace metrics = nn::metrics;

TEST(Losses, PerExampleFunctions) {
  Tensor t = constant({{0.0, 1.0}, {1.0, 1.0}});
  Tensor p = constant({{0.5, 0.5}, {1.0, 3.0}});
  expect_values(losses::mean_squared_error(t, p), {0.25, 2.0});
  expect_values(losses::mean_absolute_error(t, p), {0.5, 1.0});
  // Keras adds its epsilon inside the logs: -log(0.5 + 1e-7) and -log(0.9 + 1e-7).
  expect_values(losses::binary_crossentropy(t, constant({{0.5, 0.5}, {0.9, 0.9}})),
                {-std::log(0.5 + 1e-7), -std::log(0.9 + 1e-7)}, 1e-12);
  // Probabilities are normalized: [1, 3] -> [.25, .75].
  expect_values(losses::categorical_crossentropy(constant({{0.0, 1.0}}), constant({{1.0, 3.0}})),
                {-std::log(0.75)}, 1e-12);
  expect_values(losses::categorical_crossentropy(constant({{0.0, 1.0}}), constant({{0.0, 0.0}}), true),
                {std::log(2.0)}, 1e-12);
  Tensor logits = constant({{1.0, 2.0, 3.0}, {0.0, 0.0, 0.0}});
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  expect_values(losses::sparse_categorical_crossentropy(testing::i64({2, 0}), logits, true),
                {lse - 3, std::log(3.0)}, 1e-12);
  // [batch, 1] labels and float labels are accepted, as in Keras.
  expect_values(losses::sparse_categorical_crossentropy(constant({{2.0}, {0.0}}), logits, true),
                {lse - 3, std::log(3.0)}, 1e-12);
  expect_values(losses::sparse_categorical_crossentropy(testing::i64({1}), constant({{0.2, 0.8}})),
                {-std::log(0.8)}, 1e-9);
}

TEST(Losses, ClassesWeightAndReduce) {
  Tensor t = constant({{0.0}, {2.0}, {4.0}});
  Tensor p = constant({{1.0}, {1.0}, {1.0}});  // squared errors 1, 1, 9
  expect_values(losses::MeanSquaredError()(t, p), {11.0 / 3});
  expect_values(losses::MeanSquaredError({.reduction = losses::Reduction::kSum})(t, p), {11.0});
  expect_values(losses::MeanSquaredError({.reduction = losses::Reduction::kNone})(t, p), {1, 1, 9});
  expect_values(losses::MeanSquaredError()(t, p, constant({1.0, 0.0, 2.0})), {19.0 / 3});
  losses::SparseCategoricalCrossentropy from_logits({.from_logits = true});
  expect_values(from_logits(testing::i64({0, 1}), constant({{0.0, 0.0}, {0.0, 0.0}})), {std::log(2.0)}, 1e-12);
  // An empty batch gives 0, not NaN.
  expect_values(losses::MeanSquaredError()(zeros({0, 1}), zeros({0, 1})), {0.0});
}

TEST(Losses, SampleWeightsWeighExamplesOfSequenceOutputs) {
  // Losses [2 examples, 2 steps] (the last axis of [2, 2, 1] reduced): a weight per
  // example scales that example's steps, as Keras'; broadcasting [2] against [2, 2]
  // alone would have weighted the steps instead.
  Tensor t = zeros({2, 2, 1});
  Tensor p = constant({{{1.0}, {2.0}}, {{3.0}, {4.0}}});  // losses [[1, 4], [9, 16]]
  expect_values(losses::MeanSquaredError()(t, p, constant({1.0, 0.0})), {(1 + 4) / 4.0});
  expect_values(losses::MeanSquaredError({.reduction = losses::Reduction::kNone})(t, p, constant({2.0, 1.0})),
                {2, 8, 9, 16});
  // Weights [batch, 1] for losses [batch] lose their last axis.
  Tensor t2 = constant({{0.0}, {2.0}, {4.0}}), p2 = constant({{1.0}, {1.0}, {1.0}});  // losses 1, 1, 9
  expect_values(losses::MeanSquaredError()(t2, p2, constant({{1.0}, {0.0}, {2.0}})), {19.0 / 3});
  // Running means weigh the same way.
  metrics::MeanSquaredError mse;
  mse.update_state(zeros({2, 2, 1}), p, constant({1.0, 0.0}));
  expect_values(mse.result(), {(1 + 4) / 2.0});
  metrics::Mean mean;
  mean.update_state(constant({{1.0, 4.0}, {9.0, 16.0}}), constant({3.0, 1.0}));
  expect_values(mean.result(), {(3 * (1 + 4) + 9 + 16) / 8.0});
}

TEST(Losses, GradientsMatchNumericDifferences) {
  Tensor labels = constant({{0.0, 1.0, 0.0}, {1.0, 0.0, 0.0}});
  testing::expect_gradients(
      [&](const std::vector<Tensor>& in) { return losses::CategoricalCrossentropy({.from_logits = true})(labels, in[0]); },
      {testing::rand64({2, 3}, 1)});
  testing::expect_gradients(
      [&](const std::vector<Tensor>& in) { return losses::BinaryCrossentropy()(labels, in[0]); },
      {testing::rand64({2, 3}, 2, 0.1, 0.9)});
  testing::expect_gradients(
      [&](const std::vector<Tensor>& in) { return losses::MeanSquaredError()(labels, in[0]); },
      {testing::rand64({2, 3}, 3)});
}

TEST(Losses, RejectMismatchedInputs) {
  EXPECT_ERROR(losses::mean_squared_error(ones({2, 3}), ones({2, 2})), InvalidArgumentError, "mean_squared_error",
               "[2, 3]", "[2, 2]");
  EXPECT_ERROR(losses::binary_crossentropy(ones({2}), ones({2}, DType::Int32)), InvalidArgumentError,
               "y_pred must be float32 or float64");
  EXPECT_ERROR(losses::sparse_categorical_crossentropy(testing::i64({0, 1, 2}), ones({2, 3})), InvalidArgumentError,
               "y_true of shape [3]", "[2, 3]");
  EXPECT_ERROR(losses::sparse_categorical_crossentropy(testing::i64({0, 3}), ones({2, 3})), InvalidArgumentError,
               "3");
  EXPECT_ERROR(losses::MeanSquaredError()(ones({2, 1}), ones({2, 1}), ones({3})), InvalidArgumentError,
               "mean_squared_error", "[3]");
}

// Note [runtime shape checks]: in a graph whose sizes are unknown while building, y_true
// [4, 1] and y_pred [1, 4] pass the static check; the losses once broadcast them to
// [4, 4] and returned a number. They fail when the graph runs, as eagerly.
TEST(Losses, CheckTheShapesAGraphRunsWith) {
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&, const Tensor&)>>> cases = {
      {"mean_squared_error", [](auto& t, auto& p) { return losses::MeanSquaredError()(t, p); }},
      {"mean_absolute_error", [](auto& t, auto& p) { return losses::MeanAbsoluteError()(t, p); }},
      {"binary_crossentropy", [](auto& t, auto& p) { return losses::BinaryCrossentropy()(t, p); }},
      {"categorical_crossentropy", [](auto& t, auto& p) { return losses::CategoricalCrossentropy()(t, p); }},
      {"huber", [](auto& t, auto& p) { return losses::Huber()(t, p); }},
      {"kl_divergence", [](auto& t, auto& p) { return losses::KLDivergence()(t, p); }},
      {"poisson", [](auto& t, auto& p) { return losses::Poisson()(t, p); }},
      {"log_cosh", [](auto& t, auto& p) { return losses::LogCosh()(t, p); }},
      {"cosine_similarity", [](auto& t, auto& p) { return losses::CosineSimilarity()(t, p); }},
  };
  for (const auto& [name, loss] : cases) {
    Graph g;
    Tensor y_true, y_pred, out;
    {
      Graph::Scope scope(g);
      y_true = placeholder(DType::Float32, {kUnknownDim, kUnknownDim}, "y_true");
      y_pred = placeholder(DType::Float32, {kUnknownDim, kUnknownDim}, "y_pred");
      out = loss(y_true, y_pred);
    }
    Session sess(g);
    Tensor t = constant({{1.f}, {0.f}, {1.f}, {0.f}}), p = constant({{0.5f, 0.5f, 0.5f, 0.5f}});
    EXPECT_ERROR(sess.run(out, {{y_true, t}, {y_pred, p}}), InvalidArgumentError,
                 name + ": y_true and y_pred must have the same shape, got [4, 1] and [1, 4]");
    Tensor eager = loss(t, reshape(p, {4, 1}));
    expect_values(sess.run(out, {{y_true, t}, {y_pred, reshape(p, {4, 1})}}), {eager.item<double>()}, 1e-6);
  }
}

TEST(Metrics, AccumulateWeightedMeansAcrossUpdates) {
  metrics::Mean mean;
  expect_values(mean.result(), {0.0});
  mean.update_state(constant({1.f, 2.f, 3.f}));
  mean.update_state(constant(10.f), constant(3.f));
  expect_values(mean.result(), {(6.0 + 30.0) / 6});
  EXPECT_EQ(mean.variables().size(), 2u);
  EXPECT_TRUE(mean.trainable_variables().empty());
  mean.reset_state();
  expect_values(mean.result(), {0.0});
  EXPECT_ERROR(mean.update_state(ones({3}), ones({2})), InvalidArgumentError, "mean", "[2]");
  expect_values(mean.result(), {0.0});  // the failed update changed nothing
}

TEST(Metrics, AccuracyVariants) {
  metrics::SparseCategoricalAccuracy sparse;
  sparse.update_state(testing::i64({0, 1, 1}), constant({{0.9f, 0.1f}, {0.3f, 0.7f}, {0.6f, 0.4f}}));
  expect_values(sparse.result(), {2.0 / 3});
  sparse.update_state(constant({{1.f}}), constant({{0.f, 1.f}}));  // [batch, 1] float labels
  expect_values(sparse.result(), {3.0 / 4});
  metrics::CategoricalAccuracy categorical;
  categorical.update_state(constant({{0.f, 1.f}, {1.f, 0.f}}), constant({{0.2f, 0.8f}, {0.3f, 0.7f}}));
  expect_values(categorical.result(), {0.5});
  metrics::BinaryAccuracy binary;
  binary.update_state(constant({{1.f, 0.f}, {1.f, 1.f}}), constant({{0.6f, 0.4f}, {0.2f, 0.9f}}));
  expect_values(binary.result(), {0.75});
  metrics::Accuracy exact;
  exact.update_state(testing::i64({1, 2, 3}), testing::i64({1, 2, 4}));
  expect_values(exact.result(), {2.0 / 3});
  EXPECT_ERROR(sparse.update_state(testing::i64({0}), ones({2, 2})), InvalidArgumentError,
               "sparse_categorical_accuracy", "class ids", "got [1] and [2]");
}

TEST(Metrics, RootMeanSquaredErrorIsTheRootOfTheRunningMean) {
  metrics::RootMeanSquaredError rmse;
  EXPECT_EQ(rmse.name(), "root_mean_squared_error");
  rmse.update_state(constant({{0.0, 1.0}, {1.0, 1.0}}),
                    constant({{1.0, 1.0}, {1.0, 0.0}}));              // squares 1, 0, 0, 1
  rmse.update_state(constant({{2.0, 2.0}}), constant({{0.0, 0.0}}));  // squares 4, 4
  expect_values(rmse.result(), {std::sqrt(10.0 / 6)});
  rmse.reset_state();
  // Per-example weights: the example means 0.5 and 4 weighted 3 : 1.
  rmse.update_state(constant({{0.0, 1.0}, {2.0, 2.0}}), constant({{1.0, 1.0}, {0.0, 0.0}}),
                    constant({3.0, 1.0}));
  expect_values(rmse.result(), {std::sqrt((3 * 0.5 + 4) / 4)});
  rmse.reset_state();
  rmse.update_state(constant({1.0, 2.0}), constant({2.0, 4.0}));  // rank 1: one value per example
  expect_values(rmse.result(), {std::sqrt(2.5)});
  EXPECT_ERROR(rmse.update_state(ones({2, 3}), ones({2, 4})), InvalidArgumentError, "[2, 3]", "[2, 4]");
}

TEST(Metrics, AreNotRecordedByTapes) {
  Variable w(constant({1.f, 2.f}));
  metrics::Mean mean;
  GradientTape tape;
  Tensor y = w * 2.0f;
  mean.update_state(y);
  Tensor loss = reduce_sum(y);
  expect_values(tape.gradient(loss, w), {2, 2});
  expect_values(mean.result(), {3.0});
}

}  // namespace
}  // namespace ef

namespace ef::nn {
namespace {

// Confusion-matrix metrics on a batch worked out by hand: labels 0 1 1 1 0, scores
// 0.9 0.2 0.6 0.8 0.4. At 0.5: TP 2 (0.6, 0.8), FP 1 (0.9), FN 1 (0.2), TN 1 (0.4).
TEST(ConfusionMetrics, PrecisionRecallAndAucByHand) {
  const Tensor labels = constant({0.f, 1.f, 1.f, 1.f, 0.f}),
               scores = constant({0.9f, 0.2f, 0.6f, 0.8f, 0.4f});
  metrics::Precision precision;
  metrics::Recall recall({0.1, 0.5, 0.85});
  precision.update_state(labels, scores);
  recall.update_state(labels, scores);
  EXPECT_NEAR(precision.result().item<float>(), 2.0 / 3.0, 1e-6);
  testing::expect_values(recall.result(), {1.0, 2.0 / 3.0, 0.0}, 1e-6);
  // Three thresholds (just below 0, 0.5, just above 1) give the ROC points (1, 1),
  // (1/2, 2/3), (0, 0): trapezoids 1/2 * (1 + 2/3) / 2 + 1/2 * (2/3) / 2.
  metrics::AUC auc(3);
  auc.update_state(labels, scores);
  EXPECT_NEAR(auc.result().item<float>(), 0.5 * (1 + 2.0 / 3) / 2 + 0.5 * (2.0 / 3) / 2, 1e-6);
  auc.reset_state();
  EXPECT_EQ(auc.result().item<float>(), 0.f);
  EXPECT_ERROR(metrics::AUC(1), InvalidArgumentError, "num_thresholds");
  EXPECT_ERROR(metrics::Precision({1.5}), InvalidArgumentError, "thresholds");
  EXPECT_ERROR(precision.update_state(labels, reshape(scores, {5, 1})), InvalidArgumentError, "same shape");
}

// Keras: with top_k and no thresholds, each row's k highest scores are positive whatever
// they are (the default threshold is -inf, not 0.5). Rows [0.3 0.1], [0.2 0.4] with labels
// [1 0], [0 0]: top 1 gives TP 1 (0.3), FP 1 (0.4), so precision 1/2 (0.5 gave 0).
TEST(ConfusionMetrics, TopKWithoutThresholdsCountsEveryTopPrediction) {
  const Tensor labels = constant({{1.f, 0.f}, {0.f, 0.f}}), scores = constant({{0.3f, 0.1f}, {0.2f, 0.4f}});
  metrics::Precision precision({}, 1);
  precision.update_state(labels, scores);
  EXPECT_NEAR(precision.result().item<float>(), 0.5, 1e-6);
  const Config config = precision.get_config();
  EXPECT_EQ(config.nested("thresholds", "test"), nullptr);
  const std::shared_ptr<metrics::Metric> again = metrics::metric_from_config("Precision", config);
  auto* reloaded = dynamic_cast<metrics::Precision*>(again.get());
  ASSERT_NE(reloaded, nullptr);
  reloaded->update_state(labels, scores);
  EXPECT_NEAR(reloaded->result().item<float>(), 0.5, 1e-6);
  // Given thresholds still apply: at 0.5 neither top score is positive.
  metrics::Precision at_half({0.5}, 1);
  at_half.update_state(labels, scores);
  EXPECT_EQ(at_half.result().item<float>(), 0.f);
  const std::shared_ptr<metrics::Metric> half_again =
      metrics::metric_from_config("Precision", at_half.get_config());
  EXPECT_NE(half_again->get_config().nested("thresholds", "test"), nullptr);
}

}  // namespace
}  // namespace ef::nn
