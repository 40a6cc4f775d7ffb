// A generated corpus of damaged safetensors files: every one must be rejected with a
// DataLossError naming the file and the damaged field (Note [checkpoint integrity]).
#include <eagerflow/io/safetensors.h>

#include <nlohmann/json.hpp>

#include "io_test_util.h"

namespace ef::testing {
namespace {

using nlohmann::json;

struct Damaged {
  std::string name;            // what was done, also the file's name
  std::vector<uint8_t> bytes;
  std::string field;           // expected in the message ("" when it depends on the damage)
};

// The undamaged file: every dtype, a scalar, an empty tensor and user metadata.
std::vector<uint8_t> good_file() {
  return io::serialize_safetensors({{"w", iota({3, 4})},
                                    {"w_m", iota({3, 4}) + 100.0},  // the same dtype and shape as "w"
                                    {"b", iota({5}, DType::Int64)},
                                    {"mask", constant({true, false, false, true})},
                                    {"s", constant(2.5)},
                                    {"e", zeros({0, 2}, DType::Int32)}},
                                   {{"step", "10"}});
}

uint64_t header_length(const std::vector<uint8_t>& file) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{file[i]} << (8 * i);
  return n;
}

// A file with `header` text and the data section of `file` (or `data` when given).
std::vector<uint8_t> with_header(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out(8 + header.size() + data.size());
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(uint64_t{header.size()} >> (8 * i));
  std::copy(header.begin(), header.end(), out.begin() + 8);
  std::copy(data.begin(), data.end(), out.begin() + 8 + static_cast<long>(header.size()));
  return out;
}

std::vector<Damaged> corpus() {
  const std::vector<uint8_t> good = good_file();
  const uint64_t n = header_length(good);
  const std::string text(good.begin() + 8, good.begin() + 8 + static_cast<long>(n));
  const std::vector<uint8_t> data(good.begin() + 8 + static_cast<long>(n), good.end());
  const json header = json::parse(text);
  std::vector<Damaged> cases;

  // Truncated at every length.
  for (size_t len = 0; len < good.size(); ++len)
    cases.push_back({"truncated-" + std::to_string(len), {good.begin(), good.begin() + static_cast<long>(len)}, ""});
  // One flipped bit in every byte (length, header, data), the bit varying with the position.
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> b = good;
    b[i] ^= static_cast<uint8_t>(1u << (i * 5 % 8));
    cases.push_back({"bitflip-" + std::to_string(i), b, i >= 8 + n ? "crc32c" : ""});
  }
  // Trailing bytes.
  for (size_t extra : {1, 7, 8, 100}) {
    std::vector<uint8_t> b = good;
    b.insert(b.end(), extra, 0);
    cases.push_back({"trailing-" + std::to_string(extra), b, "data_offsets"});
  }
  // Header lengths that do not fit.
  for (uint64_t len : {uint64_t{0}, uint64_t{1}, n - 1, n + 1, uint64_t{good.size()}, uint64_t{good.size() - 7},
                       uint64_t{1} << 40, uint64_t{1} << 63, ~uint64_t{0}}) {
    std::vector<uint8_t> b = good;
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(len >> (8 * i));
    cases.push_back({"header-length-" + std::to_string(len), b, ""});
  }
  // Header texts that are not a JSON object.
  const std::vector<std::string> bad_json = {"", "{", "}", "[]", "null", "123", "\"str\"", "{\"a\":}", "{\"a\" 1}",
                                             "{,}", "{\"w\":{}},", "{\"\xff\":1}", "{\"a\":\"\x01\"}", "{} x",
                                             std::string("{}\0junk", 7)};
  for (size_t i = 0; i < bad_json.size(); ++i) cases.push_back({"json-" + std::to_string(i), with_header(bad_json[i], data), "header"});
  cases.push_back({"json-truncated", with_header(text.substr(0, text.size() / 2), data), "header"});
  cases.push_back({"json-nul-padding", with_header(text + std::string(8, '\0'), data), "header"});

