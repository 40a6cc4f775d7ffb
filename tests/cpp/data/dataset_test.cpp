// from_tensor_slices, shuffle, batch, repeat, take, cardinality and iteration.
#include <chrono>

#include "data/data_test_util.h"

namespace ef::testing {
namespace {

using data::Dataset;
using data::Element;

TEST(DatasetTest, FromTensorSlicesYieldsRowsOfEveryTensor) {
  Tensor x = iota({3, 2});
  Tensor y = i64({7, 8, 9});
  Dataset ds = Dataset::from_tensor_slices({x, y});
  EXPECT_EQ(ds.cardinality(), 3);
  int i = 0;
  for (const Element& e : ds) {
    ASSERT_EQ(e.size(), 2u);
    expect_meta(e[0], {2}, DType::Float32);
    expect_values(e[0], {2.0 * i, 2.0 * i + 1});
    expect_meta(e[1], {}, DType::Int64);
    EXPECT_EQ(e[1].item<int64_t>(), 7 + i);
    ++i;
  }
  EXPECT_EQ(i, 3);
}

TEST(DatasetTest, NonContiguousAndEmptyInputs) {
  Tensor xt = transpose(iota({2, 3}));  // rows of the transpose: (0, 3), (1, 4), (2, 5)
  EXPECT_EQ(values(Dataset::from_tensor_slices({xt}).map(
                [](const Element& e) { return Element{cast(e[0], DType::Int64)}; })),
            (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  Dataset empty = Dataset::from_tensor_slices({zeros({0, 4})});
  EXPECT_EQ(empty.cardinality(), 0);
  EXPECT_TRUE(values(empty.batch(2)).empty());
  EXPECT_EQ(empty.repeat().cardinality(), 0);
  EXPECT_TRUE(values(empty.repeat()).empty());  // an empty dataset repeated forever ends
}

TEST(DatasetTest, FromTensorSlicesRejectsBadInput) {
  EXPECT_ERROR(Dataset::from_tensor_slices({iota({3, 2}), i64({1, 2})}), InvalidArgumentError,
               "from_tensor_slices", "[3, 2], [2]");
  EXPECT_ERROR(Dataset::from_tensor_slices({}), InvalidArgumentError, "at least one tensor");
  EXPECT_ERROR(Dataset::from_tensor_slices({constant(1.f)}), InvalidArgumentError, "scalar");
  EXPECT_ERROR(Dataset::from_tensor_slices({Tensor()}), InvalidArgumentError, "undefined");
}

TEST(DatasetTest, ArgumentErrorsNameTheTransformation) {
  Dataset ds = numbers(4);
  EXPECT_ERROR(ds.batch(0), InvalidArgumentError, "batch", "batch_size", "0");
  EXPECT_ERROR(ds.shuffle(0, 1), InvalidArgumentError, "shuffle", "buffer_size");
  EXPECT_ERROR(ds.repeat(-2), InvalidArgumentError, "repeat", "-2");
  EXPECT_ERROR(ds.take(-5), InvalidArgumentError, "take", "-5");
  EXPECT_ERROR(ds.prefetch(0), InvalidArgumentError, "prefetch", "buffer_size");
  EXPECT_ERROR(ds.map([](const Element& e) { return e; }, 0), InvalidArgumentError, "num_parallel_calls");
  EXPECT_ERROR(ds.map(nullptr), InvalidArgumentError, "map", "empty");
}

TEST(DatasetTest, ShuffleIsAPermutationFixedBySeed) {
  Dataset a = numbers(100).shuffle(100, 7);
  std::vector<int64_t> first = values(a);
  EXPECT_EQ(sorted(first), iota_vector(100));
  EXPECT_NE(first, iota_vector(100));
  EXPECT_EQ(values(numbers(100).shuffle(100, 7)), first);  // same seed, same first pass
  EXPECT_NE(values(numbers(100).shuffle(100, 8)), first);  // another seed, another order
}

TEST(DatasetTest, ReshuffleEachIterationDiffersPerPassButIsReproducible) {
  Dataset a = numbers(50).shuffle(50, 3);
  std::vector<int64_t> pass0 = values(a), pass1 = values(a), pass2 = values(a);
  EXPECT_NE(pass0, pass1);
  EXPECT_NE(pass1, pass2);
  EXPECT_EQ(sorted(pass1), iota_vector(50));
  Dataset b = numbers(50).shuffle(50, 3);  // the same pipeline built again repeats every pass
  EXPECT_EQ(values(b), pass0);
  EXPECT_EQ(values(b), pass1);
  // Without reshuffling, every pass has the same order.
  Dataset c = numbers(50).shuffle(50, 3, false);
  EXPECT_EQ(values(c), values(c));
  // repeat after shuffle reshuffles each repetition, as in tf.data.
  std::vector<int64_t> repeated = values(numbers(50).shuffle(50, 3).repeat(2));
  EXPECT_EQ(std::vector<int64_t>(repeated.begin(), repeated.begin() + 50), pass0);
  EXPECT_EQ(std::vector<int64_t>(repeated.begin() + 50, repeated.end()), pass1);
}

TEST(DatasetTest, ShuffleAfterRepeatKeepsEveryElement) {
  // The repeat's last pass ends while the shuffle buffer still holds row numbers: they
  // all come out, and each element of each pass exactly once.
  std::vector<int64_t> twice = iota_vector(10);
  twice.insert(twice.end(), twice.begin(), twice.end());
  std::sort(twice.begin(), twice.end());
  EXPECT_EQ(sorted(values(numbers(10).repeat(2).shuffle(10, 3))), twice);
  EXPECT_EQ(sorted(values(numbers(10).repeat(2).shuffle(20, 3))), twice);
  EXPECT_EQ(sorted(values(numbers(10).repeat(2).shuffle(64, 3))), twice);
  EXPECT_EQ(sorted(values(numbers(10).repeat(2).shuffle(4, 3).batch(3))), twice);
  EXPECT_EQ(sorted(values(numbers(10).take(5).repeat(2).shuffle(10, 3))),
            sorted({0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
}

TEST(DatasetTest, SmallShuffleBufferOnlyMixesNearbyElements) {
  // With a buffer of k, element i can only come out after at least i - k + 1 others.
  const int64_t k = 5;
  std::vector<int64_t> v = values(numbers(200).shuffle(k, 11));
  EXPECT_EQ(sorted(v), iota_vector(200));
  for (size_t pos = 0; pos < v.size(); ++pos) EXPECT_LE(v[pos], static_cast<int64_t>(pos) + k - 1);
  EXPECT_EQ(values(numbers(10).shuffle(1, 11)), iota_vector(10));  // a buffer of one keeps the order
}

TEST(DatasetTest, UnseededShuffleFollowsTheGlobalSeed) {
  random::set_seed(123);
  std::vector<int64_t> a = values(numbers(30).shuffle(30));
  random::set_seed(123);
  std::vector<int64_t> b = values(numbers(30).shuffle(30));
  random::set_seed(std::nullopt);
  EXPECT_EQ(a, b);
}

TEST(DatasetTest, ShuffleOfMappedElementsUsesTheGeneralPath) {
  Dataset ds = numbers(40).map([](const Element& e) { return Element{e[0] * int64_t{2}}; }).shuffle(40, 5);
  std::vector<int64_t> v = values(ds);
  std::vector<int64_t> doubled;
  for (int64_t x : iota_vector(40)) doubled.push_back(2 * x);
  EXPECT_EQ(sorted(v), doubled);
  // The same seed gives the same order whether the rows or the elements are shuffled.
  std::vector<int64_t> rows = values(numbers(40).shuffle(40, 5));
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(v[i], 2 * rows[i]);
}

TEST(DatasetTest, BatchStacksElementsAndKeepsOrDropsTheRemainder) {
  Tensor x = iota({5, 2});
  Dataset ds = Dataset::from_tensor_slices({x, i64({0, 1, 2, 3, 4})});
  std::vector<Element> batches;
  for (const Element& e : ds.batch(2)) batches.push_back(e);
  ASSERT_EQ(batches.size(), 3u);
  expect_meta(batches[0][0], {2, 2}, DType::Float32);
  expect_values(batches[0][0], {0, 1, 2, 3});
  expect_meta(batches[2][0], {1, 2}, DType::Float32);
  expect_values(batches[2][1], {4});
  EXPECT_EQ(ds.batch(2).cardinality(), 3);
  EXPECT_EQ(ds.batch(2, true).cardinality(), 2);
  EXPECT_EQ(values(ds.batch(2, true).map([](const Element& e) { return Element{e[1]}; })),
            (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(values(ds.batch(6, true)).empty());
}

TEST(DatasetTest, BatchOfShuffledRowsMatchesStackedElements) {
  // The row fast path (gather) and the general path (stack) give identical batches.
  Tensor x = iota({23, 3, 2});
  Tensor y = range(0, 23, 1, DType::Int64);
  Dataset fast = Dataset::from_tensor_slices({x, y}).shuffle(23, 9).batch(5);
  Dataset general =
      Dataset::from_tensor_slices({x, y}).map([](const Element& e) { return e; }).shuffle(23, 9).batch(5);
  data::Iterator a = fast.make_iterator(), b = general.make_iterator();
  int n = 0;
  while (auto ea = a.get_next()) {
    auto eb = b.get_next();
    ASSERT_TRUE(eb.has_value());
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ((*ea)[c].shape(), (*eb)[c].shape());
      EXPECT_EQ((*ea)[c].to_vector<double>(), (*eb)[c].to_vector<double>());
    }
    ++n;
  }
  EXPECT_FALSE(b.get_next().has_value());
  EXPECT_EQ(n, 5);
}

TEST(DatasetTest, BatchOfMismatchedElementsNamesTheShapes) {
  Dataset ragged =
      numbers(3).map([](const Element& e) { return Element{fill(Shape{e[0].item<int64_t>() + 1}, 1.0f)}; });
  EXPECT_ERROR(values(ragged.batch(3)), InvalidArgumentError, "batch", "[2]", "[1]");
}

TEST(DatasetTest, BatchOfBatches) {
  std::vector<Element> out;
  for (const Element& e : numbers(8).batch(2).batch(2)) out.push_back(e);
  ASSERT_EQ(out.size(), 2u);
  expect_meta(out[1][0], {2, 2}, DType::Int64);
  expect_values(out[1][0], {4, 5, 6, 7});
}

TEST(DatasetTest, RepeatAndTake) {
  EXPECT_EQ(values(numbers(3).repeat(2)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(values(numbers(3).repeat(0)), std::vector<int64_t>{});
  EXPECT_EQ(values(numbers(3).repeat().take(7)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(values(numbers(3).take(2).repeat(2)), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(values(numbers(3).take(-1)), iota_vector(3));
  EXPECT_EQ(values(numbers(3).take(10)), iota_vector(3));
  EXPECT_EQ(values(numbers(3).take(0)), std::vector<int64_t>{});
  EXPECT_EQ(values(numbers(5).repeat().batch(2).take(3)), (std::vector<int64_t>{0, 1, 2, 3, 4, 0}));
}

TEST(DatasetTest, Cardinality) {
  EXPECT_EQ(numbers(10).repeat().cardinality(), data::kInfiniteCardinality);
  EXPECT_EQ(numbers(10).repeat(3).cardinality(), 30);
  EXPECT_EQ(numbers(10).repeat().take(4).cardinality(), 4);
  EXPECT_EQ(numbers(10).take(4).cardinality(), 4);
  EXPECT_EQ(numbers(10).take(40).cardinality(), 10);
  EXPECT_EQ(numbers(10).batch(3).cardinality(), 4);
  EXPECT_EQ(numbers(10).repeat().batch(3).cardinality(), data::kInfiniteCardinality);
  EXPECT_EQ(numbers(10).shuffle(4, 1).map([](const Element& e) { return e; }).prefetch(2).cardinality(), 10);
}

TEST(DatasetTest, ExplicitIteratorAndIndependentPasses) {
  Dataset ds = numbers(3);
  data::Iterator a = ds.make_iterator();
  data::Iterator b = ds.make_iterator();
  EXPECT_EQ(a.get_next()->at(0).item<int64_t>(), 0);
  EXPECT_EQ(a.get_next()->at(0).item<int64_t>(), 1);
  EXPECT_EQ(b.get_next()->at(0).item<int64_t>(), 0);  // passes do not share state
  Element e;
  EXPECT_TRUE(a.next(e));
  EXPECT_EQ(e[0].item<int64_t>(), 2);
  EXPECT_FALSE(a.next(e));
  EXPECT_FALSE(a.get_next().has_value());  // the end is sticky
  data::Iterator empty;
  EXPECT_FALSE(empty.get_next().has_value());
}

TEST(DatasetTest, PassesOutliveTheirDataset) {
  data::Iterator it;
  {
    Dataset ds = Dataset::from_tensor_slices({iota({4})}).shuffle(4, 1).batch(2);
    it = ds.make_iterator();
  }
  int64_t total = 0;
  while (auto e = it.get_next()) total += e->at(0).num_elements();
  EXPECT_EQ(total, 4);
}

TEST(DatasetTest, IterationIsNotRecordedByATape) {
  Variable w(constant({1.f, 2.f}), "w");
  GradientTape tape;
  Tensor loss = reduce_sum(w * w);
  for (const Element& e : Dataset::from_tensor_slices({w.value()}).batch(2)) loss = loss + reduce_sum(e[0]);
  expect_values(tape.gradient(loss, w), {2, 4});  // the batch is data, not a function of w
}

TEST(DatasetTest, EpochOfFashionMnistSizedBatchesIsFast) {
  // 60000 x 784 floats shuffled and batched by 32: the row fast path gathers straight
  // into each batch. Generous bound for a loaded shared machine; typically ~20 ms.
  Tensor images = zeros({60000, 28, 28});
  Tensor labels = zeros({60000}, DType::Int64);
  Dataset ds = Dataset::from_tensor_slices({images, labels}).shuffle(60000, 1).batch(32);
  auto start = std::chrono::steady_clock::now();
  int64_t batches = 0;
  for (const Element& e : ds) batches += e[0].dim(0) > 0;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(batches, 1875);
  EXPECT_LT(ms, 500.0);
  std::cout << "[ epoch of batch(32) over 60000x28x28 float32: " << ms << " ms ]\n";
}

}  // namespace
}  // namespace ef::testing
