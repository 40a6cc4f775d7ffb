// Gradients through complex numbers and ef::signal, against float64 central
// differences (first and second order, and the jvp rules of every op used): each
// function builds complex tensors from real inputs and ends in a real loss, so the
// check covers the convention dL/dRe + i dL/dIm end to end.
#include <functional>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::rand64;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// A real loss that reads both parts of z with different weights, so no part's gradient
// can hide behind a symmetric one.
Tensor loss_of(const Tensor& z) {
  const Tensor re = real(z), im = imag(z);
  return add(reduce_sum(multiply(re, re)), reduce_sum(multiply(im, add(re, 0.5))));
}

TEST(ComplexGradients, ArithmeticAbsAngleAndCasts) {
  const std::vector<Tensor> in = {rand64(Shape{2, 3}, 1), rand64(Shape{2, 3}, 2),
                                  rand64(Shape{3}, 3, 0.5, 1.5), rand64(Shape{3}, 4)};
  auto z = [](const std::vector<Tensor>& v) { return complex(v[0], v[1]); };
  auto w = [](const std::vector<Tensor>& v) { return complex(v[2], v[3]); };
  const std::vector<std::pair<const char*, Fn>> cases = {
      {"add", [&](auto& v) { return loss_of(add(z(v), w(v))); }},
      {"subtract", [&](auto& v) { return loss_of(subtract(w(v), z(v))); }},
      {"multiply", [&](auto& v) { return loss_of(multiply(z(v), w(v))); }},
      {"divide", [&](auto& v) { return loss_of(divide(z(v), w(v))); }},
      {"negative, conj", [&](auto& v) { return loss_of(negative(conj(z(v)))); }},
      {"exp", [&](auto& v) { return loss_of(exp(z(v))); }},
      {"log", [&](auto& v) { return loss_of(log(w(v))); }},
      {"abs", [&](auto& v) { return reduce_sum(multiply(abs(z(v)), v[0])); }},
      {"angle", [&](auto& v) { return reduce_sum(angle(w(v))); }},
      {"reduce_sum, reduce_mean",
       [&](auto& v) { return loss_of(add(reduce_sum(z(v), {0}), reduce_mean(w(v)))); }},
      {"matmul",
       [&](auto& v) {
         return loss_of(matmul(z(v), reshape(w(v), Shape{3, 1})));
       }},
      {"casts",
       [&](auto& v) {
         return loss_of(add(cast(v[0], DType::Complex128), complex(cast(z(v), DType::Float64), v[1])));
       }},
      {"transpose, slice, concat",
       [&](auto& v) {
         return loss_of(slice(concat({transpose(z(v)), reshape(w(v), Shape{3, 1})}, 1), {0, 1}, {2, 2}));
       }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    expect_gradients(f, in);
  }
}

TEST(ComplexGradients, AbsIsZeroAtZero) {
  GradientTape tape;
  const Tensor re = constant({0.0, 3.0}), im = constant({0.0, 4.0});
  tape.watch(re);
  tape.watch(im);
  const Tensor magnitude = reduce_sum(abs(complex(re, im)));
  const std::vector<Tensor> g = tape.gradient(magnitude, {re, im});
  testing::expect_values(g[0], {0, 0.6});
  testing::expect_values(g[1], {0, 0.8});
}

TEST(SignalGradients, Transforms) {
  const std::vector<Tensor> in = {rand64(Shape{2, 6}, 5), rand64(Shape{2, 6}, 6), rand64(Shape{2, 7}, 7)};
  auto z = [](const std::vector<Tensor>& v) { return complex(v[0], v[1]); };
  const std::vector<std::pair<const char*, Fn>> cases = {
      {"fft", [&](auto& v) { return loss_of(signal::fft(z(v))); }},
      {"ifft", [&](auto& v) { return loss_of(signal::ifft(z(v))); }},
      {"fft2d, ifft2d",
       [&](auto& v) { return loss_of(signal::ifft2d(multiply(signal::fft2d(z(v)), z(v)))); }},
      {"rfft (odd length)", [&](auto& v) { return loss_of(signal::rfft(v[2])); }},
      {"rfft (cropped)", [&](auto& v) { return loss_of(signal::rfft(v[2], 4)); }},
      {"rfft (padded)", [&](auto& v) { return loss_of(signal::rfft(v[2], 12)); }},
      {"irfft (even)",
       [&](auto& v) { return reduce_sum(multiply(signal::irfft(z(v)), signal::irfft(z(v)))); }},
      {"irfft (odd, padded bins)", [&](auto& v) { return reduce_sum(square(signal::irfft(z(v), 13))); }},
      {"irfft (cropped bins)",
       [&](auto& v) { return reduce_sum(multiply(signal::irfft(z(v), 4), v[2][0][0])); }},
      {"rfft then irfft", [&](auto& v) { return reduce_sum(square(signal::irfft(signal::rfft(v[2]), 7))); }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    expect_gradients(f, in);
  }
}

TEST(SignalGradients, FramesAndStft) {
  const std::vector<Tensor> in = {rand64(Shape{2, 20}, 8)};
  const std::vector<std::pair<const char*, Fn>> cases = {
      {"frame", [](auto& v) { return reduce_sum(square(signal::frame(v[0], 6, 4, true, 0.5))); }},
      {"overlap_and_add",
       [](auto& v) {
         return reduce_sum(square(signal::overlap_and_add(reshape(v[0], Shape{2, 4, 5}), 3)));
       }},
      {"stft", [](auto& v) { return reduce_sum(abs(signal::stft(v[0], 8, 4))); }},
      {"inverse_stft",
       [](auto& v) {
         return reduce_sum(square(signal::inverse_stft(signal::stft(v[0], 8, 4, 10), 8, 4, 10)));
       }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    expect_gradients(f, in);
  }
}

}  // namespace
}  // namespace ef
