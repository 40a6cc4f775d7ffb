// Graph mode: building with placeholders and partial shapes, Session::run, variables
// and their initializer, symbolic gradients, and the listings.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

// The recitation seed's TensorFlow 1 program: placeholder, W * x + b, initializer, run.
TEST(Graph, RecitationProgram) {
  Graph g;
  Tensor in_a, out_a;
  {
    Graph::Scope scope(g);
    in_a = placeholder(DType::Float32, {2}, "in_a");
    Variable w(ones({2, 2}), "W");
    Variable b(zeros({2}), "b");
    out_a = w * in_a + b;
    EXPECT_TRUE(out_a.is_symbolic());
    EXPECT_EQ(out_a.shape(), (Shape{2, 2}));
    EXPECT_FALSE(w.initialized());
  }
  Session sess(g);
  sess.run(global_variables_initializer(g));
  expect_values(sess.run(out_a, {{in_a, constant({1.f, 0.f})}}), {1, 0, 1, 0});
  expect_values(sess.run(out_a, {{in_a, constant({2.f, 3.f})}}), {2, 3, 2, 3});
}

TEST(Graph, PartialShapesAndErrors) {
  Graph g;
  Tensor x, y, s;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {kUnknownDim, 3}, "x");
    y = matmul(x, ones({3, 2}));
    EXPECT_EQ(y.shape(), (Shape{kUnknownDim, 2}));
    s = reduce_sum(y, {1});
    EXPECT_EQ(s.shape(), (Shape{kUnknownDim}));
    // A definite mismatch fails while building, naming the op.
    EXPECT_ERROR(matmul(x, ones({4, 2})), InvalidArgumentError, "matmul");
    // Converting a symbolic tensor to bool says to use cond / while_loop.
    EXPECT_ERROR(static_cast<void>(static_cast<bool>(s)), FailedPreconditionError, "cond");
  }

  Tensor dims;
  {
    Graph::Scope scope(g);
    dims = shape(x, DType::Int64);  // computed when the graph runs: the fed sizes
  }
  Session sess(g);
  expect_values(sess.run(s, {{x, ones({4, 3})}}), {6, 6, 6, 6});
  EXPECT_EQ(sess.run(dims, {{x, ones({5, 3})}}).to_vector<int64_t>(), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(size(ones({2, 3})).item<int>(), 6);
  EXPECT_ERROR(shape(ones({2}), DType::Float32), InvalidArgumentError, "shape", "out_type");
  EXPECT_EQ(sess.run(y, {{x, ones({1, 3})}}).shape(), (Shape{1, 2}));
  // Feeds that contradict the placeholder fail at run time, naming it.
  EXPECT_ERROR(sess.run(s, {{x, ones({4, 2})}}), InvalidArgumentError, "'x'", "float32[?, 3]", "[4, 2]");
  EXPECT_ERROR(sess.run(s, {{x, ones({4, 3}, DType::Float64)}}), InvalidArgumentError, "'x'", "float64");
  EXPECT_ERROR(sess.run(s), InvalidArgumentError, "placeholder 'x'", "feed");
  EXPECT_ERROR(sess.run(ones({2})), InvalidArgumentError, "not a symbolic tensor");
}

TEST(Graph, RunsOnlyWhatTheFetchesNeed) {
  Graph g;
  Tensor a, b, unfed;
  {
    Graph::Scope scope(g);
    unfed = placeholder(DType::Float32, {2}, "unfed");
    a = constant(2.f) * constant(3.f);
    b = unfed + a;
  }
  Session sess(g);
  expect_values(sess.run(a), {6});  // `unfed` is not needed
  EXPECT_ERROR(sess.run(b), InvalidArgumentError, "unfed");
  // Any tensor can be fed, cutting off what computes it.
  expect_values(sess.run(b, {{a, constant(1.f)}, {unfed, constant({5.f, 5.f})}}), {6, 6});
}

