// Fashion-MNIST with a multilayer perceptron, trained eagerly: 784-256-10, Adam,
// 5 epochs (`make run`). Reaches about 88% test accuracy.
//
//   fashion_mnist_mlp [--epochs 5] [--batch-size 32] [--train-examples 60000] [--precision mixed_bfloat16]
//   ...
#include "fashion_mnist_training.h"

int main(int argc, char** argv) {
  example::Options options = example::parse_flags(argc, argv, {});
  auto make_model = [] {
    auto model = std::make_shared<ef::nn::Sequential>();
    model->add(ef::nn::Flatten());
    model->add(ef::nn::Dense(256, {.activation = "relu"}));
    model->add(ef::nn::Dense(10));
    return std::shared_ptr<ef::nn::Layer>(model);
  };
  return example::train_and_evaluate("Fashion-MNIST MLP 784-256-10", make_model, options, /*channels_last=*/false);
}
