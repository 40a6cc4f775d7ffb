// Image files, as TensorFlow's tf.io reads and writes them:
//
//   ef::Tensor bytes = ef::io::read_file("cat.png");     // uint8, shape [file size]
//   ef::Tensor image = ef::io::decode_png(bytes);        // uint8, [height, width, channels]
//   ef::io::write_file("copy.png", ef::io::encode_png(image));
//
// A file's contents are a 1-D uint8 tensor (TensorFlow keeps them in a string scalar,
// a dtype eagerflow does not have; torchvision uses uint8 tensors the same way), so
// decode_png(read_file(path)) reads as it does in TensorFlow.
//
// Decoding follows TensorFlow's decode_png / decode_jpeg: `channels` 0 keeps the file's
// own (a palette PNG gives RGB, or RGBA with transparency); 1 gives grey (RGB weighted
// 0.299, 0.587, 0.114), 3 RGB, 4 RGBA (an opaque alpha added when the file has none),
// 2 grey + alpha. A damaged, truncated or unsupported file is a typed error naming the
// op and the reason (DataLossError for damage; UnimplementedError for a valid file in a
// form not supported, such as a CMYK JPEG); nothing is returned half decoded.
// Decoding refuses images of more than 2^30 bytes (ResourceExhaustedError).
#pragma once

#include <string>

#include "eagerflow/core/tensor.h"

namespace ef::io {

// The bytes of the file at `path`. NotFoundError for a missing file.
Tensor read_file(const std::string& path, CallSite where = CallSite::current());
// Writes the bytes of the 1-D uint8 tensor `contents` to `path`, atomically.
void write_file(const std::string& path, const Tensor& contents, CallSite where = CallSite::current());

// The PNG image in `contents`, [height, width, channels] of `dtype`: uint8 (16-bit
// files keep their high byte) or uint16 (8-bit files scaled by 257, so 255 → 65535).
Tensor decode_png(const Tensor& contents, int channels = 0, DType dtype = DType::UInt8,
                  CallSite where = CallSite::current());

// The JPEG image in `contents`, uint8 [height, width, channels] (channels 0, 1 or 3).
// `dct_method`: "" or "INTEGER_FAST" (TensorFlow's default), or "INTEGER_ACCURATE"
// (libjpeg's islow, which Pillow uses).
Tensor decode_jpeg(const Tensor& contents, int channels = 0, const std::string& dct_method = "",
                   CallSite where = CallSite::current());

// decode_png or decode_jpeg, chosen by the file's signature. `dtype` uint8, uint16
// (PNG only) or float32 (scaled to [0, 1] by convert_image_dtype, from 16 bits for PNG).
Tensor decode_image(const Tensor& contents, int channels = 0, DType dtype = DType::UInt8,
                    CallSite where = CallSite::current());

// The PNG file of `image`, [height, width, channels] with 1-4 channels of uint8 or
// uint16, as a 1-D uint8 tensor. `compression`: zlib's level 0-9, or -1 (default).
Tensor encode_png(const Tensor& image, int compression = -1, CallSite where = CallSite::current());

}  // namespace ef::io
