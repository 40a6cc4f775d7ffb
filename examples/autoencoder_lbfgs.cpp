// A sparse autoencoder on Fashion-MNIST trained by L-BFGS: the benchmark of
// yaroslavvb/stuff `eager_lbfgs/` (TensorFlow eager against PyTorch), reproduced.
//
//   autoencoder_lbfgs [--batch 10000] [--history 5] [--iters 10] [--dtype float32|float64]
//                     [--model tied|ufldl] [--data-dir DIR]
//
// --model tied (the benchmark): 784 -> 196 -> 784 with one weight matrix W [784, 196]
// (the decoder uses Wᵀ), no biases, sigmoid on both layers, loss mean((out - x)²).
// --model ufldl: the full UFLDL sparse-autoencoder cost, untied W1 [196, 784] and
// W2 [784, 196], biases b1 and b2, weight decay λ = 3e-3, KL sparsity ρ = 0.1, β = 3.
// Weights start uniform in ±√6/√(784 + 196 + 1) drawn from NumPy's legacy generator with
// seed 1 (np.random.seed(1); np.random.random(n)), biases at 0; the inputs are the first
// `batch` training images scaled to [0, 1]. L-BFGS without line search, as torch7's
// lbfgs.lua (see optim/lbfgs.h): one step() per iteration, each evaluating the loss once.

#include <eagerflow/eagerflow.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int64_t kVisible = 28 * 28, kHidden = 196;

struct Flags {
  int64_t batch = 10000, history = 5, iters = 10;
  ef::DType dtype = ef::DType::Float32;
  std::string model = "tied";
  std::string data_dir;  // default: the dataset-fashion-mnist folder (ef::data::datasets)
};

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--batch")
      f.batch = std::stoll(value());
    else if (arg == "--history")
      f.history = std::stoll(value());
    else if (arg == "--iters")
      f.iters = std::stoll(value());
    else if (arg == "--model")
      f.model = value();
    else if (arg == "--data-dir")
      f.data_dir = value();
    else if (arg == "--dtype") {
      std::string d = value();
      if (d != "float32" && d != "float64")
        throw std::invalid_argument("--dtype must be float32 or float64, got " + d);
      f.dtype = d == "float32" ? ef::DType::Float32 : ef::DType::Float64;
    } else {
      throw std::invalid_argument("unknown flag " + arg +
                                  " (flags: --batch --history --iters --dtype --model --data-dir)");
    }
  }
  if (f.batch < 1 || f.iters < 0) throw std::invalid_argument("--batch must be >= 1 and --iters >= 0");
  if (f.model != "tied" && f.model != "ufldl") throw std::invalid_argument("--model must be tied or ufldl");
  return f;
}

// The first `count` Fashion-MNIST training images as a [count, 784] tensor of `dtype`
// in [0, 1], converted straight from the file's bytes (no float64 detour for float32:
// these are 188 MB at 60000 images).
ef::Tensor read_images(const std::string& dir, int64_t count, ef::DType dtype) {
  ef::data::IdxFile file = ef::data::datasets::read_fashion_mnist_files(dir).train_images;
  if (count > file.dims[0])
    throw std::invalid_argument("--batch " + std::to_string(count) + " exceeds the " + std::to_string(file.dims[0]) +
                                " training images");
  auto scaled = [&](auto zero) {
    std::vector<decltype(zero)> pixels(static_cast<size_t>(count * kVisible));
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<decltype(zero)>(file.data[i] / 255.0);
    return ef::constant(pixels, {count, kVisible});
  };
  return dtype == ef::DType::Float32 ? scaled(0.0f) : scaled(0.0);
}

// NumPy's legacy np.random.random after np.random.seed(seed): MT19937 seeded by
// init_genrand (std::mt19937's seeding), a 53-bit double from two 32-bit draws.
class NumpyRandom {
 public:
  explicit NumpyRandom(uint32_t seed) : mt_(seed) {}
  double random_sample() {
    const uint64_t a = mt_() >> 5, b = mt_() >> 6;
    return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
  }

 private:
  std::mt19937 mt_;
};

