// PyTorch (libtorch, Debian's libtorch-dev) side of `make bench`: the same cases and
// names as ef_bench.cpp / ef_linalg_bench.cpp, through ATen's C++ API in inference
// mode (no autograd bookkeeping, which eagerflow's ops do not do either).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include "bench_cases.h"

namespace {

at::Tensor make_input(int64_t n, uint32_t seed) {
  std::vector<float> v = bench::input_values(n, seed);
  return at::from_blob(v.data(), {n}, at::kFloat).clone();
}

void register_all() {
  bench::register_one("dispatch/add_1elem", [](benchmark::State& st) {
    c10::InferenceMode guard;
    at::Tensor a = at::full({1}, 1.f), b = at::full({1}, 2.f);
    for (auto _ : st) benchmark::DoNotOptimize(at::add(a, b));
  });
  bench::register_one("dispatch/matmul_1x1", [](benchmark::State& st) {
    c10::InferenceMode guard;
    at::Tensor a = at::full({1, 1}, 1.f), b = at::full({1, 1}, 2.f);
    for (auto _ : st) benchmark::DoNotOptimize(at::matmul(a, b));
  });
  bench::register_sized("matmul", bench::kMatmulSizes, [](benchmark::State& st, int64_t n) {
    c10::InferenceMode guard;
    at::Tensor a = make_input(n * n, 4).reshape({n, n}), b = make_input(n * n, 5).reshape({n, n});
    for (auto _ : st) benchmark::DoNotOptimize(at::matmul(a, b));
    st.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  });
  bench::register_sized("add", bench::kElementwiseSizes, [](benchmark::State& st, int64_t n) {
    c10::InferenceMode guard;
    at::Tensor a = make_input(n, 1), b = make_input(n, 2);
    for (auto _ : st) benchmark::DoNotOptimize(at::add(a, b));
    st.SetBytesProcessed(st.iterations() * n * 3 * 4);
  });
  bench::register_sized("exp", bench::kElementwiseSizes, [](benchmark::State& st, int64_t n) {
    c10::InferenceMode guard;
    at::Tensor a = make_input(n, 3);
    for (auto _ : st) benchmark::DoNotOptimize(at::exp(a));
    st.SetBytesProcessed(st.iterations() * n * 2 * 4);
  });
  bench::register_sized("reduce_sum", bench::kReduceSizes, [](benchmark::State& st, int64_t n) {
    c10::InferenceMode guard;
    at::Tensor a = make_input(n, 6);
    for (auto _ : st) benchmark::DoNotOptimize(at::sum(a));
    st.SetBytesProcessed(st.iterations() * n * 4);
  });
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(bench::bench_threads());
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("library", "pytorch (libtorch)");
  benchmark::AddCustomContext("threads", std::to_string(at::get_num_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
