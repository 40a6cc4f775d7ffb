// vectorized_map / vmap (Note [vectorization]): equal to the loop over the elements,
// without a loop where the ops have batching rules; composing with tapes, functions,
// cond and random ops; vectorized Jacobians and hessians; the errors.
#include <algorithm>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using testing::rand64;

// f once per element of the batched arguments (batch on axis 0), stacked.
std::vector<Tensor> loop(const VectorizableFunction& f, const std::vector<Tensor>& batched) {
  std::vector<std::vector<Tensor>> elements;
  for (const Tensor& x : batched) elements.push_back(unstack(x, 0));
  std::vector<std::vector<Tensor>> outs;
  for (size_t b = 0; b < elements[0].size(); ++b) {
    std::vector<Tensor> args;
    for (const auto& e : elements) args.push_back(e[b]);
    std::vector<Tensor> r = f(args);
    outs.resize(r.size());
    for (size_t k = 0; k < r.size(); ++k) outs[k].push_back(r[k]);
  }
  std::vector<Tensor> stacked;
  for (const auto& o : outs) stacked.push_back(stack(o, 0));
  return stacked;
}

void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_EQ(got[k].shape(), want[k].shape()) << "output " << k;
    expect_values(got[k], want[k].to_vector<double>(), tol);
  }
}

