// The JSON header of a safetensors file: encoding, and decoding with full validation.
// Internal to src/io (see include/eagerflow/io/safetensors.h for the format).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eagerflow/core/dtype.h"
#include "eagerflow/core/shape.h"

namespace ef::io::detail {

// Headers above this size are rejected before being read (the limit of the reference
// implementation), so a damaged length cannot make us allocate gigabytes.
inline constexpr uint64_t kMaxHeaderSize = uint64_t{100} << 20;
// Metadata keys holding our checksums: "crc32c/<tensor name>" per tensor and
// "crc32c/__metadata__" for the other metadata entries (Note [checksums]).
inline constexpr std::string_view kCrcPrefix = "crc32c/";
inline constexpr std::string_view kMetadataCrcKey = "crc32c/__metadata__";

// Note [checksums]: a tensor's checksum covers its description as well as its bytes,
// CRC32C("<dtype code>[<d0>,<d1>,...]" followed by the data), so that a damaged shape
// of an empty tensor is caught too; the metadata checksum is CRC32C of "<key>\0<value>\0"
// for each user entry in key order. With those and the JSON's strict syntax, any
// single flipped byte of a file we wrote fails to load.
uint32_t tensor_checksum(DType dtype, const Shape& shape, const void* data, size_t bytes);
uint32_t metadata_checksum(const std::map<std::string, std::string>& metadata);

// One tensor as the header describes it.
struct TensorEntry {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  uint64_t begin = 0;  // byte offsets into the data section
  uint64_t end = 0;
  std::optional<uint32_t> crc;  // from "__metadata__", when the file has checksums
};

struct Header {
  std::vector<TensorEntry> entries;  // sorted by offset
  std::map<std::string, std::string> metadata;  // without the checksum keys
};



// The safetensors name of a dtype ("F32", ...).
std::string_view dtype_code(DType dtype);

// The header JSON for `entries` (offsets and checksums filled in) and user metadata,
// padded with spaces to a multiple of 8 bytes so the data section is aligned.
std::string encode_header(const std::vector<TensorEntry>& entries, const std::map<std::string, std::string>& metadata);

// Parses and validates a header whose data section has `data_size` bytes. Every
// problem is a DataLossError (UnimplementedError for a known but unsupported dtype)
// starting with `context` (e.g. "load_safetensors: file 'a.safetensors'").
Header decode_header(std::string_view json, uint64_t data_size, const std::string& context);

}  // namespace ef::io::detail
