// PNG decoding on libpng and JPEG decoding on libjpeg(-turbo), with TensorFlow's
// channel conversions (eagerflow/io/image.h); the encoder is png.cpp's.
//
// Note [decoding with longjmp]: both libraries report errors by longjmp-ing out of
// their own C frames. Only the small functions marked EF_LONGJMP_TARGET call setjmp,
// and no C++ object with a destructor lives in them, so a jump skips nothing that
// must be destroyed; the callers own every resource and free it normally.
#include "eagerflow/io/image.h"

#include <png.h>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <string_view>
#include <vector>

#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/image.h"
#include "io/atomic_file.h"
#include "io/png.h"
#include "ops/op_helpers.h"

#define EF_LONGJMP_TARGET [[gnu::noinline]]

namespace ef::io {
namespace {

// The most bytes one decoded image may take (Note in eagerflow/io/image.h): a damaged
// header must not make the decoder allocate gigabytes.
constexpr int64_t kMaxImageBytes = int64_t{1} << 30;

// The first byte of a fresh (contiguous, unshared) tensor, to decode into.
uint8_t* writable_bytes(Tensor& fresh) { return static_cast<uint8_t*>(fresh.impl()->storage->data()); }

// `contents` checked (a 1-D uint8 tensor) and on the host.
Tensor host_bytes(const Tensor& contents, std::string_view op) {
  if (!contents.defined()) fail(op, ": argument 'contents' is an undefined tensor");
  if (contents.is_symbolic())
    fail<UnimplementedError>(op, ": argument 'contents' is symbolic (graph mode); decode eagerly");
  if (contents.dtype() != DType::UInt8 || contents.rank() != 1)
    fail(op,
         ": argument 'contents' must be the bytes of a file, a 1-D uint8 tensor (as read_file gives), got ",
         contents.dtype(), " of shape ", contents.shape());
  return contents.cpu().contiguous();
}

void check_image_size(std::string_view op, int64_t height, int64_t width, int64_t channels,
                      int64_t sample_bytes) {
  const int64_t bytes = height * width * channels * sample_bytes;  // each factor < 2^32 / 2^3: no overflow
  if (bytes > kMaxImageBytes)
    fail<ResourceExhaustedError>(op, ": the image is ", height, " x ", width, " x ", channels, " (", bytes,
                                 " bytes), more than the ", kMaxImageBytes, " bytes one decode may allocate");
}

// ---- PNG ----

struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0, offset = 0;
  char message[256] = {};
};

void png_read_from_memory(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->size - src->offset) png_error(png, "the data ends early (the file is truncated)");
  std::memcpy(out, src->data + src->offset, n);
  src->offset += n;
}
void png_on_error(png_structp png, png_const_charp message) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof src->message, "%s", message);
  png_longjmp(png, 1);
}
void png_on_warning(png_structp, png_const_charp) {}  // ancillary problems: the pixels are fine

struct PngLayout {
  uint32_t width = 0, height = 0;
  int file_bits = 0, color_type = 0, channels = 0, passes = 1;
  bool compressed_too_small = false;
};

