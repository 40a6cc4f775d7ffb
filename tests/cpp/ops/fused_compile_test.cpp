// Compiled fused kernels (Note [compiled fused kernels]): every compiled op, a chain
// with single elements, repeated outputs, fused_reduce_sum and in-place outputs give
// bit for bit the interpreter's values, for both float dtypes, at sizes around the
// block; the generated source reads as the Note shows; and a compiler that fails leaves
// fused ops running interpreted. Skipped where the library's compiler is missing.
#include <cstdlib>
#include <filesystem>

#include "graph/graph_test_util.h"

#include "backends/cpu/elementwise.h"

#include <eagerflow/ops/fused_elementwise.h>

#include "ops/math/fused_compile.h"
#include "ops/math/kernel_sources.h"
#include "runtime/dispatch_internal.h"

namespace ef {
namespace {

namespace fs = std::filesystem;
using testing::with_threads;

// Kernels go to a directory in the build tree, shared by the test processes: the
// functors' precompiled header is built once, and a clean build compiles every kernel.
class FusedCompile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("EF_KERNEL_CACHE_DIR", (fs::current_path() / "fused-kernel-cache").c_str(), 1);
  }
  void SetUp() override {
    const std::string cxx(detail::kernel_compiler());
    if (!fs::exists(cxx)) GTEST_SKIP() << "the library's compiler " << cxx << " is not on this machine";
  }
  void TearDown() override { set_compile_fused_kernels(false); }
};

// The program's outputs interpreted, then compiled: the same bits.
void expect_compiled_matches(const FusedProgram& p, const std::vector<Tensor>& inputs,
                             const std::string& what, bool reduce = false) {
  SCOPED_TRACE(what);
  auto run = [&](bool compiled) {
    set_compile_fused_kernels(compiled);
    return reduce ? fused_reduce_sum(p, inputs) : fused_elementwise(p, inputs);
  };
  const std::vector<Tensor> want = run(false), got = run(true);
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j) testing::expect_identical(got[j], want[j]);
}

// Uniform values with special ones mixed in: +-0, +-inf, NaN, tiny and huge magnitudes.
Tensor test_values(int64_t n, DType dtype, int64_t seed) {
  std::vector<double> v = random::uniform({n}, -4, 4, DType::Float64, seed).to_vector<double>();
  const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-30, -1e-30, 1e30, -1e30, 100, -100, 20};
  for (size_t i = 0; i < v.size(); i += 37) v[i] = special[(i / 37 + seed) % std::size(special)];
  return cast(constant(v, Shape{n}), dtype);
}

// clang's AddressSanitizer keeps some of the library's simd loops scalar, so the
// interpreter computes tanh and sigmoid in their scalar forms where a compiled kernel
// takes the vector ones, which round differently: chains of them cannot be bit for bit
// equal there. The Release build checks them.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EF_SIMD_LOOPS_STAY_SCALAR 1
#endif
#endif
#ifdef EF_SIMD_LOOPS_STAY_SCALAR
constexpr bool kSimdLoopsStayScalar = true;
#else
constexpr bool kSimdLoopsStayScalar = false;
#endif

TEST_F(FusedCompile, EveryCompiledOpMatchesTheInterpreter) {
  // Per dtype, one program applying every op compiled in it to (x, y): one compile.
  for (DType dtype : {DType::Float32, DType::Float64}) {
    FusedProgram p;
    p.num_inputs = 2;
    for (const OpDef* op : registered_ops()) {
      if (!op->elementwise_block.fn) continue;
      EXPECT_FALSE(op->elementwise_block.functor.empty()) << op->name << " has no shared functor";
      if (cpu::contains(op->elementwise_block.compiled_dtypes, dtype))
        p.outputs.push_back(op->elementwise_block.arity == 1 ? p.add(*op, {0}) : p.add(*op, {0, 1}));
    }
    EXPECT_GE(p.outputs.size(), dtype == DType::Float32 ? 26u : 23u);
    for (int64_t n : {1, 7, 5003})
      expect_compiled_matches(p, {test_values(n, dtype, n), test_values(n, dtype, n + 1)},
                              "every op, " + std::string(name(dtype)) + ", n " + std::to_string(n));
  }
  // Our own float32 exp, tanh and sigmoid are compiled; libm's functions are not.
  for (const char* op : {"exp", "tanh", "sigmoid", "multiply", "divide", "sqrt", "maximum"})
    EXPECT_TRUE(cpu::contains(find_op(op).elementwise_block.compiled_dtypes, DType::Float32)) << op;
  for (const char* op : {"sin", "log", "pow", "softplus"})
    EXPECT_EQ(find_op(op).elementwise_block.compiled_dtypes, 0u) << op;
  EXPECT_FALSE(cpu::contains(find_op("exp").elementwise_block.compiled_dtypes, DType::Float64));
}

