// The functional API: Input, symbolic layer calls, Functional models, merge layers.
#include <filesystem>

#include <unistd.h>

#include "test_util.h"

namespace ef {
namespace {

using nn::KerasTensor;

std::shared_ptr<nn::Dense> dense(int64_t units, const std::string& name, nn::Activation activation = {}) {
  return std::make_shared<nn::Dense>(
      units,
      nn::DenseOptions{
          .activation = activation, .kernel_initializer = nn::initializers::glorot_uniform(7), .name = name});
}

std::vector<double> values_of(const Tensor& t) { return t.to_vector<double>(); }

TEST(Functional, SymbolicCallsGiveShapesWithAnUnknownBatch) {
  KerasTensor x = nn::Input({5, 3}, DType::Float32, "points");
  EXPECT_EQ(x.shape(), Shape({kUnknownDim, 5, 3}));
  EXPECT_EQ(x.name(), "points");
  auto flatten = std::make_shared<nn::Flatten>();
  auto hidden = dense(4, "hidden", "relu");
  KerasTensor h = (*hidden)((*flatten)(x));
  EXPECT_EQ(h.shape(), Shape({kUnknownDim, 4}));
  EXPECT_EQ(h.dtype(), DType::Float32);
  // The layer is built by the symbolic call, with real initial values.
  ASSERT_TRUE(hidden->built());
  EXPECT_EQ(hidden->kernel().shape(), Shape({15, 4}));
}

TEST(Functional, RunsTheSameComputationAsTheLayersCalledByHand) {
  KerasTensor x = nn::Input({4}, DType::Float32, "x");
  auto left = dense(3, "left", "tanh"), right = dense(2, "right"), head = dense(2, "head");
  auto concat = std::make_shared<nn::Concatenate>();
  KerasTensor out = (*head)((*concat)(std::vector<KerasTensor>{(*left)(x), (*right)(x)}));
  nn::Functional model({x}, {out}, "two_branches");

  const Tensor batch = random::uniform({6, 4}, -1, 1, DType::Float32, 3);
  const Tensor by_hand = (*head)((*concat)({(*left)(batch), (*right)(batch)}));
  testing::expect_values(model(batch), values_of(by_hand), 1e-6);
  // Layers are tracked once each, inputs first: checkpoints key on these names.
  std::vector<std::string> names;
  for (const auto& [name, child] : model.named_children()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "left", "right", "concatenate", "head"}));
  EXPECT_EQ(model.trainable_variables().size(), 6u);
}

TEST(Functional, LayersNotHeldBySharedPtrAreRefusedClearly) {
  KerasTensor a = nn::Input({3});
  nn::Dense on_stack(2);
  EXPECT_ERROR(on_stack(a), InvalidArgumentError, "std::make_shared");
}

TEST(Functional, SeveralInputsAndOutputsWithASharedLayer) {
  KerasTensor a = nn::Input({3}, DType::Float32, "a"), b = nn::Input({3}, DType::Float32, "b");
  auto shared = dense(2, "shared");
  auto subtract = std::make_shared<nn::Subtract>();
  auto add = std::make_shared<nn::Add>();
  KerasTensor ha = (*shared)(a), hb = (*shared)(b);
  nn::Functional model({a, b}, {(*subtract)({ha, hb}), (*add)({ha, hb})}, "siamese");
  EXPECT_EQ(model.trainable_variables().size(), 2u);  // the shared Dense once

  const Tensor xa = random::uniform({4, 3}, -1, 1, DType::Float32, 1);
  const Tensor xb = random::uniform({4, 3}, -1, 1, DType::Float32, 2);
  std::vector<Tensor> outs = model.call_all({xa, xb});
  ASSERT_EQ(outs.size(), 2u);
  testing::expect_values(outs[0], values_of((*shared)(xa) - (*shared)(xb)), 1e-6);
  testing::expect_values(outs[1], values_of((*shared)(xa) + (*shared)(xb)), 1e-6);
  EXPECT_ERROR(model(xa), InvalidArgumentError, "siamese", "2 inputs");
  EXPECT_ERROR(model({xa, xb}), InvalidArgumentError, "gives 2 outputs");
}

TEST(Functional, GradientsAreTheLayersGradients) {
  KerasTensor x = nn::Input({3}, DType::Float64);
  auto first = std::make_shared<nn::Dense>(4, nn::DenseOptions{.activation = "tanh"});
  auto second = std::make_shared<nn::Dense>(4);
  auto maximum = std::make_shared<nn::Maximum>();
  nn::Functional model({x}, {(*maximum)({(*first)(x), (*second)(x)})});
  const Tensor batch = testing::rand64({5, 3}, 1);
  testing::expect_gradients(
      [&](const std::vector<Tensor>& in) { return reduce_sum(model(in[0]) * model(in[0])); }, {batch});
  auto loss = [&](bool by_hand) {
    GradientTape tape;
    Tensor y = by_hand ? (*maximum)({(*first)(batch), (*second)(batch)}) : model(batch);
    return tape.gradient(reduce_sum(y * y), first->kernel());
  };
  testing::expect_values(loss(false), values_of(loss(true)), 1e-12);
}

