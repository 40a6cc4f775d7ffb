// Shapes: element counts, printing, NumPy broadcasting (with unknown dimensions),
// axis normalization and the overflow checks every op relies on.
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

constexpr int64_t kU = kUnknownDim;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

TEST(Shape, BasicsAndPrinting) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.num_elements(), 24);
  EXPECT_EQ(s.dim(-1), 4);
  EXPECT_EQ(s.to_string(), "[2, 3, 4]");
  EXPECT_TRUE(s.is_fully_defined());
  EXPECT_TRUE(Shape{}.is_scalar());
  EXPECT_EQ(Shape{}.num_elements(), 1);
  EXPECT_EQ(Shape({3, 0, 5}).num_elements(), 0);
  EXPECT_EQ(Shape(std::vector<int64_t>{1, 2}), (Shape{1, 2}));
  EXPECT_NE((Shape{1, 2}), (Shape{2, 1}));
}

TEST(Shape, UnknownDimensions) {
  Shape s{2, kU, 3};
  EXPECT_FALSE(s.is_fully_defined());
  EXPECT_EQ(s.num_elements(), kU);
  EXPECT_EQ(s.to_string(), "[2, ?, 3]");
}

TEST(Shape, ContiguousStrides) {
  EXPECT_EQ(contiguous_strides(Shape{2, 3, 4}), (Dims{12, 4, 1}));
  EXPECT_EQ(contiguous_strides(Shape{}), Dims{});
  // A zero dimension must not zero the outer strides (views index with them).
  EXPECT_EQ(contiguous_strides(Shape{2, 0, 3}), (Dims{3, 3, 1}));
}

