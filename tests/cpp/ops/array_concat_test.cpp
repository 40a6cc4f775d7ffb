// concat, stack, unstack, split, tile and pad.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;
using testing::iota;

TEST(ArrayConcat, Values) {
  Tensor a = iota({2, 2});
  Tensor b = constant({{10.f, 11.f}});
  Tensor c0 = concat({a, b}, 0);
  expect_meta(c0, {3, 2}, DType::Float32);
  expect_values(c0, {0, 1, 2, 3, 10, 11});
  Tensor c1 = concat({a, transpose(a), a}, -1);
  expect_meta(c1, {2, 6}, DType::Float32);
  expect_values(c1, {0, 1, 0, 2, 0, 1, 2, 3, 1, 3, 2, 3});
  expect_values(concat({a}, 1), {0, 1, 2, 3});
  expect_meta(concat({zeros({0, 2}), a, zeros({0, 2})}, 0), {2, 2}, DType::Float32);
  expect_meta(concat({zeros({2, 0}), zeros({2, 0})}, 1), {2, 0}, DType::Float32);
  for (DType t : kAllDTypes) {
    Tensor x = cast(iota({2}), t);
    Tensor y = concat({x, x}, 0);
    expect_meta(y, {4}, t);
    expect_values(real(y), {0, 1, 0, 1});  // real: y itself, or a complex y's real part
  }
  // Large enough to use several threads.
  Tensor big = concat({iota({200, 300}), transpose(iota({300, 200}))}, 1);
  expect_meta(big, {200, 600}, DType::Float32);
  EXPECT_EQ(big[199][599].item<float>(), 299.f * 200 + 199);
}

TEST(ArrayConcat, Errors) {
  Tensor a = iota({2, 2});
  EXPECT_ERROR(concat({}, 0), InvalidArgumentError, "concat", "empty");
  EXPECT_ERROR(concat({a, iota({3, 3})}, 0), InvalidArgumentError, "concat", "[3, 3]", "[2, 2]", "except axis 0");
  EXPECT_ERROR(concat({a, iota({2})}, 0), InvalidArgumentError, "concat", "same rank");
  EXPECT_ERROR(concat({a, cast(a, DType::Int32)}, 0), InvalidArgumentError, "concat", "int32", "float32");
  EXPECT_ERROR(concat({a, a}, 2), InvalidArgumentError, "concat", "axis");
  EXPECT_ERROR(concat({constant(1), constant(2)}, 0), InvalidArgumentError, "concat", "scalars");
}

TEST(ArrayStack, Values) {
  Tensor a = constant({1, 2});
  Tensor b = constant({3, 4});
  expect_values(stack({a, b}), {1, 2, 3, 4});
  Tensor s1 = stack({a, b}, 1);
  expect_meta(s1, {2, 2}, DType::Int32);
  expect_values(s1, {1, 3, 2, 4});
  expect_values(stack({a, b}, -1), {1, 3, 2, 4});
  Tensor scalars = stack({constant(1.0), constant(2.0), constant(3.0)});
  expect_meta(scalars, {3}, DType::Float64);
  expect_meta(stack({zeros({0}), zeros({0})}, 1), {0, 2}, DType::Float32);
  EXPECT_ERROR(stack({}), InvalidArgumentError, "stack", "empty");
  EXPECT_ERROR(stack({a, constant({1, 2, 3})}), InvalidArgumentError, "stack", "[3]", "[2]");
  EXPECT_ERROR(stack({a, b}, 3), InvalidArgumentError, "stack", "axis");
}

// An empty tensor's axis can be huge for free; a fuzzer found unstack allocating one
// output description per entry until memory ran out.
TEST(ArrayUnstack, TooManyOutputsIsAnError) {
  EXPECT_ERROR(unstack(zeros({0, int64_t{1} << 30}), 1), InvalidArgumentError, "unstack", "outputs");
  EXPECT_ERROR(split(zeros({0, int64_t{1} << 30}), int64_t{1} << 30, 1), InvalidArgumentError, "too large");
}

TEST(ArrayUnstack, Values) {
  Tensor x = iota({2, 3});
  std::vector<Tensor> rows = unstack(x);
  ASSERT_EQ(rows.size(), 2u);
  expect_values(rows[1], {3, 4, 5});
  std::vector<Tensor> cols = unstack(x, 1);
  ASSERT_EQ(cols.size(), 3u);
  expect_meta(cols[2], {2}, DType::Float32);
  expect_values(cols[2], {2, 5});
  EXPECT_EQ(cols[0].impl()->storage.get(), x.impl()->storage.get());
  EXPECT_TRUE(unstack(zeros({0, 3})).empty());
  std::vector<Tensor> e = unstack(zeros({2, 0}));
  ASSERT_EQ(e.size(), 2u);
  expect_meta(e[0], {0}, DType::Float32);
  expect_values(unstack(transpose(x))[1], {1, 4});
  EXPECT_ERROR(unstack(constant(1)), InvalidArgumentError, "unstack", "scalar");
  EXPECT_ERROR(unstack(x, 2), InvalidArgumentError, "unstack", "axis");
}

