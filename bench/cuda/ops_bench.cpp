// CUDA op timings for scripts/gpu_check.sh, printed as "name median_ms" lines that
// bench/cuda/torch_ops_bench.py prints for PyTorch on the same GPU. Medians of
// synchronized repetitions after a warm-up (which also compiles the kernels).
// Build: g++ -O2 -std=c++20 -Iinclude bench/cuda/ops_bench.cpp -Lbuild -leagerflow
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "eagerflow/core/cuda.h"
#include "eagerflow/eagerflow.h"

using namespace ef;

double median_ms(const std::function<void()>& step, int reps) {
  for (int i = 0; i < 3; ++i) step();
  cuda::synchronize();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    step();
    cuda::synchronize();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int main() {
  if (!cuda::is_available()) {
    std::printf("no CUDA device: %s\n", cuda::unavailable_reason().c_str());
    return 0;
  }
  Tensor a = random::normal({4096, 4096}).gpu(), b = random::normal({4096, 4096}).gpu();
  std::printf("matmul_4096_f32 %.4f\n", median_ms([&] { matmul(a, b); }, 20));
  // bfloat16: widened to float32 on the device, a float32 GEMM, rounded (no tensor cores yet).
  Tensor ah = cast(a, DType::BFloat16), bh = cast(b, DType::BFloat16);
  std::printf("matmul_4096_bf16 %.4f\n", median_ms([&] { matmul(ah, bh); }, 20));
  Tensor x = random::normal({100'000'000}).gpu(), y = random::normal({100'000'000}).gpu();
  std::printf("add_1e8_f32 %.4f\n", median_ms([&] { add(x, y); }, 20));
  Tensor xh = cast(x, DType::BFloat16), yh = cast(y, DType::BFloat16);
  std::printf("add_1e8_bf16 %.4f\n", median_ms([&] { add(xh, yh); }, 20));
  std::printf("chain5_1e8_f32 %.4f\n", median_ms([&] { relu(tanh(x * y + 1.f) - 0.5f); }, 10));
  std::printf("reduce_sum_1e8_f32 %.4f\n", median_ms([&] { reduce_sum(x); }, 20));
  Tensor s = ones({8}).gpu();
  std::printf("tiny_add_x1000 %.4f\n", median_ms(
                                           [&] {
                                             for (int i = 0; i < 1000; ++i) add(s, s);
                                           },
                                           10));
  Tensor img = random::normal({32, 28, 28, 16}).gpu(), f = random::normal({3, 3, 16, 32}).gpu();
  std::printf("conv2d_32x28x28x16_k3x32 %.4f\n", median_ms([&] { conv2d(img, f, {1, 1}, "SAME"); }, 20));
  Tensor logits = random::normal({512, 1000}).gpu();
  std::printf("softmax_512x1000 %.4f\n", median_ms([&] { softmax(logits); }, 20));
  return 0;
}
