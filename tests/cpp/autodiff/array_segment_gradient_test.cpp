// Gradients of roll, repeat, boolean_mask, meshgrid, dynamic_partition and the segment
// reductions against float64 central differences, first and second order.
#include <functional>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::rand64;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// A function of its value's square, so second derivatives see the first order's inputs.
Tensor squared(const Tensor& t) { return t * t; }

TEST(ArraySegmentGradients, RollRepeatMaskMeshgridPartition) {
  Tensor x = rand64({3, 4}, 1, -2, 2);
  expect_gradients([](const std::vector<Tensor>& in) { return squared(roll(in[0], {1, -3}, {0, 1})); }, {x});
  expect_gradients(
      [](const std::vector<Tensor>& in) {
        return squared(repeat(in[0], {2, 0, 1, 3}, 1));
      },
      {x});
  expect_gradients([](const std::vector<Tensor>& in) { return squared(repeat(in[0], {2})); }, {x});
  Tensor mask =
      constant({{true, false, true, true}, {false, false, true, false}, {true, true, false, false}});
  expect_gradients([&](const std::vector<Tensor>& in) { return squared(boolean_mask(in[0], mask)); }, {x});
  expect_gradients(
      [&](const std::vector<Tensor>& in) {
        return squared(boolean_mask(in[0], constant({true, false, true})));
      },
      {x});
  expect_gradients(
      [](const std::vector<Tensor>& in) {
        std::vector<Tensor> g = meshgrid({in[0], in[1]});
        return squared(g[0]) * g[1];
      },
      {rand64({3}, 2), rand64({2}, 3)});
  expect_gradients(
      [](const std::vector<Tensor>& in) {
        std::vector<Tensor> parts = dynamic_partition(in[0], constant({1, 0, 1}), 2);
        // (Summed, not concatenated: concat's gradient in a graph splits by the parts'
        // sizes, and more than one of them is unknown there.)
        return stack({reduce_sum(squared(parts[0])), reduce_sum(parts[1] * 3.0)});
      },
      {x});
}

TEST(ArraySegmentGradients, SegmentReductions) {
  Tensor x = rand64({5, 2}, 4, -2, 2);  // distinct values: max and min are smooth there
  Tensor sorted = constant({0, 0, 1, 3, 3});
  Tensor unsorted = constant({2, -1, 0, 2, 0});
  Tensor covering = constant({2, -1, 0, 2, 1});  // no empty segment among 3
  using Reduce = std::function<Tensor(const Tensor&)>;
  std::vector<std::pair<const char*, Reduce>> cases = {
      {"segment_sum", [&](const Tensor& d) { return segment_sum(d, sorted); }},
      {"segment_mean", [&](const Tensor& d) { return segment_mean(d, sorted); }},
      {"segment_max", [&](const Tensor& d) { return segment_max(d, sorted); }},
      {"segment_min", [&](const Tensor& d) { return segment_min(d, sorted); }},
      {"unsorted_segment_sum", [&](const Tensor& d) { return unsorted_segment_sum(d, unsorted, 4); }},
      {"unsorted_segment_mean", [&](const Tensor& d) { return unsorted_segment_mean(d, unsorted, 4); }},
      // An empty segment would hold the lowest/highest number, whose square overflows.
      {"unsorted_segment_max", [&](const Tensor& d) { return unsorted_segment_max(d, covering, 3); }},
      {"unsorted_segment_min", [&](const Tensor& d) { return unsorted_segment_min(d, covering, 3); }},
  };
  for (const auto& [name, reduce] : cases) {
    SCOPED_TRACE(name);
    Reduce f = reduce;
    expect_gradients([&](const std::vector<Tensor>& in) { return squared(f(in[0])) + f(in[0] * in[0]); },
                     {x});
  }
  // Ties share the gradient equally, as reduce_max's; a segment's gradient reaches only its extremes.
  Tensor t = constant({3.0, 1.0, 3.0, 2.0});
  GradientTape tape;
  tape.watch(t);
  Tensor y = reduce_sum(segment_max(t, constant({0, 0, 0, 1})) * constant({1.0, 5.0}));
  testing::expect_values(tape.gradient(y, t), {0.5, 0, 0.5, 5});
}

TEST(ArraySegmentGradients, TensorScatterUpdateMinMaxSub) {
  Tensor t = rand64({4, 2}, 5, -2, 2);
  Tensor u = rand64({3, 2}, 6, -2, 2);
  Tensor idx = constant({{0}, {2}, {0}});  // a duplicate: the last update lands
  using Scatter = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, CallSite);
  for (auto [name, op] : {std::pair<const char*, Scatter>{"update", &tensor_scatter_nd_update},
                          {"min", &tensor_scatter_nd_min},
                          {"max", &tensor_scatter_nd_max},
                          {"sub", &tensor_scatter_nd_sub}}) {
    SCOPED_TRACE(name);
    expect_gradients(
        [&, op = op](const std::vector<Tensor>& in) {  // clang 14 captures no structured bindings
          return squared(op(in[0] * in[0], idx, in[1] * 3.0, CallSite::current()));
        },
        {t, u});
  }
  // The update that is overwritten gets no gradient; the tensor none where updates landed.
  Tensor x = constant({1.0, 2.0, 3.0});
  Tensor v = constant({5.0, 6.0});
  GradientTape tape(true);
  tape.watch(x);
  tape.watch(v);
  Tensor y = tensor_scatter_nd_update(x, constant({{1}, {1}}), v) * constant({1.0, 10.0, 100.0});
  testing::expect_values(tape.gradient(y, x), {1, 0, 100});
  testing::expect_values(tape.gradient(y, v), {0, 10});
}

TEST(ArraySegmentGradients, BincountWeights) {
  Tensor arr = constant({1, 4, 1, 0, 2});
  Tensor w = rand64({5}, 7, -2, 2);
  expect_gradients([&](const std::vector<Tensor>& in) { return squared(bincount(arr, in[0] * in[0])); }, {w});
  // Values at or past maxlength are dropped: their weights get no gradient.
  expect_gradients([&](const std::vector<Tensor>& in) { return squared(bincount(arr, in[0], 0, 2)); }, {w});
  GradientTape tape;
  tape.watch(w);
  Tensor y = reduce_sum(bincount(arr, w, 0, 2));
  testing::expect_values(tape.gradient(y, w), {1, 0, 1, 1, 0});
}

TEST(ArraySegmentGradients, DynamicStitch) {
  // Index 1 is written twice: only the later value (in b) gets its gradient.
  Tensor ia = constant({0, 1}), ib = constant({{3, 1}});
  Fn f = [&](const std::vector<Tensor>& in) {
    return squared(dynamic_stitch({ia, ib}, {in[0], in[1] * 2.0}));
  };
  expect_gradients(f, {rand64({2, 3}, 8), rand64({1, 2, 3}, 9)});
  GradientTape tape(true);
  Tensor a = constant({1.0, 2.0}), b = constant({{3.0, 4.0}});
  tape.watch(a);
  tape.watch(b);
  Tensor y = reduce_sum(dynamic_stitch({ia, ib}, {a, b}) * constant({1.0, 10.0, 100.0, 1000.0}));
  testing::expect_values(tape.gradient(y, a), {1, 0});
  testing::expect_values(tape.gradient(y, b), {1000, 10});
}

}  // namespace
}  // namespace ef
