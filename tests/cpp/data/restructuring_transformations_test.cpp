// unbatch, padded_batch, cache, flat_map, interleave, from_generator and reduce:
// elements against hand-computed lists (and tf.data's documented examples).
#include <atomic>
#include <memory>

#include "data/data_test_util.h"

namespace ef::testing {
namespace {

using data::Dataset;
using data::Element;

// Element x of `ds` becomes x repeated x times (fill([x], x)), as tf.data's examples do.
Dataset filled(const Dataset& ds) {
  return ds.map([](const Element& e) {
    const int64_t x = e[0].item<int64_t>();
    return Element{fill(Shape{x}, x, DType::Int64)};
  });
}

Dataset range_ds(int64_t start, int64_t stop) {
  return Dataset::from_tensor_slices({range(start, stop, 1, DType::Int64)});
}

std::vector<Element> elements(const Dataset& ds) {
  std::vector<Element> out;
  for (const Element& e : ds) out.push_back(e);
  return out;
}

void expect_batch(const Tensor& t, const Shape& shape, const std::vector<double>& v) {
  expect_meta(t, shape, DType::Int64);
  expect_values(t, v);
}

TEST(DatasetUnbatchTest, SplitsAlongTheFirstAxis) {
  EXPECT_EQ(values(numbers(7).batch(3).unbatch()), iota_vector(7));
  Dataset pairs = Dataset::from_tensor_slices({iota({4, 2}, DType::Int64), i64({10, 11, 12, 13})}).batch(3);
  std::vector<Element> got = elements(pairs.unbatch());
  ASSERT_EQ(got.size(), 4u);
  expect_batch(got[3][0], {2}, {6, 7});
  expect_batch(got[3][1], {}, {13});
  // An element with an empty first axis contributes nothing.
  Dataset with_empty = numbers(3).map([](const Element& e) {
    const int64_t x = e[0].item<int64_t>();
    return Element{fill(Shape{x}, x, DType::Int64)};
  });
  EXPECT_EQ(values(with_empty.unbatch()), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(numbers(7).batch(3).unbatch().cardinality(), data::kUnknownCardinality);
  EXPECT_EQ(numbers(0).batch(3).unbatch().cardinality(), 0);
  EXPECT_EQ(numbers(7).batch(3).repeat().unbatch().cardinality(), data::kInfiniteCardinality);
}

TEST(DatasetUnbatchTest, RejectsScalarsAndUnequalBatchSizes) {
  EXPECT_ERROR(values(numbers(3).unbatch()), InvalidArgumentError, "unbatch", "scalar");
  Dataset unequal = Dataset::from_tensors({i64({1, 2}), i64({1, 2, 3})});
  EXPECT_ERROR(values(unequal.unbatch()), InvalidArgumentError, "unbatch", "[2]", "[3]", "component 1");
}

TEST(DatasetPaddedBatchTest, TensorFlowDocumentationExamples) {
  Dataset a = filled(range_ds(1, 5));  // [1], [2, 2], [3, 3, 3], [4, 4, 4, 4]
  // Pad to the smallest per-batch size that fits all elements.
  std::vector<Element> b = elements(a.padded_batch(2));
  ASSERT_EQ(b.size(), 2u);
  expect_batch(b[0][0], {2, 2}, {1, 0, 2, 2});
  expect_batch(b[1][0], {2, 4}, {3, 3, 3, 0, 4, 4, 4, 4});
  // Pad to a fixed size.
  std::vector<Element> c = elements(a.padded_batch(2, std::vector<Shape>{{5}}));
  expect_batch(c[0][0], {2, 5}, {1, 0, 0, 0, 0, 2, 2, 0, 0, 0});
  expect_batch(c[1][0], {2, 5}, {3, 3, 3, 0, 0, 4, 4, 4, 4, 0});
  // Pad with a custom value.
  std::vector<Element> d =
      elements(a.padded_batch(2, std::vector<Shape>{{5}}, std::vector<TensorOrScalar>{-1}));
  expect_batch(d[0][0], {2, 5}, {1, -1, -1, -1, -1, 2, 2, -1, -1, -1});
  // Components padded independently: ([1, 2, 3], [10]), ([4, 5], [11, 12]) with
  // padded_shapes ([4], [None]) and padding_values (-1, 100).
  Dataset nested =
      Dataset::zip({Dataset::from_tensors({i64({1, 2, 3})}).concatenate(Dataset::from_tensors({i64({4, 5})})),
                    Dataset::from_tensors({i64({10})}).concatenate(Dataset::from_tensors({i64({11, 12})}))});
  std::vector<Element> n = elements(
      nested.padded_batch(2, std::vector<Shape>{{4}, {kUnknownDim}}, std::vector<TensorOrScalar>{-1, 100}));
  ASSERT_EQ(n.size(), 1u);
  expect_batch(n[0][0], {2, 4}, {1, 2, 3, -1, 4, 5, -1, -1});
  expect_batch(n[0][1], {2, 2}, {10, 100, 11, 12});
  // One padding value for every component.
  std::vector<Element> e =
      elements(Dataset::zip({a, a}).padded_batch(2, std::nullopt, std::vector<TensorOrScalar>{-1}));
  expect_batch(e[1][0], {2, 4}, {3, 3, 3, -1, 4, 4, 4, 4});
  expect_batch(e[1][1], {2, 4}, {3, 3, 3, -1, 4, 4, 4, 4});
}

TEST(DatasetPaddedBatchTest, RanksDtypesRemainderAndCardinality) {
  // Two padded dimensions; equal shapes need no padding; scalars just stack.
  Dataset grids = numbers(3).map([](const Element& e) {
    const int64_t x = e[0].item<int64_t>();
    return Element{fill(Shape{x + 1, 3 - x}, 1.0f), e[0]};
  });
  std::vector<Element> g = elements(grids.padded_batch(3, std::nullopt, std::vector<TensorOrScalar>{0.5, 0}));
  ASSERT_EQ(g.size(), 1u);
  expect_meta(g[0][0], {3, 3, 3}, DType::Float32);
  expect_values(g[0][0], {1, 1,  1,  .5, .5, .5, .5, .5, .5,  //
                          1, 1,  .5, 1,  1,  .5, .5, .5, .5,  //
                          1, .5, .5, 1,  .5, .5, 1,  .5, .5});
  expect_batch(g[0][1], {3}, {0, 1, 2});
  Dataset a = filled(range_ds(1, 6));
  EXPECT_EQ(a.padded_batch(2).cardinality(), 3);
  EXPECT_EQ(a.padded_batch(2, std::nullopt, std::nullopt, true).cardinality(), 2);
  EXPECT_EQ(elements(a.padded_batch(2, std::nullopt, std::nullopt, true)).size(), 2u);
  std::vector<Element> last = elements(a.padded_batch(2));
  expect_batch(last[2][0], {1, 5}, {5, 5, 5, 5, 5});
  // A padded shape bigger in every dimension, on a tensor padding value of the right dtype.
  std::vector<Element> t = elements(
      a.take(1).padded_batch(1, std::vector<Shape>{{3}}, std::vector<TensorOrScalar>{constant(int64_t{9})}));
  expect_batch(t[0][0], {1, 3}, {1, 9, 9});
}

TEST(DatasetPaddedBatchTest, BadArguments) {
  Dataset a = filled(range_ds(1, 5));
  EXPECT_ERROR(a.padded_batch(0), InvalidArgumentError, "padded_batch", "batch_size", "0");
  EXPECT_ERROR(a.padded_batch(2, std::vector<Shape>{{-2}}), InvalidArgumentError, "padded_batch",
               "padded_shapes[0]", "-2");
  EXPECT_ERROR(a.padded_batch(2, std::vector<Shape>{}), InvalidArgumentError, "padded_batch", "empty");
  EXPECT_ERROR(a.padded_batch(2, std::nullopt, std::vector<TensorOrScalar>{constant({1, 2})}),
               InvalidArgumentError, "padded_batch", "padding_values[0]", "scalar");
  // Found when the batch is made.
  EXPECT_ERROR(values(a.padded_batch(2, std::vector<Shape>{{3}})), InvalidArgumentError, "padded_batch",
               "[4]", "padded_shapes[0] = [3]");
  EXPECT_ERROR(values(a.padded_batch(2, std::vector<Shape>{{3, 3}})), InvalidArgumentError, "padded_batch",
               "rank 2");
  EXPECT_ERROR(values(a.padded_batch(2, std::vector<Shape>{{3}, {3}})), InvalidArgumentError, "padded_batch",
               "2 entries", "1 components");
  EXPECT_ERROR(values(a.padded_batch(2, std::nullopt, std::vector<TensorOrScalar>{constant(1.5f)})),
               InvalidArgumentError, "padded_batch", "float32", "int64");
  EXPECT_ERROR(values(a.padded_batch(2, std::nullopt, std::vector<TensorOrScalar>{1.5})),
               InvalidArgumentError, "padded_batch");
  Dataset ranks = numbers(2).map([](const Element& e) {
    return Element{e[0].item<int64_t>() == 0 ? i64({1}) : i64({1, 2, 3, 4}, {2, 2})};
  });
  EXPECT_ERROR(values(ranks.padded_batch(2)), InvalidArgumentError, "padded_batch", "equal ranks");
}

TEST(DatasetCacheTest, FirstCompletePassFillsTheCache) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  // tf.data: range(5).map(lambda x: x**2).cache() gives [0, 1, 4, 9, 16] every pass.
  Dataset ds = numbers(5)
                   .map([calls](const Element& e) {
                     ++*calls;
                     return Element{e[0] * e[0]};
                   })
                   .cache();
  const std::vector<int64_t> squares{0, 1, 4, 9, 16};
  EXPECT_EQ(values(ds), squares);
  EXPECT_EQ(calls->load(), 5);
  EXPECT_EQ(values(ds), squares);
  EXPECT_EQ(values(ds.repeat(3)), (std::vector<int64_t>{0, 1, 4, 9, 16, 0, 1, 4, 9, 16, 0, 1, 4, 9, 16}));
  EXPECT_EQ(calls->load(), 5);  // read from the cache
  EXPECT_EQ(ds.cardinality(), 5);
}

TEST(DatasetCacheTest, PartialPassesLeaveNoCache) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  Dataset ds = numbers(5)
                   .map([calls](const Element& e) {
                     ++*calls;
                     return e;
                   })
                   .cache();
  EXPECT_EQ(values(ds.take(2)), (std::vector<int64_t>{0, 1}));  // stops early: nothing cached
  EXPECT_EQ(values(ds.take(3)), (std::vector<int64_t>{0, 1, 2}));
  {
    data::Iterator abandoned = ds.make_iterator();
    abandoned.get_next();
  }
  EXPECT_EQ(values(ds), iota_vector(5));  // a complete pass, from the input
  const int after_fill = calls->load();
  EXPECT_EQ(values(ds), iota_vector(5));
  EXPECT_EQ(values(ds.take(2)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(calls->load(), after_fill);
  // Two passes at once before any finished: both read the input; the first to finish fills it.
  Dataset fresh = numbers(3).cache();
  data::Iterator p = fresh.make_iterator(), q = fresh.make_iterator();
  EXPECT_EQ(q.get_next()->at(0).item<int64_t>(), 0);
  std::vector<int64_t> from_p;
  while (auto e = p.get_next()) from_p.push_back(e->at(0).item<int64_t>());
  EXPECT_EQ(from_p, iota_vector(3));
  EXPECT_EQ(q.get_next()->at(0).item<int64_t>(), 1);
  EXPECT_EQ(values(fresh), iota_vector(3));
}

TEST(DatasetCacheTest, ShuffleBeforeCacheShufflesOnce) {
  Dataset once = numbers(20).shuffle(20, 4).cache();
  const std::vector<int64_t> first = values(once);
  EXPECT_EQ(values(once), first);
  EXPECT_EQ(sorted(first), iota_vector(20));
  Dataset each = numbers(20).cache().shuffle(20, 4);
  EXPECT_NE(values(each), values(each));
}

TEST(DatasetCacheTest, APassThatFailedDoesNotFillTheCache) {
  auto fail_once = std::make_shared<std::atomic<bool>>(true);
  Dataset ds = numbers(3)
                   .map([fail_once](const Element& e) {
                     if (e[0].item<int64_t>() == 1 && fail_once->exchange(false)) fail("flaky element 1");
                     return e;
                   })
                   .cache();
  data::Iterator it = ds.make_iterator();
  EXPECT_EQ(it.get_next()->at(0).item<int64_t>(), 0);
  EXPECT_ERROR(it.get_next(), InvalidArgumentError, "flaky element 1");
  EXPECT_EQ(it.get_next()->at(0).item<int64_t>(), 2);
  EXPECT_FALSE(it.get_next().has_value());
  EXPECT_EQ(values(ds), iota_vector(3));  // not the failed pass's {0, 2}
}

TEST(DatasetFlatMapTest, ConcatenatesEachElementsDataset) {
  // tf.data: from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).flat_map(from_tensor_slices) -> 1..9.
  Dataset ds =
      Dataset::from_tensor_slices({i64({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3})}).flat_map([](const Element& e) {
        return Dataset::from_tensor_slices(e);
      });
  EXPECT_EQ(values(ds), iota_vector(9, 1));
  EXPECT_EQ(ds.cardinality(), data::kUnknownCardinality);
  // Element x becomes x copies of x; empty datasets contribute nothing.
  Dataset copies = numbers(4).flat_map(
      [](const Element& e) { return Dataset::from_tensors(e).repeat(e[0].item<int64_t>()); });
  EXPECT_EQ(values(copies), (std::vector<int64_t>{1, 2, 2, 3, 3, 3}));
  EXPECT_EQ(values(copies.repeat(2)).size(), 12u);
  EXPECT_ERROR(numbers(2).flat_map(nullptr), InvalidArgumentError, "flat_map", "empty");
  auto boom = [](const Element& e) -> Dataset {
    if (e[0].item<int64_t>() == 2) fail("no dataset for 2");
    return Dataset::from_tensors(e);
  };
  data::Iterator it = numbers(4).flat_map(boom).make_iterator();
  EXPECT_EQ(it.get_next()->at(0).item<int64_t>(), 0);
  EXPECT_EQ(it.get_next()->at(0).item<int64_t>(), 1);
  EXPECT_ERROR(it.get_next(), InvalidArgumentError, "no dataset for 2");
}

TEST(DatasetInterleaveTest, TensorFlowOrder) {
  // tf.data: range(1, 6).interleave(lambda x: from_tensors(x).repeat(6), cycle_length=2, block_length=4).
  auto six = [](const Element& e) { return Dataset::from_tensors(e).repeat(6); };
  EXPECT_EQ(values(range_ds(1, 6).interleave(six, 2, 4)),
            (std::vector<int64_t>{1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3,
                                  3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5}));
  // Unequal lengths: x gives the x + 1 elements 10x, ..., 11x. cycle 3, block 2: 0's
  // dataset ends after one element and the cycle moves on to open 1's and 2's; a freed
  // slot is refilled only when the cycle comes back to it (slot 0 with 3's, slot 1 with
  // 4's, after 2's last element).
  auto tens = [](const Element& e) {
    const int64_t x = e[0].item<int64_t>();
    return Dataset::from_tensor_slices({range(10 * x, 11 * x + 1, 1, DType::Int64)});
  };
  EXPECT_EQ(values(numbers(5).interleave(tens, 3, 2)),
            (std::vector<int64_t>{0, 10, 11, 20, 21, 30, 31, 22, 32, 33, 40, 41, 42, 43, 44}));
  // block_length 1, cycle_length larger than the input: round robin.
  EXPECT_EQ(values(numbers(3).interleave(tens, 8, 1)), (std::vector<int64_t>{0, 10, 20, 11, 21, 22}));
  EXPECT_EQ(numbers(3).interleave(tens, 2).cardinality(), data::kUnknownCardinality);
  EXPECT_EQ(values(numbers(3).interleave(tens)).size(), 6u);  // kAutotune cycle
}

TEST(DatasetInterleaveTest, BadArguments) {
  auto one = [](const Element& e) { return Dataset::from_tensors(e); };
  EXPECT_ERROR(numbers(3).interleave(one, 0), InvalidArgumentError, "interleave", "cycle_length", "0");
  EXPECT_ERROR(numbers(3).interleave(one, -3), InvalidArgumentError, "interleave", "cycle_length", "-3");
  EXPECT_ERROR(numbers(3).interleave(one, 2, 0), InvalidArgumentError, "interleave", "block_length", "0");
  EXPECT_ERROR(numbers(3).interleave(nullptr), InvalidArgumentError, "interleave", "empty");
}

TEST(DatasetFromGeneratorTest, EachPassCallsTheGeneratorAfresh) {
  auto passes = std::make_shared<int>(0);
  Dataset ds = Dataset::from_generator([passes] {
    const int64_t n = ++*passes + 1;  // pass k yields 0, 1, ..., k
    auto i = std::make_shared<int64_t>(0);
    return [n, i]() -> std::optional<Element> {
      if (*i == n) return std::nullopt;
      return Element{constant((*i)++)};
    };
  });
  EXPECT_EQ(ds.cardinality(), data::kUnknownCardinality);
  EXPECT_EQ(*passes, 0);
  EXPECT_EQ(values(ds), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(values(ds), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(values(ds.prefetch(2).batch(2)), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_ERROR(Dataset::from_generator(nullptr), InvalidArgumentError, "from_generator", "empty");
  Dataset bad =
      Dataset::from_generator([] { return []() -> std::optional<Element> { return Element{Tensor()}; }; });
  EXPECT_ERROR(values(bad), InvalidArgumentError, "from_generator", "undefined");
}

TEST(DatasetReduceTest, FoldsAPassIntoAState) {
  // tf.data: range(5).reduce(0, lambda x, _: x + 1) -> 5; reduce(0, lambda x, y: x + y) -> 10.
  auto count = [](const Element& state, const Element&) { return Element{state[0] + int64_t{1}}; };
  auto sum = [](const Element& state, const Element& e) { return Element{state[0] + e[0]}; };
  EXPECT_EQ(numbers(5).reduce({constant(int64_t{0})}, count)[0].item<int64_t>(), 5);
  EXPECT_EQ(numbers(5).reduce({constant(int64_t{0})}, sum)[0].item<int64_t>(), 10);
  EXPECT_EQ(numbers(0).reduce({constant(int64_t{7})}, sum)[0].item<int64_t>(), 7);
  // A state of several components, whose shapes may change: (sum, concatenation).
  Element state = numbers(4).reduce({constant(int64_t{0}), zeros({0}, DType::Int64)},
                                    [](const Element& s, const Element& e) {
                                      return Element{s[0] + e[0], concat({s[1], reshape(e[0], {1})}, 0)};
                                    });
  EXPECT_EQ(state[0].item<int64_t>(), 6);
  expect_batch(state[1], {4}, {0, 1, 2, 3});
  EXPECT_ERROR(
      numbers(3).reduce({constant(int64_t{0})},
                        [](const Element& s, const Element&) { return Element{cast(s[0], DType::Int32)}; }),
      InvalidArgumentError, "reduce", "int32", "int64");
  EXPECT_ERROR(numbers(3).reduce({constant(int64_t{0})},
                                 [](const Element& s, const Element& e) {
                                   return Element{s[0], e[0]};
                                 }),
               InvalidArgumentError, "reduce", "2 components");
  EXPECT_ERROR(numbers(3).reduce({Tensor()}, sum), InvalidArgumentError, "reduce", "undefined");
}

TEST(DatasetReduceTest, IsNotRecordedByATape) {
  Variable w(constant(2.f), "w");
  GradientTape tape;
  Element out = Dataset::from_tensor_slices({constant({1.f, 2.f})})
                    .reduce({constant(0.f)}, [&](const Element& s, const Element& e) {
                      return Element{s[0] + e[0] * w.value()};
                    });
  EXPECT_FLOAT_EQ(out[0].item<float>(), 6.f);
  EXPECT_FALSE(tape.gradient(out[0], w).defined());  // pipeline work, as tf.data's reduce
}

}  // namespace
}  // namespace ef::testing
