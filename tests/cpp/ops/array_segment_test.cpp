// roll, repeat, boolean_mask, searchsorted, meshgrid, unique, dynamic_partition and the
// segment reductions: values, dtypes, empty inputs, graphs with unknown sizes, bad inputs.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;
using testing::i64;
using testing::iota;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ArrayRoll, ShiftsAlongAxesAndWrapsAround) {
  expect_values(roll(constant({0, 1, 2, 3, 4}), {2}, {0}), {3, 4, 0, 1, 2});
  expect_values(roll(constant({0, 1, 2, 3, 4}), {-7}, {0}), {2, 3, 4, 0, 1});  // |shift| > size
  Tensor m = iota({2, 3});
  expect_values(roll(m, {1, -1}, {0, 1}), {4, 5, 3, 1, 2, 0});
  expect_values(roll(m, {1, 1}, {1, -1}), {1, 2, 0, 4, 5, 3});      // one axis twice: shifts add
  expect_values(roll(transpose(m), {1}, {0}), {2, 5, 0, 3, 1, 4});  // a strided view
  for (DType t : {DType::Float64, DType::Int64, DType::Bool, DType::Int32})
    expect_meta(roll(cast(m, t), {1}, {1}), {2, 3}, t);
  expect_values(roll(constant({true, false, false}), {1}, {0}), {0, 1, 0});
  expect_meta(roll(zeros({0, 3}), {2}, {0}), {0, 3}, DType::Float32);
  expect_values(roll(constant(5.0), {}, {}), {5});
  EXPECT_ERROR(roll(m, {1, 2}, {0}), InvalidArgumentError, "roll", "shift", "axis");
  EXPECT_ERROR(roll(m, {1}, {2}), InvalidArgumentError, "roll", "axis");
  EXPECT_ERROR(roll(constant(5.0), {1}, {0}), InvalidArgumentError, "roll", "scalar");
}

TEST(ArrayRepeat, RepeatsSlicesAlongAnAxisOrFlattened) {
  expect_values(repeat(constant({1, 2, 3}), {2}), {1, 1, 2, 2, 3, 3});
  Tensor m = constant({{1, 2}, {3, 4}});
  expect_values(repeat(m, {2}), {1, 1, 2, 2, 3, 3, 4, 4});  // no axis: flattened
  Tensor r = repeat(m, {1, 2}, 0);
  expect_meta(r, {3, 2}, DType::Int32);
  expect_values(r, {1, 2, 3, 4, 3, 4});
  expect_values(repeat(m, {0, 3}, -1), {2, 2, 2, 4, 4, 4});
  expect_meta(repeat(zeros({0, 2}), {3}, 0), {0, 2}, DType::Float32);
  expect_values(repeat(constant(7), {3}), {7, 7, 7});
  EXPECT_ERROR(repeat(m, {1, 2, 3}, 0), InvalidArgumentError, "repeat", "repeats", "3 entries");
  EXPECT_ERROR(repeat(m, {-1}, 0), InvalidArgumentError, "repeat", "non-negative");
  EXPECT_ERROR(repeat(m, {1}, 2), InvalidArgumentError, "repeat", "axis");
  EXPECT_ERROR(repeat(constant(7), {1}, 0), InvalidArgumentError, "repeat", "scalar");
}

