// Image files (ef.io.read_file, decode_png, decode_jpeg, decode_image, encode_png,
// write_file) and tf.image's resizing, flips, rotations, dtype conversion and adjustments.
#include <eagerflow/io/image.h>
#include <eagerflow/ops/image.h>

#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

ef::DType dtype_or(const DTypeArg& dtype, ef::DType fallback) { return dtype.value.value_or(fallback); }

}  // namespace

void bind_image(py::module_& m) {
  m.def(
      "read_file", [](const std::string& path) { return ef::io::read_file(path, kPython); },
      R"doc(The bytes of the file at `path`, as a 1-D uint8 tensor (decode_png reads them).

Raises:
  NotFoundError: no such file.)doc",
      "filename"_a);
  m.def(
      "write_file",
      [](const std::string& path, TensorArg contents) { ef::io::write_file(path, contents, kPython); },
      "Writes the bytes of the 1-D uint8 tensor `contents` to `path`, atomically.", "filename"_a,
      "contents"_a);
  m.def(
      "decode_png",
      [](TensorArg contents, int channels, DTypeArg dtype, py::handle) {
        return ef::io::decode_png(contents, channels, dtype_or(dtype, ef::DType::UInt8), kPython);
      },
      R"doc(Decodes a PNG file's bytes to a [height, width, channels] image (tf.io.decode_png).

Args:
  contents: The file's bytes, a 1-D uint8 tensor (read_file's result).
  channels: 0 (the file's own), 1 (grey), 2 (grey and alpha), 3 (RGB) or 4 (RGBA).
  dtype: ef.uint8 (16-bit files keep their high byte) or ef.uint16.

Raises:
  DataLossError: a damaged or truncated file.)doc",
      "contents"_a, "channels"_a = 0, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "decode_jpeg",
      [](TensorArg contents, int channels, const std::string& dct_method, py::handle) {
        return ef::io::decode_jpeg(contents, channels, dct_method, kPython);
      },
      R"doc(Decodes a JPEG file's bytes to a uint8 [height, width, channels] image (tf.io.decode_jpeg).

Args:
  contents: The file's bytes, a 1-D uint8 tensor.
  channels: 0 (the file's own), 1 (grey) or 3 (RGB).
  dct_method: "" or "INTEGER_FAST" (TensorFlow's default), "INTEGER_ACCURATE" (Pillow's).

Raises:
  DataLossError: a damaged or truncated file. UnimplementedError: a CMYK file.)doc",
      "contents"_a, "channels"_a = 0, "dct_method"_a = "", "name"_a = py::none());
  m.def(
      "decode_image",
      [](TensorArg contents, int channels, DTypeArg dtype, py::handle) {
        return ef::io::decode_image(contents, channels, dtype_or(dtype, ef::DType::UInt8), kPython);
      },
      "decode_png or decode_jpeg by the file's signature; dtype uint8, uint16 (PNG) or float32 (in [0, 1]).",
      "contents"_a, "channels"_a = 0, "dtype"_a = py::none(), "name"_a = py::none());
  m.def(
      "encode_png",
      [](TensorArg image, int compression, py::handle) {
        return ef::io::encode_png(image, compression, kPython);
      },
      R"doc(The PNG file of a uint8 or uint16 [height, width, channels] image (1-4 channels), as bytes
(a 1-D uint8 tensor). compression: zlib's level 0-9, or -1 for its default.)doc",
      "image"_a, "compression"_a = -1, "name"_a = py::none());

  m.def(
      "_flip_left_right", [](TensorArg image) { return ef::flip_left_right(image, kPython); }, "image"_a);
  m.def(
      "_flip_up_down", [](TensorArg image) { return ef::flip_up_down(image, kPython); }, "image"_a);
  m.def(
      "_rot90", [](TensorArg image, int64_t k) { return ef::rot90(image, k, kPython); }, "image"_a, "k"_a);
  m.def(
      "_convert_image_dtype",
      [](TensorArg image, DTypeArg dtype, bool saturate) {
        if (!dtype.value) throw py::type_error("convert_image_dtype: dtype is required");
        return ef::convert_image_dtype(image, *dtype.value, saturate, kPython);
      },
      "image"_a, "dtype"_a, "saturate"_a);
  m.def(
      "_adjust_brightness",
      [](TensorArg image, double delta) { return ef::adjust_brightness(image, delta, kPython); }, "image"_a,
      "delta"_a);
  m.def(
      "_adjust_contrast",
      [](TensorArg images, double factor) { return ef::adjust_contrast(images, factor, kPython); },
      "images"_a, "contrast_factor"_a);
  m.def(
      "_per_image_standardization",
      [](TensorArg image) { return ef::per_image_standardization(image, kPython); }, "image"_a);
  m.def(
      "_rgb_to_grayscale", [](TensorArg images) { return ef::rgb_to_grayscale(images, kPython); },
      "images"_a);
  m.def(
      "_resize_images",
      [](TensorArg images, std::vector<int64_t> size, const std::string& method, bool antialias,
         bool preserve_aspect_ratio) {
        return ef::resize_images(images, size, method, antialias, preserve_aspect_ratio, kPython);
      },
      "ef::resize_images (ef.image.resize is the documented form).", "images"_a, "size"_a, "method"_a,
      "antialias"_a = false, "preserve_aspect_ratio"_a = false);
  m.def(
      "_resize_images_grad",
      [](ShapeArg input_sizes, TensorArg grad, const std::string& method) {
        return ef::resize_images_grad(input_sizes, grad, method, kPython);
      },
      "The gradient op of resize_images: its adjoint from images of shape input_sizes.", "input_sizes"_a,
      "grad"_a, "method"_a);
  m.def(
      "_crop_and_resize",
      [](TensorArg image, TensorArg boxes, TensorArg box_indices, std::vector<int64_t> crop_size,
         const std::string& method, double extrapolation_value) {
        return ef::crop_and_resize(image, boxes, box_indices, crop_size, method, extrapolation_value,
                                   kPython);
      },
      "ef::crop_and_resize (ef.image.crop_and_resize is the documented form).", "image"_a, "boxes"_a,
      "box_indices"_a, "crop_size"_a, "method"_a = "bilinear", "extrapolation_value"_a = 0.0);
  m.def(
      "_scale_and_translate",
      [](TensorArg images, std::vector<int64_t> size, std::vector<double> scale,
         std::vector<double> translate, const std::string& kernel_type, bool antialias) {
        return ef::scale_and_translate(images, size, scale, translate, kernel_type, antialias, kPython);
      },
      "ef::scale_and_translate (ef.image.scale_and_translate is the documented form).", "images"_a, "size"_a,
      "scale"_a, "translate"_a, "kernel_type"_a = "lanczos3", "antialias"_a = true);
}

}  // namespace efpy
