#include "png.h"

#include <zlib.h>

#include <vector>

#include "eagerflow/core/error.h"

namespace ef::io::detail {
namespace {

void append_be32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}

// A chunk: length, type, data, and the CRC-32 of type and data.
void append_chunk(std::string& out, const char (&type)[5], const std::string& data) {
  append_be32(out, static_cast<uint32_t>(data.size()));
  const size_t type_at = out.size();
  out.append(type, 4);
  out.append(data);
  const auto* crc_from = reinterpret_cast<const Bytef*>(out.data() + type_at);
  append_be32(out, static_cast<uint32_t>(::crc32(0, crc_from, static_cast<uInt>(4 + data.size()))));
}

}  // namespace

std::string encode_png(const void* samples, int64_t height, int64_t width, int channels, int bits,
                       int compression) {
  static constexpr uint8_t kColorType[] = {0, 0, 4, 2, 6};  // by channel count
  if (channels < 1 || channels > 4) fail("encode_png: channels must be 1 to 4, got ", channels);
  if (bits != 8 && bits != 16) fail("encode_png: samples must have 8 or 16 bits, got ", bits);
  if (compression < -1 || compression > 9) fail("encode_png: compression must be -1 to 9, got ", compression);
  if (height < 1 || width < 1 || height > (1 << 24) || width > (1 << 24))
    fail("encode_png: an image of ", height, " x ", width, " pixels cannot be written as PNG");
  // Each row is preceded by its filter type (0: none); 16-bit samples are big-endian.
  const size_t row_samples = static_cast<size_t>(width) * static_cast<size_t>(channels);
  const size_t row_bytes = row_samples * static_cast<size_t>(bits / 8);
  std::vector<uint8_t> raw;
  raw.reserve(static_cast<size_t>(height) * (row_bytes + 1));
  for (int64_t y = 0; y < height; ++y) {
    raw.push_back(0);
    if (bits == 8) {
      const auto* row = static_cast<const uint8_t*>(samples) + static_cast<size_t>(y) * row_samples;
      raw.insert(raw.end(), row, row + row_samples);
    } else {
      const auto* row = static_cast<const uint16_t*>(samples) + static_cast<size_t>(y) * row_samples;
      for (size_t i = 0; i < row_samples; ++i) {
        raw.push_back(static_cast<uint8_t>(row[i] >> 8));
        raw.push_back(static_cast<uint8_t>(row[i] & 0xff));
      }
    }
  }
  uLongf compressed_size = ::compressBound(static_cast<uLong>(raw.size()));
  std::string compressed(compressed_size, '\0');
  if (::compress2(reinterpret_cast<Bytef*>(compressed.data()), &compressed_size, raw.data(),
                  static_cast<uLong>(raw.size()), compression) != Z_OK)
    fail<InternalError>("encode_png: zlib could not compress ", raw.size(), " bytes");
  compressed.resize(compressed_size);

  std::string header;
  append_be32(header, static_cast<uint32_t>(width));
  append_be32(header, static_cast<uint32_t>(height));
  header.push_back(static_cast<char>(bits));  // bits per channel
  header.push_back(static_cast<char>(kColorType[channels]));
  header.append(3, '\0');  // deflate, adaptive filtering, no interlace

  std::string png("\x89PNG\r\n\x1a\n", 8);
  append_chunk(png, "IHDR", header);
  append_chunk(png, "IDAT", compressed);
  append_chunk(png, "IEND", "");
  return png;
}

}  // namespace ef::io::detail
