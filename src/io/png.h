// The PNG encoder of ef::io::encode_png and the image summaries. Internal to src/io.
#pragma once

#include <cstdint>
#include <string>

namespace ef::io::detail {

// The PNG file of a height × width image with `channels` interleaved channels per
// pixel (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA), rows top to bottom: `samples` are
// uint8_t for bits = 8, native-endian uint16_t for bits = 16. `compression` is zlib's
// level, 0-9, or -1 for its default.
std::string encode_png(const void* samples, int64_t height, int64_t width, int channels, int bits = 8,
                       int compression = -1);

}  // namespace ef::io::detail
