// Summaries: event files as TensorBoard reads them (Note [event files] in
// eagerflow/io/summary.h), checked against bytes written by hand from the published
// schema and read back with read_event_file.
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>

#include "io_test_util.h"

namespace ef::testing {
namespace {

namespace fs = std::filesystem;
using summary::read_event_file;

std::string only_event_file(const TempDir& dir) {
  std::vector<std::string> names = dir.entries();
  EXPECT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0].rfind("events.out.tfevents.", 0), 0u) << names[0];
  EXPECT_TRUE(names[0].ends_with(".v2")) << names[0];
  return dir.file(names[0]);
}

// ---- the published wire format, written out by hand ----

std::string varint(uint64_t v) {
  std::string out;
  do {
    out.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
    v >>= 7;
  } while (v);
  return out;
}
std::string field(int number, int wire_type) {
  return varint(static_cast<uint64_t>(number) << 3 | wire_type);
}
std::string bytes_field(int number, const std::string& payload) {
  return field(number, 2) + varint(payload.size()) + payload;
}
template <class T>
std::string raw(T value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}
uint32_t masked(const std::string& bytes) {
  const uint32_t crc = io::crc32c(bytes.data(), bytes.size());
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
std::string record(const std::string& payload) {
  const std::string length = raw<uint64_t>(payload.size());
  return length + raw(masked(length)) + payload + raw(masked(payload));
}

TEST(Summary, ScalarEventMatchesTheSchemaByteForByte) {
  TempDir dir("summary_golden");
  auto writer = summary::create_file_writer(dir.path().string());
  {
    summary::WriterScope scope(writer);
    EXPECT_TRUE(summary::scalar("loss", 0.5, 3));
  }
  writer->close();
  const std::string path = only_event_file(dir);
  const std::vector<summary::Event> events = read_event_file(path);
  ASSERT_EQ(events.size(), 2u);

  // Event{wall_time=1, file_version=3}, then Event{wall_time, step=2, summary=5{value=1{
  // tag=1, tensor=8{dtype=1: DT_FLOAT, tensor_shape=2: {}, float_val=5 packed},
  // metadata=9{plugin_data=1{plugin_name=1}, data_class=4: SCALAR}}}}.
  const std::string version = field(1, 1) + raw(events[0].wall_time) + bytes_field(3, "brain.Event:2");
  const std::string tensor = field(1, 0) + varint(1) + bytes_field(2, "") + bytes_field(5, raw(0.5f));
  const std::string metadata = bytes_field(1, bytes_field(1, "scalars")) + field(4, 0) + varint(1);
  const std::string value = bytes_field(1, "loss") + bytes_field(8, tensor) + bytes_field(9, metadata);
  const std::string scalar_event = field(1, 1) + raw(events[1].wall_time) + field(2, 0) + varint(3) +
                                   bytes_field(5, bytes_field(1, value));
  const std::vector<uint8_t> file = read_bytes(path);
  EXPECT_EQ(std::string(file.begin(), file.end()), record(version) + record(scalar_event));
}

TEST(Summary, ValuesReadBackWithTheirPlugins) {
  TempDir dir("summary_values");
  auto writer = summary::create_file_writer(dir.path().string());
  {
    summary::WriterScope scope(writer, /*step=*/7);
    EXPECT_TRUE(summary::scalar("accuracy", constant(0.25f)));
    EXPECT_TRUE(summary::scalar("count", constant(int64_t{12}), 8));
    EXPECT_TRUE(
        summary::histogram("weights", constant({0.0, 1.0, 2.0, 3.0, 4.0}), std::nullopt, 2, "the weights"));
    EXPECT_TRUE(summary::text("note", "**bold**"));
    EXPECT_TRUE(summary::text("lines", std::vector<std::string>{"a", "b"}));
  }
  writer->flush();
  const std::vector<summary::Event> events = read_event_file(writer->path());
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");

  const summary::Value& accuracy = events[1].values.at(0);
  EXPECT_EQ(events[1].step, 7);
  EXPECT_EQ(accuracy.tag, "accuracy");
  EXPECT_EQ(accuracy.plugin_name, "scalars");
  EXPECT_EQ(accuracy.data_class, 1);
  expect_meta(accuracy.tensor, Shape{}, DType::Float32);
  EXPECT_EQ(accuracy.tensor.item<float>(), 0.25f);
  EXPECT_EQ(events[2].step, 8);
  EXPECT_EQ(events[2].values.at(0).tensor.item<float>(), 12.f);

  // TensorFlow 2's buckets: [0, 2) holds 0 and 1; [2, 4] holds 2, 3 and 4.
  const summary::Value& histogram = events[3].values.at(0);
  EXPECT_EQ(histogram.plugin_name, "histograms");
  EXPECT_EQ(histogram.description, "the weights");
  expect_meta(histogram.tensor, Shape{2, 3}, DType::Float64);
  expect_values(histogram.tensor, {0, 2, 2, 2, 4, 3}, 0);

  const summary::Value& note = events[4].values.at(0);
  EXPECT_EQ(note.plugin_name, "text");
  EXPECT_EQ(note.string_shape, Shape{});
  EXPECT_EQ(note.strings, std::vector<std::string>{"**bold**"});
  EXPECT_EQ(events[5].values.at(0).string_shape, Shape{2});
}

TEST(Summary, HistogramOfEqualValuesAndOfNothing) {
  TempDir dir("summary_histogram");
  auto writer = summary::create_file_writer(dir.path().string());
  {
    summary::WriterScope scope(writer, 0);
    summary::histogram("same", constant({5.f, 5.f, 5.f}), std::nullopt, 3);
    summary::histogram("empty", zeros({0}), std::nullopt, 2);
    EXPECT_THROW(summary::histogram("nan", constant({1.f, NAN}), 0), InvalidArgumentError);
    EXPECT_THROW(summary::histogram("w", constant({1.f}), 0, 0), InvalidArgumentError);
  }
  writer->flush();
  const std::vector<summary::Event> events = read_event_file(writer->path());
  ASSERT_EQ(events.size(), 3u);
  expect_values(events[1].values.at(0).tensor, {4.5, 5.5, 0, 4.5, 5.5, 0, 4.5, 5.5, 3}, 0);
  expect_values(events[2].values.at(0).tensor, {0, 0, 0, 0, 0, 0}, 0);
}

TEST(Summary, HistogramOfTheWholeDoubleRange) {
  TempDir dir("summary_histogram_range");
  auto writer = summary::create_file_writer(dir.path().string());
  {
    summary::WriterScope scope(writer, 0);
    summary::histogram("wide", constant({-1e308, 0.0, 1e308}), std::nullopt, 2);
  }
  writer->flush();
  const std::vector<summary::Event> events = read_event_file(writer->path());
  expect_values(events.at(1).values.at(0).tensor, {-1e308, 0, 1, 0, 1e308, 2}, 1e-12);
}

// The pixels of a PNG written by encode_png (one IDAT, filter 0 on every row).
std::vector<uint8_t> png_pixels(const std::string& png, int64_t height, int64_t width, int channels) {
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  auto be32 = [&](size_t at) {
    return static_cast<uint32_t>(static_cast<uint8_t>(png[at])) << 24 |
           static_cast<uint32_t>(static_cast<uint8_t>(png[at + 1])) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(png[at + 2])) << 8 | static_cast<uint8_t>(png[at + 3]);
  };
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(16), width);
  EXPECT_EQ(be32(20), height);
  EXPECT_EQ(png[24], 8);
  EXPECT_EQ(png[25], channels == 1 ? 0 : channels == 3 ? 2 : 6);
  EXPECT_EQ(be32(29), static_cast<uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 17)));
  const size_t idat = 33;
  EXPECT_EQ(png.substr(idat + 4, 4), "IDAT");
  const uint32_t length = be32(idat);
  std::vector<uint8_t> raw(static_cast<size_t>(height * (width * channels + 1)));
  uLongf raw_size = raw.size();
  EXPECT_EQ(
      ::uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(png.data() + idat + 8), length),
      Z_OK);
  EXPECT_EQ(raw_size, raw.size());
  std::vector<uint8_t> pixels;
  for (int64_t y = 0; y < height; ++y) {
    EXPECT_EQ(raw[y * (width * channels + 1)], 0);
    auto row = raw.begin() + y * (width * channels + 1) + 1;
    pixels.insert(pixels.end(), row, row + width * channels);
  }
  EXPECT_EQ(png.substr(png.size() - 8, 4), "IEND");
  return pixels;
}

