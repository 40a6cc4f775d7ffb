// Bugs the op fuzzer (tests/fuzz) found, as plain unit tests next to the replayed
// inputs in tests/fuzz/regressions. Under build-asan these would report UB.
#include <limits>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_values;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

TEST(FuzzFindings, EmptyConstantFromEmptyVector) {
  // memcpy from a null data() pointer, even for 0 bytes, is UB.
  EXPECT_EQ(constant(std::vector<float>{}, {0}).num_elements(), 0);
  EXPECT_EQ(constant(std::vector<int64_t>{}, {3, 0}).num_elements(), 0);
}

TEST(FuzzFindings, ZeroDimensionWithHugeOthersIsRejected) {
  // contiguous_strides of (0, 2^62, 2^62) overflowed.
  EXPECT_ERROR(zeros({0, int64_t{1} << 62, int64_t{1} << 62}), ResourceExhaustedError, "overflows");
}

TEST(FuzzFindings, IntegerRangeNearTheLimits) {
  // start + i * delta overflowed in the kernel although every element fits in int64.
  Tensor r = range(kI64Min, int64_t{1} << 62, int64_t{1} << 62);
  EXPECT_EQ(r.to_vector<int64_t>(), (std::vector<int64_t>{kI64Min, -(int64_t{1} << 62), 0}));
}

TEST(FuzzFindings, PadWithANonFiniteFillValueForIntegers) {
  // A float fill value converted to int64 through Tensor::item was UB for -inf.
  EXPECT_THROW(pad(constant({int64_t{1}}), {{1, 1}}, "CONSTANT", constant(-INFINITY)), Error);
}

}  // namespace
}  // namespace ef
