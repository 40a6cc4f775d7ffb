#include "safetensors_header.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "eagerflow/core/error.h"
#include "eagerflow/io/crc32c.h"

namespace ef::io::detail {
namespace {

using nlohmann::json;

struct DTypeCode {
  std::string_view code;
  DType dtype;
};
constexpr DTypeCode kCodes[] = {{"F32", DType::Float32},   {"F64", DType::Float64}, {"I32", DType::Int32},
                                {"I64", DType::Int64},     {"BOOL", DType::Bool},   {"F16", DType::Float16},
                                {"BF16", DType::BFloat16}, {"I8", DType::Int8},     {"U8", DType::UInt8},
                                {"I16", DType::Int16},     {"U16", DType::UInt16},  {"U32", DType::UInt32}};
// Valid safetensors dtypes that eagerflow cannot hold (yet): UnimplementedError, not data loss.
constexpr std::string_view kUnsupportedCodes[] = {"F8_E4M3", "F8_E5M2", "U64"};

std::string hex32(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// Exactly 8 lowercase hex digits (what hex32 writes: one spelling per value).
std::optional<uint32_t> parse_hex32(const std::string& s) {
  if (s.size() != 8) return std::nullopt;
  uint32_t v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v << 4 | static_cast<uint32_t>(d);
  }
  return v;
}

// `v` as JSON for an error message, cut short: a damaged header can be large.
std::string brief(const json& v) {
  std::string text = v.dump();
  return text.size() <= 64 ? text : text.substr(0, 60) + " ...";
}

// A JSON value as a non-negative integer, or nothing (negative, fractional, too large, not a number).
std::optional<uint64_t> as_unsigned(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

// One tensor's description: {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}.
TensorEntry decode_entry(const std::string& name, const json& desc, const std::string& context) {
  auto bad = [&](std::string_view field, const auto&... what) {
    fail<DataLossError>(context, ": tensor '", name, "' field '", field, "': ", what...);
  };
  if (!desc.is_object()) bad("(entry)", "expected an object, got ", brief(desc));
  for (const auto& [key, value] : desc.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets") bad(key, "unknown field");
  TensorEntry e;
  e.name = name;

  if (!desc.contains("dtype") || !desc["dtype"].is_string()) bad("dtype", "missing or not a string");
  const std::string code = desc["dtype"].get<std::string>();
  auto known = std::find_if(std::begin(kCodes), std::end(kCodes), [&](const DTypeCode& c) { return c.code == code; });
  if (known == std::end(kCodes)) {
    if (std::find(std::begin(kUnsupportedCodes), std::end(kUnsupportedCodes), code) != std::end(kUnsupportedCodes))
      fail<UnimplementedError>(context, ": tensor '", name, "' field 'dtype': ", code,
                               " is not supported by eagerflow (F32, F64, I32, I64, BOOL are)");
    bad("dtype", "unknown dtype \"", code, "\"");
  }
  e.dtype = known->dtype;

  if (!desc.contains("shape") || !desc["shape"].is_array()) bad("shape", "missing or not an array");
  const json& shape = desc["shape"];
  if (shape.size() > static_cast<size_t>(kMaxRank)) bad("shape", "rank ", shape.size(), " exceeds the maximum ", kMaxRank);
  Dims dims;
  for (const json& d : shape) {
    std::optional<uint64_t> v = as_unsigned(d);
    if (!v || *v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      bad("shape", "dimension ", brief(d), " is not a non-negative 64-bit integer");
    dims.push_back(static_cast<int64_t>(*v));
  }
  // Bytes = product of dims * element size, checked against overflow at every step
  // (a zero dimension makes any product empty).
  uint64_t bytes = size_of(e.dtype);
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    bytes = 0;
  } else {
    for (int64_t d : dims)
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
        bad("shape", brief(shape), " overflows 64 bits of bytes");
  }
  if (bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    bad("shape", brief(shape), " is too large (", bytes, " bytes)");
  e.shape = Shape(dims);

  if (!desc.contains("data_offsets") || !desc["data_offsets"].is_array() || desc["data_offsets"].size() != 2)
    bad("data_offsets", "missing or not a pair [begin, end]");
  const json& offsets = desc["data_offsets"];
  std::optional<uint64_t> begin = as_unsigned(offsets[0]), end = as_unsigned(offsets[1]);
  if (!begin || !end) bad("data_offsets", brief(offsets), " are not non-negative integers");
  if (*end < *begin) bad("data_offsets", "end ", *end, " is before begin ", *begin);
  if (*end - *begin != bytes)
    bad("data_offsets", brief(offsets), " span ", *end - *begin, " bytes but dtype ", code, " and shape ",
        brief(shape), " need ", bytes);
  e.begin = *begin;
  e.end = *end;
  return e;
}

}  // namespace

std::string_view dtype_code(DType dtype) {
  for (const auto& c : kCodes)
    if (c.dtype == dtype) return c.code;
  fail<UnimplementedError>("safetensors: dtype ", dtype, " has no safetensors code");
}

uint32_t tensor_checksum(int version, std::string_view name, DType dtype, const Shape& shape,
                         const void* data, size_t bytes) {
  std::string description;
  if (version >= 2) description.append(name).push_back('\0');
  description += dtype_code(dtype);
  description += '[';
  for (int i = 0; i < shape.rank(); ++i) description += (i ? "," : "") + std::to_string(shape[i]);
  description += ']';
  return crc32c(data, bytes, crc32c(description.data(), description.size()));
}

uint32_t metadata_checksum(const std::map<std::string, std::string>& metadata) {
  uint32_t crc = 0;
  for (const auto& [key, value] : metadata) {
    crc = crc32c(key.c_str(), key.size() + 1, crc);  // with the terminating NUL
    crc = crc32c(value.c_str(), value.size() + 1, crc);
  }
  return crc;
}

std::string encode_header(const std::vector<TensorEntry>& entries, const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  std::map<std::string, std::string> covered = metadata;
  covered[std::string(kFormatKey)] = std::to_string(kFormatVersion);
  json meta = json::object();
  for (const auto& [k, v] : covered) meta[k] = v;
  for (const TensorEntry& e : entries) {
    if (!e.crc) fail("safetensors: tensor '", e.name, "' has no checksum");  // every file we write has them
    header[e.name] = {{"dtype", dtype_code(e.dtype)}, {"shape", e.shape.to_vector()}, {"data_offsets", {e.begin, e.end}}};
    meta[std::string(kCrcPrefix) + e.name] = hex32(*e.crc);
  }
  meta[std::string(kMetadataCrcKey)] = hex32(metadata_checksum(covered));
  if (!meta.empty()) header["__metadata__"] = std::move(meta);
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

Header decode_header(std::string_view text, uint64_t data_size, const std::string& context) {
  // nlohmann's parser reads a NUL byte as the end of input; refuse it so nothing can hide after one.
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    fail<DataLossError>(context, ": field 'header': NUL byte at offset ", nul);
  json root;
  // nlohmann keeps the last of repeated keys; a header that repeats one is ambiguous
  // (two readers may disagree on it), so it is refused. One set of keys per open object.
  std::vector<std::set<std::string>> open_objects;
  std::string repeated;
  const json::parser_callback_t refuse_repeated_keys = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start)
      open_objects.emplace_back();
    else if (event == json::parse_event_t::object_end)
      open_objects.pop_back();
    else if (event == json::parse_event_t::key &&
             !open_objects.back().insert(parsed.get<std::string>()).second && repeated.empty())
      repeated = parsed.get<std::string>();
    return true;
  };
  try {
    root = json::parse(text.begin(), text.end(), refuse_repeated_keys);
  } catch (const json::exception& e) {
    fail<DataLossError>(context, ": field 'header': not valid JSON (", e.what(), ")");
  }
  if (!repeated.empty())
    fail<DataLossError>(context, ": field 'header': the key \"", repeated, "\" appears more than once");
  if (!root.is_object()) fail<DataLossError>(context, ": field 'header': expected a JSON object, got a ", root.type_name());

  Header header;
  std::map<std::string, uint32_t> crcs;
  for (const auto& [key, value] : root.items()) {
    if (key != "__metadata__") {
      header.entries.push_back(decode_entry(key, value, context));
      continue;
    }
    if (!value.is_object()) fail<DataLossError>(context, ": field '__metadata__': expected an object of strings");
    for (const auto& [mkey, mvalue] : value.items()) {
      if (!mvalue.is_string())
        fail<DataLossError>(context, ": field '__metadata__.", mkey, "': expected a string, got ", brief(mvalue));
      const std::string& s = mvalue.get_ref<const std::string&>();
      if (mkey.starts_with(kCrcPrefix)) {
        std::optional<uint32_t> crc = parse_hex32(s);
        if (!crc) fail<DataLossError>(context, ": field '__metadata__.", mkey, "': \"", s, "\" is not 8 hex digits");
        crcs.emplace(mkey.substr(kCrcPrefix.size()), *crc);
      } else {
        header.metadata.emplace(mkey, s);
      }
    }
  }

  // Checksums: none (another tool wrote the file) or one for every tensor and no other.
  // A file that says eagerflow wrote it (the format entry, or a checkpoint's "format")
  // must have them: without, they were stripped (Note [checksums]).
  const bool has_checksums = !crcs.empty();
  auto format = header.metadata.find(std::string(kFormatKey));
  if (format != header.metadata.end()) {
    if (format->second != std::to_string(kFormatVersion)) {
      const bool newer = !format->second.empty() && format->second.size() < 6 &&
                         std::all_of(format->second.begin(), format->second.end(), ::isdigit) &&
                         std::stoi(format->second) > kFormatVersion;
      if (newer)
        fail<UnimplementedError>(context, ": field '__metadata__.", kFormatKey, "': format version ",
                                 format->second, " was written by a newer eagerflow; this one reads up to ",
                                 kFormatVersion);
      fail<DataLossError>(context, ": field '__metadata__.", kFormatKey, "': \"", format->second,
                          "\" is not a format version");
    }
    header.checksum_version = kFormatVersion;
  }
  auto kind = header.metadata.find("format");
  const bool written_by_us = format != header.metadata.end() ||
                             (kind != header.metadata.end() && kind->second.starts_with("eagerflow"));
  if (written_by_us && !has_checksums)
    fail<DataLossError>(
        context, ": field '__metadata__.", kCrcPrefix,
        "...': the file was written by eagerflow but carries no checksums (they were removed)");
  if (has_checksums) {
    if (!header.checksum_version) header.checksum_version = 1;  // written before the format entry existed
    auto it = crcs.find("__metadata__");
    if (it == crcs.end())
      fail<DataLossError>(context, ": field '__metadata__.", kMetadataCrcKey, "': missing while tensors have checksums");
    const uint32_t actual = metadata_checksum(header.metadata);
    if (actual != it->second)
      fail<DataLossError>(context, ": field '__metadata__.", kMetadataCrcKey, "': the metadata's checksum ", hex32(actual),
                          " differs from the stored ", hex32(it->second), " (corrupted metadata)");
    crcs.erase(it);
  }
  if (format != header.metadata.end()) header.metadata.erase(format);
  for (TensorEntry& e : header.entries) {
    auto it = crcs.find(e.name);
    if (it != crcs.end()) {
      e.crc = it->second;
      crcs.erase(it);
    } else if (has_checksums) {
      fail<DataLossError>(context, ": field '__metadata__.", kCrcPrefix, e.name, "': missing while other tensors have checksums");
    }
  }
  if (!crcs.empty())
    fail<DataLossError>(context, ": field '__metadata__.", kCrcPrefix, crcs.begin()->first,
                        "': a checksum for a tensor the file does not contain");

  // The tensors must tile the data section exactly: sorted by offset, each begins where
  // the previous ended, the first at 0 and the last at its end.
  std::stable_sort(header.entries.begin(), header.entries.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& e : header.entries) {
    if (e.begin != expected) {
      std::string after = previous ? "'" + previous->name + "' ends at " + std::to_string(expected)
                                   : std::string("the data section starts at 0");
      fail<DataLossError>(context, ": tensor '", e.name, "' field 'data_offsets': begins at ", e.begin, " but ", after,
                          e.begin < expected ? " (overlap)" : " (gap)");
    }
    expected = e.end;
    previous = &e;
  }
  if (expected != data_size)
    fail<DataLossError>(context, ": field 'data_offsets': the tensors cover ", expected, " bytes but the data section has ",
                        data_size, expected < data_size ? " (trailing bytes)" : " (file truncated)");
  return header;
}

}  // namespace ef::io::detail
