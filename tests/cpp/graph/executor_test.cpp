// The graph executor (Note [graph execution] in src/graph/executor.cpp): in-place
// reuse of dead buffers and parallel batches of independent nodes give the same bits
// as plain execution, allocate less, never overwrite what others can see, and report
// errors from other threads as the caller's.
#include <cstring>

#include "eagerflow/ops/fused_elementwise.h"
#include "graph/executor.h"
#include "ops/array/copy.h"
#include "runtime/dispatch_internal.h"
#include "graph/graph_test_util.h"

namespace ef {
namespace {

using testing::expect_identical;
using testing::OptionsScope;


// A deep copy: a tensor of its own with a buffer nobody else has.
Tensor fresh_copy(const Tensor& t) {
  Tensor copy = detail::empty_tensor(t.dtype(), t.shape());
  detail::copy_elements(*t.impl(), *copy.impl());
  return copy;
}


GraphOptimizerOptions options(bool fusion, bool reuse, bool parallel) {
  GraphOptimizerOptions o;
  o.elementwise_fusion = fusion;
  o.in_place_reuse = reuse;
  o.parallel_execution = parallel;
  return o;
}

// Every op that allows in-place output (OpTraits::in_place) computes the same bits
// when its output is written over an input: each unary and binary op without attrs,
// on float64, int64 and bool inputs it accepts, donating each input in turn, with
// sizes that leave vector remainders, and with a broadcast second operand.
TEST(Executor, InPlaceOpsComputeTheSameBitsOverTheirInputs) {
  const Tensor a = testing::rand64({3, 37}, 1, 0.25, 2.0), b = testing::rand64({3, 37}, 2, 0.25, 2.0);
  const Tensor row = testing::rand64({37}, 3, 0.25, 2.0);
  const std::vector<std::pair<Tensor, Tensor>> operands = {
      {a, b},
      {cast(a * 10.0, DType::Int64) + 1, cast(b * 10.0, DType::Int64) + 1},
      {a > 1.0, b > 1.0},
  };
  int checked = 0;
  for (const OpDef* op : registered_ops()) {
    if (!op->traits.in_place || !op->attr_names.empty() || op->name == "fused_elementwise") continue;
    const int arity = op->elementwise_block.fn ? op->elementwise_block.arity : -1;
    for (const auto& [x, y] : operands) {
      for (int n = 1; n <= 2; ++n) {
        if (arity >= 0 && arity != n) continue;
        std::vector<Tensor> inputs = n == 1 ? std::vector<Tensor>{x} : std::vector<Tensor>{x, y};
        std::vector<Tensor> expected;
        try {
          expected = run_op_multi(*op, inputs, {}, CallSite::current());
        } catch (const Error&) {
          continue;  // not this arity or dtype
        }
        for (int donor = 0; donor < n; ++donor) {
          SCOPED_TRACE(::testing::Message() << op->name << " donating input " << donor << " of " << x.dtype());
          std::vector<Tensor> in = inputs;
          in[static_cast<size_t>(donor)] = fresh_copy(in[static_cast<size_t>(donor)]);
          const void* buffer = in[static_cast<size_t>(donor)].raw_data();
          std::vector<Tensor> got = detail::run_op_reusing(*op, in, {}, static_cast<size_t>(donor), CallSite::current());
          expect_identical(got[0], expected[0]);
          EXPECT_EQ(got[0].raw_data() == buffer, expected[0].dtype() == in[static_cast<size_t>(donor)].dtype());
          ++checked;
        }
        if (n == 2 && x.dtype() == DType::Float64) {  // y broadcast along the rows: x donates
          std::vector<Tensor> in = {fresh_copy(x), row};
          const std::vector<Tensor> want = run_op_multi(*op, in, {}, CallSite::current());
          expect_identical(detail::run_op_reusing(*op, in, {}, 0, CallSite::current())[0], want[0]);
        }
      }
    }
  }
  EXPECT_GT(checked, 40);
}

// A fused program whose first output is written before a later step reads the input
// it overwrites: that output is staged, and both outputs come out right.
TEST(Executor, FusedElementwiseStagesOutputsOverInputsStillRead) {
  FusedProgram p;
  p.num_inputs = 2;
  const int64_t neg = p.add("negative", {0});
  const int64_t prod = p.add("multiply", {neg, 0});
  const int64_t sum = p.add("add", {prod, 1});
  p.outputs = {neg, sum};
  const Tensor x = testing::rand64({5000}, 4), y = testing::rand64({5000}, 5);
  const std::vector<Tensor> expected = fused_elementwise(p, {x, y});
  expect_identical(expected[0], negative(x));
  expect_identical(expected[1], negative(x) * x + y);
  const OpDef& op = find_op("fused_elementwise");
  for (size_t donor = 0; donor < 2; ++donor) {
    std::vector<Tensor> in = {x, y};
    in[donor] = fresh_copy(in[donor]);
    const void* buffer = in[donor].raw_data();
    std::vector<Tensor> got = detail::run_op_reusing(op, in, fused_program_to_attrs(p), donor, CallSite::current());
    EXPECT_EQ(got[0].raw_data(), buffer);
    expect_identical(got[0], expected[0]);
    expect_identical(got[1], expected[1]);
  }
}

// A function of unfused elementwise ops: with reuse, the chain allocates one buffer
// instead of one per op, with the same bits.
TEST(Executor, InPlaceReuseAllocatesLessWithTheSameBits) {
  auto body = [](Tensor x) { return sqrt(exp(tanh(x * 2.0 + 1.0) - 0.5) * 3.0) / 1.5; };
  const Tensor x = testing::rand64({10000}, 6);
  const Tensor before = fresh_copy(x);
  uint64_t allocations[2];
  Tensor results[2];
  for (int reuse = 0; reuse < 2; ++reuse) {
    OptionsScope scope(options(/*fusion=*/false, reuse, /*parallel=*/false));
    auto f = function(body);
    f(x);  // traces and optimizes
    const uint64_t start = cpu_allocator_stats().allocations;
    results[reuse] = f(x);
    allocations[reuse] = cpu_allocator_stats().allocations - start;
  }
  expect_identical(results[0], results[1]);
  expect_identical(results[1], body(x));
  expect_identical(x, before);  // the argument (a feed) is never overwritten
  EXPECT_GE(allocations[0], 7u);
  EXPECT_LE(allocations[1] + 6, allocations[0]) << allocations[1] << " vs " << allocations[0];
  // A recording tape keeps what it records: nothing is reused then, and the gradient
  // still comes out right.
  OptionsScope scope(options(false, true, false));
  auto f = function(body);
  GradientTape tape;
  tape.watch(x);
  Tensor y = reduce_sum(f(x));
  GradientTape eager;
  eager.watch(x);
  Tensor ey = reduce_sum(body(x));
  testing::expect_values(tape.gradient(y, x), eager.gradient(ey, x).to_vector<double>(), 1e-12);
}

// Feeds, captured constants, variable values, fetched values and values a view still
// shows are never written over, fused or not.
TEST(Executor, NeverOverwritesWhatOthersCanSee) {
  const Tensor c = testing::rand64({64}, 7);
  const Tensor c_before = fresh_copy(c);
  Variable v(testing::rand64({64}, 8));
  const Tensor v_before = fresh_copy(v.value());
  auto body = [&](Tensor x) {
    Tensor fetched = x * 2.0;           // fetched, then read again
    Tensor later = exp(fetched) + 1.0;  // `fetched` at its last use here
    Tensor from_constant = c * 3.0;
    Tensor from_variable = v.value() + 1.0;
    Tensor doubled = x * 4.0;
    Tensor shown = reshape(doubled, {8, 8});  // a view of `doubled`, fetched
    Tensor after_view = doubled - 1.0;        // `doubled` at its last use, but viewed
    return std::vector<Tensor>{fetched, later, from_constant, from_variable, shown, after_view};
  };
  const Tensor x = testing::rand64({64}, 9);
  const Tensor x_before = fresh_copy(x);
  const std::vector<Tensor> eager = body(x);
  for (int fusion = 0; fusion < 2; ++fusion) {
    for (int parallel = 0; parallel < 2; ++parallel) {
      OptionsScope scope(options(fusion, true, parallel));
      auto f = function(body);
      for (int call = 0; call < 2; ++call) {
        const std::vector<Tensor> got = f(x);
        ASSERT_EQ(got.size(), eager.size());
        for (size_t k = 0; k < got.size(); ++k) expect_identical(got[k], eager[k]);
      }
      expect_identical(x, x_before);
      expect_identical(c, c_before);
      expect_identical(v.value(), v_before);
    }
  }
  // Session::run: a fed tensor stays as it was.
  Graph g;
  Tensor p, out;
  {
    Graph::Scope scope(g);
    p = placeholder(DType::Float64, {64}, "p");
    out = tanh(p) * 2.0;
  }
  Session sess(g);
  expect_identical(sess.run(out, {{p, x}}), tanh(x) * 2.0);
  expect_identical(x, x_before);
}

// Eight small independent matmuls and reductions, then a sum: run in a batch, with the
// same bits as one by one and as eager code; a chain never batches.
TEST(Executor, IndependentSmallNodesRunInParallelWithTheSameBits) {
  if (num_threads() < 2) GTEST_SKIP() << "one thread: nothing runs in parallel";
  auto body = [](const std::vector<Tensor>& a) {
    Tensor total = reduce_sum(a[0]);
    for (int i = 0; i < 8; ++i) {
      Tensor w = a[1] * static_cast<double>(i + 1);
      total = total + reduce_sum(matmul(a[0], w)) + reduce_max(a[0] * w);
    }
    return std::vector<Tensor>{total};
  };
  const std::vector<Tensor> args = {testing::rand64({48, 48}, 10), testing::rand64({48, 48}, 11)};
  const Tensor eager = body(args)[0];
  Tensor results[2];
  uint64_t batched[2];
  for (int parallel = 0; parallel < 2; ++parallel) {
    OptionsScope scope(options(true, true, parallel));
    Function f(body);
    f(args);
    const uint64_t start = detail::batched_node_runs();
    results[parallel] = f(args)[0];
    batched[parallel] = detail::batched_node_runs() - start;
  }
  EXPECT_EQ(batched[0], 0u);
  EXPECT_GE(batched[1], 8u);
  expect_identical(results[0], eager);
  expect_identical(results[1], eager);

  Function chain([](const std::vector<Tensor>& a) {
    Tensor x = a[0];
    for (int i = 0; i < 6; ++i) x = matmul(x, a[0]) * 0.01;
    return std::vector<Tensor>{x};
  });
  chain(args);
  const uint64_t start = detail::batched_node_runs();
  chain(args);
  EXPECT_EQ(detail::batched_node_runs(), start);
}

// Random nodes in a batch draw what they draw one by one, call after call.
TEST(Executor, RandomNodesInBatchesDrawTheSameNumbers) {
  auto body = [](const std::vector<Tensor>& a) {
    std::vector<Tensor> out;
    for (int i = 0; i < 6; ++i) out.push_back(random::normal({40, 40}, 0, 1, DType::Float64) + a[0]);
    return out;
  };
  const std::vector<Tensor> args = {testing::rand64({40, 40}, 12)};
  std::vector<Tensor> calls[2];
  for (int parallel = 0; parallel < 2; ++parallel) {
    OptionsScope scope(options(true, true, parallel));
    random::set_seed(123);
    Function f(body);
    for (int call = 0; call < 3; ++call)
      for (const Tensor& t : f(args)) calls[parallel].push_back(t);
  }
  ASSERT_EQ(calls[0].size(), calls[1].size());
  for (size_t k = 0; k < calls[0].size(); ++k) expect_identical(calls[0][k], calls[1][k]);
  EXPECT_FALSE(calls[0][0].to_vector<double>() == calls[0][6].to_vector<double>());  // new numbers per call
}

// An error in one node of a batch reaches the caller as the same typed error with its
// message; the pool keeps working afterwards. Runs inside another graph's scope: the
// workers execute (no builder) as the caller does.
TEST(Executor, ErrorsInABatchReachTheCaller) {
  Graph g;
  std::vector<Tensor> ps;
  Tensor total;
  {
    Graph::Scope scope(g);
    for (int i = 0; i < 8; ++i) ps.push_back(placeholder(DType::Float64, {kUnknownDim, kUnknownDim}));
    total = constant(0.0);
    for (int i = 0; i < 8; i += 2) total = total + reduce_sum(matmul(ps[i], ps[i + 1]));
    for (int i = 0; i < 8; ++i) total = total + reduce_sum(exp(ps[i]));
  }
  Session sess(g);
  FeedDict good, bad;
  for (int i = 0; i < 8; ++i) {
    good.push_back({ps[i], testing::rand64({30, 30}, 20 + i)});
    bad.push_back({ps[i], testing::rand64({30, i == 4 ? 29 : 30}, 20 + i)});
  }
  const uint64_t start = detail::batched_node_runs();
  const Tensor expected = sess.run(total, good);
  EXPECT_ERROR(sess.run(total, bad), InvalidArgumentError, "matmul", "29");
  Graph other;
  Graph::Scope building(other);
  expect_identical(sess.run(total, good), expected);
  if (num_threads() > 1) {
    EXPECT_GT(detail::batched_node_runs(), start);
  }
}

}  // namespace
}  // namespace ef
