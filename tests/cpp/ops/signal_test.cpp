// ef::signal: the FFTs against the O(n^2) definition (mixed-radix and Bluestein
// lengths, both precisions), rfft/irfft, framing, windows, the stft round trip, and
// bad input.
#include <complex>
#include <numbers>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;
using C = std::complex<double>;

std::vector<C> values_of(const Tensor& z) {
  const std::vector<double> re = real(z).to_vector<double>(), im = imag(z).to_vector<double>();
  std::vector<C> out;
  for (size_t i = 0; i < re.size(); ++i) out.emplace_back(re[i], im[i]);
  return out;
}

// The definition: sum_k x_k e^(sign 2 pi i jk / n).
std::vector<C> naive_dft(const std::vector<C>& x, double sign) {
  const size_t n = x.size();
  std::vector<C> out(n);
  for (size_t j = 0; j < n; ++j)
    for (size_t k = 0; k < n; ++k)
      out[j] += x[k] * std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>(j * k % n) / n);
  return out;
}

void expect_close(const std::vector<C>& got, const std::vector<C>& expected, double tol) {
  ASSERT_EQ(got.size(), expected.size());
  double scale = 1;
  for (const C& z : expected) scale = std::max(scale, std::abs(z));
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LT(std::abs(got[i] - expected[i]), tol * scale)
        << "element " << i << ": " << got[i] << " vs " << expected[i];
}

TEST(Signal, FftMatchesTheDefinitionForEveryKindOfLength) {
  // 1, powers of 2, mixed radix 2-3-5, a radix-7 and radix-61 factor (generic
  // butterflies), primes above 61 and a large prime factor (Bluestein).
  for (int64_t n : {1, 2, 8, 12, 30, 49, 122, 67, 101, 2 * 127, 1009}) {
    const Tensor re = testing::rand64(Shape{2, n}, n), im = testing::rand64(Shape{2, n}, n + 1000);
    const Tensor z = complex(re, im);
    const std::vector<C> all = values_of(z);
    const std::vector<C> forward = values_of(signal::fft(z)), inverse = values_of(signal::ifft(z));
    for (int64_t row = 0; row < 2; ++row) {
      const std::vector<C> x(all.begin() + row * n, all.begin() + (row + 1) * n);
      std::vector<C> expected_inverse = naive_dft(x, +1);
      for (C& v : expected_inverse) v /= static_cast<double>(n);
      SCOPED_TRACE("n = " + std::to_string(n));
      expect_close(std::vector<C>(forward.begin() + row * n, forward.begin() + (row + 1) * n),
                   naive_dft(x, -1), 1e-12);
      expect_close(std::vector<C>(inverse.begin() + row * n, inverse.begin() + (row + 1) * n),
                   expected_inverse, 1e-12);
    }
    // complex64 in, complex64 out, rounded once.
    const Tensor single = signal::fft(cast(z, DType::Complex64));
    expect_meta(single, Shape{2, n}, DType::Complex64);
    expect_close(values_of(single), values_of(signal::fft(z)), 1e-6);
  }
}

TEST(Signal, RfftAndIrfftAreTheHalfSpectrum) {
  const Tensor x = testing::rand64(Shape{3, 10}, 7);
  const Tensor spectrum = signal::rfft(x);
  expect_meta(spectrum, Shape{3, 6}, DType::Complex128);
  const std::vector<C> full = values_of(signal::fft(complex(x, zeros_like(x)))), half = values_of(spectrum);
  for (int64_t row = 0; row < 3; ++row)
    for (int64_t j = 0; j < 6; ++j) EXPECT_LT(std::abs(half[row * 6 + j] - full[row * 10 + j]), 1e-12);
  expect_values(signal::irfft(spectrum), x.to_vector<double>(), 1e-12);
  // Odd lengths need fft_length; cropping and zero-padding the input.
  const Tensor odd = testing::rand64(Shape{7}, 8);
  expect_values(signal::irfft(signal::rfft(odd), 7), odd.to_vector<double>(), 1e-12);
  expect_meta(signal::rfft(odd, 4), Shape{3}, DType::Complex128);
  expect_values(real(signal::rfft(constant({1.f, 2.f, 3.f}), 1)), {1});
  expect_values(real(signal::rfft(constant({1.f, 2.f}), 4)), {3, 1, -1}, 1e-6);
  expect_values(imag(signal::rfft(constant({1.f, 2.f}), 4)), {0, -2, 0}, 1e-6);
  // irfft ignores the imaginary parts a real signal's spectrum cannot have.
  const Tensor y = complex(constant({4.0, 0.0, 0.0}), constant({9.0, 0.0, 9.0}));
  expect_values(signal::irfft(y), {1, 1, 1, 1}, 1e-12);
}

TEST(Signal, TwoDimensionalTransforms) {
  const Tensor z = complex(testing::rand64(Shape{2, 3, 4}, 1), testing::rand64(Shape{2, 3, 4}, 2));
  const Tensor expected = transpose(signal::fft(transpose(signal::fft(z), {0, 2, 1})), {0, 2, 1});
  expect_close(values_of(signal::fft2d(z)), values_of(expected), 1e-12);
  expect_close(values_of(signal::ifft2d(signal::fft2d(z))), values_of(z), 1e-12);
}