TEST(ArrayBooleanMask, KeepsTheMaskedSlices) {
  expect_values(boolean_mask(constant({1, 2, 3, 4}), constant({true, false, true, false})), {1, 3});
  Tensor m = iota({2, 3});
  Tensor rows = boolean_mask(m, constant({false, true}));
  expect_meta(rows, {1, 3}, DType::Float32);
  expect_values(boolean_mask(m, constant({true, false, true}), 1), {0, 2, 3, 5});
  expect_values(boolean_mask(m, constant({true, false, true}), -1), {0, 2, 3, 5});
  // A 2-D mask merges the axes it covers.
  Tensor cube = iota({2, 2, 2});
  Tensor picked = boolean_mask(cube, constant({{true, false}, {false, true}}));
  expect_meta(picked, {2, 2}, DType::Float32);
  expect_values(picked, {0, 1, 6, 7});
  expect_meta(boolean_mask(m, constant({false, false})), {0, 3}, DType::Float32);
  EXPECT_ERROR(boolean_mask(m, constant({1, 0})), InvalidArgumentError, "boolean_mask", "bool", "int32");
  EXPECT_ERROR(boolean_mask(m, constant({true, false, true})), InvalidArgumentError, "boolean_mask", "[3]",
               "[2, 3]");
  EXPECT_ERROR(boolean_mask(m, constant(true)), InvalidArgumentError, "boolean_mask", "scalar");
  EXPECT_ERROR(boolean_mask(m, constant({true}), 2), InvalidArgumentError, "boolean_mask", "axis");
}

TEST(ArraySearchSorted, InsertionPositionsPerRow) {
  Tensor seq = constant({1.0, 2.0, 2.0, 3.0});
  Tensor v = constant({2.0, 2.5, 0.0, 9.0, kNaN});
  Tensor left = searchsorted(seq, v);
  expect_meta(left, {5}, DType::Int32);
  expect_values(left, {1, 3, 0, 4, 4});
  expect_values(searchsorted(seq, v, "right", DType::Int64), {3, 3, 0, 4, 4});
  expect_meta(searchsorted(seq, v, "right", DType::Int64), {5}, DType::Int64);
  // Rows: the leading axes match; NaN sorts last.
  Tensor rows = constant({{1, 3, 5}, {2, 4, 6}});
  expect_values(searchsorted(rows, constant({{3, 6}, {3, 7}})), {1, 3, 1, 3});
  expect_values(searchsorted(constant({1.0, kNaN}), constant({kNaN, 5.0})), {1, 1});
  expect_meta(searchsorted(constant({1, 2}), zeros({0}, DType::Int32)), {0}, DType::Int32);
  EXPECT_ERROR(searchsorted(seq, v, "middle"), InvalidArgumentError, "searchsorted", "side", "middle");
  EXPECT_ERROR(searchsorted(seq, constant({1.f})), InvalidArgumentError, "searchsorted", "float32",
               "float64");
  EXPECT_ERROR(searchsorted(rows, constant({{1}, {2}, {3}})), InvalidArgumentError, "searchsorted", "[2, 3]",
               "[3, 1]");
  EXPECT_ERROR(searchsorted(seq, v, "left", DType::Float32), InvalidArgumentError, "searchsorted",
               "out_type");
  EXPECT_ERROR(searchsorted(constant(1.0), v), InvalidArgumentError, "searchsorted", "at least one axis");
}

TEST(ArrayMeshgrid, XyAndIjIndexing) {
  std::vector<Tensor> xy = meshgrid({constant({1, 2, 3}), constant({4, 5})});
  ASSERT_EQ(xy.size(), 2u);
  expect_meta(xy[0], {2, 3}, DType::Int32);
  expect_values(xy[0], {1, 2, 3, 1, 2, 3});
  expect_values(xy[1], {4, 4, 4, 5, 5, 5});
  std::vector<Tensor> ij = meshgrid({constant({1, 2, 3}), constant({4.0, 5.0}), constant({7, 8})}, "ij");
  expect_meta(ij[0], {3, 2, 2}, DType::Int32);
  expect_meta(ij[1], {3, 2, 2}, DType::Float64);
  expect_values(ij[1], {4, 4, 5, 5, 4, 4, 5, 5, 4, 4, 5, 5});
  EXPECT_TRUE(meshgrid({}).empty());
  expect_meta(meshgrid({zeros({0}), zeros({2})})[0], {2, 0}, DType::Float32);
  EXPECT_ERROR(meshgrid({constant({1})}, "yx"), InvalidArgumentError, "meshgrid", "indexing", "yx");
}

