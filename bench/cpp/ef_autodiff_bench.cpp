// eagerflow side of the autodiff benchmarks: the cost of recording a tiny op on a tape,
// and a backward pass over a chain of tiny ops (scripts/bench.py reports both per op).
#include <eagerflow/eagerflow.h>

#include <memory>

#include "bench_cases.h"

void register_autodiff_benchmarks() {
  // A 1-element add while a tape records it (compare with dispatch/add_1elem).
  bench::register_one("tape/record_add_1elem", [](benchmark::State& st) {
    ef::Tensor a = ef::constant({1.f}), b = ef::constant({2.f});
    ef::GradientTape tape(/*persistent=*/true);
    tape.watch(a);
    int64_t ops = 0;
    for (auto _ : st) {
      benchmark::DoNotOptimize(ef::add(a, b));
      if (++ops % 10000 == 0) {  // keep the tape from growing without bound
        st.PauseTiming();
        tape.reset();
        tape.watch(a);
        st.ResumeTiming();
      }
    }
  });
  // gradient() over y = x * c * c * ... (n multiplies); only the backward pass is timed.
  bench::register_sized("backward", {10000}, [](benchmark::State& st, int64_t n) {
    ef::Tensor x = ef::constant({1.f}), c = ef::constant({1.0001f});
    for (auto _ : st) {
      st.PauseTiming();
      {
        auto tape = std::make_unique<ef::GradientTape>();
        tape->watch(x);
        ef::Tensor y = x;
        for (int64_t i = 0; i < n; ++i) y = y * c;
        st.ResumeTiming();
        benchmark::DoNotOptimize(tape->gradient(y, x));
        st.PauseTiming();
      }
      st.ResumeTiming();
    }
  });
}
