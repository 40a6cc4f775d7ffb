// Model: compile / fit / evaluate / predict, the step as a function or eager, callbacks,
// bad input, summary.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "test_util.h"

namespace ef::nn {
namespace {

using testing::expect_values;

// y = 2 x0 - x1 + 0.5: a linear model learns it.
std::pair<Tensor, Tensor> linear_data(int64_t n) {
  random::set_seed(3);
  Tensor x = random::normal({n, 2});
  Tensor y = reduce_sum(x * constant({2.f, -1.f}), {1}, /*keepdims=*/true) + 0.5f;
  return {x, y};
}

Tensor first_rows(const Tensor& t, int64_t n) { return slice(t, {0, 0}, {n, -1}); }

std::shared_ptr<Sequential> linear_model(bool run_eagerly, double learning_rate = 0.1) {
  random::set_seed(5);
  auto model = std::make_shared<Sequential>();
  model->add(Dense(1));
  (*model)(zeros({1, 2}));  // built now, from this seed
  model->compile({.optimizer = std::make_shared<optim::SGD>(learning_rate),
                  .loss = std::make_shared<losses::MeanSquaredError>(),
                  .run_eagerly = run_eagerly});
  return model;
}

TEST(Model, FitAsAFunctionMatchesFitEagerly) {
  auto [x, y] = linear_data(64);
  auto traced = linear_model(false), eager = linear_model(true);
  auto h1 = traced->fit(x, y, {.batch_size = 16, .epochs = 5, .verbose = 0, .shuffle = false});
  auto h2 = eager->fit(x, y, {.batch_size = 16, .epochs = 5, .verbose = 0, .shuffle = false});
  ASSERT_EQ(h1->history().at("loss").size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(h1->history().at("loss")[i], h2->history().at("loss")[i], 1e-6);
  const std::vector<Variable> a = traced->variables(), b = eager->variables();
  for (size_t i = 0; i < a.size(); ++i) expect_values(a[i].value(), b[i].value().to_vector<double>(), 1e-6);
  EXPECT_LT(h1->history().at("loss").back(), 0.05 * h1->history().at("loss").front());
  EXPECT_EQ(traced->compile_options().optimizer->iterations(), 20);
}

TEST(Model, EvaluatePredictAndSingleBatches) {
  auto [x, y] = linear_data(40);
  auto model = linear_model(false);
  model->fit(x, y, {.batch_size = 8, .epochs = 30, .verbose = 0});
  const Logs logs = model->evaluate(x, y, 8);
  EXPECT_LT(logs.at("loss"), 1e-3);
  const Tensor predicted = model->predict(x, 16);
  EXPECT_EQ(predicted.shape(), (Shape{40, 1}));
  expect_values(predicted, y.to_vector<double>(), 0.05);
  const Logs test = model->test_on_batch(x, y);
  EXPECT_NEAR(test.at("loss"), logs.at("loss"), 1e-5);
  const double before = model->test_on_batch(x, y).at("loss");
  model->train_on_batch(x, y);
  EXPECT_LE(model->test_on_batch(x, y).at("loss"), before);
}

// As Keras: compiled metrics ignore sample weights, weighted_metrics see them; a weighted
// metric named as an unweighted one is logged as "weighted_<name>".
TEST(Model, OnlyWeightedMetricsSeeSampleWeights) {
  auto [x, y] = linear_data(6);
  auto model = linear_model(false);
  model->compile({.optimizer = std::make_shared<optim::SGD>(0.1),
                  .loss = std::make_shared<losses::MeanSquaredError>(),
                  .metrics = {std::make_shared<metrics::MeanSquaredError>()},
                  .weighted_metrics = {std::make_shared<metrics::MeanSquaredError>(),
                                       std::make_shared<metrics::MeanAbsoluteError>()}});
  std::vector<std::string> names;
  for (const auto& [name, metric] : model->logged_metrics()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"loss", "mean_squared_error", "weighted_mean_squared_error",
                                             "mean_absolute_error"}));
  const Tensor weights = constant({1.0f, 0.0f, 2.0f, 0.5f, 0.0f, 3.0f});
  const std::vector<double> p = model->predict(x).to_vector<double>(), t = y.to_vector<double>(),
                            w = weights.to_vector<double>();
  double squares = 0, weighted_squares = 0, weighted_absolute = 0, weight_sum = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    squares += (p[i] - t[i]) * (p[i] - t[i]);
    weighted_squares += w[i] * (p[i] - t[i]) * (p[i] - t[i]);
    weighted_absolute += w[i] * std::abs(p[i] - t[i]);
    weight_sum += w[i];
  }
  for (bool eager : {false, true}) {
    SCOPED_TRACE(eager ? "eager" : "function");
    const Logs logs = model->test_on_batch(x, y, weights);
    EXPECT_NEAR(logs.at("mean_squared_error"), squares / p.size(), 1e-5);
    EXPECT_NEAR(logs.at("weighted_mean_squared_error"), weighted_squares / weight_sum, 1e-5);
    EXPECT_NEAR(logs.at("mean_absolute_error"), weighted_absolute / weight_sum, 1e-5);
    model->compile({.optimizer = std::make_shared<optim::SGD>(0.1),
                    .loss = std::make_shared<losses::MeanSquaredError>(),
                    .metrics = {std::make_shared<metrics::MeanSquaredError>()},
                    .run_eagerly = true,
                    .weighted_metrics = {std::make_shared<metrics::MeanSquaredError>(),
                                         std::make_shared<metrics::MeanAbsoluteError>()}});
  }
  EXPECT_ERROR(model->compile({.optimizer = std::make_shared<optim::SGD>(0.1),
                               .loss = std::make_shared<losses::MeanSquaredError>(),
                               .metrics = {std::make_shared<metrics::MeanSquaredError>(),
                                           std::make_shared<metrics::MeanSquaredError>()}}),
               InvalidArgumentError, "two metrics are named 'mean_squared_error'");
}

