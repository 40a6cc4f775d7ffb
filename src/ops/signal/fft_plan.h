// FftPlan: the discrete Fourier transform of one length, in double precision, on
// KISS FFT's mixed-radix C++ template (kissfft.hh, BSD-3-Clause). Lengths with a large
// prime factor, for which its generic butterflies take O(n p) time, go through
// Bluestein's algorithm instead: a convolution by power-of-two transforms, O(n log n)
// for every n. Internal to src/ops/signal.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include <kissfft/kissfft.hh>

namespace ef::detail {

class FftPlan {
 public:
  using Complex = std::complex<double>;

  // The unnormalized transform sum_k x_k e^(-+2 pi i jk / n) (+ when inverse), n >= 1.
  FftPlan(int64_t n, bool inverse);

  // out = the transform of in (n values each; they must not overlap). Thread-safe:
  // `scratch` is the caller's (any vector; resized here).
  void transform(const Complex* in, Complex* out, std::vector<Complex>& scratch) const;

  int64_t size() const { return n_; }

 private:
  int64_t n_;
  std::unique_ptr<kissfft<double>> direct_;  // null: Bluestein
  // Bluestein: chirp w_k = e^(-+i pi k^2 / n), the transform of the chirp filter, and
  // the power-of-two plans of the convolution.
  std::vector<Complex> chirp_, filter_spectrum_;
  std::unique_ptr<kissfft<double>> forward_, backward_;
};

}  // namespace ef::detail
