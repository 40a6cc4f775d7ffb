#include "event_file.h"

#include <cstring>

#include "eagerflow/core/error.h"
#include "eagerflow/io/crc32c.h"

namespace ef::io::detail {
namespace {

constexpr uint32_t kMaskDelta = 0xa282ead8u;

void append_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t read_le(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return value;
}

}  // namespace

uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

void append_record(std::string& out, std::string_view payload) {
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((payload.size() >> (8 * i)) & 0xff);
  out.append(length, 8);
  append_le(out, masked_crc32c(length, 8), 4);
  out.append(payload);
  append_le(out, masked_crc32c(payload.data(), payload.size()), 4);
}

std::vector<std::string> split_records(std::string_view content, const std::string& path) {
  std::vector<std::string> payloads;
  size_t offset = 0;
  while (offset < content.size()) {
    const size_t left = content.size() - offset;
    const char* p = content.data() + offset;
    if (left < 12)
      fail<DataLossError>("read_event_file: '", path, "': record at byte ", offset, " is truncated (", left,
                          " bytes, fewer than its 12-byte header)");
    if (static_cast<uint32_t>(read_le(p + 8, 4)) != masked_crc32c(p, 8))
      fail<DataLossError>("read_event_file: '", path, "': record at byte ", offset,
                          ": the length's CRC does not match");
    const uint64_t length = read_le(p, 8);
    if (left < 16 || length > left - 16)
      fail<DataLossError>("read_event_file: '", path, "': record at byte ", offset, " says ", length,
                          " bytes but the file has ", left < 16 ? 0 : left - 16, " after its header");
    const char* payload = p + 12;
    if (static_cast<uint32_t>(read_le(payload + length, 4)) != masked_crc32c(payload, length))
      fail<DataLossError>("read_event_file: '", path, "': record at byte ", offset,
                          ": the data's CRC does not match");
    payloads.emplace_back(payload, length);
    offset += 16 + length;
  }
  return payloads;
}

}  // namespace ef::io::detail