TEST(Functional, InputsAreCheckedAgainstTheirSpec) {
  KerasTensor x = nn::Input({4}, DType::Float32, "features");
  auto head = dense(2, "head");
  nn::Functional model({x}, {(*head)(x)});
  EXPECT_ERROR(model(zeros({2, 5})), InvalidArgumentError, "features", "[?, 4]", "[2, 5]");
  EXPECT_ERROR(model(zeros({2, 4}, DType::Float64)), InvalidArgumentError, "features", "float32", "float64");
}

TEST(Functional, AnOutputMustComeFromTheListedInputs) {
  KerasTensor a = nn::Input({2}, DType::Float32, "listed"), b = nn::Input({2}, DType::Float32, "unlisted");
  auto add = std::make_shared<nn::Add>();
  KerasTensor sum = (*add)({a, b});
  EXPECT_ERROR(nn::Functional({a}, {sum}), InvalidArgumentError, "unlisted", "not among the model's inputs");
  auto head = dense(2, "head");
  EXPECT_ERROR(nn::Functional({(*head)(a)}, {sum}), InvalidArgumentError, "is not an Input");
}

TEST(Functional, MergeLayersCheckTheirInputs) {
  nn::Subtract subtract;
  EXPECT_ERROR(subtract({ones({2}), ones({2}), ones({2})}), InvalidArgumentError, "exactly two", "got 3");
  nn::Add add;
  EXPECT_ERROR(add(ones({2})), InvalidArgumentError, "merges a list", "[2]");
  EXPECT_ERROR(add(std::vector<Tensor>{ones({2})}), InvalidArgumentError, "at least two");
  nn::Concatenate concat(0);
  testing::expect_values(concat({ones({1}), zeros({2})}), {1, 0, 0});
  testing::expect_values(nn::Average()({ones({2}), zeros({2}), constant({4.0f, 1.0f})}), {5.0 / 3, 2.0 / 3});
  testing::expect_values(nn::Minimum()({ones({2}), constant({4.0f, -1.0f})}), {1, -1});
  testing::expect_values(nn::Multiply()({constant({2.0f, 3.0f}), constant({4.0f, -1.0f})}), {8, -3});
}

TEST(Functional, ConfigRoundTripGivesTheSameModel) {
  KerasTensor x = nn::Input({4}, DType::Float32, "x");
  auto left = dense(3, "left", "relu"), right = dense(3, "right");
  auto add = std::make_shared<nn::Add>();
  auto head = dense(2, "head", "softmax");
  auto model = std::make_shared<nn::Functional>(std::vector{x},
                                                std::vector{(*head)((*add)({(*left)(x), (*right)(x)}))}, "m");
  const std::string json = nn::to_json(model->get_config());
  std::shared_ptr<nn::Layer> again = nn::layer_from_config("Functional", nn::config_from_json(json, "test"));
  EXPECT_EQ(nn::to_json(again->get_config()), json);
  // Same structure and names: the weights copy across by path.
  auto a = model->named_variables(), b = again->named_variables();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    b[i].second.assign(a[i].second.value());
  }
  const Tensor batch = random::uniform({3, 4}, -1, 1, DType::Float32, 5);
  testing::expect_values((*again)(batch), values_of((*model)(batch)), 1e-7);
}

TEST(Functional, SavedAndLoadedWithItsWeights) {
  KerasTensor x = nn::Input({2, 3}, DType::Float32, "x");
  auto flatten = std::make_shared<nn::Flatten>();
  auto hidden = dense(5, "hidden", "tanh");
  auto concat = std::make_shared<nn::Concatenate>();
  auto head = dense(1, "head");
  KerasTensor flat = (*flatten)(x);
  auto model = std::make_shared<nn::Functional>(
      std::vector{x}, std::vector{(*head)((*concat)({(*hidden)(flat), flat}))}, "skip");
  const std::string path = ::testing::TempDir() + "/" + std::to_string(::getpid()) + "_functional.efmodel";
  io::save_model(*model, path);
  std::shared_ptr<nn::Model> loaded = io::load_model(path);
  std::filesystem::remove(path);
  ASSERT_NE(dynamic_cast<nn::Functional*>(loaded.get()), nullptr);
  const Tensor batch = random::uniform({4, 2, 3}, -1, 1, DType::Float32, 9);
  testing::expect_values((*loaded)(batch), values_of((*model)(batch)), 1e-7);
  EXPECT_EQ(loaded->name(), "skip");
}

