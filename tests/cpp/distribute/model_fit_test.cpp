// distribute::fit (Note [distributed fit]): n ranks end where one process with the whole
// batch ends, with the same History; models built lazily and batch norm's statistics
// stay the same on every rank; bad arguments.
#include <eagerflow/distribute/model_fit.h>

#include "test_util.h"

namespace ef {
namespace {

namespace dist = ef::distribute;
using testing::expect_values;

// Two classes, by the sign of a feature sum; every rank draws the same.
std::pair<Tensor, Tensor> class_data(int64_t n) {
  random::set_seed(3);
  const Tensor x = random::normal({n, 3});
  return {x, cast(reduce_sum(x * constant({1.f, -2.f, 0.5f}), {1}) > 0.f, DType::Int64)};
}

std::shared_ptr<nn::Sequential> classifier(bool batch_norm = false) {
  random::set_seed(5);  // the same initial weights on every rank
  auto model = std::make_shared<nn::Sequential>();
  model->add(nn::Dense(8, {.activation = "tanh"}));
  if (batch_norm) model->add(nn::BatchNormalization());
  model->add(nn::Dense(2));
  (*model)(zeros({1, 3}));
  model->compile({.optimizer = std::make_shared<optim::Adam>(0.02),
                  .loss = std::make_shared<nn::losses::SparseCategoricalCrossentropy>(
                      nn::losses::LossOptions{.from_logits = true}),
                  .metrics = {std::make_shared<nn::metrics::SparseCategoricalAccuracy>("accuracy")}});
  return model;
}

// The spread max - min over the ranks of every element of every variable.
double spread_over_ranks(const std::vector<Variable>& variables) {
  double widest = 0;
  for (const Variable& v : variables) {
    const Tensor x = cast(v.value(), DType::Float64);
    const Tensor spread =
        dist::all_reduce(x, dist::Reduction::kMax) - dist::all_reduce(x, dist::Reduction::kMin);
    widest = std::max(widest, reduce_max(spread).item<double>());
  }
  return widest;
}

TEST(DistributedFit, RanksTrainAsOneProcessWithTheWholeBatch) {
  dist::init();
  const int64_t batch = 4 * dist::size();
  auto [x, y] = class_data(10 * batch);  // a quarter of it held out for validation
  const nn::FitOptions options{
      .batch_size = batch, .epochs = 3, .verbose = 0, .validation_split = 0.25, .shuffle = false};
  auto one = classifier();
  const auto want = one->fit(x, y, options);
  auto replica = classifier();
  const auto got = dist::fit(*replica, {x}, {y}, options);

  for (const char* name : {"loss", "accuracy", "val_loss", "val_accuracy"}) {
    ASSERT_EQ(got->history().at(name).size(), 3u) << name;
    for (size_t epoch = 0; epoch < 3; ++epoch)
      EXPECT_NEAR(got->history().at(name)[epoch], want->history().at(name)[epoch], 1e-5)
          << name << " " << epoch;
  }
  const std::vector<Variable> a = replica->variables(), b = one->variables();
  for (size_t i = 0; i < a.size(); ++i) expect_values(a[i].value(), b[i].value().to_vector<double>(), 1e-5);
  EXPECT_GT(want->history().at("accuracy").back(), want->history().at("accuracy").front());
  // Afterwards the model trains alone again, with a step traced without all-reduces.
  replica->fit(x, y, {.batch_size = 8, .epochs = 1, .verbose = 0});
}

TEST(DistributedFit, ADatasetIsSharedBatchByBatch) {
  dist::init();
  const int64_t batch = 4 * dist::size();
  auto [x, y] = class_data(6 * batch);
  const data::Dataset batches = data::Dataset::from_tensor_slices({x, y}).batch(batch);
  auto one = classifier();
  const auto want = one->fit(batches, {.epochs = 2, .verbose = 0});
  auto replica = classifier();
  const auto got = dist::fit(*replica, batches, {.epochs = 2, .verbose = 0});
  for (const char* name : {"loss", "accuracy"})
    for (size_t epoch = 0; epoch < 2; ++epoch)
      EXPECT_NEAR(got->history().at(name)[epoch], want->history().at(name)[epoch], 1e-5)
          << name << " " << epoch;
  const std::vector<Variable> a = replica->variables(), b = one->variables();
  for (size_t i = 0; i < a.size(); ++i) expect_values(a[i].value(), b[i].value().to_vector<double>(), 1e-5);

  nn::Sequential unbuilt;
  unbuilt.add(nn::Dense(2));
  unbuilt.compile({.optimizer = std::make_shared<optim::SGD>(0.1),
                   .loss = std::make_shared<nn::losses::MeanSquaredError>()});
  EXPECT_ERROR(dist::fit(unbuilt, batches, {.verbose = 0}), FailedPreconditionError, "build model",
               "(call it once)");
}

TEST(DistributedFit, LazilyBuiltModelsAndBatchNormStatisticsAgreeOverRanks) {
  dist::init();
  auto [x, y] = class_data(8 * dist::size());
  random::set_seed(100 + dist::rank());  // each rank would draw other initial weights
  nn::Sequential model;
  model.add(nn::Dense(4, {.activation = "relu"}));
  model.add(nn::BatchNormalization());
  model.add(nn::Dense(2));
  model.compile({.optimizer = std::make_shared<optim::SGD>(0.1),
                 .loss = std::make_shared<nn::losses::SparseCategoricalCrossentropy>(
                     nn::losses::LossOptions{.from_logits = true})});
  dist::fit(model, {x}, {y}, {.batch_size = 2 * dist::size(), .epochs = 2, .verbose = 0});
  EXPECT_FALSE(model.non_trainable_variables().empty());
  EXPECT_EQ(spread_over_ranks(model.variables()), 0.0);
}

TEST(DistributedFit, BadArguments) {
  dist::init();
  auto [x, y] = class_data(16);
  auto model = classifier();
  const int n = dist::size();
  if (n > 1)
    EXPECT_ERROR(dist::fit(*model, {x}, {y}, {.batch_size = n + 1}), InvalidArgumentError,
                 "batch_size " + std::to_string(n + 1) + " is the global batch", "multiple of the");
  EXPECT_ERROR(dist::fit(*model, {x}, {slice(y, {0}, {15})}, {.batch_size = n}), InvalidArgumentError,
               "x and y must have the same number of examples");
  EXPECT_ERROR(dist::fit(*model, {x}, {y}, {.batch_size = n, .sample_weight = ones({3})}),
               InvalidArgumentError, "sample_weight has shape [3] but x has 16 examples");
}

}  // namespace
}  // namespace ef