// As Keras: an output's mask (Note [masks]) weighs its per-step losses and metrics, so
// padded steps count for nothing and the loss averages the real steps only.
TEST(Model, OutputMasksWeighTheLossAndMetrics) {
  // [3 sequences, 4 steps, 2 features]; all-zero steps are padding (5 real steps of 12).
  const Tensor x = reshape(constant({1.f, 2.f, 0.5f, -1.f, 0.f, 0.f, 0.f, 0.f,  //
                                     0.f, 0.f, 3.f,  1.f,  0.f, 0.f, 0.f, 0.f,  //
                                     2.f, 2.f, -1.f, 1.f,  1.f, 0.f, 0.f, 0.f}),
                           {3, 4, 2});
  const Tensor y =
      reshape(constant({0.5f, 1.f, 9.f, 9.f, 9.f, 2.f, 9.f, 9.f, 1.f, -1.f, 0.f, 9.f}), {3, 4, 1});
  const std::vector<double> mask = {1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 0};
  const std::vector<double> sample_weight = {1.0, 3.0, 0.5};
  random::set_seed(4);
  auto model = std::make_shared<Sequential>();
  model->add(Masking());
  model->add(Dense(1));
  model->compile({.optimizer = std::make_shared<optim::SGD>(0.0),
                  .loss = std::make_shared<losses::MeanSquaredError>(),
                  .metrics = {std::make_shared<metrics::MeanAbsoluteError>()},
                  .weighted_metrics = {std::make_shared<metrics::MeanSquaredError>()}});
  const std::vector<double> p = model->predict(x).to_vector<double>(), t = y.to_vector<double>();
  double squares = 0, absolute = 0, real = 0, weighted_squares = 0, weights = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double e = p[i] - t[i], w = sample_weight[i / 4];
    squares += mask[i] * e * e;
    absolute += mask[i] * std::abs(e);
    real += mask[i];
    weighted_squares += mask[i] * w * e * e;
    weights += mask[i] * w;
  }
  const Logs plain = model->test_on_batch(x, y);
  EXPECT_NEAR(plain.at("loss"), squares / real, 1e-5);
  EXPECT_NEAR(plain.at("mean_absolute_error"), absolute / real, 1e-5);
  EXPECT_NEAR(plain.at("mean_squared_error"), squares / real, 1e-5);
  const Logs weighted = model->test_on_batch(x, y, constant({1.0f, 3.0f, 0.5f}));
  EXPECT_NEAR(weighted.at("loss"), weighted_squares / real, 1e-5);  // Keras: over the real steps
  EXPECT_NEAR(weighted.at("mean_absolute_error"), absolute / real, 1e-5);
  EXPECT_NEAR(weighted.at("mean_squared_error"), weighted_squares / weights, 1e-5);
  // The training step (a function) computes the same loss, and its gradient ignores padding.
  EXPECT_NEAR(model->train_on_batch(x, y).at("loss"), squares / real, 1e-5);
  const std::vector<std::optional<Tensor>>& masks = model->output_masks();
  ASSERT_EQ(masks.size(), 0u);  // the steps' masks belong to their traces
  (*model)(x);
  ASSERT_EQ(model->output_masks().size(), 1u);
  expect_values(cast(*model->output_masks()[0], DType::Float64), mask, 0);
}

