// Graph optimization passes: each pass alone on small graphs (node counts, listings,
// values bit for bit), the switches, and functions over a family of ops giving the same
// results optimized, unoptimized and eagerly.
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "eagerflow/ops/fused_elementwise.h"
#include "graph/executor.h"
#include "graph/passes/passes.h"
#include "graph/graph_test_util.h"

namespace ef {
namespace {

using testing::expect_identical;
using testing::OptionsScope;

using detail::PassGraph;
using detail::ValueRef;
using testing::expect_values;

ValueRef ref_of(const Tensor& t) { return detail::graph_value(t)->ref; }

// A graph built in graph mode, as a PassGraph with `inputs` fed and `outputs` fetched.
PassGraph pass_graph(const Graph& g, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                     const std::vector<int>& targets = {}) {
  std::vector<ValueRef> in, out;
  for (const Tensor& t : inputs) in.push_back(ref_of(t));
  for (const Tensor& t : outputs) out.push_back(ref_of(t));
  return detail::pass_graph_of(*g.state(), g.num_nodes(), in, out, targets);
}

std::shared_ptr<detail::GraphState> state_of(const PassGraph& pg) {
  auto s = std::make_shared<detail::GraphState>();
  s->nodes = pg.nodes;
  return s;
}

std::string listing(const PassGraph& pg) { return Graph(state_of(pg)).to_string(); }

std::vector<Tensor> run(const PassGraph& pg, const std::vector<Tensor>& values) {
  std::vector<detail::Feed> feeds;
  for (size_t i = 0; i < values.size(); ++i) feeds.push_back({pg.inputs[i], values[i]});
  return detail::execute(*state_of(pg), pg.outputs, pg.targets, feeds, "test");
}

int count_ops(const PassGraph& pg, std::string_view op) {
  int n = 0;
  for (const detail::Node& node : pg.nodes) n += node.kind == detail::NodeKind::kOp && node.op->name == op;
  return n;
}

int count_kind(const PassGraph& pg, detail::NodeKind kind) {
  int n = 0;
  for (const detail::Node& node : pg.nodes) n += node.kind == kind;
  return n;
}



TEST(Passes, DeadCodeEliminationKeepsWhatRunsAndFeeds) {
  Graph g;
  Tensor x, unused_input, y;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {3}, "x");
    unused_input = placeholder(DType::Float32, {3}, "unused");
    Tensor dead = exp(x) * 2.f;
    (void)dead;
    y = x + 1.f;
  }
  PassGraph pg = pass_graph(g, {x, unused_input}, {y});
  const size_t before = pg.nodes.size();
  EXPECT_TRUE(detail::dead_code_elimination(pg));
  EXPECT_EQ(pg.nodes.size(), before - 3);  // exp, its constant, multiply
  EXPECT_EQ(count_ops(pg, "exp"), 0);
  EXPECT_EQ(count_kind(pg, detail::NodeKind::kPlaceholder), 2);  // fed inputs stay
  EXPECT_FALSE(detail::dead_code_elimination(pg));
  expect_values(run(pg, {constant({1.f, 2.f, 3.f}), zeros({3})})[0], {2, 3, 4});
}

TEST(Passes, DeadCodeEliminationKeepsAssignments) {
  Variable v(zeros({2}), "v");
  Graph g;
  Tensor assigned;
  {
    Graph::Scope scope(g);
    Tensor x = placeholder(DType::Float32, {2}, "x");
    assigned = v.assign(x * 3.f);
    PassGraph pg = pass_graph(g, {x}, {}, {ref_of(assigned).node});
    detail::dead_code_elimination(pg);
    EXPECT_EQ(count_kind(pg, detail::NodeKind::kAssignVariable), 1);
    EXPECT_EQ(count_ops(pg, "multiply"), 1);
  }
}

