// eagerflow side of `make bench` (scripts/bench.py): dispatch overhead, elementwise
// throughput. matmul and reduce_sum cases live in ef_linalg_bench.cpp.
#include <eagerflow/eagerflow.h>

#include "bench_cases.h"

namespace {

ef::Tensor make_input(int64_t n, uint32_t seed) {
  return ef::constant(bench::input_values(n, seed), ef::Shape{n});
}

void register_elementwise() {
  // A 1-element add: the whole per-call cost of dispatch, inference and allocation.
  bench::register_one("dispatch/add_1elem", [](benchmark::State& st) {
    ef::Tensor a = ef::constant({1.f}), b = ef::constant({2.f});
    for (auto _ : st) benchmark::DoNotOptimize(ef::add(a, b));
  });
  // The same while the profiler records every op (Note [profiler cost]); restarted
  // every 2^16 calls, untimed, so that its buffers stay small.
  bench::register_one("dispatch/add_1elem_profiled", [](benchmark::State& st) {
    ef::Tensor a = ef::constant({1.f}), b = ef::constant({2.f});
    ef::profiler::start();
    int64_t calls = 0;
    for (auto _ : st) {
      benchmark::DoNotOptimize(ef::add(a, b));
      if (++calls % 65536 == 0) {
        st.PauseTiming();
        ef::profiler::stop();
        ef::profiler::start();
        st.ResumeTiming();
      }
    }
    ef::profiler::stop();
  });
  bench::register_sized("add", bench::kElementwiseSizes, [](benchmark::State& st, int64_t n) {
    ef::Tensor a = make_input(n, 1), b = make_input(n, 2);
    for (auto _ : st) benchmark::DoNotOptimize(ef::add(a, b));
    st.SetBytesProcessed(st.iterations() * n * 3 * 4);
  });
  bench::register_sized("exp", bench::kElementwiseSizes, [](benchmark::State& st, int64_t n) {
    ef::Tensor a = make_input(n, 3);
    for (auto _ : st) benchmark::DoNotOptimize(ef::exp(a));
    st.SetBytesProcessed(st.iterations() * n * 2 * 4);
  });
}

}  // namespace

void register_linalg_benchmarks();    // ef_linalg_bench.cpp
void register_autodiff_benchmarks();  // ef_autodiff_bench.cpp
void register_fusion_benchmarks();    // ef_fusion_bench.cpp

int main(int argc, char** argv) {
  ef::set_num_threads(bench::bench_threads());
  register_elementwise();
  register_linalg_benchmarks();
  register_autodiff_benchmarks();
  register_fusion_benchmarks();
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("library", "eagerflow");
  benchmark::AddCustomContext("threads", std::to_string(ef::num_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
