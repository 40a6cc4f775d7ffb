// The benchmark cases shared by the eagerflow and PyTorch (libtorch) binaries, so that
// both report the same names and scripts/bench.py can put them side by side.
// Each binary registers its own functions under these names.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace bench {

// Sizes (square matmul edge; element counts for elementwise and reductions).
inline const std::vector<int64_t> kMatmulSizes = {256, 1024, 2048};
inline const std::vector<int64_t> kElementwiseSizes = {1000, 100000, 10000000};
inline const std::vector<int64_t> kReduceSizes = {100000, 10000000};

// Both libraries use the same number of threads: EF_BENCH_THREADS or the core count.
inline int bench_threads() {
  if (const char* env = std::getenv("EF_BENCH_THREADS")) return std::max(1, std::atoi(env));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Deterministic inputs in [-1, 1) without depending on either library's RNG.
inline std::vector<float> input_values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.f;
  }
  return v;
}

// Registers fn under `name/arg` for each arg, timed as real (wall-clock) time since
// kernels run on a thread pool.
template <class Fn>
void register_sized(const std::string& name, const std::vector<int64_t>& args, Fn fn) {
  for (int64_t n : args)
    benchmark::RegisterBenchmark((name + "/" + std::to_string(n)).c_str(), [fn, n](benchmark::State& st) { fn(st, n); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
}
template <class Fn>
void register_one(const std::string& name, Fn fn) {
  benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& st) { fn(st); })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace bench
