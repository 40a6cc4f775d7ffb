#include <eagerflow/io/crc32c.h>
#include <eagerflow/io/safetensors.h>

#include <sys/stat.h>

#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "io/atomic_file.h"
#include "io_test_util.h"

namespace ef::testing {
namespace {

using io::load_safetensors;
using io::save_safetensors;

TEST(Crc32cTest, KnownValues) {
  const std::string check = "123456789";
  EXPECT_EQ(io::crc32c(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(io::detail::crc32c_portable(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(io::crc32c(nullptr, 0), 0u);
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF);  // RFC 3720 B.4 test vectors
  EXPECT_EQ(io::crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(io::crc32c(ones.data(), ones.size()), 0x62A8AB43u);
}

TEST(Crc32cTest, HardwareMatchesTableAtEveryLengthAndAlignment) {
  if (!io::detail::crc32c_hardware_available()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937 rng(7);
  std::vector<uint8_t> buf(4096 + 16);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t offset = 0; offset < 9; ++offset)
    for (size_t len = 0; len < 300; ++len)
      ASSERT_EQ(io::detail::crc32c_hardware(buf.data() + offset, len, 0x1234u),
                io::detail::crc32c_portable(buf.data() + offset, len, 0x1234u))
          << "offset " << offset << " length " << len;
  EXPECT_EQ(io::detail::crc32c_hardware(buf.data(), 4096), io::detail::crc32c_portable(buf.data(), 4096));
}

TEST(Crc32cTest, ContinuesAcrossPieces) {
  const std::string s = "hello, checkpoint world";
  const uint32_t whole = io::crc32c(s.data(), s.size());
  for (size_t cut = 0; cut <= s.size(); ++cut)
    EXPECT_EQ(io::crc32c(s.data() + cut, s.size() - cut, io::crc32c(s.data(), cut)), whole);
}

// One tensor of every dtype, with awkward values, a scalar and empty tensors.
std::map<std::string, Tensor> all_kinds() {
  const float inf = std::numeric_limits<float>::infinity();
  return {
      {"f32", constant({{1.5f, -0.0f, inf}, {std::nanf(""), -inf, 3e-38f}})},
      {"f64", constant({1e300, -2.5, std::numeric_limits<double>::denorm_min()})},
      {"i32", constant({std::numeric_limits<int32_t>::min(), 0, std::numeric_limits<int32_t>::max()})},
      {"i64", constant({std::numeric_limits<int64_t>::min(), int64_t{-1}, std::numeric_limits<int64_t>::max()})},
      {"bool", constant({true, false, true, true})},
      {"scalar", constant(42.0)},
      {"empty", zeros({0}, DType::Int32)},
      {"empty/3d", zeros({3, 0, 2}, DType::Bool)},
      {"layer/kernel", iota({2, 3, 4}, DType::Float32)},
  };
}

TEST(SafetensorsTest, RoundTripsEveryDtypeScalarAndEmptyTensors) {
  TempDir dir("roundtrip");
  const auto tensors = all_kinds();
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "ünïcode ✓"}};
  save_safetensors(dir.file("a.safetensors"), tensors, metadata);
  io::TensorFile f = load_safetensors(dir.file("a.safetensors"));
  EXPECT_EQ(f.metadata, metadata);
  ASSERT_EQ(f.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) expect_identical(f.tensors.at(name), t, name);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"a.safetensors"});  // no temporary file left
}

TEST(SafetensorsTest, FileMatchesSerializedBytesWithAnAlignedHeader) {
  TempDir dir("bytes");
  const auto tensors = all_kinds();
  save_safetensors(dir.file("a.safetensors"), tensors);
  std::vector<uint8_t> file = read_bytes(dir.file("a.safetensors"));
  EXPECT_EQ(file, io::serialize_safetensors(tensors));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{file[i]} << (8 * i);
  EXPECT_EQ(n % 8, 0u);
  const std::string header(file.begin() + 8, file.begin() + 8 + static_cast<long>(n));
  EXPECT_THAT(header, ::testing::HasSubstr(R"("layer/kernel":{"data_offsets":)"));
  EXPECT_THAT(header, ::testing::HasSubstr(R"("dtype":"BOOL")"));
  EXPECT_THAT(header, ::testing::HasSubstr(R"("crc32c/f32":")"));
  io::TensorFile f = io::parse_safetensors(file);
  for (const auto& [name, t] : tensors) expect_identical(f.tensors.at(name), t, name);
}

TEST(SafetensorsTest, SavesNonContiguousViewsAsTheirValues) {
  TempDir dir("views");
  Tensor t = transpose(iota({3, 4}, DType::Float64));
  ASSERT_FALSE(t.is_contiguous());
  save_safetensors(dir.file("v.safetensors"), {{"t", t}});
  expect_identical(load_safetensors(dir.file("v.safetensors")).tensors.at("t"), t.contiguous());
}

TEST(SafetensorsTest, OverwritesAnExistingFile) {
  TempDir dir("overwrite");
  save_safetensors(dir.file("c.safetensors"), {{"x", constant({1.f, 2.f})}});
  save_safetensors(dir.file("c.safetensors"), {{"y", constant({3, 4, 5})}});
  io::TensorFile f = load_safetensors(dir.file("c.safetensors"));
  ASSERT_EQ(f.tensors.size(), 1u);
  expect_identical(f.tensors.at("y"), constant({3, 4, 5}));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"c.safetensors"});
}

TEST(SafetensorsTest, LoadsFilesWithoutChecksums) {
  // Another tool's file: same layout, no "__metadata__" (written by hand here).
  const std::string header = R"({"b":{"dtype":"I64","shape":[2],"data_offsets":[8,24]},)"
                             R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::vector<uint8_t> bytes(8);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(header.size() >> (8 * i));
  bytes.insert(bytes.end(), header.begin(), header.end());
  const float a[2] = {1.f, -2.f};
  const int64_t b[2] = {7, -9};
  bytes.insert(bytes.end(), reinterpret_cast<const uint8_t*>(a), reinterpret_cast<const uint8_t*>(a) + 8);
  bytes.insert(bytes.end(), reinterpret_cast<const uint8_t*>(b), reinterpret_cast<const uint8_t*>(b) + 16);
  io::TensorFile f = io::parse_safetensors(bytes);
  expect_identical(f.tensors.at("a"), constant({1.f, -2.f}));
  expect_identical(f.tensors.at("b"), constant({int64_t{7}, int64_t{-9}}));
  EXPECT_TRUE(f.metadata.empty());
}

TEST(SafetensorsTest, UnsupportedDtypeIsUnimplemented) {
  const std::string header = R"({"h":{"dtype":"U64","shape":[1],"data_offsets":[0,8]}})";
  std::vector<uint8_t> bytes(8);
  bytes[0] = static_cast<uint8_t>(header.size());
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.push_back(0);
  bytes.push_back(0x3c);
  EXPECT_ERROR(io::parse_safetensors(bytes, "half.safetensors"), UnimplementedError, "half.safetensors",
               "'h'", "'dtype'", "U64");
}

TEST(SafetensorsTest, BadArgumentsToSaveChangeNothing) {
  TempDir dir("badsave");
  const std::string path = dir.file("k.safetensors");
  save_safetensors(path, {{"x", constant({1.f})}});
  const std::vector<uint8_t> before = read_bytes(path);
  EXPECT_ERROR(save_safetensors(path, {{"x", Tensor()}}), InvalidArgumentError, "save_safetensors", "'x'", "undefined");
  EXPECT_ERROR(save_safetensors(path, {{"__metadata__", constant(1)}}), InvalidArgumentError, "__metadata__");
  EXPECT_ERROR(save_safetensors(path, {{"x", constant(1)}}, {{"crc32c/x", "0"}}), InvalidArgumentError, "crc32c/x");
  EXPECT_ERROR(save_safetensors(dir.file("missing/k.safetensors"), {{"x", constant(1)}}), NotFoundError,
               "save_safetensors", "missing");
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"k.safetensors"});
}