TEST(Model, ValidationSplitMetricsAndHistory) {
  auto [x, y] = linear_data(50);
  random::set_seed(7);
  Tensor labels = cast(reduce_sum(x, {1}) > 0.f, DType::Int64);
  Sequential model;
  model.add(Dense(2));
  model.compile({.optimizer = std::make_shared<optim::Adam>(0.05),
                 .loss = std::make_shared<losses::SparseCategoricalCrossentropy>(
                     losses::LossOptions{.from_logits = true}),
                 .metrics = {std::make_shared<metrics::SparseCategoricalAccuracy>("accuracy")}});
  auto history =
      model.fit(x, labels, {.batch_size = 10, .epochs = 12, .verbose = 0, .validation_split = 0.2});
  for (const char* name : {"loss", "accuracy", "val_loss", "val_accuracy"})
    EXPECT_EQ(history->history().at(name).size(), 12u) << name;
  EXPECT_GE(history->history().at("accuracy").back(), 0.9);
  EXPECT_EQ(history->epochs().front(), 0);
}

TEST(Model, EarlyStoppingRestoresTheBestWeights) {
  auto [x, y] = linear_data(32);
  auto model = linear_model(false, /*learning_rate=*/1.5);  // diverges: the loss grows
  auto stop = std::make_shared<callbacks::EarlyStopping>(
      callbacks::EarlyStoppingOptions{.monitor = "loss", .patience = 2, .restore_best_weights = true});
  std::vector<std::vector<double>> weights;
  auto record = std::make_shared<callbacks::LambdaCallback>();
  record->epoch_end = [&](int, Logs&) {
    weights.push_back(model->variables()[0].value().to_vector<double>());
  };
  auto history =
      model->fit(x, y, {.batch_size = 32, .epochs = 50, .verbose = 0, .callbacks = {record, stop}});
  const std::vector<double>& losses = history->history().at("loss");
  EXPECT_LT(losses.size(), 50u);
  EXPECT_EQ(stop->stopped_epoch(), static_cast<int>(losses.size()) - 1);
  const int best = stop->best_epoch();
  EXPECT_EQ(losses[static_cast<size_t>(best)], *std::min_element(losses.begin(), losses.end()));
  expect_values(model->variables()[0].value(), weights[static_cast<size_t>(best)], 0);
}