bool ran_in_a_loop(std::string_view op) {
  const std::vector<std::string> ops = detail::vectorized_map_loop_ops();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// A two-layer network's loss on one example (x: [4], y: scalar).
Tensor example_loss(const Tensor& x, const Tensor& y, const Tensor& w1, const Tensor& b1, const Tensor& w2) {
  Tensor h = tanh(add(matmul(expand_dims(x, 0), w1), b1));
  Tensor out = reshape(matmul(h, w2), Shape{});
  return square(subtract(out, y));
}

TEST(VectorizedMap, AnMlpEqualsTheLoopWithoutOne) {
  const Tensor w1 = rand64({4, 5}, 1), b1 = rand64({5}, 2), w2 = rand64({5, 1}, 3);
  VectorizableFunction f = [&](const std::vector<Tensor>& a) {
    Tensor h = relu(add(matmul(expand_dims(a[0], 0), w1), b1));
    return std::vector<Tensor>{softmax(h, -1), reduce_sum(h, {1}, true), transpose(concat({h, h}, 0))};
  };
  const Tensor xs = rand64({6, 4}, 4);
  expect_same(vectorized_map(f, {xs}), loop(f, {xs}));
  for (std::string_view op :
       {"matmul", "add", "relu", "softmax", "reduce_sum", "transpose", "concat", "expand_dims"})
    EXPECT_FALSE(ran_in_a_loop(op)) << op;
}

TEST(VectorizedMap, PerExampleGradientsEqualTheLoop) {
  const Tensor w1 = rand64({4, 5}, 1), b1 = rand64({5}, 2), w2 = rand64({5, 1}, 3);
  VectorizableFunction per_example = [&](const std::vector<Tensor>& a) {
    GradientTape tape;
    for (const Tensor& p : {w1, b1, w2}) tape.watch(p);
    Tensor loss = example_loss(a[0], a[1], w1, b1, w2);
    return tape.gradient(loss, std::vector<GradientTape::Source>{w1, b1, w2});
  };
  const Tensor xs = rand64({8, 4}, 4), ys = rand64({8}, 5);
  const std::vector<Tensor> grads = vmap(per_example)({xs, ys});
  expect_values(grads[0], loop(per_example, {xs, ys})[0].to_vector<double>(), 1e-12);
  expect_same(grads, loop(per_example, {xs, ys}));
  EXPECT_EQ(grads[0].shape(), (Shape{8, 4, 5}));
  for (std::string_view op : {"matmul", "tanh", "sum_to_shape_of", "reshape", "square", "subtract"})
    EXPECT_FALSE(ran_in_a_loop(op)) << op;
}

TEST(Vmap, InAxesAndOutAxes) {
  const Tensor a = rand64({3, 5}, 1), b = rand64({3}, 2);
  VectorizableFunction f = [](const std::vector<Tensor>& args) {
    return std::vector<Tensor>{multiply(args[0], args[1]), reduce_max(args[0])};
  };
  // a mapped over its axis 1 (5 elements of shape [3]), b shared.
  const std::vector<Tensor> out = vmap(f, {1, std::nullopt}, {1, 0})({a, b});
  EXPECT_EQ(out[0].shape(), (Shape{3, 5}));
  expect_values(out[0], multiply(a, expand_dims(b, 1)).to_vector<double>(), 1e-15);
  expect_values(out[1], reduce_max(a, {0}).to_vector<double>(), 1e-15);
  EXPECT_ERROR(vmap(f, {0})({a, b}), InvalidArgumentError, "in_axes has 1 entries for 2 arguments");
  EXPECT_ERROR(vmap(f, {std::nullopt, std::nullopt})({a, b}), InvalidArgumentError, "maps over none");
  EXPECT_ERROR(vmap(f, {2, std::nullopt})({a, b}), InvalidArgumentError, "in_axes");
}

TEST(VectorizedMap, TapesAroundItDifferentiateTheBatch) {
  const Tensor w = rand64({3, 2}, 1), xs = rand64({4, 3}, 2);
  Variable v(rand64({2}, 3), "v");
  auto f = [&](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{reduce_sum(multiply(sin(matmul(expand_dims(a[0], 0), w)), v.value()))};
  };
  std::vector<Tensor> vectorized, looped;
  for (bool vectorize : {true, false}) {
    GradientTape tape;
    tape.watch(xs);
    Tensor total = reduce_sum(vectorize ? vectorized_map(f, {xs})[0] : loop(f, {xs})[0]);
    (vectorize ? vectorized : looped) = tape.gradient(total, std::vector<GradientTape::Source>{xs, v});
  }
  expect_same(vectorized, looped);
}

TEST(VectorizedMap, InsideAFunctionAndWithAnUnknownBatch) {
  auto body = [](const Tensor& xs) {
    return vectorized_map([](const Tensor& x) { return reduce_sum(multiply(tanh(x), 2.0)); }, xs);
  };
  auto f = function(body, "f", std::vector<TensorSpec>{{DType::Float64, Shape{kUnknownDim, 3}, "xs"}});
  const Tensor xs = rand64({5, 3}, 1);
  expect_values(f(xs), body(xs).to_vector<double>(), 1e-15);
  const Tensor two = rand64({2, 3}, 2);
  expect_values(f(two), body(two).to_vector<double>(), 1e-15);
  EXPECT_EQ(f.trace_count(), 1);
}

// Each random op's rule draws the batch's numbers in one call: every element gets its
// own (rows differ) and together they follow the op's distribution. Stateless ops give
// every element the same numbers, as a loop would.
TEST(VectorizedMap, RandomOpsDrawForEachElement) {
  const Tensor batch = zeros({400, 50}, DType::Float64);
  auto draws = [&](const std::function<Tensor(const Shape&)>& draw) {
    return vectorized_map([&](const Tensor& x) { return add(x, cast(draw(Shape{50}), DType::Float64)); },
                          batch);
  };
  auto mean_and_std = [](const Tensor& t) {
    const double m = reduce_mean(t).item<double>();
    return std::pair{m, std::sqrt(reduce_mean(square(subtract(t, m))).item<double>())};
  };
  const Tensor normal = draws([](const Shape& s) { return random::normal(s, 1.0, 2.0, DType::Float64); });
  EXPECT_EQ(normal.shape(), (Shape{400, 50}));
  const auto [nm, ns] = mean_and_std(normal);
  EXPECT_NEAR(nm, 1.0, 0.06);
  EXPECT_NEAR(ns, 2.0, 0.06);
  const Tensor truncated =
      draws([](const Shape& s) { return random::truncated_normal(s, 0.0, 1.0, DType::Float64); });
  EXPECT_LE(reduce_max(abs(truncated)).item<double>(), 2.0);
  EXPECT_NEAR(mean_and_std(truncated).second, 0.88, 0.03);  // a standard normal truncated at ±2
  const Tensor uniform = draws([](const Shape& s) { return random::uniform(s, 0, 1, DType::Float64); });
  EXPECT_NEAR(mean_and_std(uniform).first, 0.5, 0.01);
  EXPECT_GE(reduce_min(uniform).item<double>(), 0.0);
  EXPECT_LT(reduce_max(uniform).item<double>(), 1.0);
  const Tensor ints = draws([](const Shape& s) { return random::uniform(s, 0, 10, DType::Int64); });
  EXPECT_EQ(reduce_min(ints).item<double>(), 0.0);
  EXPECT_EQ(reduce_max(ints).item<double>(), 9.0);
  for (const Tensor& t : {normal, truncated, uniform}) {
    const std::vector<Tensor> rows = unstack(t, 0);
    EXPECT_GT(reduce_max(abs(subtract(rows[0], rows[1]))).item<double>(), 0.0);
  }
  const Tensor same = draws([](const Shape& s) {
    return random::stateless_normal(s, {1, 2}, 0, 1, DType::Float64);
  });
  const std::vector<Tensor> rows = unstack(same, 0);
  EXPECT_EQ(reduce_max(abs(subtract(rows[0], rows[399]))).item<double>(), 0.0);
}

TEST(VectorizedMap, CondWithASharedOrABatchedPredicate) {
  const Tensor xs = rand64({5, 2}, 1);
  VectorizableFunction by_element = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{cond(
        greater(reduce_sum(a[0]), 0.0), [&] { return multiply(a[0], 2.0); }, [&] { return negative(a[0]); })};
  };
  expect_same(vectorized_map(by_element, {xs}), loop(by_element, {xs}));
  const Tensor flag = constant(true);
  VectorizableFunction shared = [&](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{cond(
        flag, [&] { return exp(a[0]); }, [&] { return a[0]; })};
  };
  expect_same(vectorized_map(shared, {xs}), loop(shared, {xs}));
}

