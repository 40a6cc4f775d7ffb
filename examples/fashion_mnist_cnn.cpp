// Fashion-MNIST with a small convnet: two 3x3 convolutions (32 and 64 filters) with
// max pooling, then 128 hidden units; Adam, 5 epochs. Reaches about 91% test accuracy.
//
//   fashion_mnist_cnn [--epochs 5] [--batch-size 32] [--train-examples 60000] ...
#include "fashion_mnist_training.h"

int main(int argc, char** argv) {
  example::Options options = example::parse_flags(argc, argv, {.checkpoint_dir = "checkpoints_cnn"});
  auto make_model = [] {
    auto model = std::make_shared<ef::nn::Sequential>();
    model->add(ef::nn::Conv2D(32, {3}, {.activation = "relu"}));
    model->add(ef::nn::MaxPool2D());
    model->add(ef::nn::Conv2D(64, {3}, {.activation = "relu"}));
    model->add(ef::nn::MaxPool2D());
    model->add(ef::nn::Flatten());
    model->add(ef::nn::Dense(128, {.activation = "relu"}));
    model->add(ef::nn::Dense(10));
    return std::shared_ptr<ef::nn::Layer>(model);
  };
  return example::train_and_evaluate("Fashion-MNIST CNN", make_model, options, /*channels_last=*/true);
}
