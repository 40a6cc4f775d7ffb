// Layer configs (get_config / from_config / JSON) and whole-model files.
#include <filesystem>

#include <unistd.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

// Per process: ctest may run this binary twice at once.
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(::getpid()) + "_" + name;
}

std::vector<std::shared_ptr<nn::Layer>> every_layer() {
  return {
      std::make_shared<nn::Dense>(
          3, nn::DenseOptions{.activation = "tanh",
                              .use_bias = false,
                              .kernel_initializer = nn::initializers::random_normal(0.5, 2, 7),
                              .name = "d"}),
      std::make_shared<nn::Flatten>("f"),
      std::make_shared<nn::Dropout>(0.25, 3, "drop"),
      std::make_shared<nn::LayerNormalization>(
          nn::LayerNormalizationOptions{.epsilon = 1e-5, .center = false}),
      std::make_shared<nn::Embedding>(10, 4),
      std::make_shared<nn::Conv2D>(
          5, nn::Window{3, 2}, nn::Conv2DOptions{.strides = {2, 1}, .padding = "same", .activation = "relu"}),
      std::make_shared<nn::MaxPool2D>(nn::Window{2, 2}, nn::Pool2DOptions{.strides = nn::Window{1, 1}}),
      std::make_shared<nn::AveragePool2D>(nn::Window{3, 3}, nn::Pool2DOptions{.padding = "same"}),
      std::make_shared<nn::BatchNormalization>(nn::BatchNormalizationOptions{.momentum = 0.9}),
  };
}

TEST(LayerConfig, EveryLayerRoundTripsThroughJson) {
  for (const auto& layer : every_layer()) {
    SCOPED_TRACE(layer->class_name());
    const nn::Config config = layer->get_config();
    const std::string json = nn::to_json(config);
    const std::shared_ptr<nn::Layer> again =
        nn::layer_from_config(layer->class_name(), nn::config_from_json(json, "test"));
    EXPECT_EQ(again->class_name(), layer->class_name());
    EXPECT_EQ(nn::to_json(again->get_config()), json);
    EXPECT_EQ(again->name(), layer->name());
  }
  // A seeded initializer comes back with its arguments: the same first values.
  auto dense = std::make_shared<nn::Dense>(
      3, nn::DenseOptions{.kernel_initializer = nn::initializers::random_normal(0.5, 2, 7)});
  auto copy = nn::layer_from_config("Dense", dense->get_config());
  (*dense)(ones({1, 2}));
  (*copy)(ones({1, 2}));
  expect_values(dense->variables()[0].value(), copy->variables()[0].value().to_vector<double>(), 0);
}

TEST(LayerConfig, BadConfigsGetClearErrors) {
  EXPECT_ERROR(nn::layer_from_config("Nope", {}), NotFoundError, "unknown layer class \"Nope\"", "Dense");
  EXPECT_ERROR(nn::layer_from_config("Dense", nn::Config().set("units", "ten")), InvalidArgumentError,
               "\"units\"", "string");
  EXPECT_ERROR(nn::config_from_json("{\"units\": 1, \"units\": 2}", "config"), InvalidArgumentError,
               "\"units\" appears twice");
  EXPECT_ERROR(nn::config_from_json("{\"units\": ", "config"), InvalidArgumentError, "not valid JSON");
  nn::Dense custom(2, {.activation = nn::Activation([](const Tensor& x) { return x; })});
  EXPECT_ERROR(custom.get_config(), UnimplementedError, "activation is a C++ function");
}

std::shared_ptr<nn::Sequential> small_cnn() {
  random::set_seed(11);
  auto model = std::make_shared<nn::Sequential>();
  model->add(nn::Conv2D(4, {3, 3}, {.activation = "relu"}));
  model->add(nn::BatchNormalization());
  model->add(nn::MaxPool2D());
  model->add(nn::Flatten());
  model->add(nn::Dropout(0.5));
  model->add(nn::Dense(3));
  return model;
}

TEST(ModelFile, SaveAndLoadGiveTheSameModel) {
  auto model = small_cnn();
  const Tensor x = random::normal({2, 8, 8, 1});
  model->compile({.optimizer = std::make_shared<optim::Adam>(0.01),
                  .loss = std::make_shared<nn::losses::MeanSquaredError>()});
  model->fit(x, zeros({2, 3}), {.epochs = 2, .verbose = 0});  // moving statistics and weights change
  const std::string path = temp_path("model_file_test.safetensors");
  io::save_model(*model, path);
  std::shared_ptr<nn::Model> loaded = io::load_model(path);
  EXPECT_EQ(loaded->name(), model->name());
  expect_values((*loaded)(x), (*model)(x).to_vector<double>(), 0);
  EXPECT_EQ(loaded->summary(), model->summary());
  // Compiled as the saved model was, with the optimizer's state.
  ASSERT_TRUE(loaded->compiled());
  const nn::CompileOptions& options = loaded->compile_options();
  EXPECT_EQ(options.optimizer->name(), "Adam");
  EXPECT_EQ(options.optimizer->iterations(), 2);
  EXPECT_EQ(options.loss->class_name(), "MeanSquaredError");
  const std::vector<Variable> saved = model->trainable_variables(), again = loaded->trainable_variables();
  for (size_t i = 0; i < saved.size(); ++i)
    for (const char* slot : {"m", "v"})
      expect_values(options.optimizer->slot(again[i], slot),
                    model->compile_options().optimizer->slot(saved[i], slot).value().to_vector<double>(), 0);
  loaded->fit(x, zeros({2, 3}), {.epochs = 1, .verbose = 0});  // it trains on (Dropout: not compared)
  EXPECT_EQ(options.optimizer->iterations(), 3);
  EXPECT_FALSE(io::load_model(path, /*compile=*/false)->compiled());
}

