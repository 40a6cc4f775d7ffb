// Complex numbers (ef.complex, ef.math.real/imag/conj/angle) and ef.signal's
// primitives (the FFTs, frame, overlap_and_add, windows, stft). python/eagerflow/signal.py
// gives the signal ops TensorFlow's signatures (window functions as Python callables).
#include <optional>

#include <pybind11/stl.h>

#include "eagerflow/ops/math.h"
#include "eagerflow/ops/signal.h"
#include "unary_binding.h"

namespace efpy {
namespace {

using namespace pybind11::literals;

constexpr ef::CallSite kPython{};

// fft_length as TensorFlow takes it: None, an int, or a list / tensor of one int.
std::optional<int64_t> fft_length_of(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  if (PyLong_Check(obj.ptr())) return int64_of(obj, "fft_length");
  const std::vector<int64_t> values = to_ints(obj, "fft_length");
  if (values.size() != 1)
    throw ef::InvalidArgumentError("fft_length must be one length (the innermost axis), got " +
                                   std::to_string(values.size()) + " values");
  return values[0];
}

}  // namespace

void bind_signal_ops(py::module_& m) {
  m.def(
      "complex", [](TensorArg real, TensorArg imag, py::handle) { return ef::complex(real, imag, kPython); },
      R"doc(Returns the complex tensor real + i imag.

float32 parts make complex64, float64 parts complex128; the shapes broadcast.

>>> ef.complex([1.], [2.]).numpy()
array([1.+2.j], dtype=complex64)

Args:
  real: A tensor-like of dtype float32 or float64.
  imag: A tensor-like of real's dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A complex64 or complex128 Tensor of the broadcast shape.

Raises:
  InvalidArgumentError: the dtypes differ or are not float32/float64, or the shapes
    do not broadcast.
)doc",
      "real"_a, "imag"_a, "name"_a = py::none());
  bind_unary<ef::real>(m, "real", R"doc(Returns the real part of a complex tensor (a real tensor as it is).

>>> ef.math.real(ef.complex([1.], [2.])).numpy()
array([1.], dtype=float32)

Args:
  x: A tensor-like of any float or complex dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A float32 (complex64 input) or float64 (complex128) Tensor of x's shape.
)doc");
  bind_unary<ef::imag>(m, "imag", R"doc(Returns the imaginary part of a complex tensor (zeros for a real one).

>>> ef.math.imag(ef.complex([1.], [2.])).numpy()
array([2.], dtype=float32)

Args:
  x: A tensor-like of any float or complex dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A float32 (complex64 input) or float64 (complex128) Tensor of x's shape.
)doc");
  bind_unary<ef::conj>(m, "conj", R"doc(Returns the complex conjugate, real - i imag (a real tensor as it is).

>>> ef.math.conj(ef.complex([1.], [2.])).numpy()
array([1.-2.j], dtype=complex64)

Args:
  x: A tensor-like.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of x's dtype and shape.
)doc");
  bind_unary<ef::angle>(m, "angle", R"doc(Returns the argument atan2(imag, real) in [-pi, pi].

For a real tensor: pi where it is negative, else 0 (NaN stays NaN).

>>> ef.math.angle(ef.complex([0.], [1.])).numpy()
array([1.5707964], dtype=float32)

Args:
  x: A tensor-like of a float or complex dtype.
  name: Ignored (TensorFlow compatibility).

Returns:
  A real Tensor of x's shape.
)doc");