TEST(Summary, ImagesAreWrittenAsPng) {
  TempDir dir("summary_image");
  auto writer = summary::create_file_writer(dir.path().string());
  {
    summary::WriterScope scope(writer, 1);
    // Two 2x3 grey images as floats; max_outputs keeps the first. Floats map as
    // tf.image.convert_image_dtype: x * 255.5 clamped to [0, 255] and truncated.
    const Tensor grey =
        reshape(constant({0.f, 0.5f, 1.f, -1.f, 2.f, 0.25f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f}), {2, 2, 3, 1});
    EXPECT_TRUE(summary::image("grey", grey, std::nullopt, 1));
    const Tensor rgb = reshape(constant({255, 0, 0, 0, 255, 7}), {1, 1, 2, 3});
    EXPECT_TRUE(summary::image("rgb", rgb));
    EXPECT_THROW(summary::image("bad", constant({300}), 1), InvalidArgumentError);
    EXPECT_THROW(summary::image("bad", zeros({1, 2, 2, 2})), InvalidArgumentError);
    EXPECT_THROW(summary::image("bad", reshape(constant({256, 0, 0}), {1, 1, 1, 3})), InvalidArgumentError);
  }
  writer->flush();
  const std::vector<summary::Event> events = read_event_file(writer->path());
  ASSERT_EQ(events.size(), 3u);
  const summary::Value& grey = events[1].values.at(0);
  EXPECT_EQ(grey.plugin_name, "images");
  EXPECT_EQ(grey.data_class, 3);
  ASSERT_EQ(grey.strings.size(), 3u);
  EXPECT_EQ(grey.strings[0], "3");  // width, then height
  EXPECT_EQ(grey.strings[1], "2");
  EXPECT_EQ(png_pixels(grey.strings[2], 2, 3, 1), (std::vector<uint8_t>{0, 127, 255, 0, 255, 63}));
  const summary::Value& rgb = events[2].values.at(0);
  ASSERT_EQ(rgb.strings.size(), 3u);
  EXPECT_EQ(png_pixels(rgb.strings[2], 1, 2, 3), (std::vector<uint8_t>{255, 0, 0, 0, 255, 7}));
}

