// A PNG encoder for 8-bit images (the image summaries). Internal to src/io.
#pragma once

#include <cstdint>
#include <string>

namespace ef::io::detail {

// The PNG file of a height × width image with `channels` interleaved 8-bit channels
// per pixel (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA), rows top to bottom.
std::string encode_png(const uint8_t* pixels, int64_t height, int64_t width, int channels);

}  // namespace ef::io::detail
