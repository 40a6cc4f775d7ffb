// The IDX reader: round trips of every type, plain and gzip, and malformed files.
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/data_test_util.h"

namespace ef::testing {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// A fresh folder per test, removed afterwards.
class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ef_idx_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const Bytes& bytes, bool gzip = false) {
    const std::string path = (dir_ / name).string();
    if (gzip) {
      gzFile f = gzopen(path.c_str(), "wb");
      EXPECT_NE(f, nullptr);
      EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
                static_cast<int>(bytes.size()));
      gzclose(f);
    } else {
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    return path;
  }

  fs::path dir_;
};

// An IDX header: magic (type code, rank) then big-endian dims.
Bytes header(uint8_t type, std::vector<uint32_t> dims) {
  Bytes b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
  return b;
}

// `values` as big-endian elements of T appended to `b`.
template <class T>
Bytes with_values(Bytes b, const std::vector<T>& values) {
  for (T v : values) {
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    for (size_t i = 0; i < sizeof(T); ++i) b.push_back(raw[sizeof(T) - 1 - i]);  // little → big endian
  }
  return b;
}

TEST_F(IdxTest, RoundTripsEveryTypePlainAndGzip) {
  for (bool gz : {false, true}) {
    SCOPED_TRACE(gz ? "gzip" : "plain");
    Tensor u8 =
        data::read_idx(write("u8", with_values<uint8_t>(header(0x08, {2, 3}), {0, 1, 2, 128, 254, 255}), gz));
    expect_meta(u8, {2, 3}, DType::Int32);
    expect_values(u8, {0, 1, 2, 128, 254, 255});
    Tensor i8 = data::read_idx(write("i8", with_values<int8_t>(header(0x09, {3}), {-128, -1, 127}), gz));
    expect_meta(i8, {3}, DType::Int32);
    expect_values(i8, {-128, -1, 127});
    Tensor i16 = data::read_idx(write("i16", with_values<int16_t>(header(0x0B, {2}), {-30000, 1234}), gz));
    expect_values(i16, {-30000, 1234});
    Tensor i32 = data::read_idx(write("i32", with_values<int32_t>(header(0x0C, {1, 2}), {-7, 1 << 30}), gz));
    expect_meta(i32, {1, 2}, DType::Int32);
    expect_values(i32, {-7, 1 << 30});
    Tensor f32 = data::read_idx(write("f32", with_values<float>(header(0x0D, {2}), {1.5f, -0.25f}), gz));
    expect_meta(f32, {2}, DType::Float32);
    expect_values(f32, {1.5, -0.25});
    Tensor f64 =
        data::read_idx(write("f64", with_values<double>(header(0x0E, {1}), {3.141592653589793}), gz));
    expect_meta(f64, {1}, DType::Float64);
    EXPECT_EQ(f64.item<double>(), 3.141592653589793);
    Tensor empty = data::read_idx(write("empty", header(0x08, {0, 28}), gz));
    expect_meta(empty, {0, 28}, DType::Int32);
  }
}

TEST_F(IdxTest, RawFileKeepsTheStoredType) {
  data::IdxFile f =
      data::read_idx_file(write("raw", with_values<int16_t>(header(0x0B, {2}), {-2, 300}), true));
  EXPECT_EQ(f.type, data::IdxType::Int16);
  EXPECT_EQ(f.dims, (std::vector<int64_t>{2}));
  ASSERT_EQ(f.data.size(), 4u);
  int16_t v[2];
  std::memcpy(v, f.data.data(), 4);
  EXPECT_EQ(v[0], -2);
  EXPECT_EQ(v[1], 300);
}

TEST_F(IdxTest, LargeGzipFile) {
  std::vector<uint8_t> pixels(1000 * 28 * 28);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7 % 256);
  Tensor t = data::read_idx(write("big.gz", with_values(header(0x08, {1000, 28, 28}), pixels), true));
  expect_meta(t, {1000, 28, 28}, DType::Int32);
  std::vector<int32_t> got = t.to_vector<int32_t>();
  EXPECT_TRUE(std::equal(got.begin(), got.end(), pixels.begin()));
}

TEST_F(IdxTest, MissingFile) {
  EXPECT_ERROR(data::read_idx((dir_ / "nope").string()), NotFoundError, "read_idx", "nope", "No such file");
}

TEST_F(IdxTest, MalformedFilesNameTheFileAndTheField) {
  Bytes good = with_values<uint8_t>(header(0x08, {2, 2}), {1, 2, 3, 4});
  struct Case {
    std::string name;
    Bytes bytes;
    std::string field;
  };
  Bytes bad_magic = good;
  bad_magic[0] = 1;
  Bytes bad_type = good;
  bad_type[2] = 0x0A;
  Bytes no_rank = good;
  no_rank[3] = 0;
  Bytes huge_rank = good;
  huge_rank[3] = 200;
  const std::vector<Case> cases = {
      {"empty", {}, "magic number"},
      {"short_magic", {0, 0, 8}, "magic number"},
      {"bad_magic", bad_magic, "magic number"},
      {"bad_type", bad_type, "type code"},
      {"no_rank", no_rank, "number of dimensions"},
      {"huge_rank", huge_rank, "number of dimensions"},
      {"cut_in_dims", Bytes(good.begin(), good.begin() + 9), "dimensions"},
      {"overflow", header(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}), "overflow"},
      {"truncated", Bytes(good.begin(), good.end() - 1), "truncated"},
      {"huge_dims_small_file", with_values<uint8_t>(header(0x08, {60000, 28, 28}), {1, 2, 3}), "truncated"},
      {"trailing", with_values<uint8_t>(good, {9}), "more than the 4 bytes"},
  };
  for (const Case& c : cases) {
    for (bool gz : {false, true}) {
      SCOPED_TRACE(c.name + (gz ? " (gzip)" : ""));
      const std::string path = write(c.name + (gz ? ".gz" : ""), c.bytes, gz);
      EXPECT_ERROR(data::read_idx(path), InvalidArgumentError, "read_idx", path, c.field);
    }
  }
}

TEST_F(IdxTest, CorruptGzipStreams) {
  Bytes content = with_values<uint8_t>(header(0x08, {4000}), std::vector<uint8_t>(4000, 17));
  const std::string path = write("c.gz", content, true);
  std::ifstream in(path, std::ios::binary);
  Bytes gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes cut(gz.begin(), gz.begin() + static_cast<std::ptrdiff_t>(gz.size() / 2));
  const std::string cut_path = write("cut.gz", cut);
  EXPECT_ERROR(data::read_idx(cut_path), InvalidArgumentError, "read_idx", cut_path);
  Bytes flipped = gz;
  flipped[gz.size() - 6] ^= 0x40;  // inside the CRC32 trailer
  const std::string flipped_path = write("flipped.gz", flipped);
  EXPECT_ERROR(data::read_idx(flipped_path), InvalidArgumentError, "read_idx", flipped_path, "gzip");
}

}  // namespace
}  // namespace ef::testing
