// Median times of the three float32 convolution kernels (conv2d, conv2d_backprop_input,
// conv2d_backprop_filter) on oneDNN and on im2col + GEMM, on the Fashion-MNIST CNN's
// two layers and a few other shapes: the measurements behind the kernel choice in
// src/ops/nn/conv2d_onednn.cpp (Note [conv2d on oneDNN]).
//   conv_kernels [--threads N] [--repetitions R]
// Prints one line per shape and kernel: milliseconds on im2col, on oneDNN (whether or
// not mode Auto would pick it), and the ratio.
#include <eagerflow/eagerflow.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "ops/nn/conv2d_onednn.h"

namespace {

struct Case {
  const char* name;
  int64_t n, h, w, c, o, k, stride, dilation;
  const char* padding;
};

const Case kCases[] = {
    {"cnn conv1 28x28x1->32 3x3", 32, 28, 28, 1, 32, 3, 1, 1, "VALID"},
    {"cnn conv2 13x13x32->64 3x3", 32, 13, 13, 32, 64, 3, 1, 1, "VALID"},
    {"32x32x3->32 3x3 SAME", 32, 32, 32, 3, 32, 3, 1, 1, "SAME"},
    {"14x14x64->64 3x3 SAME", 32, 14, 14, 64, 64, 3, 1, 1, "SAME"},
    {"28x28x32->64 3x3 stride 2 SAME", 32, 28, 28, 32, 64, 3, 2, 1, "SAME"},
    {"16x16x16->32 3x3 dilation 2", 32, 16, 16, 16, 32, 3, 1, 2, "VALID"},
    {"28x28x16->16 5x5 SAME batch 1", 1, 28, 28, 16, 16, 5, 1, 1, "SAME"},
};

double median_ms(const std::function<void()>& fn, int repetitions) {
  for (int i = 0; i < 3; ++i) fn();  // warm-up: primitive creation, caches
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + repetitions / 2, times.end());
  return times[repetitions / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int threads = ef::num_threads(), repetitions = 31;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    else if (flag == "--repetitions") repetitions = std::max(1, std::atoi(argv[i + 1]));
  }
  ef::set_num_threads(threads);
  if (!ef::detail::onednn_built()) std::printf("this build has no oneDNN: both columns are im2col\n");
  std::printf("threads %d, median of %d, milliseconds\n", threads, repetitions);
  std::printf("%-34s %-16s %9s %9s %7s\n", "shape", "kernel", "im2col", "oneDNN", "ratio");
  for (const Case& c : kCases) {
    const std::vector<int64_t> s{c.stride}, d{c.dilation};
    const ef::Tensor x = ef::random::normal({c.n, c.h, c.w, c.c}, 0, 1, ef::DType::Float32, 1);
    const ef::Tensor w = ef::random::normal({c.k, c.k, c.c, c.o}, 0, 1, ef::DType::Float32, 2);
    const ef::Tensor y = ef::conv2d(x, w, s, c.padding, d);
    const ef::Tensor dy = ef::random::normal(y.shape(), 0, 1, ef::DType::Float32, 3);
    const std::pair<const char*, std::function<void()>> kernels[] = {
        {"forward", [&] { ef::conv2d(x, w, s, c.padding, d); }},
        {"backprop_input", [&] { ef::conv2d_backprop_input(x.shape(), w, dy, s, c.padding, d); }},
        {"backprop_filter", [&] { ef::conv2d_backprop_filter(x, w.shape(), dy, s, c.padding, d); }},
    };
    for (const auto& [kernel, fn] : kernels) {
      ef::detail::set_onednn_mode(ef::detail::OnednnMode::Off);
      const double ours = median_ms(fn, repetitions);
      ef::detail::set_onednn_mode(ef::detail::OnednnMode::Always);
      const double dnnl = median_ms(fn, repetitions);
      std::printf("%-34s %-16s %9.3f %9.3f %7.2f\n", c.name, kernel, ours, dnnl, ours / dnnl);
    }
  }
  return 0;
}