TEST(ArrayUnique, FirstAppearanceOrderIndicesAndCounts) {
  UniqueResult r = unique_with_counts(constant({1, 1, 2, 4, 4, 4, 7, 8, 8}));
  expect_values(r.y, {1, 2, 4, 7, 8});
  expect_values(r.idx, {0, 0, 1, 2, 2, 2, 3, 4, 4});
  expect_values(r.count, {2, 1, 3, 1, 2});
  expect_meta(r.count, {5}, DType::Int32);
  UniqueResult f = unique(constant({3.0, -0.0, kNaN, 0.0, 3.0, kNaN}), DType::Int64);
  expect_values(f.y, {3, 0, kNaN, kNaN});  // 0 and -0 are one value, each NaN its own
  expect_values(f.idx, {0, 1, 2, 1, 0, 3});
  expect_meta(f.idx, {6}, DType::Int64);
  EXPECT_FALSE(f.count.defined());
  expect_values(unique(constant({true, false, true})).y, {1, 0});
  expect_meta(unique(zeros({0})).y, {0}, DType::Float32);
  EXPECT_ERROR(unique(iota({2, 2})), InvalidArgumentError, "unique", "1-D", "[2, 2]");
  EXPECT_ERROR(unique(constant(1.0)), InvalidArgumentError, "unique", "1-D");
  EXPECT_ERROR(unique_with_counts(constant({1}), DType::Float32), InvalidArgumentError, "unique_with_counts",
               "out_idx");
}

TEST(ArrayDynamicPartition, SplitsByPartition) {
  std::vector<Tensor> parts = dynamic_partition(constant({10, 20, 30, 40}), constant({1, 0, 1, 1}), 3);
  ASSERT_EQ(parts.size(), 3u);
  expect_values(parts[0], {20});
  expect_values(parts[1], {10, 30, 40});
  expect_meta(parts[2], {0}, DType::Int32);
  std::vector<Tensor> rows = dynamic_partition(iota({3, 2}), i64({1, 1, 0}), 2);
  expect_values(rows[1], {0, 1, 2, 3});
  EXPECT_ERROR(dynamic_partition(constant({1, 2}), constant({0, 2}), 2), InvalidArgumentError,
               "dynamic_partition", "2", "num_partitions");
  EXPECT_ERROR(dynamic_partition(constant({1, 2}), constant({0.0, 1.0}), 2), InvalidArgumentError,
               "dynamic_partition", "partitions", "float64");
  EXPECT_ERROR(dynamic_partition(constant({1, 2}), constant({0, 1, 1}), 2), InvalidArgumentError, "[3]",
               "[2]");
}

TEST(ArrayDynamicStitch, MergesByIndexLaterPairsWin) {
  // TensorFlow's documented example.
  Tensor merged = dynamic_stitch({constant(int32_t{6}), constant({4, 1}), constant({{5, 2}, {0, 3}})},
                                 {constant({61, 62}), constant({{41, 42}, {11, 12}}),
                                  constant({{{51, 52}, {21, 22}}, {{1, 2}, {31, 32}}})});
  expect_meta(merged, {7, 2}, DType::Int32);
  expect_values(merged, {1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62});
  expect_values(dynamic_stitch({constant({0, 1}), i64({1})}, {constant({1.0, 2.0}), constant({9.0})}),
                {1, 9});
  expect_values(dynamic_stitch({constant({2})}, {constant({true})}), {0, 0, 1});  // unset rows: 0
  // dynamic_partition then dynamic_stitch with the positions gives the input back.
  Tensor x = constant({10, 20, 30, 40}), p = constant({1, 0, 1, 1});
  std::vector<Tensor> parts = dynamic_partition(x, p, 2), where_from = dynamic_partition(range(0, 4), p, 2);
  expect_values(dynamic_stitch(where_from, parts), {10, 20, 30, 40});
  EXPECT_ERROR(dynamic_stitch({constant({0})}, {}), InvalidArgumentError, "dynamic_stitch", "1 index",
               "0 data");
  EXPECT_ERROR(dynamic_stitch({constant({-1})}, {constant({1})}), InvalidArgumentError, "dynamic_stitch",
               "non-negative");
  EXPECT_ERROR(dynamic_stitch({constant({0, 1})}, {constant({1})}), InvalidArgumentError, "dynamic_stitch",
               "[1]", "[2]");
  EXPECT_ERROR(dynamic_stitch({constant({0}), constant({1})}, {constant({1}), constant({1.0})}),
               InvalidArgumentError, "dynamic_stitch", "float64", "int32");
  EXPECT_ERROR(dynamic_stitch({constant({0.0})}, {constant({1})}), InvalidArgumentError, "dynamic_stitch",
               "indices[0]", "float64");
}

