// Elementwise fusion: an 8-op chain run as one fused_elementwise call against the same
// ops run eagerly one by one, beside one read-and-write pass over the same bytes (a
// parallel memcpy into warm memory): the bandwidth floor a fused chain is measured by.
//   y = tanh(x * a) * sigmoid(x) - exp(-square(x)),  a a single element
#include <cstring>

#include <eagerflow/eagerflow.h>
#include <eagerflow/ops/fused_elementwise.h>

#include "bench_cases.h"

namespace {

const std::vector<int64_t> kChainSizes = {1000000, 10000000};

ef::Tensor chain_eager(const ef::Tensor& x, const ef::Tensor& a) {
  ef::Tensor t = ef::tanh(ef::multiply(x, a));
  ef::Tensor p = ef::multiply(t, ef::sigmoid(x));
  return ef::subtract(p, ef::exp(ef::negative(ef::square(x))));
}

ef::FusedProgram chain_program() {
  ef::FusedProgram p;
  p.num_inputs = 2;  // x, a
  int64_t t = p.add("tanh", {p.add("multiply", {0, 1})});
  int64_t prod = p.add("multiply", {t, p.add("sigmoid", {0})});
  int64_t e = p.add("exp", {p.add("negative", {p.add("square", {0})})});
  p.outputs = {p.add("subtract", {prod, e})};
  return p;
}

}  // namespace

void register_fusion_benchmarks() {
  bench::register_sized("chain8_eager", kChainSizes, [](benchmark::State& st, int64_t n) {
    ef::Tensor x = ef::constant(bench::input_values(n, 1), ef::Shape{n}), a = ef::constant(0.75f);
    for (auto _ : st) benchmark::DoNotOptimize(chain_eager(x, a));
  });
  bench::register_sized("chain8_fused", kChainSizes, [](benchmark::State& st, int64_t n) {
    ef::Tensor x = ef::constant(bench::input_values(n, 1), ef::Shape{n}), a = ef::constant(0.75f);
    const ef::FusedProgram program = chain_program();
    for (auto _ : st) benchmark::DoNotOptimize(ef::fused_elementwise(program, {x, a}));
  });
  // One read and one write of n floats, on the same thread pool.
  bench::register_sized("rw_pass", kChainSizes, [](benchmark::State& st, int64_t n) {
    std::vector<float> src = bench::input_values(n, 1), dst(static_cast<size_t>(n));
    for (auto _ : st) {
      ef::parallel_for(n, 0.1, [&](int64_t b, int64_t e) {
        std::memcpy(dst.data() + b, src.data() + b, static_cast<size_t>(e - b) * sizeof(float));
      });
      benchmark::DoNotOptimize(dst.data());
    }
    st.SetBytesProcessed(st.iterations() * n * 2 * 4);
  });
}
