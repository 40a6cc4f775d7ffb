// CRC32C (Castagnoli): the checksum that guards each tensor of a checkpoint.
//
//   uint32_t c = ef::io::crc32c(data, size);          // crc32c("123456789") == 0xE3069283
//   c = ef::io::crc32c(more, more_size, c);           // continue over a second piece
//
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked at run time) and a
// table otherwise; both give the same values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ef::io {

// The CRC32C of `size` bytes at `data`, continuing from `crc` (the result of the
// previous piece; 0 to start).
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

namespace detail {
// The table implementation (any CPU).
uint32_t crc32c_portable(const void* data, size_t size, uint32_t crc = 0);
// True when crc32c_hardware can run on this CPU.
bool crc32c_hardware_available();
// The SSE4.2 implementation; only call it when crc32c_hardware_available().
uint32_t crc32c_hardware(const void* data, size_t size, uint32_t crc = 0);
}  // namespace detail

}  // namespace ef::io