  // Edits of the parsed header, re-encoded with the same data.
  auto edit = [&](const std::string& name, const std::string& field, auto&& change) {
    json h = header;
    change(h);
    cases.push_back({name, with_header(h.dump(), data), field});
  };
  for (json dtype : {json("X32"), json("f32"), json("F 32"), json(7), json(nullptr), json::array()})
    edit("dtype-" + dtype.dump(), "dtype", [&](json& h) { h["w"]["dtype"] = dtype; });
  edit("dtype-missing", "dtype", [](json& h) { h["w"].erase("dtype"); });
  edit("dtype-other-size", "data_offsets", [](json& h) { h["w"]["dtype"] = "F64"; });
  for (json shape : {json::parse("[-1]"), json::parse("[1.5]"), json::parse("[\"3\"]"), json::parse("[9223372036854775808]"),
                     json::parse("[4611686018427387904, 4]"), json::parse("[4294967296, 4294967296]"),
                     json::parse("[1,1,1,1,1,1,1,1,1]"), json::parse("[4, 4]"), json::parse("3"),
                     json::parse("[[3], 4]"), json::parse("[3, null]"), json::parse("[18446744073709551616]")})
    edit("shape-" + shape.dump(), "shape", [&](json& h) { h["w"]["shape"] = shape; });
  edit("shape-same-size", "crc32c", [](json& h) { h["w"]["shape"] = {12}; });
  edit("shape-missing", "shape", [](json& h) { h["w"].erase("shape"); });
  edit("shape-empty-tensor", "crc32c", [](json& h) { h["e"]["shape"] = {0, 3}; });
  auto begin_of = [&](const char* t) { return header[t]["data_offsets"][0].get<uint64_t>(); };
  auto end_of = [&](const char* t) { return header[t]["data_offsets"][1].get<uint64_t>(); };
  for (json offsets : {json::array({end_of("w"), begin_of("w")}), json::array({begin_of("w")}),
                       json::array({begin_of("w"), end_of("w"), end_of("w")}), json::array({-1, 47}),
                       json::array({0.0, 48.0}), json::array({"0", "48"}), json::parse("[18446744073709551615, 0]"),
                       json::object(), json(nullptr)})
    edit("offsets-" + offsets.dump(), "data_offsets", [&](json& h) { h["w"]["data_offsets"] = offsets; });
  edit("offsets-missing", "data_offsets", [](json& h) { h["w"].erase("data_offsets"); });
  for (const char* t : {"w", "b", "mask", "s"}) {
    const std::string name(t);
    // Shifted by a few bytes (overlap with the previous tensor or a gap after it).
    for (int64_t shift : {-8, -1, 1, 4, 8})
      edit("offsets-shift-" + name + std::to_string(shift), "data_offsets", [&](json& h) {
        h[name]["data_offsets"] = {static_cast<int64_t>(begin_of(t)) + shift, static_cast<int64_t>(end_of(t)) + shift};
      });
    // Pointing at another tensor's bytes (same size: overlap; a gap is left).
    if (begin_of(t) != 0)
      edit("offsets-at-zero-" + name, "data_offsets", [&](json& h) { h[name]["data_offsets"] = {0, end_of(t) - begin_of(t)}; });
    edit("offsets-past-end-" + name, "data_offsets", [&](json& h) {
      h[name]["data_offsets"] = {data.size(), data.size() + end_of(t) - begin_of(t)};
    });
    edit("entry-not-object-" + name, "(entry)", [&](json& h) { h[name] = json::array({1, 2}); });
    edit("entry-extra-field-" + name, "extra", [&](json& h) { h[name]["extra"] = 1; });
    edit("crc-missing-" + name, "crc32c/" + name, [&](json& h) { h["__metadata__"].erase("crc32c/" + name); });
    edit("crc-wrong-" + name, "crc32c", [&](json& h) { h["__metadata__"]["crc32c/" + name] = "00000000"; });
    edit("crc-uppercase-" + name, "crc32c/" + name, [&](json& h) {
      std::string v = h["__metadata__"]["crc32c/" + name];
      for (char& c : v) c = static_cast<char>(std::toupper(c));
      h["__metadata__"]["crc32c/" + name] = v == h["__metadata__"]["crc32c/" + name] ? "ABCDEF12" : v;
    });
    edit("tensor-dropped-" + name, "", [&](json& h) { h.erase(name); });
    edit("tensor-renamed-" + name, "crc32c/", [&](json& h) {
      h[name + "2"] = h[name];
      h.erase(name);
    });
  }
  for (json crc : {json("zzzzzzzz"), json("1234567"), json("123456789"), json(12345678), json("")})
    edit("crc-bad-" + crc.dump(), "crc32c/w", [&](json& h) { h["__metadata__"]["crc32c/w"] = crc; });
  edit("crc-unknown-tensor", "crc32c/ghost", [](json& h) { h["__metadata__"]["crc32c/ghost"] = "00000000"; });
  edit("crc-metadata-missing", "crc32c/__metadata__", [](json& h) { h["__metadata__"].erase("crc32c/__metadata__"); });
  edit("metadata-changed", "crc32c/__metadata__", [](json& h) { h["__metadata__"]["step"] = "11"; });
  edit("metadata-added", "crc32c/__metadata__", [](json& h) { h["__metadata__"]["new"] = "x"; });
  edit("metadata-not-object", "__metadata__", [](json& h) { h["__metadata__"] = "x"; });
  edit("metadata-value-not-string", "__metadata__.step", [](json& h) { h["__metadata__"]["step"] = 10; });
  // Checksums deleted from a file that says eagerflow wrote it (Note [checksums]).
  edit("checksums-stripped", "carries no checksums", [](json& h) {
    for (auto it = h["__metadata__"].begin(); it != h["__metadata__"].end();)
      it = it.key().starts_with("crc32c/") ? h["__metadata__"].erase(it) : std::next(it);
  });
  edit("checksums-and-format-stripped-checkpoint", "carries no checksums", [](json& h) {
    h["__metadata__"] = {{"format", "eagerflow.io.Checkpoint"}};
  });
  // Two same-shaped tensors exchanged, offsets and checksums together: the checksum
  // covers the name.
  edit("swapped-entries", "crc32c", [](json& h) {
    std::swap(h["w"]["data_offsets"], h["w_m"]["data_offsets"]);
    std::swap(h["__metadata__"]["crc32c/w"], h["__metadata__"]["crc32c/w_m"]);
  });
  for (json version : {json("1"), json("x"), json(""), json("02"), json(2)})
    edit("format-" + version.dump(), "eagerflow.format",
         [&](json& h) { h["__metadata__"]["eagerflow.format"] = version; });
  // A repeated key, inside an entry or at the top: the last would silently win.
  {
    std::string repeated = text;
    repeated.insert(1, "\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]},");
    cases.push_back({"duplicate-tensor-key", with_header(repeated, data), "appears more than once"});
    std::string inner = text;
    inner.insert(inner.find("\"dtype\""), "\"dtype\":\"F32\",");
    cases.push_back({"duplicate-field-key", with_header(inner, data), "appears more than once"});
    std::string meta = text;
    meta.insert(meta.find("\"step\""), "\"step\":\"11\",");
    cases.push_back({"duplicate-metadata-key", with_header(meta, data), "\"step\" appears more than once"});
  }
  // A bool byte that is not 0 or 1 in a file without checksums: caught by the bool check.
  {
    std::vector<uint8_t> d = data;
    d[begin_of("mask")] = 2;
    json h = header;
    h["__metadata__"] = {{"step", "10"}};
    cases.push_back({"bool-byte-2", with_header(h.dump(), d), "data"});
  }
  return cases;
}

