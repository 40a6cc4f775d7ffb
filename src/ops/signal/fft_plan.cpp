#include "ops/signal/fft_plan.h"

#include <algorithm>
#include <numbers>

namespace ef::detail {
namespace {

// KISS FFT's generic butterfly for a prime factor p costs O(p) per output; above this,
// Bluestein's three power-of-two transforms of size >= 2n are faster.
constexpr int64_t kLargestDirectFactor = 61;

int64_t largest_prime_factor(int64_t n) {
  int64_t largest = 1;
  for (int64_t f = 2; f * f <= n; ++f)
    while (n % f == 0) {
      largest = f;
      n /= f;
    }
  return std::max(largest, n);
}

}  // namespace

FftPlan::FftPlan(int64_t n, bool inverse) : n_(n) {
  if (largest_prime_factor(n) <= kLargestDirectFactor) {
    direct_ = std::make_unique<kissfft<double>>(static_cast<size_t>(n), inverse);
    return;
  }
  // Bluestein: 2jk = j^2 + k^2 - (k - j)^2 turns the transform into a convolution with
  // the chirp, done circularly at a power-of-two length m >= 2n - 1.
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  const double sign = inverse ? 1.0 : -1.0;
  chirp_.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle exact for large k (e^(i pi k^2 / n) has period 2n in k^2).
    const auto k2 = static_cast<uint64_t>(k) * static_cast<uint64_t>(k) % static_cast<uint64_t>(2 * n);
    chirp_[static_cast<size_t>(k)] = std::polar(1.0, sign * std::numbers::pi * static_cast<double>(k2) / n);
  }
  std::vector<Complex> filter(static_cast<size_t>(m));
  filter[0] = std::conj(chirp_[0]);
  for (int64_t k = 1; k < n; ++k)
    filter[static_cast<size_t>(k)] = filter[static_cast<size_t>(m - k)] =
        std::conj(chirp_[static_cast<size_t>(k)]);
  forward_ = std::make_unique<kissfft<double>>(static_cast<size_t>(m), false);
  backward_ = std::make_unique<kissfft<double>>(static_cast<size_t>(m), true);
  filter_spectrum_.resize(static_cast<size_t>(m));
  forward_->transform(filter.data(), filter_spectrum_.data());
}

void FftPlan::transform(const Complex* in, Complex* out, std::vector<Complex>& scratch) const {
  if (n_ == 1) {
    out[0] = in[0];
    return;
  }
  if (direct_) {
    direct_->transform(in, out);
    return;
  }
  const size_t m = filter_spectrum_.size(), n = static_cast<size_t>(n_);
  scratch.assign(2 * m, Complex(0.0, 0.0));
  Complex* a = scratch.data();
  Complex* spectrum = a + m;
  for (size_t k = 0; k < n; ++k) a[k] = in[k] * chirp_[k];
  forward_->transform(a, spectrum);
  for (size_t j = 0; j < m; ++j) spectrum[j] *= filter_spectrum_[j];
  backward_->transform(spectrum, a);
  const double scale = 1.0 / static_cast<double>(m);
  for (size_t k = 0; k < n; ++k) out[k] = chirp_[k] * a[k] * scale;
}

}  // namespace ef::detail
