// Image files (eagerflow/io/image.h): PNG round trips at every channel count and bit
// depth, every truncation of a file a typed error, the seed JPEG and PNG files of the
// decoder fuzzer. Pixel parity with Pillow is in tests/python/test_image_io.py.
#include <cstdint>
#include <vector>

#include "io/io_test_util.h"

namespace ef {
namespace {

// The file's bytes without the fuzzer's leading option byte.
Tensor corpus_file(const std::string& name) {
  const Tensor bytes = io::read_file(std::string(EF_SOURCE_DIR) + "/tests/fuzz/image_corpus/" + name);
  return slice(bytes, {1}, {bytes.num_elements() - 1});
}

Tensor ramp(DType dtype, int64_t height, int64_t width, int64_t channels) {
  const int64_t n = height * width * channels;
  const double step = dtype == DType::UInt16 ? 997.0 : 7.0;
  return reshape(
      cast(floormod(multiply(range(0, n, 1, DType::Float64), step), dtype == DType::UInt16 ? 65536.0 : 256.0),
           dtype),
      {height, width, channels});
}

TEST(ImageCodec, PngRoundTripsEveryChannelCountAndDepth) {
  for (DType dtype : {DType::UInt8, DType::UInt16})
    for (int64_t channels = 1; channels <= 4; ++channels) {
      const Tensor image = ramp(dtype, 5, 7, channels);
      const Tensor png = io::encode_png(image);
      EXPECT_EQ(png.dtype(), DType::UInt8);
      const Tensor back = io::decode_png(png, 0, dtype);
      EXPECT_EQ(back.shape(), image.shape()) << dtype << " " << channels;
      EXPECT_EQ(back.to_vector<int>(), image.to_vector<int>()) << dtype << " " << channels;
    }
}

TEST(ImageCodec, PngChannelAndDepthConversions) {
  const Tensor rgb = ramp(DType::UInt8, 2, 3, 3);
  const Tensor rgba = io::decode_png(io::encode_png(rgb), 4);
  EXPECT_EQ(rgba.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(reduce_min(slice(rgba, {0, 0, 3}, {2, 3, 1})).item<int>(), 255);  // opaque alpha added
  EXPECT_EQ(slice(rgba, {0, 0, 0}, {2, 3, 3}).to_vector<int>(), rgb.to_vector<int>());
  const Tensor wide = io::decode_png(io::encode_png(rgb), 0, DType::UInt16);
  EXPECT_EQ(wide.to_vector<int>(), (cast(rgb, DType::Int32) * 257).to_vector<int>());
  const Tensor deep = ramp(DType::UInt16, 2, 2, 1);
  EXPECT_EQ(io::decode_png(io::encode_png(deep)).to_vector<int>(),
            floordiv(cast(deep, DType::Int32), 256).to_vector<int>());  // the high byte
}

TEST(ImageCodec, EveryTruncationIsADataLossError) {
  const Tensor png = io::encode_png(ramp(DType::UInt8, 6, 6, 3));
  for (int64_t cut = 0; cut < png.num_elements(); ++cut)
    EXPECT_THROW(io::decode_png(slice(png, {0}, {cut})), DataLossError) << "cut at " << cut;
  const Tensor jpeg = corpus_file("jpeg-rgb");
  for (int64_t cut = 0; cut < jpeg.num_elements() - 2; cut += 7)
    EXPECT_THROW(io::decode_jpeg(slice(jpeg, {0}, {cut})), DataLossError) << "cut at " << cut;
}

TEST(ImageCodec, TheFuzzerSeedsDecode) {
  EXPECT_EQ(io::decode_jpeg(corpus_file("jpeg-rgb")).shape(), (Shape{16, 8, 3}));
  EXPECT_EQ(io::decode_jpeg(corpus_file("jpeg-gray-progressive")).shape(), (Shape{9, 11, 1}));
  EXPECT_EQ(io::decode_jpeg(corpus_file("jpeg-rgb-to-gray"), 1, "INTEGER_ACCURATE").shape(),
            (Shape{8, 8, 1}));
  EXPECT_EQ(io::decode_image(corpus_file("png-palette-trns")).shape(), (Shape{5, 7, 4}));
  EXPECT_EQ(io::decode_png(corpus_file("png-1bit")).shape(), (Shape{5, 9, 1}));
  const Tensor as_float = io::decode_image(corpus_file("png-rgb"), 3, DType::Float32);
  EXPECT_EQ(as_float.dtype(), DType::Float32);
  EXPECT_LE(reduce_max(as_float).item<float>(), 1.0f);
}

TEST(ImageCodec, BadArgumentsNameTheOpAndTheArgument) {
  const Tensor png = io::encode_png(ramp(DType::UInt8, 2, 2, 1));
  EXPECT_ERROR(io::decode_png(cast(png, DType::Int32)), InvalidArgumentError, "decode_png", "contents",
               "int32");
  EXPECT_ERROR(io::decode_png(png, 5), InvalidArgumentError, "decode_png", "channels", "5");
  EXPECT_ERROR(io::decode_png(png, 0, DType::Float32), InvalidArgumentError, "decode_png", "dtype",
               "float32");
  EXPECT_ERROR(io::decode_jpeg(corpus_file("jpeg-rgb"), 4), InvalidArgumentError, "decode_jpeg", "channels");
  EXPECT_ERROR(io::decode_jpeg(corpus_file("jpeg-rgb"), 3, "FLOAT"), InvalidArgumentError, "dct_method",
               "FLOAT");
  EXPECT_ERROR(io::decode_image(constant(std::vector<uint8_t>{1, 2, 3}, Shape{3})), InvalidArgumentError,
               "decode_image", "not a PNG or JPEG");
  EXPECT_ERROR(io::encode_png(zeros({2, 2, 5}, DType::UInt8)), InvalidArgumentError, "encode_png", "1 to 4");
  EXPECT_ERROR(io::encode_png(zeros({2, 2, 1})), InvalidArgumentError, "encode_png", "float32");
}

TEST(ImageCodec, FilesRoundTrip) {
  testing::TempDir dir("image_codec");
  const Tensor png = io::encode_png(ramp(DType::UInt8, 3, 3, 3));
  io::write_file(dir.file("a.png"), png);
  EXPECT_EQ(io::read_file(dir.file("a.png")).to_vector<int>(), png.to_vector<int>());
  EXPECT_THROW(io::read_file(dir.file("missing.png")), NotFoundError);
  EXPECT_THROW(io::read_file(dir.path().string()), FailedPreconditionError);
  EXPECT_ERROR(io::write_file(dir.file("b"), zeros({2})), InvalidArgumentError, "write_file", "uint8");
}

TEST(ImageOps, FlipsRotationsAndDTypeConversion) {
  const Tensor x = reshape(range(0, 6, 1, DType::Int32), {2, 3, 1});  // rows [0 1 2], [3 4 5]
  EXPECT_EQ(flip_left_right(x).to_vector<int>(), (std::vector<int>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(flip_up_down(x).to_vector<int>(), (std::vector<int>{3, 4, 5, 0, 1, 2}));
  const Tensor turned = rot90(x);  // counter-clockwise: rows [2 5], [1 4], [0 3]
  EXPECT_EQ(turned.shape(), (Shape{3, 2, 1}));
  EXPECT_EQ(turned.to_vector<int>(), (std::vector<int>{2, 5, 1, 4, 0, 3}));
  EXPECT_EQ(rot90(x, -1).to_vector<int>(), rot90(x, 3).to_vector<int>());
  const Tensor u8 = constant(std::vector<uint8_t>{0, 255}, Shape{2});
  EXPECT_EQ(convert_image_dtype(u8, DType::Float32).to_vector<float>(), (std::vector<float>{0.f, 1.f}));
  EXPECT_EQ(convert_image_dtype(constant({1.f, 0.5f}), DType::UInt8).to_vector<int>(),
            (std::vector<int>{255, 127}));
  EXPECT_ERROR(flip_left_right(zeros({3})), InvalidArgumentError, "flip_left_right", "[3]");
}

}  // namespace
}  // namespace ef