TEST(DamagedFilesTest, EveryDamagedFileIsRejectedNamingFileAndField) {
  TempDir dir("damaged");
  const std::vector<Damaged> cases = corpus();
  ASSERT_GE(cases.size(), 200u);
  size_t rejected = 0;
  for (const Damaged& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.file(c.name + ".safetensors");
    write_bytes(path, c.bytes);
    for (bool from_file : {true, false}) {
      try {
        if (from_file)
          (void)io::load_safetensors(path);
        else
          (void)io::parse_safetensors(c.bytes, path);
        ADD_FAILURE() << "accepted: " << c.name << (from_file ? " (file)" : " (memory)");
      } catch (const DataLossError& e) {
        const std::string msg = e.what();
        EXPECT_THAT(msg, ::testing::HasSubstr(path));
        EXPECT_THAT(msg, ::testing::HasSubstr("field '"));
        if (!c.field.empty()) {
          EXPECT_THAT(msg, ::testing::HasSubstr(c.field));
        }
        rejected += from_file;
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.name << ": expected DataLossError, got: " << e.what();
      }
    }
  }
  EXPECT_EQ(rejected, cases.size());
  std::printf("[ corpus ] %zu damaged files, %zu rejected\n", cases.size(), rejected);
}

TEST(DamagedFilesTest, FormatVersionsAndFilesWithoutChecksums) {
  std::vector<uint8_t> good = good_file();
  const uint64_t n = header_length(good);
  json header = json::parse(std::string(good.begin() + 8, good.begin() + 8 + static_cast<long>(n)));
  const std::vector<uint8_t> data(good.begin() + 8 + static_cast<long>(n), good.end());
  // A newer format is refused as such, not as damage.
  json newer = header;
  newer["__metadata__"]["eagerflow.format"] = "3";
  EXPECT_ERROR(io::parse_safetensors(with_header(newer.dump(), data), "newer.safetensors"),
               UnimplementedError, "newer.safetensors", "format version 3", "newer eagerflow");
  // Our own files say they are checksummed; another tool's file (no checksums, no
  // eagerflow format) loads, and says it was not verified.
  EXPECT_TRUE(io::parse_safetensors(good).checksummed);
  json foreign = header;
  foreign["__metadata__"] = {{"format", "pt"}};
  io::TensorFile f = io::parse_safetensors(with_header(foreign.dump(), data));
  EXPECT_FALSE(f.checksummed);
  EXPECT_EQ(f.tensors.size(), 6u);
  EXPECT_EQ(f.metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ(io::parse_safetensors(good).metadata, (std::map<std::string, std::string>{{"step", "10"}}));
  EXPECT_ERROR(io::serialize_safetensors({{"x", constant(1.0)}}, {{"eagerflow.format", "2"}}),
               InvalidArgumentError, "'eagerflow.format' is reserved");
}

}  // namespace
}  // namespace ef::testing