TEST_F(FusedCompile, ProgramsWithLibmOpsAreInterpreted) {
  FusedProgram p;
  p.num_inputs = 1;
  p.outputs = {p.add("sin", {p.add("multiply", {0, 0})})};
  const auto plan = detail::fused_plan(fused_program_to_attrs(p));
  set_compile_fused_kernels(true);
  const std::vector<char> single = {0, 0, 0};
  EXPECT_EQ(detail::fused_kernel_source(*plan, DType::Float32, single), "");
  EXPECT_EQ(detail::compiled_fused_kernel(*plan, DType::Float32, single), nullptr);
}

TEST_F(FusedCompile, ChainsSingleElementsAndRepeatedOutputs) {
  if (kSimdLoopsStayScalar)
    GTEST_SKIP() << "clang's AddressSanitizer keeps the interpreter's simd loops scalar";
  // y = tanh(x * a + b) * sigmoid(x) - exp(-(a * a)) * x, with a and b single elements:
  // exp(-(a * a)) only reads single elements (computed once, before the loop); outputs
  // repeat a value, and one output is a single element's value.
  FusedProgram p;
  p.num_inputs = 3;
  const int64_t t = p.add("tanh", {p.add("add", {p.add("multiply", {0, 1}), 2})});
  const int64_t e = p.add("exp", {p.add("negative", {p.add("multiply", {1, 1})})});
  const int64_t y =
      p.add("subtract", {p.add("multiply", {t, p.add("sigmoid", {0})}), p.add("multiply", {e, 0})});
  p.outputs = {y, e, y};
  for (DType dtype : {DType::Float32, DType::Float64})
    for (int threads : {1, 2})
      for (int64_t n : {1, 1023, 1025, 100003})
        with_threads(threads, [&] {
          expect_compiled_matches(
              p, {test_values(n, dtype, n), scalar_tensor(0.75, dtype, "a"), scalar_tensor(-0.5, dtype, "b")},
              "chain, n " + std::to_string(n));
        });
}

TEST_F(FusedCompile, ReduceSumMatchesTheInterpreter) {
  // q' = q - a * y and sum(s * q'): the merged update-and-dot of the L-BFGS two-loop.
  FusedProgram p;
  p.num_inputs = 4;  // q, a, y, s
  const int64_t q = p.add("subtract", {0, p.add("multiply", {1, 2})});
  p.outputs = {q, p.add("multiply", {3, q})};
  for (DType dtype : {DType::Float32, DType::Float64})
    for (int64_t n : {7, 153664})
      with_threads(2, [&] {
        expect_compiled_matches(p,
                                {test_values(n, dtype, 1), scalar_tensor(0.3, dtype, "a"),
                                 test_values(n, dtype, 2), test_values(n, dtype, 3)},
                                "reduce, n " + std::to_string(n), /*reduce=*/true);
      });
}