TEST(ModelFile, CompileSettingsRoundTrip) {
  auto auc = std::make_shared<nn::metrics::AUC>(40, nn::metrics::AUC::Curve::kPR,
                                                nn::metrics::AUC::Summation::kMajoring, "pr_auc", true);
  nn::Config config = auc->get_config();
  auto again = nn::metrics::metric_from_config("AUC", config);
  EXPECT_EQ(again->name(), "pr_auc");
  EXPECT_EQ(nn::to_json(again->get_config()), nn::to_json(config));
  auto huber = std::make_shared<nn::losses::Huber>(
      0.25, nn::losses::LossOptions{.reduction = nn::losses::Reduction::kSum});
  EXPECT_EQ(nn::to_json(nn::losses::loss_from_config("Huber", huber->get_config())->get_config()),
            nn::to_json(huber->get_config()));
  auto rmsprop =
      std::make_shared<optim::RMSprop>(0.02, 0.8, 0.1, 1e-6, true, optim::Clipping{.clipvalue = 2.0});
  EXPECT_EQ(nn::to_json(optim::optimizer_from_config("RMSprop", rmsprop->get_config())->get_config()),
            nn::to_json(rmsprop->get_config()));
  EXPECT_ERROR(optim::optimizer_from_config("Adadelta", rmsprop->get_config()), InvalidArgumentError,
               "unknown optimizer class \"Adadelta\"");
  EXPECT_ERROR(nn::metrics::metric_from_config("Mystery", config), NotFoundError, "Mystery");
  EXPECT_ERROR(nn::losses::loss_from_config("Huber", nn::Config().set("reduction", "average")),
               InvalidArgumentError, "unknown reduction \"average\"");
  // A learning-rate schedule cannot be made again from a config: the model saves without
  // its compile settings and loads uncompiled.
  optim::SGD scheduled(optim::ExponentialDecay{0.1, 10, 0.5});
  EXPECT_FALSE(scheduled.get_config().has("learning_rate"));
  EXPECT_ERROR(optim::optimizer_from_config("SGD", scheduled.get_config()), InvalidArgumentError,
               "no learning_rate");
}

TEST(ModelFile, WhatCannotBeSavedOrLoadedSaysWhy) {
  struct Custom : nn::Model {
    Custom() : Model("custom") {}
    Tensor call(const Tensor& x, bool) override { return x; }
  } custom;
  const std::string path = temp_path("model_file_bad.safetensors");
  std::filesystem::remove(path);
  EXPECT_ERROR(io::save_model(custom, path), InvalidArgumentError, "subclassed model", "Checkpoint");
  EXPECT_FALSE(std::filesystem::exists(path));

  nn::Sequential with_custom;
  struct Twice : nn::Layer {
    Tensor call(const Tensor& x, bool) override { return x * 2.f; }
  };
  with_custom.add(Twice());
  EXPECT_ERROR(io::save_model(with_custom, path), InvalidArgumentError, "no registered class name");

  // A checkpoint is not a model file.
  Variable v(ones({2}), "v");
  io::Checkpoint{{"v", v}}.save(path);
  EXPECT_ERROR(io::load_model(path), InvalidArgumentError, "is not a model file");
  // An architecture naming an unknown class.
  io::save_safetensors(
      path, {},
      {{"format", "eagerflow.io.Model"}, {"architecture", R"({"class_name": "Sequential", "layers": 1,
                                                      "layer_0": {"class_name": "Mystery", "config": {}}})"}});
  EXPECT_ERROR(io::load_model(path), NotFoundError, "unknown layer class \"Mystery\"");
  // Weights that do not fit the architecture.
  auto model = small_cnn();
  (*model)(zeros({1, 8, 8, 1}));
  io::save_model(*model, path);
  const io::TensorFile file = io::load_safetensors(path);
  std::map<std::string, Tensor> tensors = file.tensors;
  tensors.begin()->second = zeros({7});
  io::save_safetensors(path, tensors, file.metadata);
  EXPECT_ERROR(io::load_model(path), InvalidArgumentError, "shape");
}

}  // namespace
}  // namespace ef