TEST(Graph, VariablesAreReadAndAssignedWhenTheGraphRuns) {
  Variable counter(constant(0.0), "counter");  // created eagerly: already initialized
  Graph g;
  Tensor next, read;
  {
    Graph::Scope scope(g);
    next = counter.assign_add(constant(1.0));
    read = counter.value() * 10.0;
  }
  EXPECT_EQ(counter.value().item<double>(), 0.0);  // building changed nothing
  Session sess(g);
  expect_values(sess.run(next), {1});
  expect_values(sess.run(next), {2});
  expect_values(sess.run(read), {20});
  EXPECT_EQ(counter.value().item<double>(), 2.0);
  counter.assign(constant(7.0));  // the graph holds the variable by reference
  expect_values(sess.run(read), {70});
}

TEST(Graph, UninitializedVariablesFailClearly) {
  Graph g;
  Tensor y;
  Variable w(zeros({1}), "");
  {
    Graph::Scope scope(g);
    w = Variable(ones({2}), "w");
    y = w * 2.f;
  }
  Session sess(g);
  EXPECT_ERROR(sess.run(y), FailedPreconditionError, "'w'", "not initialized", "global_variables_initializer");
  EXPECT_ERROR(w.value(), FailedPreconditionError, "'w'", "not initialized");
  sess.run(global_variables_initializer(g));
  expect_values(sess.run(y), {2, 2});
  expect_values(w.value(), {1, 1});
  EXPECT_ERROR(global_variables_initializer(), InvalidArgumentError, "no graph");
  EXPECT_ERROR(placeholder(DType::Float32, {2}), InvalidArgumentError, "placeholder", "graph mode");
}

TEST(Graph, AssignmentsAreCheckedWhileBuilding) {
  Variable v(zeros({2}), "v");
  Graph g;
  Tensor p, assigned;
  {
    Graph::Scope scope(g);
    EXPECT_ERROR(v.assign(zeros({3})), InvalidArgumentError, "'v'", "[3]");
    EXPECT_ERROR(v.assign(zeros({2}, DType::Float64)), InvalidArgumentError, "'v'", "float64");
    p = placeholder(DType::Float32, {kUnknownDim}, "p");
    assigned = v.assign(p);  // may fit: checked when it runs
  }
  Session sess(g);
  EXPECT_ERROR(sess.run(assigned, {{p, zeros({3})}}), InvalidArgumentError, "'v'");
  expect_values(v.value(), {0, 0});
}

TEST(Graph, GradientsMatchTheTape) {
  Graph g;
  Tensor x, y, dx, d2x;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float64, {3}, "x");
    y = reduce_sum(x * x * x + 3.0 * sin(x));
    dx = gradients({y}, {x})[0];
    d2x = gradients({dx}, {x})[0];  // the gradient of the gradient: second order
  }
  const Tensor value = constant({0.5, -1.0, 2.0});
  Session sess(g);
  const std::vector<Tensor> got = sess.run({dx, d2x}, {{x, value}});
  Tensor eager_dx, eager_d2x;
  {
    GradientTape outer;
    outer.watch(value);
    GradientTape inner;
    inner.watch(value);
    Tensor ey = reduce_sum(value * value * value + 3.0 * sin(value));
    eager_dx = inner.gradient(ey, value);
    eager_d2x = outer.gradient(eager_dx, value);
  }
  expect_values(got[0], eager_dx.to_vector<double>(), 1e-12);
  expect_values(got[1], eager_d2x.to_vector<double>(), 1e-12);
}

