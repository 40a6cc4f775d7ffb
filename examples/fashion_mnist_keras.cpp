// Fashion-MNIST the Keras way: a Sequential MLP with compile / fit (validation split,
// the best epoch saved by ModelCheckpoint, EarlyStopping), then a fresh model restored
// from the best checkpoint evaluates to the same test accuracy.
//
//   fashion_mnist_keras [--epochs 5] [--batch-size 32] [--train-examples 60000] ...
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "fashion_mnist_training.h"

namespace {

std::shared_ptr<ef::nn::Sequential> make_model() {
  auto model = std::make_shared<ef::nn::Sequential>();
  model->add(ef::nn::Flatten());
  model->add(ef::nn::Dense(256, {.activation = "relu"}));
  model->add(ef::nn::Dense(10));
  return model;
}

void compile(ef::nn::Model& model, double learning_rate) {
  model.compile({.optimizer = std::make_shared<ef::optim::Adam>(learning_rate),
                 .loss = std::make_shared<ef::nn::losses::SparseCategoricalCrossentropy>(
                     ef::nn::losses::LossOptions{.from_logits = true}),
                 .metrics = {std::make_shared<ef::nn::metrics::SparseCategoricalAccuracy>("accuracy")}});
}

}  // namespace

int main(int argc, char** argv) {
  example::Options options = example::parse_flags(argc, argv, {});
  std::optional<ef::data::datasets::FashionMnist> loaded = example::load_data(options);
  if (!loaded) return example::kSkipped;
  const ef::data::datasets::FashionMnist& data = *loaded;
  const int64_t n = std::min<int64_t>(options.train_examples, data.train.images.shape()[0]);
  ef::random::set_seed(options.seed);
  auto model = make_model();
  compile(*model, options.learning_rate);

  std::filesystem::create_directories(options.checkpoint_dir);
  const std::string best = options.checkpoint_dir + "/best.safetensors";
  auto checkpoint = std::make_shared<ef::nn::callbacks::ModelCheckpoint>(
      best, ef::nn::callbacks::ModelCheckpointOptions{.monitor = "val_accuracy", .save_best_only = true});
  auto early_stopping = std::make_shared<ef::nn::callbacks::EarlyStopping>(
      ef::nn::callbacks::EarlyStoppingOptions{.monitor = "val_loss", .patience = 2});
  const ef::Tensor images = example::first_rows(data.train.images, n),
                   labels = example::first_rows(data.train.labels, n);
  auto history = model->fit(images, labels,
                            {.batch_size = options.batch_size,
                             .epochs = options.epochs,
                             .callbacks = {checkpoint, early_stopping},
                             .validation_split = 0.1,
                             .seed = options.seed});
  std::printf("%s", model->summary().c_str());

  // The best epoch's weights, restored into a fresh model, evaluated on the test set.
  auto restored = make_model();
  compile(*restored, options.learning_rate);
  (*restored)(example::first_rows(data.test.images, 1));
  ef::io::Checkpoint{{"model", *restored}}.restore(best);
  const double accuracy = restored->evaluate(data.test.images, data.test.labels, 1000).at("accuracy");
  std::printf("restored %s: test accuracy %.4f\n", best.c_str(), accuracy);
  // On the validation examples (the last 10%) it scores the best epoch's val_accuracy.
  const int64_t held_out = n - static_cast<int64_t>(static_cast<double>(n) * 0.9);
  const ef::Tensor val_images = ef::slice(images, {n - held_out, 0, 0}, {held_out, -1, -1});
  const ef::Tensor val_labels = ef::slice(labels, {n - held_out}, {held_out});
  const std::vector<double>& val = history->history().at("val_accuracy");
  const double best_val = *std::max_element(val.begin(), val.end());
  const double restored_val = restored->evaluate(val_images, val_labels, 1000).at("accuracy");
  std::printf("validation accuracy %.4f, best epoch's %.4f (%s)\n", restored_val, best_val,
              std::abs(restored_val - best_val) < 1e-6 ? "the same" : "DIFFERENT");
  return std::abs(restored_val - best_val) < 1e-6 ? 0 : 1;
}
