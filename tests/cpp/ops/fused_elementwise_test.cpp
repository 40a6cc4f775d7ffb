// fused_elementwise: every fusible op alone and chains of 2, 8 and 20 instructions give
// bit for bit the values of the same ops run one by one; scalar, several, empty and
// non-contiguous inputs; block edges; 1 and 2 threads; several outputs; gradients
// (first and second order); and each class of invalid program with its error.
#include <random>

#include "test_util.h"

#include <eagerflow/ops/fused_elementwise.h>
#include <eagerflow/runtime/dispatch.h>

namespace ef {
namespace {

using testing::expect_meta;

using testing::with_threads;

// The program run op by op through the ops' own public dispatch: the reference.
std::vector<Tensor> run_unfused(const FusedProgram& p, std::span<const Tensor> inputs) {
  std::vector<Tensor> values(inputs.begin(), inputs.end());
  for (const FusedInstruction& ins : p.instructions) {
    std::vector<Tensor> operands;
    for (int64_t v : ins.operands) operands.push_back(values[v]);
    values.push_back(run_op(*ins.op, operands, {}, CallSite::current()));
  }
  std::vector<Tensor> outs;
  for (int64_t v : p.outputs) outs.push_back(values[v]);
  return outs;
}

// Same shape, dtype and bits (NaN matches any NaN).
void expect_identical(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();  // exact for float32 too
  int mismatches = 0;
  for (size_t i = 0; i < g.size() && mismatches < 5; ++i) {
    if (g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) continue;
    ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", unfused " << w[i];
    ++mismatches;
  }
}

// The reference runs on one thread: an eager op on several threads splits its elements
// wherever n / threads falls, and libm's vector and scalar versions (Note [vector math])
// may differ in the last bit there; fused blocks always start at multiples of the block.
void expect_matches_unfused(const FusedProgram& p, const std::vector<Tensor>& inputs, const std::string& what) {
  std::vector<Tensor> want;
  with_threads(1, [&] { want = run_unfused(p, inputs); });
  std::vector<Tensor> got = fused_elementwise(p, inputs);
  ASSERT_EQ(got.size(), want.size());
  // Every fused output has the output shape, also one computed from single elements only.
  for (size_t j = 0; j < got.size(); ++j)
    expect_identical(got[j], broadcast_to(want[j], got[j].shape()), what + ", output " + std::to_string(j));
}

Tensor values_in(const Shape& shape, DType dtype, int64_t seed, double lo = -2, double hi = 2) {
  return random::uniform(shape, lo, hi, dtype, seed);
}

const std::vector<std::string> kUnary = {"negative", "abs",  "square",  "exp",     "log",      "sqrt",
                                         "rsqrt",    "tanh", "sigmoid", "relu",    "sin",      "cos",
                                         "reciprocal", "softplus", "softsign", "expm1", "atan", "erf"};
const std::vector<std::string> kBinary = {"add",     "subtract", "multiply", "divide",           "maximum",
                                          "minimum", "pow",      "squared_difference", "sigmoid_grad"};

// A chain of `length` instructions: each applies a unary op to the last value or a
// binary op to the last value and an earlier one (inputs included); the last value and
// one earlier result are the outputs.
FusedProgram random_chain(int length, int num_inputs, uint32_t seed) {
  std::mt19937 rng(seed);
  FusedProgram p;
  p.num_inputs = num_inputs;
  int64_t last = 0;
  for (int k = 0; k < length; ++k) {
    const int64_t defined = num_inputs + k;
    if (k == 0 || rng() % 2) {
      const int64_t other = (k < num_inputs) ? k : static_cast<int64_t>(rng() % defined);
      const std::string& op = kBinary[rng() % kBinary.size()];
      last = rng() % 2 ? p.add(op, {last, other}) : p.add(op, {other, last});
    } else {
      last = p.add(kUnary[rng() % kUnary.size()], {last});
    }
  }
  p.outputs = {last};
  if (length > 2) p.outputs.push_back(num_inputs + length / 2);
  return p;
}

TEST(FusedElementwise, EveryFusibleOpAloneMatchesTheOp) {
  int fusible = 0;
  for (const OpDef* op : registered_ops()) {
    if (!op->elementwise_block.fn) continue;
    ++fusible;
    EXPECT_TRUE(op->traits.elementwise) << op->name;
    FusedProgram p;
    p.num_inputs = op->elementwise_block.arity;
    std::vector<int64_t> operands;
    for (int64_t i = 0; i < p.num_inputs; ++i) operands.push_back(i);
    p.outputs = {p.add(*op, operands)};
    for (DType dtype : {DType::Float32, DType::Float64}) {
      std::vector<Tensor> inputs;
      for (int64_t i = 0; i < p.num_inputs; ++i) inputs.push_back(values_in({5003}, dtype, 11 + i, 0.05, 0.95));
      expect_matches_unfused(p, inputs, std::string(op->name));
    }
  }
  // The builders fill the hook in; ops reading attrs or returning bool are left out.
  for (const char* name : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "pow",
                           "squared_difference", "negative", "abs", "square", "exp", "log", "sqrt", "rsqrt",
                           "tanh", "sigmoid", "relu", "sin", "cos", "reciprocal", "sigmoid_grad"})
    EXPECT_NE(find_op(name).elementwise_block.fn, nullptr) << name;
  for (const char* name : {"leaky_relu", "gelu", "equal", "isnan", "logical_and", "matmul", "cast"})
    EXPECT_EQ(find_op(name).elementwise_block.fn, nullptr) << name;
  EXPECT_GE(fusible, 40);
}

TEST(FusedElementwise, ChainsMatchTheOpsOneByOne) {
  // Sizes around the block (1024 float32, 512 float64 elements) and not multiples of it.
  for (int length : {1, 2, 8, 20}) {
    for (int num_inputs : {1, 3}) {
      FusedProgram p = random_chain(length, num_inputs, 100 * length + num_inputs);
      for (DType dtype : {DType::Float32, DType::Float64}) {
        for (int64_t n : {1, 7, 511, 512, 1025, 2048, 10003}) {
          std::vector<Tensor> inputs;
          for (int i = 0; i < num_inputs; ++i) inputs.push_back(values_in({n}, dtype, 7 * i + n));
          expect_matches_unfused(p, inputs, "chain of " + std::to_string(length) + ", n " + std::to_string(n));
        }
      }
    }
  }
}

TEST(FusedElementwise, ScalarInputsBroadcast) {
  FusedProgram p;  // y = tanh(x * a + b) - exp(-a), with a and b single elements
  p.num_inputs = 3;
  int64_t xa = p.add("multiply", {0, 1});
  int64_t t = p.add("tanh", {p.add("add", {xa, 2})});
  int64_t e = p.add("exp", {p.add("negative", {1})});  // only single elements: computed once per block
  p.outputs = {p.add("subtract", {t, e}), e};
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor x = values_in({3, 4097}, dtype, 1);
    expect_matches_unfused(p, {x, values_in({}, dtype, 2), values_in({1, 1}, dtype, 3)}, "scalars");
    // Single-element inputs of higher rank broadcast the output up, as in NumPy.
    std::vector<Tensor> out = fused_elementwise(p, {x, values_in({1, 1, 1}, dtype, 2), values_in({}, dtype, 3)});
    expect_meta(out[0], {1, 3, 4097}, dtype);
    expect_meta(out[1], {1, 3, 4097}, dtype);  // an output of single elements is filled
  }
  // All inputs single elements.
  expect_matches_unfused(p, {values_in({1}, DType::Float32, 4), values_in({}, DType::Float32, 5),
                             values_in({}, DType::Float32, 6)},
                         "all scalars");
}

