// Int8, UInt8, Int16, UInt16 and UInt32: stored narrow, computed in int32 or int64 and
// narrowed keeping the low bits (Note [small integer dtypes] in eagerflow/core/dtype.h).
// NumPy parity over each dtype's whole range is in tests/python/test_small_integers.py.
#include <cstdint>
#include <limits>

#include "io/io_test_util.h"

namespace ef {
namespace {

TEST(SmallInteger, DTypeFacts) {
  EXPECT_EQ(size_of(DType::UInt8), 1u);
  EXPECT_EQ(size_of(DType::Int16), 2u);
  EXPECT_EQ(size_of(DType::UInt32), 4u);
  EXPECT_EQ(compute_dtype(DType::Int8), DType::Int32);
  EXPECT_EQ(compute_dtype(DType::UInt32), DType::Int64);
  EXPECT_EQ(compute_dtype(DType::Int32), DType::Int32);
  EXPECT_TRUE(is_integer(DType::UInt16) && is_unsigned(DType::UInt16) && is_storage_only(DType::UInt16));
  EXPECT_EQ(dtype_named("uint8"), DType::UInt8);
  EXPECT_EQ(dtype_of<int16_t>, DType::Int16);
}

TEST(SmallInteger, ConstantsKeepTheirCxxType) {
  Tensor u = constant(std::vector<uint8_t>{0, 200, 255}, Shape{3});
  EXPECT_EQ(u.dtype(), DType::UInt8);
  EXPECT_EQ(constant(uint32_t{4000000000u}).dtype(), DType::UInt32);
  EXPECT_EQ(constant(uint32_t{4000000000u}).item<int64_t>(), 4000000000);
  EXPECT_EQ(constant('a').dtype(), DType::Int32);  // char is a character, not int8
  EXPECT_EQ(u.to_vector<int>(), (std::vector<int>{0, 200, 255}));
}

TEST(SmallInteger, ArithmeticWrapsModuloTheWidth) {
  Tensor u = constant(std::vector<uint8_t>{250, 3, 0}, Shape{3});
  Tensor sum = u + constant(std::vector<uint8_t>{10, 4, 0}, Shape{3});
  EXPECT_EQ(sum.dtype(), DType::UInt8);
  EXPECT_EQ(sum.to_vector<int>(), (std::vector<int>{4, 7, 0}));
  EXPECT_EQ((-u).to_vector<int>(), (std::vector<int>{6, 253, 0}));
  Tensor i8 = constant(std::vector<int8_t>{-128, 127, -1}, Shape{3});
  EXPECT_EQ((i8 * 2).to_vector<int>(), (std::vector<int>{0, -2, -2}));
  EXPECT_EQ(abs(i8).to_vector<int>(), (std::vector<int>{-128, 127, 1}));  // as C and NumPy
  Tensor u32 = constant(std::vector<uint32_t>{4294967295u, 3000000000u}, Shape{2});
  EXPECT_EQ((u32 + 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 3000000001}));
  EXPECT_EQ(greater(u32, int64_t{2147483648}).to_vector<bool>(), (std::vector<bool>{true, true}));
}

TEST(SmallInteger, ScalarsMustFitTheDType) {
  Tensor u = constant(std::vector<uint8_t>{1}, Shape{1});
  EXPECT_EQ((u + 254).to_vector<int>(), std::vector<int>{255});
  EXPECT_ERROR(u + 256, InvalidArgumentError, "add", "256", "uint8");
  EXPECT_ERROR(u + -1, InvalidArgumentError, "add", "-1", "uint8");
  EXPECT_ERROR(u + 1.5, InvalidArgumentError, "add", "uint8");
  EXPECT_ERROR(u + constant(1), InvalidArgumentError, "add", "uint8", "int32");
}

TEST(SmallInteger, SumsAccumulateWideThenWrap) {
  // 300 ones: a uint8 accumulator would give 44 at every step; the sum is 300 mod 256.
  Tensor ones = cast(ef::ones({300}), DType::UInt8);
  EXPECT_EQ(reduce_sum(ones).item<int>(), 300 % 256);
  EXPECT_EQ(reduce_sum(ones).dtype(), DType::UInt8);
  // The mean divides the wide sum, so 200s average to 200, not to a wrapped value.
  Tensor big = cast(ef::fill({10}, 200, DType::Int32), DType::UInt8);
  EXPECT_EQ(reduce_mean(big).item<int>(), 200);
  EXPECT_EQ(reduce_max(constant(std::vector<int16_t>{-5, 300, -32768}, Shape{3})).item<int>(), 300);
}

TEST(SmallInteger, CastsWrapFromIntegersAndSaturateFromFloats) {
  EXPECT_EQ(cast(constant({300, -1, 256, -129}), DType::UInt8).to_vector<int>(),
            (std::vector<int>{44, 255, 0, 127}));
  EXPECT_EQ(cast(constant({300, -1, 128, -129}), DType::Int8).to_vector<int>(),
            (std::vector<int>{44, -1, -128, 127}));
  EXPECT_EQ(cast(constant({300.7f, -1.f, NAN, 254.9f, INFINITY}), DType::UInt8).to_vector<int>(),
            (std::vector<int>{255, 0, 0, 254, 255}));
  EXPECT_EQ(cast(constant({1e10, -1e10, 4294967294.5}), DType::UInt32).to_vector<int64_t>(),
            (std::vector<int64_t>{4294967295, 0, 4294967294}));
  EXPECT_EQ(cast(constant({-40000.0f, 40000.0f}), DType::Int16).to_vector<int>(),
            (std::vector<int>{-32768, 32767}));
  EXPECT_EQ(cast(constant(std::vector<int8_t>{-1}, Shape{1}), DType::UInt16).to_vector<int>(),
            std::vector<int>{65535});
  EXPECT_EQ(cast(constant(std::vector<uint8_t>{200}, Shape{1}), DType::Float16).to_vector<float>(),
            std::vector<float>{200.f});
}

TEST(SmallInteger, ReadingRefusesValuesThatDoNotFit) {
  EXPECT_ERROR(constant(300).item<uint8_t>(), InvalidArgumentError, "item", "300", "unsigned 8-bit");
  EXPECT_ERROR(constant(int64_t{1} << 40).item<int32_t>(), InvalidArgumentError, "item", "signed 32-bit");
  EXPECT_ERROR(constant({-1}).to_vector<uint32_t>(), InvalidArgumentError, "to_vector", "-1");
  EXPECT_EQ(constant(255).item<uint8_t>(), 255);
}

TEST(SmallInteger, PrintsNumbersNotCharacters) {
  EXPECT_EQ(constant(std::vector<uint8_t>{65, 0, 255}, Shape{3}).to_string(),
            "Tensor([ 65   0 255], shape=(3,), dtype=uint8)");
  EXPECT_EQ(constant(int8_t{-65}).to_string(), "Tensor(-65, shape=(), dtype=int8)");
}

TEST(SmallInteger, StridedViewsAndIndexWidening) {
  Tensor x = reshape(cast(range(0, 12, 1, DType::Int32), DType::UInt16), {3, 4});
  Tensor t = transpose(x);
  EXPECT_EQ((t + 0).to_vector<int>(), transpose(cast(x, DType::Int32)).to_vector<int>());
  Tensor idx = constant(std::vector<uint8_t>{2, 0}, Shape{2});
  EXPECT_EQ(gather(x, idx).to_vector<int>(), (std::vector<int>{8, 9, 10, 11, 0, 1, 2, 3}));
  EXPECT_EQ(one_hot(idx, 3).to_vector<float>(), (std::vector<float>{0, 0, 1, 1, 0, 0}));
}

TEST(SmallInteger, GradientsDoNotFlowThroughIntegers) {
  Variable w(constant({1.5f, 2.5f}), "w");
  GradientTape tape;
  Tensor y = reduce_sum(cast(cast(w.value(), DType::UInt8), DType::Float32) * w.value());
  testing::expect_values(tape.gradient(y, w), {1.0, 2.0});
}

TEST(SmallInteger, SafetensorsAndNpyRoundTrip) {
  testing::TempDir dir("small_integer");
  const Tensor u = constant(std::vector<uint32_t>{0, 4294967295u, 7}, Shape{3});
  const Tensor i = constant(std::vector<int8_t>{-128, 5}, Shape{2});
  io::save_safetensors(dir.file("t.safetensors"), {{"u", u}, {"i", i}});
  io::TensorFile back = io::load_safetensors(dir.file("t.safetensors"));
  EXPECT_EQ(back.tensors.at("u").dtype(), DType::UInt32);
  EXPECT_EQ(back.tensors.at("u").to_vector<int64_t>(), u.to_vector<int64_t>());
  EXPECT_EQ(back.tensors.at("i").to_vector<int>(), i.to_vector<int>());
  io::save_npy(dir.file("i.npy"), i);
  Tensor loaded = io::load_npy(dir.file("i.npy"));
  EXPECT_EQ(loaded.dtype(), DType::Int8);
  EXPECT_EQ(loaded.to_vector<int>(), i.to_vector<int>());
}

TEST(SmallInteger, FunctionsComputeAsEagerly) {
  auto f = function([](const Tensor& x) { return x * x + 1; });
  Tensor x = constant(std::vector<uint8_t>{16, 200, 3}, Shape{3});
  EXPECT_EQ(f(x).to_vector<int>(), (x * x + 1).to_vector<int>());
  EXPECT_EQ(f(x).to_vector<int>(), (std::vector<int>{1, 65, 10}));  // 256+1, 40001 mod 256
}

}  // namespace
}  // namespace ef