  // ---- ef.signal (python/eagerflow/signal.py documents them) ----
  m.def(
      "signal_fft", [](TensorArg x) { return ef::signal::fft(x, kPython); }, "The DFT of the innermost axis.",
      "input"_a);
  m.def(
      "signal_ifft", [](TensorArg x) { return ef::signal::ifft(x, kPython); },
      "The inverse DFT of the innermost axis.", "input"_a);
  m.def(
      "signal_fft2d", [](TensorArg x) { return ef::signal::fft2d(x, kPython); },
      "The DFT of the two innermost axes.", "input"_a);
  m.def(
      "signal_ifft2d", [](TensorArg x) { return ef::signal::ifft2d(x, kPython); },
      "The inverse DFT of the two innermost axes.", "input"_a);
  m.def(
      "signal_rfft",
      [](TensorArg x, py::handle fft_length) {
        return ef::signal::rfft(x, fft_length_of(fft_length), kPython);
      },
      "The DFT of a real innermost axis: its non-negative frequencies.", "input"_a,
      "fft_length"_a = py::none());
  m.def(
      "signal_irfft",
      [](TensorArg x, py::handle fft_length) {
        return ef::signal::irfft(x, fft_length_of(fft_length), kPython);
      },
      "The real signal of the given non-negative frequencies.", "input"_a, "fft_length"_a = py::none());
  m.def(
      "signal_frame",
      [](TensorArg signal, int64_t frame_length, int64_t frame_step, bool pad_end, double pad_value,
         int axis) {
        return ef::signal::frame(signal, frame_length, frame_step, pad_end, pad_value, axis, kPython);
      },
      "Frames of a signal along an axis.", "signal"_a, "frame_length"_a, "frame_step"_a, "pad_end"_a = false,
      "pad_value"_a = 0.0, "axis"_a = -1);
  m.def(
      "signal_overlap_and_add",
      [](TensorArg signal, int64_t frame_step) {
        return ef::signal::overlap_and_add(signal, frame_step, kPython);
      },
      "The sum of frames laid frame_step apart.", "signal"_a, "frame_step"_a);
  m.def(
      "signal_hann_window",
      [](int64_t length, bool periodic, DTypeArg dtype) {
        return ef::signal::hann_window(length, periodic, dtype.value.value_or(ef::DType::Float32), kPython);
      },
      "A Hann window.", "window_length"_a, "periodic"_a = true, "dtype"_a = py::none());
  m.def(
      "signal_hamming_window",
      [](int64_t length, bool periodic, DTypeArg dtype) {
        return ef::signal::hamming_window(length, periodic, dtype.value.value_or(ef::DType::Float32),
                                          kPython);
      },
      "A Hamming window.", "window_length"_a, "periodic"_a = true, "dtype"_a = py::none());
  m.def(
      "signal_stft",
      [](TensorArg signals, int64_t frame_length, int64_t frame_step, py::handle fft_length,
         py::handle window, bool pad_end) {
        return ef::signal::stft(signals, frame_length, frame_step, fft_length_of(fft_length),
                                optional_tensor(window), pad_end, kPython);
      },
      "The short-time Fourier transform with a given window tensor.", "signals"_a, "frame_length"_a,
      "frame_step"_a, "fft_length"_a = py::none(), "window"_a = py::none(), "pad_end"_a = false);
  m.def(
      "signal_inverse_stft",
      [](TensorArg stfts, int64_t frame_length, int64_t frame_step, py::handle fft_length,
         py::handle window) {
        return ef::signal::inverse_stft(stfts, frame_length, frame_step, fft_length_of(fft_length),
                                        optional_tensor(window), kPython);
      },
      "The inverse short-time Fourier transform with a given window tensor.", "stfts"_a, "frame_length"_a,
      "frame_step"_a, "fft_length"_a = py::none(), "window"_a = py::none());
  m.def(
      "signal_inverse_stft_window",
      [](int64_t frame_length, int64_t frame_step, py::handle forward_window, DTypeArg dtype) {
        return ef::signal::inverse_stft_window(frame_length, frame_step, optional_tensor(forward_window),
                                               dtype.value.value_or(ef::DType::Float32), kPython);
      },
      "The window that inverts stft's forward window.", "frame_length"_a, "frame_step"_a,
      "forward_window"_a = py::none(), "dtype"_a = py::none());
}

}  // namespace efpy