TEST(FusedElementwise, EmptyTensors) {
  FusedProgram p = random_chain(8, 2, 3);
  std::vector<Tensor> out = fused_elementwise(p, {values_in({0, 3}, DType::Float32, 1), values_in({}, DType::Float32, 2)});
  ASSERT_EQ(out.size(), 2u);
  expect_meta(out[0], {0, 3}, DType::Float32);
  expect_meta(fused_elementwise(p, {values_in({0}, DType::Float64, 1), values_in({0}, DType::Float64, 2)})[1], {0},
              DType::Float64);
}

TEST(FusedElementwise, NonContiguousInputs) {
  FusedProgram p = random_chain(8, 2, 5);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor x = transpose(values_in({300, 70}, dtype, 1));  // a strided view
    Tensor y = strided_slice(values_in({70, 600}, dtype, 2), {0, 0}, {70, 600}, {1, 2});
    ASSERT_FALSE(x.is_contiguous());
    ASSERT_FALSE(y.is_contiguous());
    // Equal to the same values given contiguous, and so to the ops one by one.
    std::vector<Tensor> want = fused_elementwise(p, {x.contiguous(), y.contiguous()});
    std::vector<Tensor> got = fused_elementwise(p, {x, y});
    for (size_t j = 0; j < got.size(); ++j) expect_identical(got[j], want[j], "non-contiguous");
    expect_matches_unfused(p, {x.contiguous(), y.contiguous()}, "contiguous copies");
  }
}