TEST(Summary, WithoutAWriterNothingIsWrittenAndAStepIsRequired) {
  EXPECT_FALSE(summary::scalar("loss", 1.0, 0));
  EXPECT_FALSE(summary::default_writer());
  TempDir dir("summary_step");
  auto writer = summary::create_file_writer(dir.path().string());
  summary::WriterScope scope(writer);
  EXPECT_THROW(summary::scalar("loss", 1.0), InvalidArgumentError);
  summary::set_step(4);
  EXPECT_TRUE(summary::scalar("loss", 1.0));
  summary::set_step(std::nullopt);
  EXPECT_THROW(summary::scalar("", 1.0, 0), InvalidArgumentError);
  EXPECT_THROW(summary::scalar("loss", constant({1.f, 2.f}), 0), InvalidArgumentError);
  writer->close();
  EXPECT_THROW(summary::scalar("loss", 1.0, 0), FailedPreconditionError);
  EXPECT_EQ(read_event_file(writer->path()).back().step, 4);
}

TEST(Summary, ScopesNestAndRestore) {
  TempDir a("summary_scope_a"), b("summary_scope_b");
  auto first = summary::create_file_writer(a.path().string());
  auto second = summary::create_file_writer(b.path().string());
  {
    summary::WriterScope outer(first, 1);
    {
      summary::WriterScope inner(second);
      EXPECT_EQ(summary::default_writer(), second);
      EXPECT_EQ(summary::get_step(), 1);
      summary::scalar("x", 1.0);
    }
    EXPECT_EQ(summary::default_writer(), first);
    summary::scalar("x", 2.0);
  }
  EXPECT_FALSE(summary::default_writer());
  EXPECT_FALSE(summary::get_step());
  first->flush();
  second->flush();
  EXPECT_EQ(read_event_file(first->path()).back().values.at(0).tensor.item<float>(), 2.f);
  EXPECT_EQ(read_event_file(second->path()).back().values.at(0).tensor.item<float>(), 1.f);
}