// UFLDL's initializeParameters: uniform in ±√6/√(hidden + visible + 1), row-major.
ef::Tensor uniform_init(NumpyRandom& rng, const ef::Shape& shape, ef::DType dtype) {
  const double r = std::sqrt(6.0) / std::sqrt(double(kHidden + kVisible + 1));
  std::vector<double> values(static_cast<size_t>(shape.num_elements()));
  for (double& v : values) v = rng.random_sample() * 2 * r - r;
  return ef::cast(ef::constant(values, shape), dtype);
}

// mean((sigmoid(sigmoid(x W) Wᵀ) - x)²).
ef::Tensor tied_loss(const ef::Tensor& x, const ef::Variable& w) {
  ef::Tensor hidden = ef::sigmoid(ef::matmul(x, w));
  ef::Tensor out = ef::sigmoid(ef::matmul(hidden, w, false, true));
  return ef::reduce_mean(ef::square(out - x));
}

// UFLDL's sparseAutoencoderCost with examples as rows: ½·mean over examples of
// |out - x|², plus λ/2 (|W1|² + |W2|²), plus β Σ_j KL(ρ ‖ ρ̂_j) with ρ̂ the mean hidden
// activation.
ef::Tensor ufldl_loss(const ef::Tensor& x, const std::vector<ef::Variable>& p) {
  constexpr double kLambda = 3e-3, kRho = 0.1, kBeta = 3;
  const ef::Variable &w1 = p[0], &w2 = p[1], &b1 = p[2], &b2 = p[3];
  ef::Tensor hidden = ef::sigmoid(ef::matmul(x, w1, false, true) + b1);
  ef::Tensor out = ef::sigmoid(ef::matmul(hidden, w2, false, true) + b2);
  const double m = static_cast<double>(x.shape()[0]);
  ef::Tensor reconstruction = ef::reduce_sum(ef::square(out - x)) * (0.5 / m);
  ef::Tensor decay = (ef::reduce_sum(ef::square(w1)) + ef::reduce_sum(ef::square(w2))) * (kLambda / 2);
  ef::Tensor rho_hat = ef::reduce_mean(hidden, {0});
  ef::Tensor kl = kRho * ef::log(kRho / rho_hat) + (1 - kRho) * ef::log((1 - kRho) / (1 - rho_hat));
  return reconstruction + decay + ef::reduce_sum(kl) * kBeta;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Flags flags = parse(argc, argv);
    ef::Tensor x = read_images(flags.data_dir, flags.batch, flags.dtype);
    NumpyRandom rng(1);
    std::vector<ef::Variable> params;
    std::function<ef::Tensor()> loss;
    if (flags.model == "tied") {
      params.emplace_back(uniform_init(rng, {kVisible, kHidden}, flags.dtype), "W");
      loss = [&] { return tied_loss(x, params[0]); };
    } else {
      params.emplace_back(uniform_init(rng, {kHidden, kVisible}, flags.dtype), "W1");
      params.emplace_back(uniform_init(rng, {kVisible, kHidden}, flags.dtype), "W2");
      params.emplace_back(ef::zeros({kHidden}, flags.dtype), "b1");
      params.emplace_back(ef::zeros({kVisible}, flags.dtype), "b2");
      loss = [&] { return ufldl_loss(x, params); };
    }
    ef::optim::LBFGSOptions options;
    options.max_iter = 1;  // one iteration per step(), so that each can be timed
    options.history_size = flags.history;
    ef::optim::LBFGS lbfgs(params, options);

    std::printf("model %s, batch %lld, history %lld, %s\n", flags.model.c_str(), (long long)flags.batch,
                (long long)flags.history, flags.dtype == ef::DType::Float32 ? "float32" : "float64");
    std::vector<double> seconds;
    for (int64_t i = 0; i < flags.iters; ++i) {
      auto start = std::chrono::steady_clock::now();
      double value = lbfgs.step(loss).item<double>();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      std::printf("iteration %3lld  loss %.10g  %.3f s\n", (long long)i, value, seconds.back());
      std::fflush(stdout);
    }
    std::printf("final loss %.10g\n", loss().item<double>());
    if (!seconds.empty()) {
      std::sort(seconds.begin(), seconds.end());
      const size_t n = seconds.size();
      const double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
      std::printf("median seconds per iteration: %.4f\n", median);
    }
    std::printf("peak tensor memory: %.0f MB\n", ef::cpu_allocator_stats().peak_bytes_in_use / 1e6);
  } catch (const std::exception& e) {
    std::cerr << "autoencoder_lbfgs: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