TEST(ArraySplit, CountAndSizes) {
  Tensor x = iota({2, 6}, DType::Int64);
  std::vector<Tensor> parts = split(x, 3, 1);
  ASSERT_EQ(parts.size(), 3u);
  expect_meta(parts[1], {2, 2}, DType::Int64);
  expect_values(parts[1], {2, 3, 8, 9});
  std::vector<Tensor> sized = split(x, {1, -1, 2}, -1);
  ASSERT_EQ(sized.size(), 3u);
  expect_values(sized[0], {0, 6});
  expect_values(sized[1], {1, 2, 3, 7, 8, 9});
  expect_values(sized[2], {4, 5, 10, 11});
  std::vector<Tensor> one = split(x, {6}, 1);  // a list of one size, not a count
  ASSERT_EQ(one.size(), 1u);
  expect_meta(one[0], {2, 6}, DType::Int64);
  std::vector<Tensor> with_empty = split(x, {0, 6}, 1);
  expect_meta(with_empty[0], {2, 0}, DType::Int64);
  expect_values(split(transpose(x), 2, 1)[1], {6, 7, 8, 9, 10, 11});
  std::vector<Tensor> empty = split(zeros({0, 4}), 2, 0 + 1);
  expect_meta(empty[0], {0, 2}, DType::Float32);
  expect_meta(split(zeros({0}), 3)[2], {0}, DType::Float32);
}

TEST(ArraySplit, Errors) {
  Tensor x = iota({2, 6});
  EXPECT_ERROR(split(x, 4, 1), InvalidArgumentError, "split", "[2, 6]", "4 equal parts");
  EXPECT_ERROR(split(x, 0, 1), InvalidArgumentError, "split", "positive");
  EXPECT_ERROR(split(x, {2, 2}, 1), InvalidArgumentError, "split", "adds up to 4", "size 6");
  EXPECT_ERROR(split(x, {-1, -1}, 1), InvalidArgumentError, "split", "-1 only once");
  EXPECT_ERROR(split(x, {7, -1}, 1), InvalidArgumentError, "split", "more than");
  EXPECT_ERROR(split(x, {-2, 8}, 1), InvalidArgumentError, "split", "negative");
  EXPECT_ERROR(split(x, std::vector<int64_t>{}, 1), InvalidArgumentError, "split", "non-empty");
  EXPECT_ERROR(split(constant(1), 1), InvalidArgumentError, "split", "scalar");
  EXPECT_ERROR(split(x, 2, 2), InvalidArgumentError, "split", "axis");
}

TEST(ArrayTile, Values) {
  Tensor x = constant({{1, 2}, {3, 4}});
  Tensor t = tile(x, {2, 3});
  expect_meta(t, {4, 6}, DType::Int32);
  expect_values(t, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  expect_values(tile(x, {1, 1}), {1, 2, 3, 4});
  expect_values(tile(transpose(x), {1, 2}), {1, 3, 1, 3, 2, 4, 2, 4});
  expect_meta(tile(x, {0, 2}), {0, 4}, DType::Int32);
  expect_meta(tile(constant(5.0), {}), {}, DType::Float64);
  for (DType dt : kAllDTypes) expect_meta(tile(cast(x, dt), {2, 1}), {4, 2}, dt);
  // Eight repeated axes do not fit in one strided view: the kernel tiles per axis.
  Tensor many = tile(reshape(constant({1, 2}), {2, 1, 1, 1, 1, 1, 1, 1}), {2, 2, 2, 2, 2, 2, 2, 2});
  expect_meta(many, {4, 2, 2, 2, 2, 2, 2, 2}, DType::Int32);
  std::vector<int> v = many.to_vector<int>();
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[128], 2);
  EXPECT_EQ(v[256], 1);
  EXPECT_EQ(v[511], 2);
  EXPECT_ERROR(tile(x, {2}), InvalidArgumentError, "tile", "multiples", "[2, 2]");
  EXPECT_ERROR(tile(x, {-1, 2}), InvalidArgumentError, "tile", "negative");
  EXPECT_ERROR(tile(x, {int64_t{1} << 62, 4}), Error, "tile");
}

