// The training loop shared by the Fashion-MNIST examples: flags, a shuffled batched
// pipeline, Adam on sparse categorical cross-entropy with a progress bar per epoch,
// test accuracy, and a checkpoint saved every epoch and restored into a fresh model.
#pragma once

#include <eagerflow/eagerflow.h>
#ifdef EF_EXAMPLES_DISTRIBUTE  // built with MPI: --distributed trains one replica per process
#include <eagerflow/distribute/gradient_sync.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace example {

struct Options {
  int epochs = 5;
  int64_t batch_size = 32;
  double learning_rate = 1e-3;
  int64_t train_examples = 60000;  // a prefix, for quick runs
  int64_t seed = 1;
  std::string data_dir;  // default: Debian's dataset-fashion-mnist folder
  std::string checkpoint_dir = "checkpoints";
  // A mixed-precision policy (eagerflow/nn/mixed_precision.h): float32, mixed_bfloat16,
  // mixed_float16 (which adds dynamic loss scaling), ...
  std::string precision = "float32";
  // Under mpirun: one replica per process, each training on its share of the examples
  // with batches of batch_size / processes, gradients averaged during the backward pass.
  bool distributed = false;
};

// --epochs N --batch-size N --learning-rate X --train-examples N --seed N --data-dir D
// --checkpoint-dir D --precision P --distributed. Exits with a usage line on anything else.
inline Options parse_flags(int argc, char** argv, Options options) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--distributed") {
      options.distributed = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: missing value for %s\n", argv[0], flag.c_str());
      std::exit(2);
    }
    std::string value = argv[++i];
    if (flag == "--epochs") options.epochs = std::stoi(value);
    else if (flag == "--batch-size") options.batch_size = std::stoll(value);
    else if (flag == "--learning-rate") options.learning_rate = std::stod(value);
    else if (flag == "--train-examples") options.train_examples = std::stoll(value);
    else if (flag == "--seed") options.seed = std::stoll(value);
    else if (flag == "--data-dir") options.data_dir = value;
    else if (flag == "--checkpoint-dir") options.checkpoint_dir = value;
    else if (flag == "--precision")
      options.precision = value;
    else {
      std::fprintf(
          stderr,
          "usage: %s [--epochs N] [--batch-size N] [--learning-rate X] [--train-examples N] [--seed N] "
          "[--data-dir DIR] [--checkpoint-dir DIR] [--precision float32|mixed_bfloat16|mixed_float16] "
          "[--distributed]\n",
          argv[0]);
      std::exit(2);
    }
  }
  return options;
}

// The first n rows of t (a view).
inline ef::Tensor first_rows(const ef::Tensor& t, int64_t n) {
  std::vector<int64_t> begin(t.rank(), 0), size(t.rank(), -1);
  size[0] = n;
  return ef::slice(t, begin, size);
}

// Fraction of `images` whose argmax prediction equals the label.
inline double evaluate(ef::nn::Layer& model, const ef::data::datasets::LabeledImages& data) {
  ef::nn::metrics::SparseCategoricalAccuracy accuracy;
  for (const ef::data::Element& batch : ef::data::Dataset::from_tensor_slices({data.images, data.labels}).batch(1000))
    accuracy.update_state(batch[1], model(batch[0]));
  return accuracy.result().item<float>();
}

// Exit code for ctest: the dataset is not installed, so the example is skipped.
constexpr int kSkipped = 77;

// The dataset, or nothing after saying why it is missing.
inline std::optional<ef::data::datasets::FashionMnist> load_data(const Options& options) {
  try {
    return ef::data::datasets::fashion_mnist(options.data_dir);
  } catch (const ef::NotFoundError& e) {
    std::fprintf(stderr, "%s\n", e.message().c_str());
    return std::nullopt;
  }
}

