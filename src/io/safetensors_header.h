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

// The metadata entry that marks a file eagerflow wrote, with the version of its
// checksums: such a file must carry them all (Note [checksums]).
inline constexpr std::string_view kFormatKey = "eagerflow.format";
inline constexpr int kFormatVersion = 2;

// Note [checksums]: a tensor's checksum covers its name and description as well as its
// bytes: CRC32C("<name>\0<dtype code>[<d0>,<d1>,...]" followed by the data). The name
// binds each checksum to its tensor (two same-shaped tensors with their offsets and
// checksums swapped fail), the description catches a damaged shape of an empty tensor.
// The metadata checksum is CRC32C of "<key>\0<value>\0" for each non-checksum entry in
// key order, the format entry included. With those, a JSON parser that refuses
// duplicate keys, and the format entry that makes checksums mandatory, any single
// flipped byte of a file we wrote fails to load, and so does a file whose checksums
// were deleted. Version 1 (files written before the format entry existed) left the
// name out; such files still load, with version 1's checks.
uint32_t tensor_checksum(int version, std::string_view name, DType dtype, const Shape& shape,
                         const void* data, size_t bytes);
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
  std::map<std::string, std::string> metadata;  // without the checksum and format keys
  int checksum_version = 0;                     // 0: the file has no checksums (another tool wrote it)
};

// The safetensors name of a dtype ("F32", ...).
std::string_view dtype_code(DType dtype);

// The header JSON for `entries` (offsets and kFormatVersion checksums filled in), user
// metadata and the format entry, padded with spaces to a multiple of 8 bytes so the
// data section is aligned.
std::string encode_header(const std::vector<TensorEntry>& entries, const std::map<std::string, std::string>& metadata);

// Parses and validates a header whose data section has `data_size` bytes. Every
// problem is a DataLossError (UnimplementedError for a known but unsupported dtype)
// starting with `context` (e.g. "load_safetensors: file 'a.safetensors'").
Header decode_header(std::string_view json, uint64_t data_size, const std::string& context);

}  // namespace ef::io::detail