// Note [vectorized control flow]: a cond whose predicate differs by element runs each
// branch on its own elements; a while_loop whose elements iterate different numbers of
// times runs vectorized, its body only on the elements still looping (an index past
// the data's end is never read); neither loops over the elements.
TEST(VectorizedMap, CondAndWhileLoopDifferingByElementRunVectorized) {
  const Tensor xs = rand64({6, 3}, 1);
  VectorizableFunction branches = [](const std::vector<Tensor>& a) {
    const Tensor positive = greater(reduce_sum(a[0]), 0.0);
    return std::vector<Tensor>{cond(
        positive, [&] { return multiply(reduce_max(a[0]), 2.0); },
        [&] { return negative(reduce_min(a[0])); })};
  };
  expect_same(vectorized_map(branches, {xs}, /*fallback_to_loop=*/false), loop(branches, {xs}));

  // Sums data[0 .. n) for each element's n; the body must not run once i == n.
  const Tensor data = rand64({10}, 2);
  VectorizableFunction partial_sum = [&](const std::vector<Tensor>& a) {
    const Tensor n = a[0];
    return while_loop([&](const std::vector<Tensor>& v) { return less(v[0], n); },
                      [&](const std::vector<Tensor>& v) {
                        return std::vector<Tensor>{add(v[0], 1), add(v[1], gather(data, v[0]))};
                      },
                      {constant(0), constant(0.0)});
  };
  const Tensor ns = constant({0, 3, 10, 7, 1});
  expect_same(vectorized_map(partial_sum, {ns}, /*fallback_to_loop=*/false), loop(partial_sum, {ns}));

  // Halving until below 1, at most four times; loop variables batched and shared mixed.
  VectorizableFunction halving = [](const std::vector<Tensor>& a) {
    return while_loop([](const std::vector<Tensor>& v) { return greater(v[1], 1.0); },
                      [&](const std::vector<Tensor>& v) {
                        return std::vector<Tensor>{add(v[0], 1), multiply(v[1], 0.5), add(v[2], a[1])};
                      },
                      {constant(0), a[0], constant(0.0)}, /*maximum_iterations=*/4);
  };
  const Tensor starts = constant({0.5, 3.0, 40.0, 9.0}), steps = rand64({4}, 3);
  expect_same(vectorized_map(halving, {starts, steps}, /*fallback_to_loop=*/false),
              loop(halving, {starts, steps}));

  // A tape around it differentiates every element's own iterations.
  std::vector<Tensor> gradients;
  for (bool vectorize : {true, false}) {
    GradientTape tape;
    tape.watch(starts);
    const auto f = [](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{while_loop([](const std::vector<Tensor>& v) { return greater(v[0], 1.0); },
                                            [](const std::vector<Tensor>& v) {
                                              return std::vector<Tensor>{
                                                  add(multiply(v[0], 0.5), multiply(sin(v[0]), 0.1))};
                                            },
                                            {square(a[0])})[0]};
    };
    const Tensor total = reduce_sum(vectorize ? vectorized_map(f, {starts})[0] : loop(f, {starts})[0]);
    gradients.push_back(tape.gradient(total, starts));
  }
  expect_same({gradients[0]}, {gradients[1]});

  // The same inside a function, where the number of iterations is not known while tracing.
  auto traced = function(
      [&](const Tensor& n) {
        return vectorized_map([&](const Tensor& e) { return partial_sum({e})[1]; }, n,
                              /*fallback_to_loop=*/false);
      },
      "partial_sums", std::vector<TensorSpec>{{DType::Int32, Shape{kUnknownDim}, "n"}});
  expect_same({traced(ns)}, {loop(partial_sum, {ns})[1]});
}