TEST(Passes, CommonSubexpressionsMergeOpsAndConstants) {
  Graph g;
  Tensor x, y;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {3}, "x");
    Tensor a = exp(x * 2.f), b = exp(x * 2.f);  // two constants 2, two multiplies, two exps
    y = a + b;
  }
  PassGraph pg = pass_graph(g, {x}, {y});
  EXPECT_EQ(count_ops(pg, "exp"), 2);
  EXPECT_TRUE(detail::common_subexpression_elimination(pg));
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "exp"), 1);
  EXPECT_EQ(count_ops(pg, "multiply"), 1);
  EXPECT_EQ(count_kind(pg, detail::NodeKind::kConstant), 1);
  const Tensor in = constant({0.f, 1.f, -2.f});
  expect_identical(run(pg, {in})[0], exp(in * 2.f) + exp(in * 2.f));
}

TEST(Passes, CommonSubexpressionsRespectAttrsBitForBit) {
  // fill with 0.0 and with -0.0 differ (attrs equal under ==, not bit for bit).
  Graph g;
  Tensor x, y;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {2}, "x");
    y = (x + fill({2}, 0.f)) - (x + fill({2}, -0.f));
  }
  PassGraph pg = pass_graph(g, {x}, {y});
  detail::common_subexpression_elimination(pg);
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "fill"), 2) << listing(pg);
  EXPECT_EQ(count_ops(pg, "add"), 2);
}

TEST(Passes, RandomOpsAreNeverMergedOrFolded) {
  Graph g;
  Tensor y;
  {
    Graph::Scope scope(g);
    y = random::uniform({4}, 0, 1, DType::Float32, 7) - random::uniform({4}, 0, 1, DType::Float32, 7);
  }
  PassGraph pg = pass_graph(g, {}, {y});
  detail::common_subexpression_elimination(pg);
  detail::constant_folding(pg, GraphOptimizerOptions{});
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "random_uniform"), 2) << listing(pg);
  EXPECT_EQ(count_ops(pg, "subtract"), 1);

  // Traced in a function with every pass on, the op stays an op (runs on every call).
  Function f([](const std::vector<Tensor>&) { return std::vector<Tensor>{random::uniform({4}) * 2.f}; });
  const std::string listing = f.get_concrete_function(std::vector<Tensor>{}).optimized_graph().to_string();
  EXPECT_NE(listing.find("= random_uniform["), std::string::npos) << listing;
  const Tensor first = f(std::vector<Tensor>{})[0], second = f(std::vector<Tensor>{})[0];
  EXPECT_NE(first.to_vector<float>(), second.to_vector<float>());  // new numbers on every call
}

TEST(Passes, VariableReadsMergeOnlyBetweenAssignments) {
  Variable v(constant({1.f, 2.f}), "v");
  auto body = [&] {
    Tensor a = v.value() * 1.5f;
    Tensor b = v.value() * 1.5f;  // same read epoch: merges with a
    v.assign_add(constant({10.f, 10.f}));
    Tensor c = v.value() * 1.5f;  // after the assignment: a new value
    return std::make_tuple(a, b, c);
  };
  auto f = function(body);
  Function untyped([&](const std::vector<Tensor>&) {
    auto [a, b, c] = body();
    return std::vector<Tensor>{a, b, c};
  });
  ConcreteFunction cf = untyped.get_concrete_function(std::vector<Tensor>{});
  const std::string optimized = cf.optimized_graph().to_string();
  int reads = 0;
  for (size_t p = optimized.find("read_variable"); p != std::string::npos; p = optimized.find("read_variable", p + 1))
    ++reads;
  EXPECT_EQ(reads, 2) << optimized;  // a's, b's and assign_add's read are one; c's
  auto [a, b, c] = f();
  expect_values(a, {1.5, 3});
  expect_values(b, {1.5, 3});
  expect_values(c, {16.5, 18});
  expect_values(v.value(), {11, 12});
  auto [a2, b2, c2] = f();  // state order kept on every call
  expect_values(a2, {16.5, 18});
  expect_values(c2, {31.5, 33});
}

TEST(Passes, ConstantFoldingComputesOnce) {
  Graph g;
  Tensor x, y;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {2}, "x");
    Tensor c = exp(constant({0.f, 1.f})) * 2.f + ones({2});  // ones is a fill op: folds too
    y = x * c;
  }
  PassGraph pg = pass_graph(g, {x}, {y});
  EXPECT_TRUE(detail::constant_folding(pg, GraphOptimizerOptions{}));
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "exp"), 0) << listing(pg);
  EXPECT_EQ(count_ops(pg, "fill"), 0);
  EXPECT_EQ(count_ops(pg, "multiply"), 1);  // x * folded
  EXPECT_EQ(pg.nodes.size(), 3u) << listing(pg);  // x, the folded constant, x * it
  const Tensor in = constant({3.f, -1.f});
  expect_identical(run(pg, {in})[0], in * (exp(constant({0.f, 1.f})) * 2.f + ones({2})));
}

