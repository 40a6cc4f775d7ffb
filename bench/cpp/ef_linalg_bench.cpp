// eagerflow matmul and reduce_sum cases of `make bench`.
#include <eagerflow/eagerflow.h>

#include "bench_cases.h"

void register_linalg_benchmarks() {
  bench::register_one("dispatch/matmul_1x1", [](benchmark::State& st) {
    ef::Tensor a = ef::constant({{1.f}}), b = ef::constant({{2.f}});
    for (auto _ : st) benchmark::DoNotOptimize(ef::matmul(a, b));
  });
  bench::register_sized("matmul", bench::kMatmulSizes, [](benchmark::State& st, int64_t n) {
    ef::Tensor a = ef::constant(bench::input_values(n * n, 4), ef::Shape{n, n});
    ef::Tensor b = ef::constant(bench::input_values(n * n, 5), ef::Shape{n, n});
    for (auto _ : st) benchmark::DoNotOptimize(ef::matmul(a, b));
    st.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  });
  bench::register_sized("reduce_sum", bench::kReduceSizes, [](benchmark::State& st, int64_t n) {
    ef::Tensor a = ef::constant(bench::input_values(n, 6), ef::Shape{n});
    for (auto _ : st) benchmark::DoNotOptimize(ef::reduce_sum(a));
    st.SetBytesProcessed(st.iterations() * n * 4);
  });
}
