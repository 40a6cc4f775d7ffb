// from_tensors, zip, enumerate, concatenate, filter, skip and shard: elements against
// hand-computed lists (and tf.data's documented examples), cardinality, bad input.
#include "data/data_test_util.h"

namespace ef::testing {
namespace {

using data::Dataset;
using data::Element;

// Every element of one pass, each as the values of its components in order.
std::vector<std::vector<int64_t>> rows_of(const Dataset& ds) {
  std::vector<std::vector<int64_t>> out;
  for (const Element& e : ds) {
    std::vector<int64_t> row;
    for (const Tensor& t : e)
      for (int64_t v : t.to_vector<int64_t>()) row.push_back(v);
    out.push_back(row);
  }
  return out;
}

using Rows = std::vector<std::vector<int64_t>>;

Dataset range_ds(int64_t start, int64_t stop) {
  return Dataset::from_tensor_slices({range(start, stop, 1, DType::Int64)});
}

Tensor is_even(const Element& e) { return floormod(e[0], int64_t{2}) == int64_t{0}; }

TEST(DatasetFromTensorsTest, OneElementOfTheWholeTensors) {
  Dataset ds = Dataset::from_tensors({i64({1, 2, 3}), constant(int64_t{7})});
  EXPECT_EQ(ds.cardinality(), 1);
  std::vector<Element> got;
  for (const Element& e : ds) got.push_back(e);
  ASSERT_EQ(got.size(), 1u);
  expect_meta(got[0][0], {3}, DType::Int64);
  expect_meta(got[0][1], {}, DType::Int64);
  EXPECT_EQ(rows_of(ds), (Rows{{1, 2, 3, 7}}));
  EXPECT_EQ(rows_of(ds.repeat(2)), (Rows{{1, 2, 3, 7}, {1, 2, 3, 7}}));
  EXPECT_ERROR(Dataset::from_tensors({}), InvalidArgumentError, "from_tensors", "at least one tensor");
  EXPECT_ERROR(Dataset::from_tensors({Tensor()}), InvalidArgumentError, "from_tensors", "undefined");
}

TEST(DatasetZipTest, ElementsSideBySideUntilTheShortestEnds) {
  // tf.data's example: a = range(1, 4), b = range(4, 7), c = range(7, 13).batch(2), d = range(13, 15).
  Dataset a = range_ds(1, 4), b = range_ds(4, 7), c = range_ds(7, 13).batch(2), d = range_ds(13, 15);
  EXPECT_EQ(rows_of(Dataset::zip({a, b})), (Rows{{1, 4}, {2, 5}, {3, 6}}));
  EXPECT_EQ(rows_of(Dataset::zip({b, a})), (Rows{{4, 1}, {5, 2}, {6, 3}}));
  EXPECT_EQ(rows_of(Dataset::zip({a, b, c})), (Rows{{1, 4, 7, 8}, {2, 5, 9, 10}, {3, 6, 11, 12}}));
  EXPECT_EQ(rows_of(Dataset::zip({a, d})), (Rows{{1, 13}, {2, 14}}));
  EXPECT_EQ(Dataset::zip({a, d}).cardinality(), 2);
  EXPECT_EQ(rows_of(Dataset::zip({a})), (Rows{{1}, {2}, {3}}));
  // A zip of a dataset with itself runs two independent passes.
  EXPECT_EQ(rows_of(Dataset::zip({a, a})), (Rows{{1, 1}, {2, 2}, {3, 3}}));
  EXPECT_ERROR(Dataset::zip({}), InvalidArgumentError, "zip", "at least one dataset");
}

TEST(DatasetZipTest, Cardinality) {
  Dataset finite = numbers(5), infinite = numbers(3).repeat(), unknown = numbers(5).filter(is_even);
  EXPECT_EQ(Dataset::zip({finite, infinite}).cardinality(), 5);
  EXPECT_EQ(Dataset::zip({infinite, infinite}).cardinality(), data::kInfiniteCardinality);
  EXPECT_EQ(Dataset::zip({finite, unknown}).cardinality(), data::kUnknownCardinality);
  EXPECT_EQ(Dataset::zip({numbers(0), unknown}).cardinality(), data::kUnknownCardinality);  // as tf.data
  EXPECT_EQ(rows_of(Dataset::zip({infinite, finite})), (Rows{{0, 0}, {1, 1}, {2, 2}, {0, 3}, {1, 4}}));
}

TEST(DatasetEnumerateTest, CountsFromStart) {
  // tf.data: from_tensor_slices([1, 2, 3]).enumerate(start=5) -> (5, 1), (6, 2), (7, 3).
  Dataset ds = Dataset::from_tensor_slices({i64({1, 2, 3})}).enumerate(5);
  EXPECT_EQ(rows_of(ds), (Rows{{5, 1}, {6, 2}, {7, 3}}));
  EXPECT_EQ(ds.cardinality(), 3);
  // Components keep their shapes: from_tensor_slices([(7, 8), (9, 10)]).enumerate().
  std::vector<Element> got;
  for (const Element& e : Dataset::from_tensor_slices({i64({7, 8, 9, 10}, {2, 2})}).enumerate())
    got.push_back(e);
  ASSERT_EQ(got.size(), 2u);
  expect_meta(got[1][0], {}, DType::Int64);
  expect_values(got[1][1], {9, 10});
  EXPECT_EQ(rows_of(numbers(3).repeat().enumerate(-2).take(4)), (Rows{{-2, 0}, {-1, 1}, {0, 2}, {1, 0}}));
  EXPECT_EQ(numbers(3).repeat().enumerate().cardinality(), data::kInfiniteCardinality);
  // Each pass counts from start again.
  EXPECT_EQ(rows_of(numbers(2).enumerate().repeat(2)), (Rows{{0, 0}, {1, 1}, {0, 0}, {1, 1}}));
}

TEST(DatasetConcatenateTest, OneAfterTheOther) {
  // tf.data: range(1, 4).concatenate(range(4, 8)) -> 1, ..., 7.
  Dataset ds = range_ds(1, 4).concatenate(range_ds(4, 8));
  EXPECT_EQ(values(ds), iota_vector(7, 1));
  EXPECT_EQ(ds.cardinality(), 7);
  EXPECT_EQ(values(numbers(0).concatenate(numbers(2))), iota_vector(2));
  EXPECT_EQ(values(numbers(2).concatenate(numbers(0))), iota_vector(2));
  EXPECT_EQ(values(numbers(2).concatenate(numbers(2)).repeat(2)),
            (std::vector<int64_t>{0, 1, 0, 1, 0, 1, 0, 1}));
  // Shapes may differ between the two (tf.data relaxes the static shape).
  EXPECT_EQ(values(numbers(4).batch(2).concatenate(numbers(3).batch(3))),
            (std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2}));
  EXPECT_EQ(values(numbers(3).concatenate(numbers(2).repeat()).take(6)),
            (std::vector<int64_t>{0, 1, 2, 0, 1, 0}));
}

TEST(DatasetConcatenateTest, CardinalityAndMismatchedElements) {
  Dataset unknown = numbers(4).filter(is_even);
  EXPECT_EQ(numbers(3).concatenate(numbers(3).repeat()).cardinality(), data::kInfiniteCardinality);
  EXPECT_EQ(unknown.concatenate(numbers(3).repeat()).cardinality(),
            data::kInfiniteCardinality);  // as tf.data
  EXPECT_EQ(unknown.concatenate(numbers(3)).cardinality(), data::kUnknownCardinality);
  Dataset floats = Dataset::from_tensor_slices({iota({2})});
  EXPECT_ERROR(values(numbers(2).concatenate(floats)), InvalidArgumentError, "concatenate", "float32",
               "int64");
  Dataset pairs = Dataset::zip({numbers(2), numbers(2)});
  EXPECT_ERROR(values(numbers(2).concatenate(pairs)), InvalidArgumentError, "concatenate", "2 components");
  // The elements before the mismatch come first.
  data::Iterator it = numbers(2).concatenate(floats).make_iterator();
  EXPECT_EQ(it.get_next()->at(0).item<int64_t>(), 0);
  EXPECT_EQ(it.get_next()->at(0).item<int64_t>(), 1);
  EXPECT_ERROR(it.get_next(), InvalidArgumentError, "concatenate");
}

TEST(DatasetFilterTest, KeepsWhatThePredicateAccepts) {
  // tf.data: from_tensor_slices([1, 2, 3]).filter(lambda x: x < 3) -> [1, 2]; then == 1 -> [1].
  Dataset ds =
      Dataset::from_tensor_slices({i64({1, 2, 3})}).filter([](const Element& e) { return e[0] < 3; });
  EXPECT_EQ(values(ds), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values(ds.filter([](const Element& e) { return equal(e[0], 1); })), (std::vector<int64_t>{1}));
  EXPECT_EQ(values(numbers(10).filter(is_even)), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(values(numbers(10).filter([](const Element&) { return constant(false); })),
            std::vector<int64_t>{});
  EXPECT_EQ(values(numbers(10).repeat().filter(is_even).take(7)),
            (std::vector<int64_t>{0, 2, 4, 6, 8, 0, 2}));
  EXPECT_EQ(ds.cardinality(), data::kUnknownCardinality);
  EXPECT_EQ(numbers(3).repeat().filter(is_even).cardinality(), data::kUnknownCardinality);
}

TEST(DatasetFilterTest, PredicateMustReturnAScalarBool) {
  EXPECT_ERROR(numbers(3).filter(nullptr), InvalidArgumentError, "filter", "empty");
  EXPECT_ERROR(values(numbers(3).filter([](const Element& e) { return e[0]; })), InvalidArgumentError,
               "filter", "scalar bool", "int64");
  EXPECT_ERROR(values(numbers(3).filter([](const Element&) {
                 return constant({true, false});
               })),
               InvalidArgumentError, "filter", "scalar bool", "[2]");
  EXPECT_ERROR(values(numbers(3).filter([](const Element&) { return Tensor(); })), InvalidArgumentError,
               "filter", "undefined");
}

TEST(DatasetSkipTest, DropsTheFirstElements) {
  // tf.data: range(10).skip(7) -> [7, 8, 9].
  EXPECT_EQ(values(numbers(10).skip(7)), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(values(numbers(3).skip(0)), iota_vector(3));
  EXPECT_EQ(values(numbers(3).skip(5)), std::vector<int64_t>{});
  EXPECT_EQ(values(numbers(3).skip(-1)), std::vector<int64_t>{});
  EXPECT_EQ(values(numbers(3).repeat().skip(4).take(3)), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(values(numbers(6).skip(2).batch(3)), (std::vector<int64_t>{2, 3, 4, 5}));  // rows path
  EXPECT_EQ(sorted(values(numbers(6).skip(2).shuffle(4, 1))), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(values(numbers(6).map([](const Element& e) { return e; }).skip(4)), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(numbers(10).skip(7).cardinality(), 3);
  EXPECT_EQ(numbers(10).skip(70).cardinality(), 0);
  EXPECT_EQ(numbers(10).skip(-1).cardinality(), 0);
  EXPECT_EQ(numbers(10).repeat().skip(-1).cardinality(), data::kInfiniteCardinality);  // as tf.data
  EXPECT_EQ(numbers(10).repeat().skip(5).cardinality(), data::kInfiniteCardinality);
  EXPECT_ERROR(numbers(3).skip(-2), InvalidArgumentError, "skip", "count", "-2");
}

TEST(DatasetShardTest, EveryNthElementFromIndex) {
  // tf.data: range(10).shard(num_shards=3, index=0) -> [0, 3, 6, 9]; 1 -> [1, 4, 7]; 2 -> [2, 5, 8].
  EXPECT_EQ(values(numbers(10).shard(3, 0)), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(values(numbers(10).shard(3, 1)), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(values(numbers(10).shard(3, 2)), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(numbers(10).shard(3, 0).cardinality(), 4);
  EXPECT_EQ(numbers(10).shard(3, 1).cardinality(), 3);
  EXPECT_EQ(numbers(10).shard(3, 2).cardinality(), 3);
  EXPECT_EQ(numbers(2).shard(3, 2).cardinality(), 0);
  EXPECT_EQ(values(numbers(2).shard(3, 2)), std::vector<int64_t>{});
  EXPECT_EQ(values(numbers(5).shard(1, 0)), iota_vector(5));
  EXPECT_EQ(values(numbers(10).shard(4, 3).batch(2)), (std::vector<int64_t>{3, 7}));  // rows path
  EXPECT_EQ(values(numbers(10).map([](const Element& e) { return e; }).shard(4, 1)),
            (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(values(numbers(4).repeat().shard(3, 1).take(4)), (std::vector<int64_t>{1, 0, 3, 2}));
  EXPECT_EQ(numbers(4).repeat().shard(3, 1).cardinality(), data::kInfiniteCardinality);
  EXPECT_ERROR(numbers(3).shard(0, 0), InvalidArgumentError, "shard", "num_shards", "0");
  EXPECT_ERROR(numbers(3).shard(2, 2), InvalidArgumentError, "shard", "index", "2");
  EXPECT_ERROR(numbers(3).shard(2, -1), InvalidArgumentError, "shard", "index", "-1");
}

}  // namespace
}  // namespace ef::testing