TEST(Model, CallbacksSeeEveryEventAndCanChangeTheLearningRate) {
  auto [x, y] = linear_data(24);
  auto model = linear_model(false);
  auto schedule =
      std::make_shared<callbacks::LearningRateScheduler>([](int epoch, double) { return 0.1 / (epoch + 1); });
  int batches = 0, epochs = 0;
  auto count = std::make_shared<callbacks::LambdaCallback>();
  count->train_batch_end = [&](int64_t, const Logs&) { ++batches; };
  count->epoch_end = [&](int, Logs&) { ++epochs; };
  const std::string csv = ::testing::TempDir() + "/model_test_log_" + std::to_string(::getpid()) + ".csv";
  auto logger = std::make_shared<callbacks::CSVLogger>(csv);
  auto history =
      model->fit(x, y, {.batch_size = 8, .epochs = 3, .verbose = 0, .callbacks = {schedule, count, logger}});
  EXPECT_EQ(batches, 9);
  EXPECT_EQ(epochs, 3);
  EXPECT_NEAR(history->history().at("learning_rate")[2], 0.1 / 3, 1e-12);
  EXPECT_NEAR(model->compile_options().optimizer->current_learning_rate(), 0.1 / 3, 1e-12);
  std::ifstream file(csv);
  std::string header, row;
  std::getline(file, header);
  EXPECT_EQ(header, "epoch,learning_rate,loss");
  int rows = 0;
  while (std::getline(file, row)) ++rows;
  EXPECT_EQ(rows, 3);
  // A schedule-driven optimizer has no settable rate.
  optim::SGD scheduled(optim::ExponentialDecay{0.1, 10, 0.5});
  EXPECT_ERROR(scheduled.set_learning_rate(0.01), InvalidArgumentError, "schedule");
}

TEST(Model, ModelCheckpointSavesTheBestEpochs) {
  auto [x, y] = linear_data(32);
  auto model = linear_model(false);
  const std::string dir = ::testing::TempDir() + "/model_ckpt_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto save = std::make_shared<callbacks::ModelCheckpoint>(
      dir + "/epoch{epoch}.safetensors",
      callbacks::ModelCheckpointOptions{.monitor = "loss", .save_best_only = true});
  model->fit(x, y, {.batch_size = 8, .epochs = 4, .verbose = 0, .callbacks = {save}});
  ASSERT_FALSE(save->saved().empty());
  EXPECT_EQ(save->saved().front(), dir + "/epoch1.safetensors");
  auto fresh = linear_model(false);
  fresh->predict(x);  // built
  io::Checkpoint{{"model", *fresh}}.restore(save->saved().back());
  expect_values(fresh->predict(x), model->predict(x).to_vector<double>(), 0);
}

// The event file in `folder` (one per writer).
std::vector<summary::Event> events_in(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) files.push_back(entry.path());
  EXPECT_EQ(files.size(), 1u) << folder;
  return files.empty() ? std::vector<summary::Event>{} : summary::read_event_file(files[0].string());
}

// (tag, step) -> value of every scalar in `events`.
std::map<std::pair<std::string, int64_t>, double> scalars(const std::vector<summary::Event>& events) {
  std::map<std::pair<std::string, int64_t>, double> out;
  for (const summary::Event& e : events)
    for (const summary::Value& v : e.values)
      if (v.plugin_name == "scalars") out[{v.tag, e.step}] = v.tensor.item<double>();
  return out;
}

