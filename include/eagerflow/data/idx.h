// The IDX format of MNIST and Fashion-MNIST: a big-endian header (two zero bytes, a
// type code, the number of dimensions, each dimension as uint32) and the elements,
// big-endian, in row-major order. Files may be gzip-compressed (detected by content).
//
//   ef::Tensor labels = ef::data::read_idx("train-labels-idx1-ubyte.gz");  // int32 [60000]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eagerflow/core/error.h"
#include "eagerflow/core/tensor.h"

namespace ef::data {

// IDX element types, by their type code.
enum class IdxType : uint8_t {
  UInt8 = 0x08,
  Int8 = 0x09,
  Int16 = 0x0B,
  Int32 = 0x0C,
  Float32 = 0x0D,
  Float64 = 0x0E
};

// An IDX file's contents exactly as stored: its element type, dimensions, and the
// elements in native byte order (element_size(type) bytes each).
struct IdxFile {
  IdxType type = IdxType::UInt8;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

// Bytes per element of `type` (1, 1, 2, 4, 4, 8).
size_t element_size(IdxType type);

// Reads an IDX file, plain or gzip-compressed. A missing or unreadable file throws
// NotFoundError; a malformed one (bad magic or type code, dimensions whose product
// overflows, data shorter or longer than the dimensions say, a corrupt gzip stream)
// throws InvalidArgumentError naming the file and the field.
IdxFile read_idx_file(const std::string& path, CallSite where = CallSite::current());

// read_idx_file as a tensor. eagerflow has no 8- or 16-bit integer dtypes, so the
// integer types (ubyte, byte, short, int) become int32, holding the same values;
// float and double become float32 and float64.
Tensor read_idx(const std::string& path, CallSite where = CallSite::current());

}  // namespace ef::data