TEST(Broadcast, NumPyRules) {
  EXPECT_EQ(broadcast_shapes({2, 3}, {2, 3}, "op"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({2, 1}, {1, 3}, "op"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({4, 2, 3}, {3}, "op"), (Shape{4, 2, 3}));
  EXPECT_EQ(broadcast_shapes({}, {5, 1}, "op"), (Shape{5, 1}));
  EXPECT_EQ(broadcast_shapes({0, 1}, {1, 7}, "op"), (Shape{0, 7}));
  EXPECT_EQ(broadcast_shapes({1}, {0}, "op"), (Shape{0}));
}

TEST(Broadcast, UnknownDimensions) {
  // Note [unknown dimensions]: only definite mismatches are errors.
  EXPECT_EQ(broadcast_shapes({kU, 3}, {4, 3}, "op"), (Shape{4, 3}));
  EXPECT_EQ(broadcast_shapes({kU, 3}, {1, 3}, "op"), (Shape{kU, 3}));
  EXPECT_EQ(broadcast_shapes({1}, {kU}, "op"), (Shape{kU}));
  EXPECT_EQ(broadcast_shapes({kU}, {kU}, "op"), (Shape{kU}));
  EXPECT_EQ(broadcast_shapes({kU, 3}, {3}, "op"), (Shape{kU, 3}));
  EXPECT_ERROR(broadcast_shapes({kU, 2}, {3}, "op"), InvalidArgumentError, "[?, 2]", "[3]");
}

TEST(Broadcast, IncompatibleShapesNameOpAndShapes) {
  EXPECT_ERROR(broadcast_shapes({2, 3}, {4, 3}, "my_op"), InvalidArgumentError, "my_op", "[2, 3]",
               "[4, 3]", "broadcast");
  EXPECT_ERROR(broadcast_shapes({3}, {0}, "my_op"), InvalidArgumentError, "[3]", "[0]");
}

TEST(NormalizeAxis, InRangeAndNegative) {
  EXPECT_EQ(normalize_axis(0, 3, "op"), 0);
  EXPECT_EQ(normalize_axis(2, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(-1, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(-3, 3, "op"), 0);
  // A scalar accepts axis 0 and -1 (TensorFlow's rule for reductions over a scalar).
  EXPECT_EQ(normalize_axis(0, 0, "op"), 0);
  EXPECT_EQ(normalize_axis(-1, 0, "op"), 0);
}

TEST(NormalizeAxis, OutOfRangeNamesOpArgAndRank) {
  EXPECT_ERROR(normalize_axis(3, 3, "sum", "axis"), InvalidArgumentError, "sum", "'axis' = 3", "rank 3");
  EXPECT_ERROR(normalize_axis(-4, 3, "sum", "dim"), InvalidArgumentError, "'dim' = -4");
  EXPECT_ERROR(normalize_axis(1, 0, "op"), InvalidArgumentError, "rank 0");
  EXPECT_ERROR(normalize_axis(int64_t{1} << 31, 2, "op"), InvalidArgumentError, "2147483648");
  EXPECT_ERROR(normalize_axis(std::numeric_limits<int64_t>::min(), 2, "op"), InvalidArgumentError, "op");
  EXPECT_ERROR(normalize_axis(kI64Max, 8, "op"), InvalidArgumentError, "op");
}

TEST(NormalizeAxes, SortsAllAndRejectsDuplicates) {
  std::vector<int64_t> axes{-1, 0};
  EXPECT_EQ(normalize_axes(axes, 3, "op", false), (Dims{0, 2}));
  EXPECT_EQ(normalize_axes({}, 3, "op", true), (Dims{0, 1, 2}));
  EXPECT_EQ(normalize_axes({}, 3, "op", false), Dims{});
  EXPECT_EQ(normalize_axes({}, 0, "op", true), Dims{});
  std::vector<int64_t> dup{1, -2};
  EXPECT_ERROR(normalize_axes(dup, 3, "reduce", false), InvalidArgumentError, "reduce", "repeats");
  std::vector<int64_t> bad{0, 5};
  EXPECT_ERROR(normalize_axes(bad, 3, "reduce", false), InvalidArgumentError, "5", "rank 3");
}

TEST(ValidateShape, AcceptsValidShapes) {
  EXPECT_NO_THROW(validate_shape({}, "op", "shape"));
  EXPECT_NO_THROW(validate_shape({0, 5}, "op", "shape", 8));
  EXPECT_NO_THROW(validate_shape({1, 1, 1, 1, 1, 1, 1, 1}, "op", "shape"));
  EXPECT_NO_THROW(validate_shape({kU, 3}, "op", "shape", 4, /*allow_unknown=*/true));
  // The largest element count whose byte size still fits in int64.
  EXPECT_NO_THROW(validate_shape({kI64Max / 8}, "op", "shape", 8));
}

TEST(ValidateShape, RejectsBadShapes) {
  EXPECT_ERROR(validate_shape({2, -3}, "zeros", "shape"), InvalidArgumentError, "zeros", "'shape'", "negative",
               "[2, -3]");
  // -1 is the given value here, not an unknown dimension: the message shows it as given.
  EXPECT_ERROR(validate_shape({kU}, "zeros", "shape"), InvalidArgumentError, "negative", "dimension 0 is -1",
               "[-1]");
  EXPECT_ERROR(zeros({3, -1}), InvalidArgumentError, "'shape'", "dimension 1 is -1", "[3, -1]");
  EXPECT_ERROR(validate_shape({1, 1, 1, 1, 1, 1, 1, 1, 1}, "zeros", "shape"), InvalidArgumentError, "rank 9",
               "at most 8");
}

TEST(ValidateShape, OverflowIsResourceExhausted) {
  EXPECT_ERROR(validate_shape({int64_t{1} << 62, 4}, "fill", "dims"), ResourceExhaustedError, "fill", "'dims'",
               "overflow");
  EXPECT_ERROR(validate_shape({kI64Max / 8 + 1}, "op", "shape", 8), ResourceExhaustedError, "overflow");
  EXPECT_ERROR(validate_shape({int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31}, "op", "shape"),
               ResourceExhaustedError, "op");
  EXPECT_ERROR(validate_shape({1 << 20, 1 << 20, 1 << 20, 1 << 20}, "op", "shape"), ResourceExhaustedError,
               "op");
}

TEST(ValidateShape, ZeroDimensionsStillBoundTheOtherDimensions) {
  // As in NumPy: strides of (0, 2^62, 2^62) would overflow, so the shape is rejected
  // although it has no elements (found by the op fuzzer).
  EXPECT_ERROR(validate_shape({0, int64_t{1} << 62, int64_t{1} << 62}, "zeros", "shape", 4), ResourceExhaustedError,
               "zeros");
  EXPECT_ERROR(zeros({0, int64_t{1} << 62, int64_t{1} << 62}), ResourceExhaustedError, "[0, 4611686018427387904, ");
  EXPECT_NO_THROW(validate_shape({0, int64_t{1} << 61}, "op", "shape", 1));
  EXPECT_EQ(zeros({int64_t{1} << 40, 0}).num_elements(), 0);
}

TEST(CheckedMul, DetectsOverflow) {
  EXPECT_EQ(checked_mul(6, 7, "what"), 42);
  EXPECT_EQ(checked_mul(0, kI64Max, "what"), 0);
  EXPECT_EQ(checked_mul(-3, 5, "what"), -15);
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31, "what"), int64_t{1} << 62);
  EXPECT_ERROR(checked_mul(int64_t{1} << 32, int64_t{1} << 31, "matmul size"), ResourceExhaustedError,
               "matmul size", "overflow");
  EXPECT_ERROR(checked_mul(kI64Max, 2, "x"), ResourceExhaustedError, "x");
  EXPECT_ERROR(checked_mul(std::numeric_limits<int64_t>::min(), -1, "x"), ResourceExhaustedError, "x");
}

}  // namespace
}  // namespace ef