TEST(Passes, ConstantFoldingSkipsLargeResultsAndFailures) {
  Graph g;
  Tensor big, bad;
  {
    Graph::Scope scope(g);
    big = ones({400, 400}) * 2.f;                                        // 160000 elements
    bad = floordiv(constant({1, 2}), constant({0, 1}));  // divides by 0
  }
  PassGraph pg = pass_graph(g, {}, {big, bad});
  GraphOptimizerOptions o;
  o.max_folded_elements = 100000;
  detail::constant_folding(pg, o);
  EXPECT_EQ(count_ops(pg, "multiply"), 1) << listing(pg);
  EXPECT_EQ(count_ops(pg, "floordiv"), 1);
  // The error surfaces when the graph runs, as without folding.
  EXPECT_THROW(run(pg, {}), InvalidArgumentError);
}

TEST(Passes, AlgebraicSimplificationRemovesOnlyExactIdentities) {
  Graph g;
  Tensor x, removed, kept_plus_zero, kept_times_zero, kept_broadcast;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {3}, "x");
    removed = negative(negative(reshape((1.f * (x * 1.f) / 1.f - 0.f) + -0.0f, {3})));
    kept_plus_zero = x + 0.f;   // -0.0 + 0.0 is +0.0
    kept_times_zero = x * 0.f;  // NaN * 0 is NaN
    kept_broadcast = x + fill({2, 1}, -0.f);  // changes the shape
  }
  PassGraph pg = pass_graph(g, {x}, {removed, kept_plus_zero, kept_times_zero, kept_broadcast});
  EXPECT_TRUE(detail::algebraic_simplification(pg));
  EXPECT_EQ(pg.outputs[0], pg.inputs[0]) << listing(pg);
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "negative"), 0);
  EXPECT_EQ(count_ops(pg, "reshape"), 0);
  EXPECT_EQ(count_ops(pg, "divide"), 0);
  EXPECT_EQ(count_ops(pg, "add"), 2);  // x + 0 and the broadcast
  EXPECT_EQ(count_ops(pg, "multiply"), 1);

  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tensor in = constant({-0.f, nan, -inf});
  std::vector<Tensor> got = run(pg, {in});
  std::vector<Tensor> want = run(pass_graph(g, {x}, {removed, kept_plus_zero, kept_times_zero, kept_broadcast}), {in});
  for (size_t i = 0; i < got.size(); ++i) expect_identical(got[i], want[i]);
  EXPECT_TRUE(std::signbit(got[0].to_vector<float>()[0]));
  EXPECT_FALSE(std::signbit(got[1].to_vector<float>()[0]));
}

TEST(Passes, ElementwiseFusionMakesOneNodePerGroup) {
  Graph g;
  Tensor x, y, z;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {1000}, "x");
    y = placeholder(DType::Float32, {1000}, "y");
    Tensor t = tanh(x * y + 1.f);
    z = sqrt(square(t - 0.5f) * 3.f + exp(-y)) / (t + 2.f);  // t used twice inside the group
  }
  PassGraph pg = pass_graph(g, {x, y}, {z});
  const Tensor a = testing::iota({1000}) / 500.f - 1.f, b = testing::iota({1000}) / 700.f;
  const Tensor want = run(pg, {a, b})[0];
  EXPECT_TRUE(detail::elementwise_fusion(pg));
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "fused_elementwise"), 1) << listing(pg);
  EXPECT_EQ(count_kind(pg, detail::NodeKind::kOp), 1) << listing(pg);
  expect_identical(run(pg, {a, b})[0], want);
}