TEST(VectorizedMap, OpsWithoutARuleRunInALoopUnlessRefused) {
  const Tensor xs = testing::i64({1, 2, 2, 3, 3, 3}, Shape{2, 3});
  auto counts = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{bincount(a[0], std::nullopt, 4)};
  };
  expect_same(vectorized_map(counts, {xs}), loop(counts, {xs}));
  EXPECT_TRUE(ran_in_a_loop("bincount"));
  EXPECT_ERROR(vectorized_map(counts, {xs}, /*fallback_to_loop=*/false), UnimplementedError, "bincount",
               "no batching rule", "fallback_to_loop");
}

// Note [convolution batching rules]: the three convolution ops with the batch on
// either input or both, over strides, dilations and both paddings, equal their loops
// without running one (fallback_to_loop off).
TEST(VectorizedMap, ConvolutionsBatchedOnEitherInput) {
  struct Case {
    Shape images, filter;
    std::vector<int64_t> strides;
    std::string padding;
    std::vector<int64_t> dilations;
  };
  const std::vector<Case> cases = {{{2, 5, 6, 3}, {3, 3, 3, 2}, {1, 1}, "SAME", {1, 1}},
                                   {{1, 7, 6, 2}, {3, 2, 2, 3}, {2, 1}, "VALID", {1, 1}},
                                   {{2, 7, 7, 1}, {2, 3, 1, 2}, {2, 2}, "SAME", {2, 1}},
                                   {{1, 4, 4, 2}, {1, 1, 2, 2}, {1, 1}, "VALID", {1, 1}}};
  constexpr int64_t kBatch = 3;
  uint64_t seed = 10;
  for (const Case& c : cases) {
    const Tensor probe = conv2d(rand64(c.images, 1), rand64(c.filter, 2), c.strides, c.padding, c.dilations);
    const Shape out = probe.shape();
    auto batch_of = [&](const Shape& s) {
      Dims dims{kBatch};
      for (int64_t d : s.dims()) dims.push_back(d);
      return rand64(Shape(dims), seed++);
    };
    using Op = std::function<Tensor(const Tensor&, const Tensor&)>;
    const Op forward = [&](const Tensor& x, const Tensor& w) {
      return conv2d(x, w, c.strides, c.padding, c.dilations);
    };
    const Op input_gradient = [&](const Tensor& w, const Tensor& dy) {
      return conv2d_backprop_input(c.images, w, dy, c.strides, c.padding, c.dilations);
    };
    const Op filter_gradient = [&](const Tensor& x, const Tensor& dy) {
      return conv2d_backprop_filter(x, c.filter, dy, c.strides, c.padding, c.dilations);
    };
    const std::vector<std::pair<const Op*, std::pair<Shape, Shape>>> ops = {
        {&forward, {c.images, c.filter}},
        {&input_gradient, {c.filter, out}},
        {&filter_gradient, {c.images, out}}};
    for (const auto& [op_pointer, shapes] : ops)
      for (const auto& batched_operands : {std::pair{true, false}, {false, true}, {true, true}}) {
        // Named copies: a lambda may not capture structured bindings before C++20.
        const bool first_batched = batched_operands.first;
        const bool second_batched = batched_operands.second;
        const Op* const op = op_pointer;
        SCOPED_TRACE(::testing::PrintToString(c.images) + " " + c.padding + " batched " +
                     std::to_string(first_batched) + std::to_string(second_batched));
        const Tensor a = batch_of(shapes.first), b = batch_of(shapes.second);
        const Tensor shared_a = unstack(a, 0)[0], shared_b = unstack(b, 0)[0];
        // A shared operand is captured by the function; the batched ones are its arguments.
        const VectorizableFunction f = [&](const std::vector<Tensor>& args) {
          size_t next = 0;
          const Tensor x = first_batched ? args[next++] : shared_a;
          const Tensor y = second_batched ? args[next++] : shared_b;
          return std::vector<Tensor>{(*op)(x, y)};
        };
        std::vector<Tensor> batched;
        if (first_batched) batched.push_back(a);
        if (second_batched) batched.push_back(b);
        expect_same(vectorized_map(f, batched, /*fallback_to_loop=*/false), loop(f, batched), 1e-11);
      }
  }
}

