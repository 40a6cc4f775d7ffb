// libFuzzer target for the image decoders: the first input byte picks the requested
// channels and dtype, the rest are a file's bytes for ef::io::decode_image (PNG or
// JPEG by signature). Every ef::Error is an accepted outcome; a finding is anything
// else: a crash, an ASan/UBSan report, another exception type, or an accepted image
// that is not [height, width, channels] with the requested channel count and dtype.
#include <eagerflow/eagerflow.h>

#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "image_fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int channels = data[0] % 5;  // 0-4; 2 and 4 are errors for a JPEG
  const ef::DType dtype = (data[0] / 5) % 2 ? ef::DType::UInt16 : ef::DType::UInt8;
  ef::Tensor image;
  try {
    const ef::Tensor bytes =
        ef::constant(std::vector<uint8_t>(data + 1, data + size), ef::Shape{static_cast<int64_t>(size - 1)});
    image = ef::io::decode_image(bytes, channels, dtype);
  } catch (const ef::Error&) {
    return 0;  // rejected with a typed error: fine
  }
  if (image.rank() != 3) finding("a decoded image that is not [height, width, channels]");
  if (channels != 0 && image.shape()[2] != channels)
    finding("a decoded image with other channels than asked");
  if (image.shape()[2] < 1 || image.shape()[2] > 4) finding("a decoded image with 0 or more than 4 channels");
  if (image.dtype() != dtype) finding("a decoded image of another dtype than asked");
  (void)image.to_vector<int>();  // every pixel readable
  return 0;
}