// Reads the header and sets up TensorFlow's conversions to `channels` (0: the file's)
// of 8-bit samples, or 16-bit for wide files when `keep_16` (Note [decoding with longjmp]).
EF_LONGJMP_TARGET bool png_begin(png_structp png, png_infop info, int channels, bool keep_16,
                                 PngLayout* out) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  int interlace = 0;
  png_get_IHDR(png, info, &out->width, &out->height, &out->file_bits, &out->color_type, &interlace, nullptr,
               nullptr);
  // Deflate compresses at most about 1032:1: a header claiming more raw rows than the
  // file could hold is damaged, and refused before anything is allocated.
  const uint64_t file_row = (uint64_t{out->width} * png_get_channels(png, info) * out->file_bits + 7) / 8;
  const auto* src = static_cast<const PngSource*>(png_get_io_ptr(png));
  out->compressed_too_small = uint64_t{out->height} * (file_row + 1) > 1032 * uint64_t{src->size} + 4096;
  if (out->compressed_too_small) return true;
  const bool palette = out->color_type == PNG_COLOR_TYPE_PALETTE;
  const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  const bool has_alpha = (out->color_type & PNG_COLOR_MASK_ALPHA) != 0;
  const bool is_gray = (out->color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (channels == 0) channels = palette ? (has_trns ? 4 : 3) : png_get_channels(png, info);
  out->channels = channels;
  if (channels % 2 == 0) {  // alpha wanted
    if (!has_alpha && has_trns)
      png_set_tRNS_to_alpha(png);
    else if (!has_alpha)
      png_set_add_alpha(png, 0xffff, PNG_FILLER_AFTER);  // opaque at 8 or 16 bits
  } else if (has_alpha || has_trns) {
    png_set_strip_alpha(png);
  }
  if (out->file_bits == 16 && !keep_16) png_set_strip_16(png);  // the high byte, as TensorFlow
  png_set_packing(png);
  out->passes = png_set_interlace_handling(png);
  if (out->file_bits == 16 && keep_16) png_set_swap(png);  // big-endian in the file
  if (palette) png_set_palette_to_rgb(png);
  if (is_gray && out->file_bits < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (channels < 3 && !is_gray) png_set_rgb_to_gray(png, PNG_ERROR_ACTION_NONE, 0.299, 0.587);
  if (channels >= 3 && is_gray) png_set_gray_to_rgb(png);
  png_read_update_info(png, info);
  return true;
}

// Decodes every row (every pass when interlaced) into `pixels`.
EF_LONGJMP_TARGET bool png_rows(png_structp png, const PngLayout& layout, uint8_t* pixels, size_t row_bytes) {
  if (setjmp(png_jmpbuf(png))) return false;
  for (int pass = 0; pass < layout.passes; ++pass)
    for (uint32_t y = 0; y < layout.height; ++y) png_read_row(png, pixels + y * row_bytes, nullptr);
  png_read_end(png, nullptr);
  return true;
}

Tensor decode_png_bytes(const Tensor& bytes, int channels, DType dtype, std::string_view op) {
  if (channels < 0 || channels > 4) fail(op, ": argument 'channels' must be 0 to 4, got ", channels);
  if (dtype != DType::UInt8 && dtype != DType::UInt16)
    fail(op, ": argument 'dtype' must be uint8 or uint16, got ", dtype);
  PngSource src;
  src.data = static_cast<const uint8_t*>(bytes.raw_data());
  src.size = static_cast<size_t>(bytes.num_elements());
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_on_error, png_on_warning);
  if (!png) fail<ResourceExhaustedError>(op, ": libpng could not start");
  png_infop info = png_create_info_struct(png);
  struct Release {
    png_structp* png;
    png_infop* info;
    ~Release() { png_destroy_read_struct(png, *info ? info : nullptr, nullptr); }
  } release{&png, &info};
  if (!info) fail<ResourceExhaustedError>(op, ": libpng could not start");
  png_set_read_fn(png, &src, png_read_from_memory);
  auto damaged = [&]() -> Tensor { fail<DataLossError>(op, ": not a valid PNG file: ", src.message); };

  PngLayout layout;
  if (!png_begin(png, info, channels, dtype == DType::UInt16, &layout)) return damaged();
  if (layout.compressed_too_small)
    fail<DataLossError>(op, ": not a valid PNG file: its header claims ", layout.width, " x ", layout.height,
                        " pixels, more than its ", src.size, " bytes can hold");
  const bool wide_file = layout.file_bits == 16 && dtype == DType::UInt16;
  const int64_t sample_bytes = wide_file ? 2 : 1;
  check_image_size(op, layout.height, layout.width, layout.channels, dtype == DType::UInt16 ? 2 : 1);
  const size_t row_bytes = png_get_rowbytes(png, info);
  if (png_get_channels(png, info) != layout.channels ||
      row_bytes != static_cast<size_t>(layout.width) * static_cast<size_t>(layout.channels * sample_bytes))
    fail<InternalError>(op, ": libpng's rows have ", static_cast<int>(png_get_channels(png, info)),
                        " channels and ", row_bytes, " bytes, expected ", layout.channels, " channels");
  const Shape shape{layout.height, layout.width, layout.channels};
  Tensor image = ef::detail::empty_tensor(wide_file ? DType::UInt16 : DType::UInt8, shape, kCPU, op);
  if (!png_rows(png, layout, writable_bytes(image), row_bytes)) return damaged();
  if (dtype == DType::UInt16 && !wide_file) {  // 8-bit samples scaled to 16 bits: v * 257
    Tensor wide = ef::detail::empty_tensor(DType::UInt16, shape, kCPU, op);
    const auto* in = static_cast<const uint8_t*>(image.raw_data());
    auto* out = reinterpret_cast<uint16_t*>(writable_bytes(wide));
    for (int64_t i = 0, n = image.num_elements(); i < n; ++i) out[i] = static_cast<uint16_t>(in[i] * 257);
    return wide;
  }
  return image;
}

// ---- JPEG ----