TEST(Passes, ElementwiseFusionKeepsValuesUsedOutside) {
  Graph g;
  Tensor x, t, z, s;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {2, 3}, "x");
    t = exp(x * 2.f);            // an output itself: computed by its own group
    z = tanh(t + 1.f) * 0.5f;
    s = reduce_sum(sigmoid(z) - 1.f, {1});  // a reduction ends the group
  }
  PassGraph pg = pass_graph(g, {x}, {t, z, s});
  const Tensor a = testing::iota({2, 3}) / 3.f;
  std::vector<Tensor> want = run(pg, {a});
  detail::elementwise_fusion(pg);
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "fused_elementwise"), 3) << listing(pg);
  EXPECT_EQ(count_ops(pg, "reduce_sum"), 1);
  std::vector<Tensor> got = run(pg, {a});
  for (size_t i = 0; i < got.size(); ++i) expect_identical(got[i], want[i]);
}

TEST(Passes, ElementwiseFusionLeavesOtherDtypesAndBroadcastsAlone) {
  Graph g;
  Tensor x, i, y, w;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {3}, "x");
    i = placeholder(DType::Int32, {3}, "i");
    y = exp(x) + 1.f;                        // fuses
    w = (i + 1) * 2;                         // int32: no block functions
    y = y + placeholder(DType::Float32, {2, 3}, "wide");  // [3] broadcast to [2, 3]: not fused with y
  }
  PassGraph pg = pass_graph(g, {x, i}, {y, w});
  detail::elementwise_fusion(pg);
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "fused_elementwise"), 1) << listing(pg);
  EXPECT_EQ(count_ops(pg, "multiply"), 1);
}

TEST(Passes, ReductionFusionSumsProductsAndChainsInPlace) {
  Graph g;
  Tensor a, b, dot, chained, partial, shared, kept;
  {
    Graph::Scope scope(g);
    a = placeholder(DType::Float32, {20000}, "a");
    b = placeholder(DType::Float32, {20000}, "b");
    dot = reduce_sum(a * b);                         // one op: fused into the sum
    chained = reduce_sum(tanh(a * 0.5f + b) - a);    // a fused chain: fused into the sum
    partial = reduce_sum(reshape(a * b, {100, 200}), {1});  // not every element: left alone
    shared = a - b;
    kept = reduce_sum(shared) + shared;              // the difference is read twice: left alone
  }
  PassGraph pg = pass_graph(g, {a, b}, {dot, chained, partial, kept});
  const Tensor x = testing::iota({20000}) / 9000.f - 1.f, y = testing::iota({20000}) / 7000.f;
  const std::vector<Tensor> want = run(pg, {x, y});
  detail::elementwise_fusion(pg);
  EXPECT_TRUE(detail::reduction_fusion(pg));
  detail::dead_code_elimination(pg);
  EXPECT_EQ(count_ops(pg, "fused_reduce_sum"), 2) << listing(pg);
  EXPECT_EQ(count_ops(pg, "reduce_sum"), 2) << listing(pg);
  const std::vector<Tensor> got = run(pg, {x, y});
  for (size_t i = 0; i < got.size(); ++i) expect_identical(got[i], want[i]);
  // A traced function gets it by default, and the switch turns it off.
  auto dot_of = [](Tensor u, Tensor v) { return reduce_sum(u * v); };
  auto optimized = [&] {
    return Function([&](const std::vector<Tensor>& args) { return std::vector<Tensor>{dot_of(args[0], args[1])}; })
        .get_concrete_function(std::vector<Tensor>{x, y})
        .optimized_graph()
        .to_string();
  };
  EXPECT_NE(optimized().find("fused_reduce_sum"), std::string::npos);
  GraphOptimizerOptions off;
  off.reduction_fusion = false;
  OptionsScope scope(off);
  EXPECT_EQ(optimized().find("fused_reduce_sum"), std::string::npos);
  expect_identical(function(dot_of)(x, y), dot_of(x, y));
}