TEST(Signal, FramesAndOverlapAdd) {
  const Tensor x = testing::iota(Shape{2, 7});
  const Tensor frames = signal::frame(x, 3, 2);
  expect_meta(frames, Shape{2, 3, 3}, DType::Float32);
  expect_values(frames[0], {0, 1, 2, 2, 3, 4, 4, 5, 6});
  const Tensor padded = signal::frame(x, 3, 2, true, -1.0);
  expect_meta(padded, Shape{2, 4, 3}, DType::Float32);
  expect_values(padded[1][3], {13, -1, -1});
  expect_meta(signal::frame(x, 8, 1), Shape{2, 0, 8}, DType::Float32);
  expect_meta(signal::frame(x, 2, 1, false, 0.0, 0), Shape{1, 2, 7}, DType::Float32);
  expect_values(signal::overlap_and_add(ones(Shape{3, 4}), 2), {1, 1, 2, 2, 2, 2, 1, 1});
  expect_meta(signal::overlap_and_add(ones(Shape{5, 3, 4}), 3), Shape{5, 10}, DType::Float32);
}

TEST(Signal, Windows) {
  expect_values(signal::hann_window(4), {0, 0.5, 1, 0.5});
  expect_values(signal::hann_window(5, false), {0, 0.5, 1, 0.5, 0});
  expect_values(signal::hamming_window(4), {0.08, 0.54, 1, 0.54});
  expect_values(signal::hann_window(1), {1});
  expect_meta(signal::hann_window(0, true, DType::Float64), Shape{0}, DType::Float64);
  expect_values(signal::inverse_stft_window(4, 2), {0, 1, 1, 1});
}

TEST(Signal, StftRoundTrip) {
  const Tensor x = testing::rand64(Shape{2, 600}, 3);
  const Tensor s = signal::stft(x, 128, 32);
  expect_meta(s, Shape{2, 15, 65}, DType::Complex128);
  const Tensor y = signal::inverse_stft(s, 128, 32, std::nullopt,
                                        signal::inverse_stft_window(128, 32, std::nullopt, DType::Float64));
  expect_meta(y, Shape{2, 576}, DType::Float64);
  // Away from the ends, where fewer frames overlap, the signal comes back.
  const Tensor inner = slice(y, {0, 128}, {2, 320}), expected = slice(x, {0, 128}, {2, 320});
  expect_values(inner, expected.to_vector<double>(), 1e-10);
  // A frame's stft is its windowed rfft with the default power-of-two length.
  const Tensor first = slice(s, {0, 0, 0}, {1, 1, 65});
  const Tensor direct =
      signal::rfft(multiply(slice(x, {0, 0}, {1, 128}), signal::hann_window(128, true, DType::Float64)));
  expect_close(values_of(first), values_of(direct), 1e-12);
}

TEST(Signal, BadInput) {
  const Tensor z = complex(constant({1.f}), constant({0.f}));
  EXPECT_ERROR(signal::fft(constant({1.f})), InvalidArgumentError, "fft", "float32", "complex64");
  EXPECT_ERROR(signal::fft(complex(constant(1.f), constant(0.f))), InvalidArgumentError, "fft", "scalar");
  EXPECT_ERROR(signal::fft(zeros(Shape{2, 0}, DType::Complex64)), InvalidArgumentError, "fft", "[2, 0]");
  EXPECT_ERROR(signal::rfft(z), InvalidArgumentError, "rfft", "complex64");
  EXPECT_ERROR(signal::rfft(constant({1.f}), 0), InvalidArgumentError, "rfft", "fft_length", "0");
  EXPECT_ERROR(signal::irfft(constant({1.f})), InvalidArgumentError, "irfft", "float32");
  EXPECT_ERROR(signal::irfft(z), InvalidArgumentError, "irfft", "fft_length");
  EXPECT_ERROR(signal::fft2d(z), InvalidArgumentError, "fft2d", "two axes");
  EXPECT_ERROR(signal::frame(constant({1.f}), 0, 1), InvalidArgumentError, "frame", "frame_length");
  EXPECT_ERROR(signal::frame(constant({1.f}), 1, -2), InvalidArgumentError, "frame", "frame_step");
  EXPECT_ERROR(signal::frame(constant({1.f}), 1, 1, false, 0, 3), InvalidArgumentError, "frame", "axis");
  EXPECT_ERROR(signal::overlap_and_add(constant({1.f}), 1), InvalidArgumentError, "overlap_and_add", "[1]");
  EXPECT_ERROR(signal::hann_window(-1), InvalidArgumentError, "hann_window", "-1");
  EXPECT_ERROR(signal::hann_window(3, true, DType::Int32), InvalidArgumentError, "hann_window", "int32");
  EXPECT_ERROR(signal::stft(constant({1, 2, 3}), 2, 1), InvalidArgumentError, "stft", "int32");
  EXPECT_ERROR(signal::stft(constant({1.f, 2.f, 3.f}), 2, 1, std::nullopt, ones(Shape{3})),
               InvalidArgumentError, "stft", "window", "[3]");
  EXPECT_ERROR(signal::inverse_stft(constant({{1.f}}), 2, 1), InvalidArgumentError, "inverse_stft",
               "float32");
}

}  // namespace
}  // namespace ef