struct JpegErrors {
  jpeg_error_mgr mgr;  // first: libjpeg sees a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  int warnings;
};

void jpeg_on_error(j_common_ptr info) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}
// Warnings are corrupt or missing data, which libjpeg papers over with grey: an error
// here, never a quietly wrong image.
void jpeg_on_message(j_common_ptr info, int level) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  if (level < 0 && errors->warnings++ == 0) (*info->err->format_message)(info, errors->message);
}

struct JpegLayout {
  int channels = 0;
  bool cmyk = false;
};

EF_LONGJMP_TARGET bool jpeg_begin(jpeg_decompress_struct* info, JpegErrors* errors, const uint8_t* data,
                                  size_t size, int channels, J_DCT_METHOD dct, JpegLayout* out) {
  if (setjmp(errors->jump)) return false;
  jpeg_mem_src(info, data, static_cast<unsigned long>(size));
  jpeg_read_header(info, TRUE);
  if (info->jpeg_color_space == JCS_CMYK || info->jpeg_color_space == JCS_YCCK) {
    out->cmyk = true;
    return true;
  }
  if (channels == 0) channels = info->jpeg_color_space == JCS_GRAYSCALE ? 1 : 3;
  out->channels = channels;
  info->out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  info->dct_method = dct;
  info->do_fancy_upsampling = TRUE;
  info->mem->max_memory_to_use = kMaxImageBytes;  // progressive files buffer coefficients
  jpeg_calc_output_dimensions(info);
  return true;
}

// Decodes the rows into `pixels`, which grows as rows arrive: a damaged file that claims
// a large image but holds little data stops at its first damaged row, having allocated
// about what it decoded rather than what its header claims.
EF_LONGJMP_TARGET bool jpeg_rows(jpeg_decompress_struct* info, JpegErrors* errors,
                                 std::vector<uint8_t>* pixels, size_t row_bytes) {
  if (setjmp(errors->jump)) return false;
  jpeg_start_decompress(info);
  while (info->output_scanline < info->output_height) {
    const size_t offset = static_cast<size_t>(info->output_scanline) * row_bytes;
    pixels->resize(offset + row_bytes);  // geometric growth: amortized constant per row
    JSAMPROW row = pixels->data() + offset;
    jpeg_read_scanlines(info, &row, 1);
    if (errors->warnings) return true;  // stop at the first damage; the caller reports it
  }
  jpeg_finish_decompress(info);
  return true;
}

J_DCT_METHOD dct_method_named(const std::string& name, std::string_view op) {
  if (name.empty() || name == "INTEGER_FAST") return JDCT_IFAST;
  if (name == "INTEGER_ACCURATE") return JDCT_ISLOW;
  fail(op, ": argument 'dct_method' must be \"\", \"INTEGER_FAST\" or \"INTEGER_ACCURATE\", got \"", name,
       "\"");
}

Tensor decode_jpeg_bytes(const Tensor& bytes, int channels, const std::string& dct_method,
                         std::string_view op) {
  if (channels != 0 && channels != 1 && channels != 3)
    fail(op, ": argument 'channels' must be 0, 1 or 3 for a JPEG, got ", channels);
  const J_DCT_METHOD dct = dct_method_named(dct_method, op);
  const auto* data = static_cast<const uint8_t*>(bytes.raw_data());
  const size_t size = static_cast<size_t>(bytes.num_elements());
  if (size == 0) fail<DataLossError>(op, ": not a valid JPEG file: it is empty");
  jpeg_decompress_struct info;
  JpegErrors errors;
  info.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = jpeg_on_error;
  errors.mgr.emit_message = jpeg_on_message;
  errors.warnings = 0;
  errors.message[0] = '\0';
  jpeg_create_decompress(&info);
  struct Release {
    jpeg_decompress_struct* info;
    ~Release() { jpeg_destroy_decompress(info); }
  } release{&info};
  auto damaged = [&]() -> Tensor { fail<DataLossError>(op, ": not a valid JPEG file: ", errors.message); };

  JpegLayout layout;
  if (!jpeg_begin(&info, &errors, data, size, channels, dct, &layout) || errors.warnings) return damaged();
  if (layout.cmyk)
    fail<UnimplementedError>(op, ": CMYK JPEG files are not supported; convert the file to RGB first");
  const int64_t height = info.output_height, width = info.output_width;
  check_image_size(op, height, width, layout.channels, 1);
  if (info.output_components != layout.channels)
    fail<InternalError>(op, ": libjpeg gives ", info.output_components, " channels, expected ",
                        layout.channels);
  const size_t row_bytes = static_cast<size_t>(width) * static_cast<size_t>(layout.channels);
  std::vector<uint8_t> pixels;
  if (!jpeg_rows(&info, &errors, &pixels, row_bytes) || errors.warnings) return damaged();
  return ef::detail::tensor_from_host(DType::UInt8, Shape{height, width, layout.channels}, pixels.data(), op);
}