TEST(ArraySegments, SortedReductions) {
  Tensor data = constant({{1.0, 2.0}, {3.0, -4.0}, {5.0, 6.0}, {7.0, 8.0}});
  Tensor ids = constant({0, 0, 2, 2});
  Tensor sum = segment_sum(data, ids);
  expect_meta(sum, {3, 2}, DType::Float64);
  expect_values(sum, {4, -2, 0, 0, 12, 14});
  expect_values(segment_mean(data, ids), {2, -1, 0, 0, 6, 7});
  expect_values(segment_max(data, ids), {3, 2, 0, 0, 7, 8});  // empty segment: 0
  expect_values(segment_min(data, i64({0, 1, 1, 1})), {1, 2, 3, -4});
  expect_values(segment_max(constant({1, 5, 2}), constant({0, 0, 1})), {5, 2});
  expect_values(segment_max(constant({1.0, kNaN, 2.0}), constant({0, 0, 1})), {kNaN, 2});
  expect_meta(segment_sum(zeros({0, 3}), zeros({0}, DType::Int32)), {0, 3}, DType::Float32);
  EXPECT_ERROR(segment_sum(data, constant({0, 2, 1, 3})), InvalidArgumentError, "segment_sum", "sorted");
  EXPECT_ERROR(segment_sum(data, constant({-1, 0, 0, 0})), InvalidArgumentError, "segment_sum", "negative");
  EXPECT_ERROR(segment_sum(data, constant({0, 0})), InvalidArgumentError, "segment_sum", "[2]", "[4, 2]");
  EXPECT_ERROR(segment_max(data, constant({{0, 0, 0, 0}})), InvalidArgumentError, "segment_max", "1-D");
  EXPECT_ERROR(segment_sum(data, constant({0.0, 0.0, 1.0, 1.0})), InvalidArgumentError, "segment_sum",
               "float64");
  // Integers: summed in int64, the quotient truncated toward zero (TensorFlow's).
  expect_values(segment_mean(constant({1, 2, 4, -3, 0}), constant({0, 0, 1, 2, 2})), {1, 4, -1});
  expect_meta(segment_mean(constant({1, 2}), constant({0, 0})), {1}, DType::Int32);
  expect_values(segment_mean(cast(constant({200, 200}), DType::UInt8), constant({0, 0})), {200});
  EXPECT_ERROR(segment_mean(constant({true}), constant({0})), InvalidArgumentError, "segment_mean",
               "numeric");
}