TEST_F(FusedCompile, OutputsWrittenOverAnInputALaterStepReads) {
  // y = x * a is output 0 and written into x's buffer (the executor's in-place reuse);
  // the later step x + y still reads x. The interpreter stages y in scratch; the compiled
  // loop reads x[i] before writing y[i], so it needs no staging.
  FusedProgram p;
  p.num_inputs = 2;
  const int64_t y = p.add("multiply", {0, 1});
  p.outputs = {y, p.add("tanh", {p.add("add", {0, y})})};
  const OpDef& fused = find_op("fused_elementwise");
  for (int64_t n : {7, 1025, 100003}) {
    SCOPED_TRACE(n);
    const Tensor x = test_values(n, DType::Float32, n), a = scalar_tensor(1.25, DType::Float32, "a");
    set_compile_fused_kernels(false);
    const std::vector<Tensor> want = fused_elementwise(p, {x, a});
    set_compile_fused_kernels(true);
    const Tensor donor = x * 1.0;  // a buffer of its own, given away
    const void* buffer = donor.raw_data();
    const Tensor inputs[] = {donor, a};
    const std::vector<Tensor> got =
        detail::run_op_reusing(fused, inputs, fused_program_to_attrs(p), 0, CallSite::current());
    EXPECT_EQ(got[0].raw_data(), buffer);
    for (size_t j = 0; j < got.size(); ++j) testing::expect_identical(got[j], want[j]);
  }
}

TEST_F(FusedCompile, TheSourceIsOneLoopOverTheFunctors) {
  FusedProgram p;
  p.num_inputs = 2;
  p.outputs = {p.add("tanh", {p.add("multiply", {0, 1})})};
  const auto plan = detail::fused_plan(fused_program_to_attrs(p));
  const std::vector<char> single = {0, 1, 0, 0};  // x, then a single element, then the steps
  const std::string source = detail::fused_kernel_source(*plan, DType::Float32, single);
  for (const char* line : {"using T = float;", "const T v1 = *static_cast<const T*>(in[1]);",
                           "#pragma omp simd", "const T v2 = ef::cpu::functors::MultiplyFn{}(v0, v1);",
                           "const T v3 = ef::cpu::functors::TanhFn{}(v2);", "out0[i] = v3;"})
    EXPECT_NE(source.find(line), std::string::npos) << line << " not in\n" << source;
}

TEST_F(FusedCompile, AFailingCompilerLeavesTheInterpreter) {
  const char* saved = std::getenv("EF_CXX");
  ::setenv("EF_CXX", "/bin/false", 1);
  FusedProgram p;  // a program no other test compiles
  p.num_inputs = 1;
  p.outputs = {p.add("softsign", {p.add("relu6", {0})})};
  const auto plan = detail::fused_plan(fused_program_to_attrs(p));
  set_compile_fused_kernels(true);
  const std::vector<char> single = {0, 0, 0};
  EXPECT_EQ(detail::compiled_fused_kernel(*plan, DType::Float32, single), nullptr);
  expect_compiled_matches(p, {test_values(3000, DType::Float32, 5)}, "with /bin/false as the compiler");
  if (saved)
    ::setenv("EF_CXX", saved, 1);
  else
    ::unsetenv("EF_CXX");
}

TEST_F(FusedCompile, JitCompiledFunctionsMarkTheirFusedNodes) {
  // function(..., jit_compile = true): the optimized trace's fused nodes are marked
  // `compiled` and run compiled while the process-wide switch stays off.
  auto chain = [](const Tensor& x) { return tanh(x * 1.5 + 0.5) * sigmoid(x) - exp(-(x * x)) * 0.25; };
  auto jit = function(chain, "jit_chain", std::nullopt, /*jit_compile=*/true);
  auto plain = function(chain, "chain");
  const Tensor x = test_values(30011, DType::Float32, 9);
  ASSERT_FALSE(compile_fused_kernels());
  const Tensor compiled = jit(x), interpreted = plain(x);
  if (!kSimdLoopsStayScalar) testing::expect_identical(compiled, interpreted);
  const std::string listing = jit.untyped().get_concrete_function({x}).optimized_graph().to_string();
  EXPECT_NE(listing.find("fused_elementwise"), std::string::npos) << listing;
  EXPECT_NE(listing.find("compiled=true"), std::string::npos) << listing;
  EXPECT_EQ(plain.untyped().get_concrete_function({x}).optimized_graph().to_string().find("compiled=true"),
            std::string::npos);
}

TEST_F(FusedCompile, TheSwitch) {
  set_compile_fused_kernels(false);
  EXPECT_FALSE(compile_fused_kernels());
  set_compile_fused_kernels(true);
  EXPECT_TRUE(compile_fused_kernels());
}

}  // namespace
}  // namespace ef