TEST(SafetensorsTest, MissingFileIsNotFound) {
  EXPECT_ERROR(load_safetensors("/nonexistent/ckpt.safetensors"), NotFoundError, "load_safetensors",
               "/nonexistent/ckpt.safetensors");
}

// Field 22 of /proc/<pid>/stat: when the process started (Note [stale temporary files]).
std::string start_time_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;
  return field;
}

TEST(SafetensorsTest, StaleTemporaryFilesOfGoneWritersAreRemoved) {
  TempDir dir("stale");
  // pid 2^22+1 exceeds Linux's pid_max limit, so it cannot be a running process.
  const std::string live = start_time_of(1), mine = start_time_of(::getpid());
  const std::vector<std::string> stale = {
      ".m.safetensors.tmp-4194305-0",               // old name, dead pid
      ".other.safetensors.tmp-4194305-77-0",        // another target's, dead pid
      ".other.safetensors.tmp-1-" + live + "1-3"};  // pid 1 reused since
  const std::vector<std::string> kept = {
      ".m.safetensors.tmp-1-" + live + "-0",  // a live writer
      ".m.safetensors.tmp-" + std::to_string(::getpid()) + "-" + mine + "-9",
      ".notes.tmp-x"};  // not one of ours
  for (const std::string& name : stale) write_bytes(dir.file(name), {1, 2, 3});
  for (const std::string& name : kept) write_bytes(dir.file(name), {1, 2, 3});
  EXPECT_TRUE(io::detail::is_temporary_file_name(".m.safetensors.tmp-4194305-0"));
  EXPECT_FALSE(io::detail::is_temporary_file_name("m.safetensors"));
  save_safetensors(dir.file("m.safetensors"), {{"x", constant(1)}});
  std::vector<std::string> expected = kept;
  expected.push_back("m.safetensors");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dir.entries(), expected);
  // A load in the folder tidies too.
  write_bytes(dir.file(stale[0]), {1});
  (void)io::load_safetensors(dir.file("m.safetensors"));
  EXPECT_EQ(dir.entries(), expected);
}