TEST(FusedElementwise, BroadcastViewsOfOneElementAreReadInPlace) {
  // reduce_sum's gradient is a broadcast_to view (all strides 0): the kernel reads its
  // one element instead of materializing the view.
  FusedProgram p = random_chain(8, 2, 7);
  Tensor x = values_in({400, 300}, DType::Float32, 1);
  Tensor g = broadcast_to(values_in({1, 1}, DType::Float32, 2), {400, 300});
  ASSERT_FALSE(g.is_contiguous());
  const AllocatorStats before = cpu_allocator_stats();
  std::vector<Tensor> got = fused_elementwise(p, {x, g});
  const AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.allocations - before.allocations, got.size());  // the outputs only
  std::vector<Tensor> want = fused_elementwise(p, {x, g.contiguous()});
  for (size_t j = 0; j < got.size(); ++j) expect_identical(got[j], want[j], "broadcast view");
}

TEST(FusedElementwise, SameBitsOnOneAndTwoThreads) {
  FusedProgram p = random_chain(8, 2, 9);
  std::vector<Tensor> inputs = {values_in({200003}, DType::Float32, 1), values_in({200003}, DType::Float32, 2)};
  std::vector<Tensor> want;
  with_threads(1, [&] { want = run_unfused(p, inputs); });
  for (int threads : {1, 2}) {
    with_threads(threads, [&] {
      std::vector<Tensor> got = fused_elementwise(p, inputs);
      for (size_t j = 0; j < got.size(); ++j)
        expect_identical(got[j], want[j], std::to_string(threads) + " threads");
    });
  }
}

TEST(FusedElementwise, SeveralOutputsDuplicatesAndDeadResults) {
  FusedProgram p;
  p.num_inputs = 2;
  int64_t s = p.add("add", {0, 1});
  p.add("exp", {s});  // read by nobody: computed into a scratch buffer and dropped
  int64_t q = p.add("square", {s});
  int64_t r = p.add("maximum", {q, q});  // one value as both operands
  p.outputs = {r, s, r};
  std::vector<Tensor> inputs = {values_in({9000}, DType::Float32, 1), values_in({9000}, DType::Float32, 2)};
  expect_matches_unfused(p, inputs, "several outputs");
  FusedProgram decoded = fused_program_from_attrs(fused_program_to_attrs(p));
  EXPECT_EQ(decoded.num_inputs, 2);
  EXPECT_EQ(decoded.outputs, p.outputs);
  ASSERT_EQ(decoded.instructions.size(), 4u);
  EXPECT_EQ(decoded.instructions[3].op->name, "maximum");
  EXPECT_EQ(decoded.instructions[3].operands, (std::vector<int64_t>{q, q}));
}