TEST(ArraySegments, UnsortedReductions) {
  Tensor data = constant({1.0, 2.0, 3.0, 4.0, 5.0});
  Tensor ids = constant({2, 0, 2, -1, 0});
  expect_values(unsorted_segment_sum(data, ids, 4), {7, 0, 4, 0});  // -1: dropped
  expect_values(unsorted_segment_mean(data, ids, 4), {3.5, 0, 2, 0});
  // A float16 segment sum past 65504 must not make the mean inf.
  const Tensor thirties = cast(fill({5000}, 30.0, DType::Float32), DType::Float16);
  expect_values(unsorted_segment_mean(thirties, zeros({5000}, DType::Int32), 1), {30});
  expect_values(segment_mean(thirties, zeros({5000}, DType::Int32)), {30});
  const double lowest = std::numeric_limits<double>::lowest(), highest = std::numeric_limits<double>::max();
  expect_values(unsorted_segment_max(data, ids, 4), {5, lowest, 3, lowest});
  expect_values(unsorted_segment_min(data, ids, 4), {2, highest, 1, highest});
  expect_values(unsorted_segment_max(constant({1, 2}), constant({1, 1}), 2),
                {double(std::numeric_limits<int32_t>::lowest()), 2});
  // ids of rank 2 over data of rank 3.
  Tensor cube = iota({2, 2, 2}, DType::Float64);
  Tensor s = unsorted_segment_sum(cube, constant({{0, 1}, {1, 0}}), 2);
  expect_meta(s, {2, 2}, DType::Float64);
  expect_values(s, {6, 8, 6, 8});
  expect_meta(unsorted_segment_sum(data, ids, 0 + 3), {3}, DType::Float64);
  EXPECT_ERROR(unsorted_segment_sum(data, ids, 2), InvalidArgumentError, "unsorted_segment_sum", "[0]", "2",
               "num_segments = 2");
  EXPECT_ERROR(unsorted_segment_sum(data, ids, -1), InvalidArgumentError, "unsorted_segment_sum",
               "num_segments");
  EXPECT_ERROR(unsorted_segment_max(data, constant({0, 1}), 2), InvalidArgumentError, "unsorted_segment_max",
               "[2]", "[5]");
  EXPECT_ERROR(unsorted_segment_min(constant({true}), constant({0}), 1), InvalidArgumentError,
               "unsorted_segment_min", "bool");
}

TEST(ArrayTensorScatter, UpdateMinMaxSub) {
  Tensor t = constant({1.0, 1.0, 1.0, 1.0});
  Tensor idx = constant({{0}, {2}, {0}});
  Tensor upd = constant({9.0, 6.0, -3.0});
  expect_values(tensor_scatter_nd_update(t, idx, upd), {-3, 1, 6, 1});  // duplicates: the last wins
  expect_values(tensor_scatter_nd_min(t, idx, upd), {-3, 1, 1, 1});
  expect_values(tensor_scatter_nd_max(t, idx, upd), {9, 1, 6, 1});
  expect_values(tensor_scatter_nd_sub(t, idx, upd), {-5, 1, -5, 1});
  expect_values(tensor_scatter_nd_max(t, constant({{1}}), constant({kNaN})), {1, kNaN, 1, 1});
  // Rows of a matrix, int and bool dtypes, empty updates.
  Tensor m = constant({{1, 2}, {3, 4}, {5, 6}});
  expect_values(tensor_scatter_nd_update(m, i64({1, 2}, {2, 1}), constant({{7, 8}, {9, 0}})),
                {1, 2, 7, 8, 9, 0});
  expect_values(tensor_scatter_nd_min(m, constant({{0, 1}}), constant({-1})), {1, -1, 3, 4, 5, 6});
  expect_values(tensor_scatter_nd_update(constant({true, false}), constant({{1}}), constant({true})), {1, 1});
  expect_values(tensor_scatter_nd_update(t, zeros({0, 1}, DType::Int32), zeros({0}, DType::Float64)),
                {1, 1, 1, 1});
  expect_meta(tensor_scatter_nd_max(m, constant({{0}}), constant({{0, 0}})), {3, 2}, DType::Int32);
  EXPECT_ERROR(tensor_scatter_nd_update(t, constant({{4}}), constant({1.0})), InvalidArgumentError,
               "tensor_scatter_nd_update", "4", "[0, 4)");
  EXPECT_ERROR(tensor_scatter_nd_min(t, idx, constant({1.f, 2.f, 3.f})), InvalidArgumentError,
               "tensor_scatter_nd_min", "float32", "float64");
  EXPECT_ERROR(tensor_scatter_nd_max(t, idx, constant({1.0})), InvalidArgumentError, "tensor_scatter_nd_max",
               "updates", "[1]", "[3]");
  EXPECT_ERROR(tensor_scatter_nd_max(constant({true}), constant({{0}}), constant({true})),
               InvalidArgumentError, "tensor_scatter_nd_max", "bool");
  EXPECT_ERROR(tensor_scatter_nd_update(t, constant({{0.0}}), constant({1.0})), InvalidArgumentError,
               "tensor_scatter_nd_update", "indices");
  EXPECT_ERROR(tensor_scatter_nd_sub(constant({true}), constant({{0}}), constant({true})),
               InvalidArgumentError, "tensor_scatter_nd_sub", "bool");
}