TEST(Passes, ReductionFusionJoinsTheProducerOfWhatItSums) {
  // Steps of the L-BFGS two-loop recursion: each update q' = q - al * y is kept and
  // summed against the next s in the same pass. The executor writes q2 over q1's buffer
  // (in-place reuse), and the last sum, of q2 * q1, reads q1 after q2 is written: the
  // kernel stages q2 for it.
  Graph g;
  Tensor q, y1, y2, s1, s2, out;
  {
    Graph::Scope scope(g);
    q = placeholder(DType::Float32, {30000}, "q");
    y1 = placeholder(DType::Float32, {30000}, "y1");
    y2 = placeholder(DType::Float32, {30000}, "y2");
    s1 = placeholder(DType::Float32, {30000}, "s1");
    s2 = placeholder(DType::Float32, {30000}, "s2");
    Tensor q1 = q - reduce_sum(s1 * q) * 0.5f * y1;
    Tensor q2 = q1 - reduce_sum(s2 * q1) * 0.25f * y2;
    out = q2 * reduce_sum(q2 * q1);
  }
  PassGraph pg = pass_graph(g, {q, y1, y2, s1, s2}, {out});
  std::vector<Tensor> values;
  for (int k = 0; k < 5; ++k) values.push_back(testing::iota({30000}) / (3000.f + 1000.f * k) - 1.f);
  const Tensor want = run(pg, values)[0];
  detail::elementwise_fusion(pg);
  EXPECT_TRUE(detail::reduction_fusion(pg));
  detail::dead_code_elimination(pg);
  // q is a placeholder, so the first sum stands alone; the others join q1's and q2's updates.
  EXPECT_EQ(count_ops(pg, "fused_reduce_sum"), 3) << listing(pg);
  EXPECT_EQ(count_ops(pg, "reduce_sum"), 0) << listing(pg);
  int two_outputs = 0;
  for (const detail::Node& n : pg.nodes) two_outputs += n.kind == detail::NodeKind::kOp && n.outputs.size() == 2;
  EXPECT_EQ(two_outputs, 2) << listing(pg);
  expect_identical(run(pg, values)[0], want);
  GraphOptimizerOptions no_reuse;
  no_reuse.in_place_reuse = false;
  OptionsScope scope(no_reuse);
  expect_identical(run(pg, values)[0], want);
}

TEST(Passes, SwitchesTurnEachPassOff) {
  auto body = [](Tensor x) { return exp(x * 1.f) + exp(x * 1.f) + (constant(2.f) * 3.f); };
  const Tensor in = constant({0.5f, -1.f});
  auto trace = [&] {
    return Function([&](const std::vector<Tensor>& args) { return std::vector<Tensor>{body(args[0])}; })
        .get_concrete_function(std::vector<Tensor>{in});
  };
  {
    OptionsScope none(GraphOptimizerOptions::none());
    auto f = function(body);
    ConcreteFunction cf = trace();
    EXPECT_EQ(cf.optimized_graph().num_nodes(), cf.graph().num_nodes());
    EXPECT_EQ(cf.optimized_graph().to_string(), cf.graph().to_string());
    expect_identical(f(in), body(in));
  }
  for (int off = 0; off < 6; ++off) {
    GraphOptimizerOptions o;
    bool* flags[] = {&o.constant_folding,         &o.common_subexpression_elimination, &o.dead_code_elimination,
                     &o.algebraic_simplification, &o.elementwise_fusion,               &o.reduction_fusion};
    *flags[off] = false;
    OptionsScope scope(o);
    auto f = function(body);
    ConcreteFunction cf = trace();
    const std::string listing = cf.optimized_graph().to_string();
    if (o.dead_code_elimination) {
      EXPECT_LT(cf.optimized_graph().num_nodes(), cf.graph().num_nodes()) << listing;
    } else {
      EXPECT_EQ(cf.optimized_graph().num_nodes(), cf.graph().num_nodes()) << listing;
    }
    const bool has_fused = listing.find("fused_elementwise") != std::string::npos;
    EXPECT_EQ(has_fused, o.elementwise_fusion) << listing;
    if (!o.algebraic_simplification) {
      EXPECT_NE(listing.find("multiply"), std::string::npos) << listing;
    }
    if (!o.common_subexpression_elimination && !o.elementwise_fusion) {
      EXPECT_NE(listing.find("exp_1"), std::string::npos) << listing;
    }
    expect_identical(f(in), body(in));
  }
  EXPECT_ERROR(set_graph_optimizer_options({.max_folded_elements = -1}), InvalidArgumentError,
               "max_folded_elements");
}