// Inside a function traced with an unknown batch, the im2col GEMMs of both-batched
// convolutions infer the batch from the images (their count per element is known).
TEST(VectorizedMap, ConvolutionsWithAnUnknownBatchInsideAFunction) {
  const Tensor xs = rand64({4, 2, 6, 6, 3}, 1), ws = rand64({4, 3, 3, 3, 2}, 2),
               dys = rand64({4, 2, 3, 3, 2}, 3);
  const VectorizableFunction forward = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{conv2d(a[0], a[1], {2, 2}, "SAME")};
  };
  const VectorizableFunction filter_gradient = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{conv2d_backprop_filter(a[0], Shape{3, 3, 3, 2}, a[1], {2, 2}, "SAME")};
  };
  const std::vector<std::tuple<const VectorizableFunction*, Tensor, Shape>> cases = {
      {&forward, ws, Shape{kUnknownDim, 3, 3, 3, 2}},
      {&filter_gradient, dys, Shape{kUnknownDim, 2, 3, 3, 2}}};
  for (const auto& [op, second, second_spec] : cases) {
    auto traced = function(
        [op = op](const Tensor& x, const Tensor& y) {
          return vectorized_map(*op, {x, y}, /*fallback_to_loop=*/false)[0];
        },
        "convs",
        std::vector<TensorSpec>{{DType::Float64, Shape{kUnknownDim, 2, 6, 6, 3}, "x"},
                                {DType::Float64, second_spec, "y"}});
    expect_same({traced(xs, second)}, loop(*op, {xs, second}), 1e-12);
  }
}