TEST(ArrayBincount, CountsAndWeights) {
  Tensor arr = constant({1, 1, 3, 0});
  Tensor counts = bincount(arr);
  expect_meta(counts, {4}, DType::Int32);
  expect_values(counts, {1, 2, 0, 1});
  expect_values(bincount(arr, constant({0.5, 1.0, 2.0, 4.0}), 6), {4, 1.5, 0, 2, 0, 0});
  expect_values(bincount(i64({1, 1, 3, 5}), std::nullopt, 0, 2, DType::Float64), {0, 2});  // 3, 5 dropped
  expect_meta(bincount(i64({1, 1, 3, 5}), std::nullopt, 0, 2, DType::Float64), {2}, DType::Float64);
  expect_meta(bincount(zeros({0}, DType::Int32)), {0}, DType::Int32);
  expect_values(bincount(zeros({0}, DType::Int32), std::nullopt, 3), {0, 0, 0});
  expect_values(bincount(constant({{2, 0}, {2, 2}})), {1, 0, 3});
  EXPECT_ERROR(bincount(constant({1, -1})), InvalidArgumentError, "bincount", "arr[1] = -1", "negative");
  EXPECT_ERROR(bincount(constant({1.0})), InvalidArgumentError, "bincount", "arr", "float64");
  EXPECT_ERROR(bincount(arr, constant({1.0})), InvalidArgumentError, "bincount", "weights", "[1]", "[4]");
  EXPECT_ERROR(bincount(arr, std::nullopt, -1), InvalidArgumentError, "bincount", "minlength");
}

// Sizes that depend on values are unknown while a graph is built and known when it runs.
TEST(ArraySegments, GraphsWithValueDependentSizes) {
  Graph g;
  Tensor x, ids, mask, masked, seg, uniq, rolled;
  {
    Graph::Scope scope(g);
    x = placeholder(DType::Float32, {kUnknownDim}, "x");
    ids = placeholder(DType::Int32, {kUnknownDim}, "ids");
    mask = placeholder(DType::Bool, {kUnknownDim}, "mask");
    masked = boolean_mask(x, mask);
    expect_meta(masked, {kUnknownDim}, DType::Float32);
    seg = segment_sum(x, ids);
    expect_meta(seg, {kUnknownDim}, DType::Float32);
    uniq = unique(ids).y;
    expect_meta(uniq, {kUnknownDim}, DType::Int32);
    rolled = roll(x, {1}, {0});
    expect_meta(rolled, {kUnknownDim}, DType::Float32);
  }
  Session sess(g);
  const Tensor xv = constant({1.f, 2.f, 3.f}), iv = constant({0, 0, 3}), mv = constant({true, false, true});
  std::vector<Tensor> out = sess.run({masked, seg, uniq, rolled}, {{x, xv}, {ids, iv}, {mask, mv}});
  expect_values(out[0], {1, 3});
  expect_values(out[1], {3, 0, 0, 3});
  expect_values(out[2], {0, 3});
  expect_values(out[3], {3, 1, 2});
  EXPECT_ERROR(sess.run(seg, {{x, xv}, {ids, constant({1, 0, 0})}}), InvalidArgumentError, "segment_sum",
               "sorted");
}

}  // namespace
}  // namespace ef
