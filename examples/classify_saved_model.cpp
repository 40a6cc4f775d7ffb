// Classifies the Fashion-MNIST test set with a saved model, in C++ alone: the model
// examples/python/fashion_mnist_keras.py exports (its "serving_default" signature takes
// "images" [batch, 28, 28] and gives logits), or any model with that signature.
//
//   build/examples/classify_saved_model checkpoints/fashion_mnist_keras/saved_model [--data-dir DIR]
//
// Prints "test accuracy 0.xxxx", which matches the accuracy Python printed for the model.
#include <eagerflow/eagerflow.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: classify_saved_model MODEL_DIR [--data-dir DIR]\n");
    return 2;
  }
  std::string data_dir;
  for (int i = 2; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--data-dir") data_dir = argv[i + 1];
  ef::data::datasets::FashionMnist data;
  try {
    data = ef::data::datasets::fashion_mnist(data_dir);
  } catch (const ef::NotFoundError& e) {
    std::fprintf(stderr, "%s\n", e.message().c_str());
    return 77;  // skipped: the dataset is not installed
  }
  try {
    const ef::saved_model::LoadedModel model = ef::saved_model::load(argv[1]);
    ef::nn::metrics::SparseCategoricalAccuracy accuracy;
    for (const ef::data::Element& batch :
         ef::data::Dataset::from_tensor_slices({data.test.images, data.test.labels}).batch(1000)) {
      const auto outputs = model.call_signature("serving_default", {{"images", batch[0]}});
      accuracy.update_state(batch[1], outputs.begin()->second);
    }
    std::printf("%s: test accuracy %.4f\n", argv[1], accuracy.result().item<float>());
    return 0;
  } catch (const ef::Error& e) {
    std::fprintf(stderr, "classify_saved_model: %s\n", e.what());
    return 1;
  }
}
