// Elementwise fusion: 8-op chains run as one fused_elementwise call against the same
// ops run eagerly one by one, beside one read-and-write pass over the same bytes (a
// parallel memcpy into warm memory): the bandwidth floor a fused chain is measured by.
//   chain8:       y = tanh(x * a) * sigmoid(x) - exp(-square(x))        (3 transcendental ops)
//   chain8cheap:  y = abs(relu(x * a + b) * x - square(x - a))           (arithmetic only)
// with a and b single elements. The first is bound by the cost of tanh and exp, the
// second by memory.
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

ef::Tensor cheap_eager(const ef::Tensor& x, const ef::Tensor& a, const ef::Tensor& b) {
  ef::Tensor r = ef::multiply(ef::relu(ef::add(ef::multiply(x, a), b)), x);
  return ef::abs(ef::subtract(r, ef::square(ef::subtract(x, a))));
}

ef::FusedProgram cheap_program() {
  ef::FusedProgram p;
  p.num_inputs = 3;  // x, a, b
  int64_t r = p.add("relu", {p.add("add", {p.add("multiply", {0, 1}), 2})});
  int64_t rx = p.add("multiply", {r, 0});
  int64_t d = p.add("square", {p.add("subtract", {0, 1})});
  p.outputs = {p.add("abs", {p.add("subtract", {rx, d})})};
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
  bench::register_sized("chain8cheap_eager", kChainSizes, [](benchmark::State& st, int64_t n) {
    ef::Tensor x = ef::constant(bench::input_values(n, 1), ef::Shape{n});
    ef::Tensor a = ef::constant(0.75f), b = ef::constant(0.25f);
    for (auto _ : st) benchmark::DoNotOptimize(cheap_eager(x, a, b));
  });
  bench::register_sized("chain8cheap_fused", kChainSizes, [](benchmark::State& st, int64_t n) {
    ef::Tensor x = ef::constant(bench::input_values(n, 1), ef::Shape{n});
    ef::Tensor a = ef::constant(0.75f), b = ef::constant(0.25f);
    const ef::FusedProgram program = cheap_program();
    for (auto _ : st) benchmark::DoNotOptimize(ef::fused_elementwise(program, {x, a, b}));
  });
  // The same chain as a traced function: the fusion pass makes it one fused_elementwise
  // node; without the pass it runs the 8 ops one by one through the graph executor.
  for (bool fusion : {true, false}) {
    bench::register_sized(fusion ? "chain8_function" : "chain8_function_nofusion", kChainSizes,
                          [fusion](benchmark::State& st, int64_t n) {
                            ef::Tensor x = ef::constant(bench::input_values(n, 1), ef::Shape{n});
                            ef::Tensor a = ef::constant(0.75f);
                            const ef::GraphOptimizerOptions saved = ef::graph_optimizer_options();
                            ef::GraphOptimizerOptions options = saved;
                            options.elementwise_fusion = fusion;
                            ef::set_graph_optimizer_options(options);
                            auto f = ef::function(chain_eager);
                            benchmark::DoNotOptimize(f(x, a));  // traces and optimizes
                            ef::set_graph_optimizer_options(saved);
                            for (auto _ : st) benchmark::DoNotOptimize(f(x, a));
                          });
  }
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