TEST(Passes, FunctionsGiveTheSameResultsOptimizedUnoptimizedAndEager) {
  // One case per op family; each runs eagerly, traced without and with optimization.
  using Body = std::function<Tensor(Tensor, Tensor)>;
  const std::vector<std::pair<std::string, Body>> cases = {
      {"elementwise", [](Tensor x, Tensor y) { return tanh(x * y + 1.0) * sigmoid(x - y) / (abs(y) + 2.0); }},
      {"reductions", [](Tensor x, Tensor y) { return reduce_sum(exp(x), {1}) + reduce_max(y * 2.0, {1}) * 1.0; }},
      {"matmul", [](Tensor x, Tensor y) { return matmul(relu(x), transpose(y)) * 1.0; }},
      {"reshape_transpose",
       [](Tensor x, Tensor y) { return transpose(reshape(x + y, {3, 4}), {1, 0}) * reshape(ones({12}, DType::Float64), {4, 3}); }},
      {"softmax", [](Tensor x, Tensor y) { return softmax(x * y) + log_softmax(x - y); }},
      {"conv2d",
       [](Tensor x, Tensor y) {
         Tensor img = reshape(x, {1, 4, 3, 1}), filt = reshape(slice(y, {0, 0}, {2, 2}), {2, 2, 1, 1});
         return conv2d(img * 1.0, filt, {1, 1}, "SAME") * 2.0 + 1.0;
       }},
  };
  const Tensor x = testing::rand64({4, 3}, 1), y = testing::rand64({4, 3}, 2);
  for (const auto& [name, case_body] : cases) {
    const auto& body = case_body;  // clang 14 captures no structured bindings
    SCOPED_TRACE(name);
    const Tensor eager = body(x, y);
    Tensor unoptimized, optimized;
    {
      OptionsScope none(GraphOptimizerOptions::none());
      unoptimized = function(body)(x, y);
    }
    auto f = function(body);
    optimized = f(x, y);
    expect_identical(unoptimized, eager);
    expect_identical(optimized, eager);
    ConcreteFunction cf =
        Function([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{body(a[0], a[1])}; })
            .get_concrete_function(std::vector<Tensor>{x, y});
    EXPECT_LE(cf.optimized_graph().num_nodes(), cf.graph().num_nodes());
  }
}