TEST(Summary, DamagedRecordsAreDataLoss) {
  TempDir dir("summary_damaged");
  auto writer = summary::create_file_writer(dir.path().string());
  {
    summary::WriterScope scope(writer, 0);
    summary::scalar("loss", 1.0);
  }
  writer->close();
  const std::vector<uint8_t> good = read_bytes(writer->path());
  const std::string copy = dir.file("copy");
  for (size_t flip : {size_t{3}, size_t{9}, size_t{20}, good.size() - 2}) {
    std::vector<uint8_t> bad = good;
    bad[flip] ^= 0x10;
    write_bytes(copy, bad);
    EXPECT_THROW(read_event_file(copy), DataLossError) << "byte " << flip;
  }
  for (size_t cut : {good.size() - 1, good.size() - 10, size_t{5}}) {
    write_bytes(copy, std::vector<uint8_t>(good.begin(), good.begin() + static_cast<ptrdiff_t>(cut)));
    try {
      read_event_file(copy);
      ADD_FAILURE() << "a file cut at " << cut << " was read";
    } catch (const DataLossError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("record at byte"));
    }
  }
  EXPECT_THROW(read_event_file(dir.file("missing")), NotFoundError);
}

// A process that dies while writing leaves only whole records behind.
TEST(Summary, ACrashLeavesEveryWrittenRecordReadable) {
  TempDir dir("summary_crash");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto writer = summary::create_file_writer(dir.path().string(), {.max_queue = 1});
    summary::WriterScope scope(writer, 0);
    for (int i = 0; i < 200; ++i) summary::scalar("x", i, i);
    writer->flush();
    for (int i = 200; i < 400; ++i) summary::scalar("x", i, i);
    ::_exit(3);  // no close: the writer thread may be mid-write
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  const std::vector<summary::Event> events = read_event_file(only_event_file(dir));
  ASSERT_GE(events.size(), 201u);
  for (size_t i = 1; i < events.size(); ++i) EXPECT_EQ(events[i].step, static_cast<int64_t>(i - 1));
}

TEST(Summary, WriterErrors) {
  TempDir dir("summary_errors");
  write_bytes(dir.file("a_file"), {1});
  EXPECT_THROW(summary::create_file_writer(dir.file("a_file") + "/logs"), Error);
  EXPECT_THROW(summary::create_file_writer(""), InvalidArgumentError);
  EXPECT_THROW(summary::create_file_writer(dir.path().string(), {.max_queue = 0}), InvalidArgumentError);
}

TEST(Summary, GraphsOfCalledFunctions) {
  TempDir dir("summary_graph");
  auto writer = summary::create_file_writer(dir.path().string());
  summary::WriterScope scope(writer, 0);
  auto scale = function([](Tensor x) { return x * 2.f + 1.f; }, "scale");
  scale(constant({1.f}));  // before trace_on: not kept
  summary::trace_on();
  EXPECT_TRUE(summary::tracing());
  scale(constant({1.f}));
  scale(constant({1.f, 2.f}));  // a second trace of the same function
  EXPECT_TRUE(summary::trace_export("step"));
  EXPECT_FALSE(summary::tracing());
  EXPECT_THROW(summary::trace_export("again"), FailedPreconditionError);
  writer->flush();
  const std::vector<summary::Event> events = read_event_file(writer->path());
  ASSERT_EQ(events.size(), 2u);
  ASSERT_TRUE(events[1].has_graph);
  std::vector<std::string> names, ops;
  for (const summary::GraphNodeDef& node : events[1].graph_nodes) {
    names.push_back(node.name);
    ops.push_back(node.op);
    const std::string scope = node.name.substr(0, node.name.find('/') + 1);  // inputs stay in it
    for (std::string input : node.inputs) {
      if (input[0] == '^') input.erase(0, 1);
      EXPECT_EQ(input.rfind(scope, 0), 0u) << input << " of " << node.name;
    }
  }
  EXPECT_THAT(names, ::testing::Contains(::testing::StartsWith("scale/")));
  EXPECT_THAT(names, ::testing::Contains(::testing::StartsWith("scale_1/")));
  EXPECT_THAT(ops, ::testing::Contains("multiply"));
  EXPECT_THAT(ops, ::testing::Contains("placeholder"));
}

}  // namespace
}  // namespace ef::testing