TEST(ArrayPad, Constant) {
  Tensor x = constant({{1, 2}, {3, 4}});
  Tensor p = pad(x, {{1, 0}, {0, 2}});
  expect_meta(p, {3, 4}, DType::Int32);
  expect_values(p, {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0});
  expect_values(pad(x, {{0, 0}, {1, 1}}, "CONSTANT", 9), {9, 1, 2, 9, 9, 3, 4, 9});
  expect_values(pad(transpose(x), {{0, 1}, {0, 0}}), {1, 3, 2, 4, 0, 0});
  expect_values(pad(constant({1.5}), {{1, 1}}, "CONSTANT", -0.5), {-0.5, 1.5, -0.5});
  expect_values(pad(zeros({0}), {{2, 1}}, "CONSTANT", 3.f), {3, 3, 3});
  expect_meta(pad(zeros({0, 2}), {{0, 0}, {1, 1}}), {0, 4}, DType::Float32);
  expect_values(pad(constant(7), {}), {7});
  expect_values(pad(constant({true}), {{1, 0}}, "CONSTANT", true), {1, 1});
}

TEST(ArrayPad, ReflectAndSymmetric) {
  Tensor x = constant({1.0, 2.0, 3.0});
  expect_values(pad(x, {{2, 2}}, "REFLECT"), {3, 2, 1, 2, 3, 2, 1});
  expect_values(pad(x, {{3, 2}}, "SYMMETRIC"), {3, 2, 1, 1, 2, 3, 3, 2});
  Tensor m = constant({{1, 2, 3}, {4, 5, 6}});
  // tf.pad(m, [[1, 1], [2, 2]], "REFLECT")
  expect_values(pad(m, {{1, 1}, {2, 2}}, "REFLECT"),
                {6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1});
  // tf.pad(m, [[1, 1], [2, 2]], "SYMMETRIC")
  expect_values(pad(m, {{1, 1}, {2, 2}}, "SYMMETRIC"),
                {2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5});
}

// Trailing axes that are not padded are copied as blocks: checked against a loop over
// every output element, for contiguous inputs and for views whose trailing axes are
// not contiguous (a transpose), in every mode.
TEST(ArrayPad, TrailingUnpaddedAxesCopyAsBlocks) {
  const Tensor x = reshape(range(0, 48, 1, DType::Float32), {2, 3, 4, 2});
  const Tensor transposed = transpose(reshape(range(0, 48, 1, DType::Float32), {2, 3, 2, 4}), {0, 1, 3, 2});
  // The input position an output position copies along one axis, or -1 for the constant.
  auto source = [](int64_t o, int64_t before, int64_t dim, const std::string& mode) -> int64_t {
    const int64_t i = o - before;
    if (i >= 0 && i < dim) return i;
    if (mode == "CONSTANT") return -1;
    if (i < 0) return mode == "REFLECT" ? -i : -i - 1;
    return mode == "REFLECT" ? 2 * dim - 2 - i : 2 * dim - 1 - i;
  };
  for (const std::string mode : {"CONSTANT", "REFLECT", "SYMMETRIC"})
    for (const Tensor& input : {x, transposed}) {
      const Tensor padded = pad(input, {{0, 0}, {1, 2}, {2, 1}, {0, 0}}, mode, -1.f);
      expect_meta(padded, {2, 6, 7, 2}, DType::Float32);
      const std::vector<float> in = input.contiguous().to_vector<float>();
      std::vector<float> want;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t h = 0; h < 6; ++h)
          for (int64_t w = 0; w < 7; ++w)
            for (int64_t c = 0; c < 2; ++c) {
              const int64_t sh = source(h, 1, 3, mode), sw = source(w, 2, 4, mode);
              want.push_back(sh < 0 || sw < 0 ? -1.f
                                              : in[static_cast<size_t>(((n * 3 + sh) * 4 + sw) * 2 + c)]);
            }
      EXPECT_EQ(padded.to_vector<float>(), want) << mode;
    }
  expect_values(pad(reshape(constant({1, 2, 3, 4}), {2, 2, 1}), {{1, 0}, {0, 0}, {0, 0}}),
                {0, 0, 1, 2, 3, 4});
}

TEST(ArrayPad, Errors) {
  Tensor x = constant({1, 2, 3});
  EXPECT_ERROR(pad(x, {{1, 1}, {1, 1}}), InvalidArgumentError, "pad", "[3]", "rank 1");
  EXPECT_ERROR(pad(x, {{-1, 1}}), InvalidArgumentError, "pad", "negative");
  EXPECT_ERROR(pad(x, {{3, 0}}, "REFLECT"), InvalidArgumentError, "pad", "at most 2", "REFLECT");
  EXPECT_ERROR(pad(x, {{0, 4}}, "SYMMETRIC"), InvalidArgumentError, "pad", "at most 3", "SYMMETRIC");
  EXPECT_ERROR(pad(x, {{1, 1}}, "WRAP"), InvalidArgumentError, "pad", "WRAP");
  EXPECT_ERROR(pad(x, {{1, 1}}, "CONSTANT", 1.5), InvalidArgumentError, "pad", "1.5", "int32");
}

}  // namespace
}  // namespace ef