// Trains make_model()'s model and reports; returns the process exit code. The images
// are given to the model as [batch, 28, 28, 1] when `channels_last`, else [batch, 28, 28].
inline int train_and_evaluate(const std::string& title,
                              const std::function<std::shared_ptr<ef::nn::Layer>()>& make_model,
                              const Options& options, bool channels_last) {
  std::optional<ef::data::datasets::FashionMnist> loaded = load_data(options);
  if (!loaded) return kSkipped;
  ef::data::datasets::FashionMnist& data = *loaded;
  if (channels_last) {
    data.train.images = ef::expand_dims(data.train.images, -1);
    data.test.images = ef::expand_dims(data.test.images, -1);
  }
  const int64_t n = std::min<int64_t>(options.train_examples, data.train.images.shape()[0]);
  ef::Tensor images = first_rows(data.train.images, n);
  ef::Tensor labels = first_rows(data.train.labels, n);
  int rank = 0, ranks = 1;
  if (options.distributed) {
#ifdef EF_EXAMPLES_DISTRIBUTE
    ef::distribute::init();
    rank = ef::distribute::rank();
    ranks = ef::distribute::size();
#else
    std::fprintf(stderr, "--distributed: this build has no MPI (install libopenmpi-dev, then rebuild)\n");
    return 2;
#endif
  }
  if (options.batch_size % ranks != 0) {
    std::fprintf(stderr, "--batch-size %lld must be a multiple of the %d processes\n",
                 (long long)options.batch_size, ranks);
    return 2;
  }
  const bool chief = rank == 0;  // prints and writes checkpoints
  const int64_t shard = n / ranks;
  if (ranks > 1) {  // this rank's share: examples rank, rank + ranks, ...
    const ef::Tensor mine = ef::range(rank, rank + ranks * shard, ranks, ef::DType::Int64);
    images = ef::gather(images, mine);
    labels = ef::gather(labels, mine);
  }
  const int64_t batch_size = options.batch_size / ranks;

  const ef::nn::Policy policy(options.precision);
  ef::nn::set_global_policy(policy);  // before the model is made: its layers take it
  ef::random::set_seed(options.seed);
  std::shared_ptr<ef::nn::Layer> model = make_model();
  {
#ifdef EF_EXAMPLES_DISTRIBUTE
    std::optional<ef::distribute::MirroredScope> mirrored;  // every replica starts as rank 0's
    if (ranks > 1) mirrored.emplace();
#endif
    (*model)(first_rows(images, 1));  // built now
  }
#ifdef EF_EXAMPLES_DISTRIBUTE
  std::optional<ef::distribute::GradientSync> sync;  // averages the replicas' gradients
  if (ranks > 1) sync.emplace(model->trainable_variables());
#endif
  ef::optim::Adam adam(options.learning_rate);
  // float16 gradients underflow without loss scaling (Note [dynamic loss scaling]).
  if (policy.is_mixed() && policy.compute_dtype() == ef::DType::Float16) adam.enable_loss_scaling();
  ef::nn::losses::SparseCategoricalCrossentropy loss_fn({.from_logits = true});
  ef::nn::metrics::Mean mean_loss("loss");
  ef::nn::metrics::SparseCategoricalAccuracy accuracy;
  ef::io::Checkpoint checkpoint{{"model", *model}, {"optimizer", adam}};
  ef::io::CheckpointManager manager(checkpoint, options.checkpoint_dir, /*max_to_keep=*/2);

  const int64_t examples = images.shape()[0];
  ef::data::Dataset train = ef::data::Dataset::from_tensor_slices({images, labels})
                                .shuffle(examples, options.seed)
                                .batch(batch_size)
                                .prefetch();
  const int64_t steps = (examples + batch_size - 1) / batch_size;
  if (chief)
    std::printf(
        "%s: %lld training images, %lld test images, batch %lld, Adam(%g), %s%s\n", title.c_str(),
        (long long)n, (long long)data.test.images.shape()[0], (long long)options.batch_size,
        options.learning_rate, policy.name().c_str(),
        ranks > 1 ? (", " + std::to_string(ranks) + " processes (progress: rank 0's share)").c_str() : "");
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    if (chief) std::printf("Epoch %d/%d\n", epoch, options.epochs);
    std::fflush(stdout);
    std::optional<ef::utils::Progbar> bar;
    if (chief) bar.emplace(steps);
    mean_loss.reset_state();
    accuracy.reset_state();
    int64_t step = 0;
    for (const ef::data::Element& batch : train) {
      ef::GradientTape tape;
      ef::Tensor logits = (*model)(batch[0], /*training=*/true);
      ef::Tensor loss = loss_fn(batch[1], logits);  // float32 also under a mixed policy
      std::vector<ef::Variable> variables = model->trainable_variables();
      // The scaling is the identity unless loss scaling is on.
      adam.apply_gradients(adam.get_unscaled_gradients(tape.gradient(adam.get_scaled_loss(loss), variables)),
                           variables);
      mean_loss.update_state(loss);
      accuracy.update_state(batch[1], logits);
      ++step;
      if (bar)
        bar->update(step, {{"loss", mean_loss.result().item<float>()},
                           {"accuracy", accuracy.result().item<float>()}});
    }
    if (chief) manager.save();  // the replicas are equal: one writes
#ifdef EF_EXAMPLES_DISTRIBUTE
    if (ranks > 1) ef::distribute::barrier();  // the checkpoint exists for every rank
#endif
  }

  const double test_accuracy = evaluate(*model, data.test);
  if (chief) std::printf("test accuracy: %.4f\n", test_accuracy);

  // A fresh model (built by one call) restored from the newest checkpoint predicts the same.
  std::shared_ptr<ef::nn::Layer> restored = make_model();
  (*restored)(first_rows(data.test.images, 1));
  ef::optim::Adam fresh_adam(options.learning_rate);
  if (adam.loss_scaling()) fresh_adam.enable_loss_scaling();
  ef::io::Checkpoint restored_checkpoint{{"model", *restored}, {"optimizer", fresh_adam}};
  const std::string latest = manager.latest_checkpoint().value();
  restored_checkpoint.restore(latest);
  const double restored_accuracy = evaluate(*restored, data.test);
  if (chief)
    std::printf("restored %s: test accuracy %.4f (%s)\n", latest.c_str(), restored_accuracy,
                restored_accuracy == test_accuracy ? "the same" : "DIFFERENT");
  return restored_accuracy == test_accuracy ? 0 : 1;
}

}  // namespace example