// The scatter family's rule gives each element's index tuples the element's position
// as a first coordinate: updates land in their own element only, duplicates add up (add)
// or the last one wins (update) within each element, as in the loop.
TEST(VectorizedMap, ScattersLandInTheirOwnElement) {
  const Tensor tensors = rand64({3, 5, 2}, 1), updates = rand64({3, 4, 2}, 2);
  const Tensor indices = testing::i64({1, 1, 4, 0, 2, 2, 2, 3, 0, 4, 0, 1}, Shape{3, 4, 1});
  for (auto op :
       {tensor_scatter_nd_add, tensor_scatter_nd_update, tensor_scatter_nd_min, tensor_scatter_nd_max}) {
    VectorizableFunction f = [&](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{op(a[0], a[1], a[2], CallSite::current())};
    };
    expect_same(vectorized_map(f, {tensors, indices, updates}, /*fallback_to_loop=*/false),
                loop(f, {tensors, indices, updates}));
  }
  VectorizableFunction scatter = [&](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{scatter_nd(a[0], a[1], Shape{5, 2})};
  };
  expect_same(vectorized_map(scatter, {indices, updates}, /*fallback_to_loop=*/false),
              loop(scatter, {indices, updates}));
}

// Unsorted segment reductions with ids that differ by element: one reduction over the
// batch's segments (element b's segment s is b * num_segments + s); negative ids are
// dropped per element, with data batched or shared.
TEST(VectorizedMap, UnsortedSegmentsWithIdsPerElement) {
  const Tensor data = rand64({4, 6, 2}, 1);
  const Tensor ids =
      testing::i64({0, 2, -1, 2, 1, 0, 1, 1, 1, 1, 1, 1, -1, 0, 2, 0, 2, 2, 2, 0, -1, 0, 1, 1}, Shape{4, 6});
  for (auto op : {unsorted_segment_sum, unsorted_segment_max, unsorted_segment_min, unsorted_segment_mean}) {
    VectorizableFunction f = [&](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{op(a[0], a[1], 3, CallSite::current())};
    };
    expect_same(vectorized_map(f, {data, ids}, /*fallback_to_loop=*/false), loop(f, {data, ids}));
    const Tensor shared = unstack(data, 0)[0];
    VectorizableFunction shared_data = [&](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{op(shared, a[0], 3, CallSite::current())};
    };
    expect_same(vectorized_map(shared_data, {ids}, /*fallback_to_loop=*/false), loop(shared_data, {ids}));
  }
}

TEST(VectorizedMap, Errors) {
  auto id = [](const std::vector<Tensor>& a) { return a; };
  EXPECT_ERROR(vectorized_map(id, {}), InvalidArgumentError, "elems is empty");
  EXPECT_ERROR(vectorized_map(id, {constant(1.0)}), InvalidArgumentError, "elems 0 is a scalar");
  EXPECT_ERROR(vectorized_map(id, {rand64({3, 2}, 1), rand64({4}, 2)}), InvalidArgumentError, "elems 1 has 4",
               "earlier one 3");
  Variable v(zeros({2}, DType::Float64), "state");
  auto assigns = [&](const std::vector<Tensor>& a) { return std::vector<Tensor>{v.assign(a[0])}; };
  EXPECT_ERROR(vectorized_map(assigns, {rand64({3, 2}, 1)}), UnimplementedError, "assigns variable 'state'");
  auto ragged = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{where(greater(a[0], 0.0))}; };
  EXPECT_ERROR(vectorized_map(ragged, {constant({{1.0, -1.0}, {1.0, 1.0}})}), InvalidArgumentError,
               "different shapes");
}