TEST(Model, TensorBoardWritesWhatKerasWrites) {
  auto [x, y] = linear_data(40);
  auto model = linear_model(false);
  // One folder per process: ctest may run this binary twice at once.
  const std::filesystem::path dir = ::testing::TempDir() + "/model_tensorboard_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto board = std::make_shared<callbacks::TensorBoard>(
      callbacks::TensorBoardOptions{.log_dir = dir.string(), .histogram_freq = 2, .update_freq = 2});
  auto history = model->fit(
      x, y, {.batch_size = 8, .epochs = 3, .verbose = 0, .callbacks = {board}, .validation_split = 0.2});

  const std::vector<summary::Event> train = events_in(dir / "train");
  const auto train_scalars = scalars(train);
  for (int epoch = 0; epoch < 3; ++epoch) {
    EXPECT_NEAR(train_scalars.at({"epoch_loss", epoch}), history->history().at("loss")[epoch], 1e-6);
    EXPECT_NEAR(train_scalars.at({"epoch_learning_rate", epoch}), 0.1, 1e-7);
  }
  // 4 train batches per epoch (32 rows): batch_loss at batches 2, 4, ..., 12.
  int batch_points = 0;
  for (const auto& [key, value] : train_scalars) batch_points += key.first == "batch_loss";
  EXPECT_EQ(batch_points, 6);
  EXPECT_TRUE(train_scalars.contains({"batch_loss", 12}));
  // Histograms of the kernel and the bias at epochs 0 and 2.
  std::vector<std::pair<std::string, int64_t>> histograms;
  for (const summary::Event& e : train)
    for (const summary::Value& v : e.values)
      if (v.plugin_name == "histograms") histograms.emplace_back(v.tag, e.step);
  EXPECT_EQ(histograms.size(), 4u);
  EXPECT_THAT(histograms, ::testing::Contains(std::pair<std::string, int64_t>{"dense/kernel", 2}));
  // The traced train step's graph.
  bool has_graph = false;
  for (const summary::Event& e : train) has_graph |= e.has_graph && !e.graph_nodes.empty();
  EXPECT_TRUE(has_graph);

  const auto validation_scalars = scalars(events_in(dir / "validation"));
  EXPECT_EQ(validation_scalars.size(), 3u);
  EXPECT_NEAR(validation_scalars.at({"epoch_loss", 2}), history->history().at("val_loss")[2], 1e-6);
  EXPECT_FALSE(summary::tracing());
}

TEST(Model, BadInputGetsClearErrors) {
  auto [x, y] = linear_data(10);
  Sequential uncompiled;
  uncompiled.add(Dense(1));
  EXPECT_ERROR(uncompiled.fit(x, y), FailedPreconditionError, "not compiled", "compile()");
  auto model = linear_model(false);
  EXPECT_ERROR(model->fit(x, first_rows(y, 5)), InvalidArgumentError, "10 examples", "has 5");
  EXPECT_ERROR(model->fit(x, y, {.batch_size = 0}), InvalidArgumentError, "batch_size");
  EXPECT_ERROR(model->fit(x, y, {.validation_split = 1.5}), InvalidArgumentError, "validation_split");
  auto missing = std::make_shared<callbacks::EarlyStopping>();  // monitors val_loss
  EXPECT_ERROR(model->fit(x, y, {.verbose = 0, .callbacks = {missing}}), InvalidArgumentError,
               "no 'val_loss'", "they have: loss");
  EXPECT_ERROR(model->compile({}), InvalidArgumentError, "no optimizer");
  EXPECT_ERROR(model->fit(data::Dataset::from_tensor_slices({x, y}).batch(5).repeat()), InvalidArgumentError,
               "steps_per_epoch");
}

TEST(Model, SummaryListsLayersShapesAndParameters) {
  Sequential model;
  model.add(Dense(4, {.activation = "relu"}));
  model.add(Dense(2, {.name = "logits"}));
  model(ones({3, 5}));
  const std::string table = model.summary();
  EXPECT_NE(table.find("dense (Dense)"), std::string::npos) << table;
  EXPECT_NE(table.find("[?, 4]"), std::string::npos) << table;
  EXPECT_NE(table.find("logits (Dense)"), std::string::npos) << table;
  EXPECT_NE(table.find("Total params: 34"), std::string::npos) << table;  // 5*4+4 + 4*2+2
  EXPECT_NE(table.find("Trainable params: 34"), std::string::npos) << table;
}

}  // namespace
}  // namespace ef::nn