TEST(Functional, ANestedModelIsALayer) {
  KerasTensor inner_x = nn::Input({3});
  auto inner_dense = dense(2, "inner_dense");
  auto inner =
      std::make_shared<nn::Functional>(std::vector{inner_x}, std::vector{(*inner_dense)(inner_x)}, "inner");
  KerasTensor x = nn::Input({3});
  auto head = dense(1, "head");
  nn::Functional outer({x}, {(*head)((*inner)(x))}, "outer");
  const Tensor batch = random::uniform({2, 3}, -1, 1, DType::Float32, 4);
  testing::expect_values(outer(batch), values_of((*head)((*inner_dense)(batch))), 1e-6);
  EXPECT_EQ(outer.trainable_variables().size(), 4u);
  const std::string summary = outer.summary();
  EXPECT_THAT(summary, ::testing::HasSubstr("[?, 2]"));
  EXPECT_THAT(summary, ::testing::HasSubstr("[?, 1]"));
}

TEST(Functional, FitTrainsIt) {
  KerasTensor x = nn::Input({2});
  auto hidden = dense(8, "hidden", "tanh"), head = dense(1, "head");
  auto model = std::make_shared<nn::Functional>(std::vector{x}, std::vector{(*head)((*hidden)(x))});
  const Tensor inputs = random::uniform({64, 2}, -1, 1, DType::Float32, 11);
  const Tensor targets = reduce_sum(inputs * inputs, {1}, /*keepdims=*/true);
  model->compile({.optimizer = std::make_shared<optim::Adam>(0.05),
                  .loss = std::make_shared<nn::losses::MeanSquaredError>()});
  auto history = model->fit(inputs, targets, {.batch_size = 16, .epochs = 30, .verbose = 0});
  const auto& losses = history->history().at("loss");
  EXPECT_LT(losses.back(), losses.front() * 0.3);
}

TEST(Functional, FitsSeveralInputsAndOutputsWithWeightedLosses) {
  KerasTensor a = nn::Input({3}, DType::Float32, "a"), b = nn::Input({3}, DType::Float32, "b");
  auto shared = dense(2, "shared");
  auto subtract = std::make_shared<nn::Subtract>("difference");
  auto add = std::make_shared<nn::Add>("sum");
  auto model = std::make_shared<nn::Functional>(
      std::vector{a, b},
      std::vector{(*subtract)({(*shared)(a), (*shared)(b)}), (*add)({(*shared)(a), (*shared)(b)})});
  EXPECT_EQ(model->output_names(), (std::vector<std::string>{"difference", "sum"}));
  const Tensor xa = random::uniform({8, 3}, -1, 1, DType::Float32, 1);
  const Tensor xb = random::uniform({8, 3}, -1, 1, DType::Float32, 2);
  const Tensor ya = zeros({8, 2}), yb = ones({8, 2});
  auto mse = std::make_shared<nn::losses::MeanSquaredError>();
  auto mae = std::make_shared<nn::metrics::MeanAbsoluteError>();
  model->compile({.optimizer = std::make_shared<optim::SGD>(0.0),  // no update: the logs are the loss
                  .output_losses = {mse, mse},
                  .loss_weights = {2.0, 0.5},
                  .output_metrics = {{}, {mae}}});
  const std::vector<Tensor> pred = model->predict_all({xa, xb});
  const double difference = (*mse)(ya, pred[0]).item<float>(), sum = (*mse)(yb, pred[1]).item<float>();
  nn::Logs logs = model->evaluate({xa, xb}, {ya, yb}, 8);
  EXPECT_NEAR(logs.at("difference_loss"), difference, 1e-6);
  EXPECT_NEAR(logs.at("sum_loss"), sum, 1e-6);
  EXPECT_NEAR(logs.at("loss"), 2.0 * difference + 0.5 * sum, 1e-5);
  EXPECT_TRUE(logs.count("sum_mean_absolute_error"));
  auto history = model->fit({xa, xb}, {ya, yb}, {.batch_size = 4, .epochs = 1, .verbose = 0});
  EXPECT_NEAR(history->history().at("loss").back(), 2.0 * difference + 0.5 * sum, 1e-5);
  EXPECT_ERROR(model->fit(xa, ya), InvalidArgumentError, "takes 2 input(s) and gives 2 output(s)",
               "1 x and 1 y");
  EXPECT_ERROR(
      model->compile({.optimizer = std::make_shared<optim::SGD>(0.1), .loss = mse, .loss_weights = {1.0}}),
      InvalidArgumentError, "1 loss weights", "2 output(s)");
  EXPECT_ERROR(
      model->compile({.optimizer = std::make_shared<optim::SGD>(0.1), .loss = mse, .metrics = {mae}}),
      InvalidArgumentError, "give its metrics per output");
}

}  // namespace
}  // namespace ef