// Shared and batched operands mixed, where rules take shortcuts.
TEST(VectorizedMap, SharedOperandsMixedWithBatchedOnes) {
  const Tensor w = rand64({3}, 1), xs = rand64({5, 3}, 2), params = rand64({5, 4}, 3);
  VectorizableFunction f = [&](const std::vector<Tensor>& a) {
    const Tensor weights = ensure_broadcastable_to(w, a[0]);  // as a loss's sample weights
    const Tensor index = cast(greater(a[0], 0.0), DType::Int64);
    return std::vector<Tensor>{multiply(weights, a[0]), gather(params, index, 0, -1),
                               matmul(expand_dims(a[0], 0), zeros({3, 0}, DType::Float64))};
  };
  expect_same(vectorized_map(f, {xs}), loop(f, {xs}));
  auto empty = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{matmul(expand_dims(a[0], 0), zeros({0, 2}, DType::Float64))};
  };
  expect_same(vectorized_map(empty, {zeros({4, 0}, DType::Float64)}),
              loop(empty, {zeros({4, 0}, DType::Float64)}));
}

TEST(VectorizedMap, RandomOpsInsideControlFlowDrawForEachElement) {
  const Tensor flag = constant(true);
  const Tensor out = vectorized_map(
      [&](const Tensor& x) {
        return add(x, cond(
                          flag, [] { return random::normal({3}, 0, 1, DType::Float64); },
                          [] { return zeros({3}, DType::Float64); }));
      },
      zeros({4, 3}, DType::Float64));
  const std::vector<Tensor> rows = unstack(out, 0);
  EXPECT_GT(reduce_max(abs(subtract(rows[0], rows[1]))).item<double>(), 0.0);
}

TEST(VectorizedMap, AssignmentsAreRefused) {
  Variable counter(zeros({}, DType::Float64), "counter");
  auto count = [&](const std::vector<Tensor>& a) {
    counter.assign_add(constant(1.0));
    return std::vector<Tensor>{a[0]};
  };
  EXPECT_ERROR(vectorized_map(count, {rand64({3}, 1)}), UnimplementedError, "assigns variable 'counter'",
               "once per element");
}

TEST(PforJacobian, EqualsOneBackwardPassPerRow) {
  const Tensor x = rand64({3, 4}, 1), w = rand64({4, 5}, 2);
  for (bool batch : {false, true}) {
    Tensor vectorized, looped;
    for (bool pfor : {true, false}) {
      GradientTape tape;
      tape.watch(x);
      Tensor y = tanh(matmul(x, w));
      (pfor ? vectorized : looped) = batch ? tape.batch_jacobian(y, x, UnconnectedGradients::None, pfor)
                                           : tape.jacobian(y, x, UnconnectedGradients::None, pfor);
    }
    EXPECT_EQ(vectorized.shape(), looped.shape());
    expect_values(vectorized, looped.to_vector<double>(), 1e-14);
  }
  // A persistent tape does not record its own Jacobian, vectorized or not.
  for (bool pfor : {true, false}) {
    GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    Tensor y = tanh(matmul(x, w));
    Tensor jacobian = tape.jacobian(y, x, UnconnectedGradients::None, pfor);
    EXPECT_FALSE(tape.gradient(reduce_sum(jacobian), x).defined()) << "pfor " << pfor;
  }
}

TEST(Hessians, EqualNestedTapes) {
  const Tensor x = rand64({3}, 1), y = rand64({2}, 2);
  auto f = [](const std::vector<Tensor>& a) {
    return multiply(reduce_sum(pow(a[0], 3.0)), reduce_sum(exp(a[1])));
  };
  const std::vector<Tensor> h = hessians(f, {x, y});
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].shape(), (Shape{3, 3}));
  // d²/dx_i dx_j = 6 x_i δ_ij · sum(exp(y)).
  const double s = reduce_sum(exp(y)).item<double>();
  const std::vector<double> xv = x.to_vector<double>();
  std::vector<double> want(9, 0.0);
  for (int i = 0; i < 3; ++i) want[static_cast<size_t>(4 * i)] = 6 * xv[static_cast<size_t>(i)] * s;
  expect_values(h[0], want, 1e-12);
  expect_values(h[1], multiply(linalg::diag(exp(y)), reduce_sum(pow(x, 3.0))).to_vector<double>(), 1e-12);
}

}  // namespace
}  // namespace ef