TEST(Passes, TapesStillDifferentiateOptimizedFunctions) {
  auto f = function([](Tensor x) { return reduce_sum(tanh(x * 2.0 + 1.0) * 1.0); });
  const Tensor x = testing::rand64({5}, 3);
  f(x);  // optimized plain call first
  GradientTape tape;
  tape.watch(x);
  Tensor y = f(x);
  Tensor g = tape.gradient(y, x);
  GradientTape eager_tape;
  eager_tape.watch(x);
  Tensor ey = reduce_sum(tanh(x * 2.0 + 1.0));
  expect_values(g, eager_tape.gradient(ey, x).to_vector<double>(), 1e-12);
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

TEST(Passes, OptimizedListing) {
  // The traced graph keeps every node; the optimized copy folds 2 * 3, drops * 1,
  // merges the two exps and fuses the rest into one node.
  Function f([](const std::vector<Tensor>& a) {
    Tensor x = a[0];
    // Spelled out in the order the listing shows: C++ leaves the order in which operands
    // are evaluated (and so nodes made) to the compiler.
    Tensor scale = constant(2.f) * 3.f;
    Tensor right = exp(x * 1.f) * scale;
    Tensor left = exp(x * 1.f);
    return std::vector<Tensor>{left + right};
  });
  ConcreteFunction cf = f.get_concrete_function(std::vector<TensorSpec>{{DType::Float32, {3}, "x"}});
  EXPECT_EQ(cf.graph().to_string(),
            "%x : float32[3] = placeholder()\n"
            "%const : float32[] = const Tensor(2.0, shape=(), dtype=float32)()\n"
            "%const_1 : float32[] = const Tensor(3.0, shape=(), dtype=float32)()\n"
            "%multiply : float32[] = multiply(%const, %const_1)\n"
            "%const_2 : float32[] = const Tensor(1.0, shape=(), dtype=float32)()\n"
            "%multiply_1 : float32[3] = multiply(%x, %const_2)\n"
            "%exp : float32[3] = exp(%multiply_1)\n"
            "%multiply_2 : float32[3] = multiply(%exp, %multiply)\n"
            "%const_3 : float32[] = const Tensor(1.0, shape=(), dtype=float32)()\n"
            "%multiply_3 : float32[3] = multiply(%x, %const_3)\n"
            "%exp_1 : float32[3] = exp(%multiply_3)\n"
            "%add : float32[3] = add(%exp_1, %multiply_2)\n");
  EXPECT_EQ(cf.optimized_graph().to_string(),
            "%x : float32[3] = placeholder()\n"
            "%folded_multiply : float32[] = const Tensor(6.0, shape=(), dtype=float32)()\n"
            "%fused_add : float32[3] = fused_elementwise[ops=\"exp,multiply,add\", operands=[0, 2, 1, 2, 3], "
            "outputs=[4], num_inputs=2](%x, %folded_multiply)\n");
  const Tensor x = constant({-1.f, 0.f, 2.f});
  expect_identical(cf({x})[0], exp(x) + exp(x) * 6.f);
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

TEST(Passes, FirstCallsFromSeveralThreadsOptimizeOnce) {
  Function f([](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{tanh(a[0] * 2.f + 1.f) * 1.f, a[0] * 0.f};  // a[1] is unused
  });
  const Tensor x = testing::iota({64}) / 10.f, unused = zeros({3});
  ConcreteFunction cf = f.get_concrete_function(std::vector<Tensor>{x, unused});
  std::vector<std::vector<Tensor>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) threads.emplace_back([&, t] { results[t] = cf({x, unused}); });
  for (std::thread& t : threads) t.join();
  for (const auto& r : results) {
    expect_identical(r[0], tanh(x * 2.f + 1.f));
    expect_identical(r[1], x * 0.f);
  }
  // 2 args (the unused one kept for its feed), constants 2, 1 (shared by + 1 and * 1) and 0, 2 ops.
  EXPECT_EQ(cf.optimized_graph().num_nodes(), 7) << cf.optimized_graph().to_string();
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

TEST(Passes, OutputsStayTensorsOfTheirOwn) {
  // x * 1 is x, 2 * 3 folds, and the two exps merge: the outputs are still copies, so
  // that callers writing to them (NumPy shares memory) change nothing else.
  Function f([](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0] * 1.f, constant(2.f) * 3.f, exp(a[0]), exp(a[0]), a[0]};
  });
  const Tensor x = constant({1.f, 2.f});
  std::vector<Tensor> r1 = f({x}), r2 = f({x});
  EXPECT_NE(r1[0].raw_data(), x.raw_data());
  EXPECT_NE(r1[1].raw_data(), r2[1].raw_data());
  EXPECT_NE(r1[2].raw_data(), r1[3].raw_data());
  EXPECT_EQ(r1[4].raw_data(), x.raw_data());  // returned as traced: the input itself
  expect_identical(r1[0], x);
  expect_values(r1[1], {6});
  expect_identical(r1[3], exp(x));
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

TEST(Passes, ControlFlowKeepsReadsApartAndSurvivesRenumbering) {
  // A cond whose branch assigns the variable sits between two reads: they must not merge.
  // Dead code before the cond makes dead-code elimination renumber the cond's inputs.
  Variable v(constant({1.f, 2.f}), "v");
  auto body = [&](Tensor x) {
    Tensor unused = exp(x) * 5.f;
    (void)unused;
    Tensor before = v.value() * 1.f;
    Tensor r = cond(
        reduce_sum(x) > 0.f, [&] { return v.assign_add(x * 2.f); }, [&] { return v.value() - x; });
    Tensor after = v.value() * 1.f;
    return std::make_tuple(before, r + 0.f, after);
  };
  auto f = function(body);
  const Tensor x = constant({1.f, 1.f});
  auto [before, r, after] = f(x);
  expect_values(before, {1, 2});
  expect_values(r, {3, 4});
  expect_values(after, {3, 4});
  auto [before2, r2, after2] = f(constant({-1.f, -1.f}));
  expect_values(before2, {3, 4});
  expect_values(r2, {4, 5});
  expect_values(after2, {3, 4});
}

}  // namespace
}  // namespace ef