bool starts_with(const Tensor& bytes, std::string_view magic) {
  return static_cast<size_t>(bytes.num_elements()) >= magic.size() &&
         std::memcmp(bytes.raw_data(), magic.data(), magic.size()) == 0;
}

}  // namespace

using ef::detail::with_call_site;

Tensor read_file(const std::string& path, CallSite where) {
  return with_call_site(where, [&] {
    const std::vector<uint8_t> bytes = detail::read_file_bytes(path, "read_file");
    return ef::detail::tensor_from_host(DType::UInt8, Shape{static_cast<int64_t>(bytes.size())}, bytes.data(),
                                        "read_file");
  });
}

void write_file(const std::string& path, const Tensor& contents, CallSite where) {
  with_call_site(where, [&] {
    const Tensor bytes = host_bytes(contents, "write_file");
    detail::write_file_atomically(
        path,
        [&](detail::FileWriter& w) { w.write(bytes.raw_data(), static_cast<size_t>(bytes.num_elements())); },
        "write_file");
    return Tensor();
  });
}

Tensor decode_png(const Tensor& contents, int channels, DType dtype, CallSite where) {
  return with_call_site(where, [&] {
    return decode_png_bytes(host_bytes(contents, "decode_png"), channels, dtype, "decode_png");
  });
}

Tensor decode_jpeg(const Tensor& contents, int channels, const std::string& dct_method, CallSite where) {
  return with_call_site(where, [&] {
    return decode_jpeg_bytes(host_bytes(contents, "decode_jpeg"), channels, dct_method, "decode_jpeg");
  });
}

Tensor decode_image(const Tensor& contents, int channels, DType dtype, CallSite where) {
  return with_call_site(where, [&] {
    constexpr std::string_view op = "decode_image";
    if (dtype != DType::UInt8 && dtype != DType::UInt16 && dtype != DType::Float32)
      fail(op, ": argument 'dtype' must be uint8, uint16 or float32, got ", dtype);
    const Tensor bytes = host_bytes(contents, op);
    Tensor image;
    if (starts_with(bytes, "\x89PNG")) {
      // A float image is decoded at 16 bits (TensorFlow's), so 16-bit files keep their
      // precision; 8-bit ones give v * 257 / 65535 = v / 255 all the same.
      image = decode_png_bytes(bytes, channels, dtype == DType::UInt8 ? DType::UInt8 : DType::UInt16, op);
    } else if (starts_with(bytes, "\xff\xd8\xff")) {
      if (dtype == DType::UInt16) fail(op, ": a JPEG file decodes to uint8 or float32, not uint16");
      image = decode_jpeg_bytes(bytes, channels, "", op);
    } else if (starts_with(bytes, "GIF8") || starts_with(bytes, "BM")) {
      fail<UnimplementedError>(op, ": GIF and BMP files are not supported (PNG and JPEG are)");
    } else {
      fail(op, ": the contents are not a PNG or JPEG file (unknown signature)");
    }
    return dtype == DType::Float32 ? convert_image_dtype(image, DType::Float32) : image;
  });
}

Tensor encode_png(const Tensor& image, int compression, CallSite where) {
  return with_call_site(where, [&] {
    constexpr std::string_view op = "encode_png";
    if (!image.defined()) fail(op, ": argument 'image' is an undefined tensor");
    if (image.is_symbolic()) fail<UnimplementedError>(op, ": argument 'image' is symbolic (graph mode)");
    if (image.rank() != 3 || image.shape()[2] < 1 || image.shape()[2] > 4)
      fail(op, ": argument 'image' must be [height, width, channels] with 1 to 4 channels, got shape ",
           image.shape());
    if (image.dtype() != DType::UInt8 && image.dtype() != DType::UInt16)
      fail(op, ": argument 'image' must be uint8 or uint16, got ", image.dtype());
    const Tensor host = image.cpu().contiguous();
    const std::string png = detail::encode_png(host.raw_data(), host.shape()[0], host.shape()[1],
                                               static_cast<int>(host.shape()[2]),
                                               image.dtype() == DType::UInt16 ? 16 : 8, compression);
    return ef::detail::tensor_from_host(DType::UInt8, Shape{static_cast<int64_t>(png.size())}, png.data(),
                                        op);
  });
}

}  // namespace ef::io