TEST(SafetensorsTest, SpecialFilesAreNeitherReplacedNorReadFrom) {
  TempDir dir("special");
  const std::string fifo = dir.file("pipe.safetensors");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // Reading a FIFO would block forever waiting for a writer; replacing it would turn it
  // into a regular file (as "/dev/null" would be, when saving as root).
  EXPECT_ERROR(io::load_safetensors(fifo), InvalidArgumentError, "pipe.safetensors",
               "not a regular file (a FIFO)");
  EXPECT_ERROR(save_safetensors(fifo, {{"x", constant(1)}}), FailedPreconditionError, "exists and is a FIFO",
               "refusing to replace it");
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_ERROR(save_safetensors("/dev/null", {{"x", constant(1)}}), FailedPreconditionError,
               "'/dev/null' exists and is a character device");
  std::filesystem::create_directory(dir.file("folder"));
  EXPECT_ERROR(save_safetensors(dir.file("folder"), {{"x", constant(1)}}), FailedPreconditionError,
               "a folder");
  // A symbolic link is replaced by the new file; what it pointed to is untouched.
  save_safetensors(dir.file("target.safetensors"), {{"x", constant(1)}});
  std::filesystem::create_symlink(dir.file("target.safetensors"), dir.file("link.safetensors"));
  save_safetensors(dir.file("link.safetensors"), {{"x", constant(2)}});
  EXPECT_FALSE(std::filesystem::is_symlink(dir.file("link.safetensors")));
  EXPECT_EQ(io::load_safetensors(dir.file("target.safetensors")).tensors.at("x").item<int32_t>(), 1);
  EXPECT_EQ(io::load_safetensors(dir.file("link.safetensors")).tensors.at("x").item<int32_t>(), 2);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"folder", "link.safetensors", "pipe.safetensors",
                                                     "target.safetensors"}));
}

}  // namespace
}  // namespace ef::testing
