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
  // Autograd: recording a tiny op, and backward over a chain (see ef_autodiff_bench.cpp).
  bench::register_one("tape/record_add_1elem", [](benchmark::State& st) {
    at::Tensor a = at::full({1}, 1.f).requires_grad_(), b = at::full({1}, 2.f);
    for (auto _ : st) benchmark::DoNotOptimize(at::add(a, b));
  });
  bench::register_sized("backward", {10000}, [](benchmark::State& st, int64_t n) {
    at::Tensor x = at::full({1}, 1.f).requires_grad_(), c = at::full({1}, 1.0001f);
    for (auto _ : st) {
      st.PauseTiming();
      {
        at::Tensor y = x;
        for (int64_t i = 0; i < n; ++i) y = y * c;
        st.ResumeTiming();
        y.backward();
        st.PauseTiming();
        x.mutable_grad().reset();
      }
      st.ResumeTiming();
    }
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