TEST(FusedElementwise, LargeOutputsStreamedPastTheCache) {
  // Over 16 MiB of outputs are computed into scratch and written with streaming stores.
  FusedProgram p = random_chain(8, 2, 21);
  p.outputs.push_back(p.outputs[0]);  // a repeated output is copied, then streamed too
  const int64_t n = (int64_t{8} << 20) / 4 + 1003;
  expect_matches_unfused(p, {values_in({n}, DType::Float32, 1), values_in({}, DType::Float32, 2)}, "streamed");
}

TEST(FusedElementwise, ManyProgramsInTurn) {
  // More programs than the per-thread plan cache holds, run in turn twice.
  std::vector<FusedProgram> programs;
  for (int k = 0; k < 12; ++k) programs.push_back(random_chain(3 + k % 4, 2, 500 + k));
  std::vector<Tensor> inputs = {values_in({300}, DType::Float64, 1), values_in({300}, DType::Float64, 2)};
  for (int round = 0; round < 2; ++round)
    for (size_t k = 0; k < programs.size(); ++k)
      expect_matches_unfused(programs[k], inputs, "program " + std::to_string(k));
}

TEST(FusedElementwise, Gradients) {
  FusedProgram p;  // tanh(x * a + b) * sigmoid(x) - exp(-(x * x)), and a second output x * a
  p.num_inputs = 3;
  int64_t xa = p.add("multiply", {0, 1});
  int64_t t = p.add("tanh", {p.add("add", {xa, 2})});
  int64_t prod = p.add("multiply", {t, p.add("sigmoid", {0})});
  int64_t e = p.add("exp", {p.add("negative", {p.add("square", {0})})});
  p.outputs = {p.add("subtract", {prod, e}), xa};
  auto f = [&](const std::vector<Tensor>& in) {
    std::vector<Tensor> out = fused_elementwise(p, in);
    return out[0] + 3.0 * out[1];
  };
  Tensor x = testing::rand64({3, 5}, 1), a = testing::rand64({3, 5}, 2), b = testing::rand64({}, 3);
  testing::expect_gradients(f, {x, a, b});
  // Equal to the tape's gradients over the unfused chain.
  GradientTape tape(/*persistent=*/true);
  for (const Tensor& v : {x, a, b}) tape.watch(v);
  Tensor fused = f({x, a, b});
  std::vector<Tensor> unfused_out = run_unfused(p, std::vector<Tensor>{x, a, b});
  Tensor unfused = unfused_out[0] + 3.0 * unfused_out[1];
  std::vector<Tensor> gf = tape.gradient(fused, {x, a, b}), gu = tape.gradient(unfused, {x, a, b});
  for (int i = 0; i < 3; ++i) testing::expect_values(gf[i], gu[i].to_vector<double>(), 1e-14);
  // Gradients stop at an instruction without one (floor), as they do on a tape.
  FusedProgram q;
  q.num_inputs = 1;
  q.outputs = {q.add("add", {q.add("floor", {0}), q.add("square", {0})})};
  GradientTape tape2;
  tape2.watch(x);
  Tensor y = fused_elementwise(q, {x})[0];
  testing::expect_values(tape2.gradient(y, x), (2.0 * x).to_vector<double>(), 1e-15);
}

