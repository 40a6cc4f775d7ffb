#include "eagerflow/io/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <nmmintrin.h>
#define EF_CRC32C_X86 1
#endif

namespace ef::io {
namespace detail {
namespace {

// The reflected Castagnoli polynomial 0x1EDC6F41.
constexpr uint32_t kPolynomial = 0x82F63B78u;

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32c_portable(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  for (size_t i = 0; i < size; ++i) c = kTable[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return ~c;
}

#ifdef EF_CRC32C_X86
bool crc32c_hardware_available() {
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
}

// Compiled for SSE4.2 whatever -march the library uses; only called after the CPU check.
__attribute__((target("sse4.2"))) uint32_t crc32c_hardware(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t c = ~crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // unaligned-safe load
    c = _mm_crc32_u64(c, word);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; size > 0; --size, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}
#else
bool crc32c_hardware_available() { return false; }
uint32_t crc32c_hardware(const void* data, size_t size, uint32_t crc) { return crc32c_portable(data, size, crc); }
#endif

}  // namespace detail

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  return detail::crc32c_hardware_available() ? detail::crc32c_hardware(data, size, crc)
                                             : detail::crc32c_portable(data, size, crc);
}

}  // namespace ef::io
