// Safetensors files: the checkpoint format of eagerflow, readable by Hugging Face's
// `safetensors` and everything built on it, and able to read their files.
//
//   ef::io::save_safetensors("w.safetensors", {{"kernel", w}, {"step", ef::constant(int64_t{3})}});
//   ef::io::TensorFile f = ef::io::load_safetensors("w.safetensors");
//   ef::Tensor kernel = f.tensors.at("kernel");
//
// Layout: 8 bytes (little-endian u64) giving the header's length N, N bytes of JSON
//   {"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"<key>": "<value>", ...}}
// then the tensors' raw little-endian bytes; offsets count from the end of the header.
//
// Note [checkpoint integrity]:
//  - Writing is atomic: the bytes go to a hidden temporary file in the target's folder
//    (".<name>.tmp-<pid>-<n>"), which is fsynced, renamed over the target, and the folder
//    fsynced. A process killed at any moment leaves the old file or the new one.
//  - Each tensor's CRC32C (over its name, dtype, shape and bytes) is stored in the
//    metadata as "crc32c/<name>": "<8 hex digits>", and one of the other metadata entries
//    as "crc32c/__metadata__"; "eagerflow.format": "2" marks the file as ours, so a file
//    whose checksums were deleted is refused (exact definition: Note [checksums] in
//    src/io/safetensors_header.h; docs/checkpoint_format.md says what is detected).
//    Files from other tools have none; they load without that check (checksummed false).
//  - A header with a repeated JSON key is refused.
//  - Reading validates everything (header length, JSON, dtypes, shapes, offsets that
//    tile the data section exactly, checksums, bool bytes) before returning anything,
//    and throws DataLossError naming the file and the field for any damage.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "eagerflow/core/error.h"
#include "eagerflow/core/tensor.h"

namespace ef::io {

// The contents of a safetensors file.
struct TensorFile {
  std::map<std::string, Tensor> tensors;             // by name
  std::map<std::string, std::string> metadata;  // "__metadata__", without the "crc32c/" and format entries
  bool checksummed = false;                     // every tensor's checksum was verified
};

// Writes `tensors` (CPU copies of them; float32/64, int32/64, bool) and `metadata` to
// `path` atomically, with a CRC32C per tensor (Note [checkpoint integrity]). Throws
// InvalidArgumentError for an undefined or symbolic tensor, the reserved name
// "__metadata__" or a metadata key starting with "crc32c/"; NotFoundError when the
// folder does not exist; ResourceExhaustedError when the disk is full. On error the
// target is untouched and no temporary file is left.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {},
                      CallSite where = CallSite::current());

// Reads and fully validates the safetensors file at `path`. Throws NotFoundError when
// it does not exist, DataLossError (naming the file and the field) when it is
// truncated, malformed or fails a checksum, UnimplementedError for a valid dtype that
// eagerflow lacks (e.g. F16).
TensorFile load_safetensors(const std::string& path, CallSite where = CallSite::current());

// As load_safetensors, from bytes in memory; `source` names them in errors.
TensorFile parse_safetensors(std::span<const uint8_t> bytes, const std::string& source = "<memory>",
                             CallSite where = CallSite::current());

// The bytes save_safetensors would write.
std::vector<uint8_t> serialize_safetensors(const std::map<std::string, Tensor>& tensors,
                                           const std::map<std::string, std::string>& metadata = {},
                                           CallSite where = CallSite::current());

}  // namespace ef::io