// A size that is unknown while building may be 1 when the graph runs, against a larger
// one: x [?] * w [3] fed x of shape [1] broadcasts x, so its gradient must be summed
// back to [1]. The static shapes alone would have kept the gradient's [3].
TEST(Graph, GradientsOfBroadcastsOverUnknownSizes) {
  Graph g;
  Tensor x, w, a, b, dx, dw, da, db;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float64, {-1}, "x");
    w = placeholder(DType::Float64, {3}, "w");
    a = placeholder(DType::Float64, {-1, -1}, "a");
    b = placeholder(DType::Float64, {-1, -1}, "b");
    std::vector<Tensor> d = gradients({reduce_sum(x * w)}, {x, w});
    dx = d[0];
    dw = d[1];
    d = gradients({reduce_sum(a * b * b)}, {a, b});
    da = d[0];
    db = d[1];
  }
  Session sess(g);
  std::vector<Tensor> got = sess.run({dx, dw}, {{x, constant({2.0})}, {w, constant({1.0, 2.0, 3.0})}});
  EXPECT_EQ(got[0].shape(), (Shape{1}));
  expect_values(got[0], {6}, 1e-12);
  expect_values(got[1], {2, 2, 2}, 1e-12);
  got = sess.run({dx, dw}, {{x, constant({2.0, 1.0, 0.5})}, {w, constant({1.0, 2.0, 3.0})}});
  expect_values(got[0], {1, 2, 3}, 1e-12);
  expect_values(got[1], {2, 1, 0.5}, 1e-12);
  // a [2, 1] and b [1, 3]: both broadcast, along different axes.
  got = sess.run({da, db}, {{a, constant({{2.0}, {1.0}})}, {b, constant({{1.0, 2.0, 3.0}})}});
  EXPECT_EQ(got[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(got[1].shape(), (Shape{1, 3}));
  expect_values(got[0], {14, 14}, 1e-12);
  expect_values(got[1], {6, 12, 18}, 1e-12);
}

TEST(Graph, GradientsWithRespectToVariables) {
  Graph g;
  Tensor loss, dw, x;
  Variable w(zeros({1}), "");
  {
    Graph::Scope scope(g);
    w = Variable(constant({1.0, 2.0}), "w");
    x = placeholder(DType::Float64, {2}, "x");
    loss = reduce_sum(w * x) + reduce_sum(w * w);  // two reads of w
    dw = gradients({loss}, std::vector<Variable>{w})[0];
  }
  Session sess(g);
  sess.run(global_variables_initializer(g));
  expect_values(sess.run(dw, {{x, constant({3.0, 4.0})}}), {5, 8}, 1e-12);  // x + 2w
  // Unconnected: undefined by default, zeros on request.
  Graph::Scope scope(g);
  Tensor other = placeholder(DType::Float64, {2}, "other");
  EXPECT_FALSE(gradients({loss}, {other})[0].defined());
  EXPECT_EQ(gradients({loss}, {other}, {}, UnconnectedGradients::Zero)[0].shape(), (Shape{2}));
}

TEST(Graph, TensorsOfAnotherGraphAreRejected) {
  Graph g1, g2;
  Tensor a;
  {
    Graph::Scope scope(g1);
    a = placeholder(DType::Float32, {2});
  }
  Graph::Scope scope(g2);
  EXPECT_ERROR(a + 1.f, InvalidArgumentError, "another graph");
  EXPECT_ERROR(Session(g2).run(a), InvalidArgumentError, "another graph");
}

TEST(Graph, Listings) {
  Graph g;
  {
    Graph::Scope scope(g);
    Tensor x = placeholder(DType::Float32, {kUnknownDim, 2}, "x");
    Tensor y = relu(x + 1.f);
    (void)y;
  }
  const std::string text = g.to_string();
  EXPECT_NE(text.find("%x : float32[?, 2] = placeholder()"), std::string::npos) << text;
  EXPECT_NE(text.find("= add(%x, %const)"), std::string::npos) << text;
  EXPECT_NE(text.find("%relu : float32[?, 2] = relu(%add)"), std::string::npos) << text;
  const std::string dot = g.to_dot();
  EXPECT_EQ(dot.rfind("digraph G {", 0), 0u);
  EXPECT_NE(dot.find("n0 -> n2"), std::string::npos) << dot;
}

}  // namespace
}  // namespace ef