TEST(FusedElementwise, InvalidPrograms) {
  const OpDef& fused = find_op("fused_elementwise");
  Tensor x = values_in({4}, DType::Float32, 1);
  auto run = [&](Attrs attrs, std::vector<Tensor> inputs) {
    return run_op_multi(fused, inputs, attrs, CallSite::current());
  };
  using S = std::string;
  EXPECT_ERROR(run({S("exp,nope"), Dims{0, 1}, Dims{2}, int64_t{1}}, {x}), NotFoundError, "fused_elementwise",
               "instruction 1", "'nope'");
  EXPECT_ERROR(run({S("matmul"), Dims{0, 0}, Dims{1}, int64_t{1}}, {x}), InvalidArgumentError, "'matmul'",
               "not an elementwise op");
  EXPECT_ERROR(run({S("leaky_relu"), Dims{0}, Dims{1}, int64_t{1}}, {x}), InvalidArgumentError, "'leaky_relu'",
               "cannot be fused");
  EXPECT_ERROR(run({S("equal"), Dims{0, 0}, Dims{1}, int64_t{1}}, {x}), InvalidArgumentError, "'equal'");
  EXPECT_ERROR(run({S(""), Dims{}, Dims{}, int64_t{1}}, {x}), InvalidArgumentError, "no instructions");
  EXPECT_ERROR(run({S("exp,add"), Dims{0, 1}, Dims{2}, int64_t{1}}, {x}), InvalidArgumentError,
               "instruction 1 ('add') takes 2 operands");
  EXPECT_ERROR(run({S("exp"), Dims{0, 0}, Dims{1}, int64_t{1}}, {x}), InvalidArgumentError,
               "take 1 operands in all, but 2");
  EXPECT_ERROR(run({S("exp,tanh"), Dims{0, 2}, Dims{2}, int64_t{1}}, {x}), InvalidArgumentError,
               "operand 0 of instruction 1 ('tanh') is value 2", "values 0..1");
  EXPECT_ERROR(run({S("exp"), Dims{-1}, Dims{1}, int64_t{1}}, {x}), InvalidArgumentError, "is value -1");
  EXPECT_ERROR(run({S("exp"), Dims{0}, Dims{}, int64_t{1}}, {x}), InvalidArgumentError, "no outputs");
  EXPECT_ERROR(run({S("exp"), Dims{0}, Dims{0}, int64_t{1}}, {x}), InvalidArgumentError,
               "output 0 is value 0, which is not an instruction result");
  EXPECT_ERROR(run({S("exp"), Dims{0}, Dims{1}, int64_t{0}}, {x}), InvalidArgumentError, "at least one input");
  EXPECT_ERROR(run({S("exp"), Dims{0}}, {x}), InvalidArgumentError, "expected attrs");

  FusedProgram p;
  p.num_inputs = 2;
  p.outputs = {p.add("add", {0, 1})};
  EXPECT_ERROR(fused_elementwise(p, {x}), InvalidArgumentError, "takes 2 inputs, got 1");
  EXPECT_ERROR(fused_elementwise(p, {x, values_in({4}, DType::Float64, 2)}), InvalidArgumentError,
               "input 0 is float32 and input 1 is float64");
  Tensor i1 = constant({1, 2}), i2 = constant({3, 4});
  EXPECT_ERROR(fused_elementwise(p, {i1, i2}), InvalidArgumentError, "int32",
               "float32, float64");
  EXPECT_ERROR(fused_elementwise(p, {values_in({3, 4}, DType::Float32, 1), values_in({4}, DType::Float32, 2)}),
               InvalidArgumentError, "input 1 has shape [4]", "output shape [3, 4]", "single element");
  EXPECT_ERROR(fused_elementwise(p, {values_in({3}, DType::Float32, 1), values_in({5}, DType::Float32, 2)}),
               InvalidArgumentError, "input 1 has shape [5]", "does not broadcast with [3]");
  EXPECT_ERROR(p.add("nope", {0}), NotFoundError, "nope");
  FusedProgram no_op;
  no_op.num_inputs = 1;
  no_op.instructions.push_back({nullptr, {0}});
  no_op.outputs = {1};
  EXPECT_ERROR(fused_elementwise(no_op, {x}), InvalidArgumentError, "instruction 0 has no op");
}

}  // namespace
}  // namespace ef
