// Signal processing (tf.signal): discrete Fourier transforms over the innermost axes,
// framing, windows and short-time Fourier transforms.
//
//   ef::Tensor spectrum = ef::signal::rfft(audio);              // [..., n / 2 + 1], complex64
//   ef::Tensor stfts = ef::signal::stft(audio, 256, 128);        // [..., frames, 129]
//   ef::Tensor magnitudes = ef::abs(stfts);                      // a spectrogram
//
// The transforms take complex64/complex128 (fft, ifft) or float32/float64 (rfft) and
// compute in double precision, so complex64 results are rounded once. Every op here is
// differentiable (the gradient of a real loss in a complex input is dL/dRe + i dL/dIm,
// as in TensorFlow and PyTorch) and runs on the CPU.
#pragma once

#include <optional>

#include "eagerflow/core/tensor.h"

namespace ef::signal {

// The discrete Fourier transform over the innermost axis, sum_k x_k e^(-2 pi i jk / n),
// and its inverse (1/n) sum_k x_k e^(+2 pi i jk / n). Any length n >= 1.
Tensor fft(const Tensor& input, CallSite where = CallSite::current());
Tensor ifft(const Tensor& input, CallSite where = CallSite::current());
// The same over the two innermost axes.
Tensor fft2d(const Tensor& input, CallSite where = CallSite::current());
Tensor ifft2d(const Tensor& input, CallSite where = CallSite::current());

// The transform of a real signal's innermost axis, cropped or zero-padded to
// `fft_length` (default: its length): the fft_length / 2 + 1 non-negative frequencies.
Tensor rfft(const Tensor& input, std::optional<int64_t> fft_length = std::nullopt,
            CallSite where = CallSite::current());
// The real signal of length `fft_length` (default 2 (m - 1) for m frequencies) whose
// rfft is `input`, cropped or zero-padded to fft_length / 2 + 1 frequencies. The
// imaginary parts of the zero (and, for even lengths, the last) frequency are ignored.
Tensor irfft(const Tensor& input, std::optional<int64_t> fft_length = std::nullopt,
             CallSite where = CallSite::current());

// Frames of `frame_length` samples every `frame_step` samples along `axis`: shape
// [..., frames, frame_length, ...]. With pad_end the signal is padded with pad_value so
// that every sample starts a frame's worth of steps, ceil(length / frame_step) frames;
// without, only whole frames, 1 + (length - frame_length) / frame_step (or none).
Tensor frame(const Tensor& signal, int64_t frame_length, int64_t frame_step, bool pad_end = false,
             double pad_value = 0.0, int axis = -1, CallSite where = CallSite::current());
// The sum of frames [..., frames, frame_length] laid frame_step apart: shape
// [..., (frames - 1) * frame_step + frame_length]. The inverse of frame up to window sums.
Tensor overlap_and_add(const Tensor& signal, int64_t frame_step, CallSite where = CallSite::current());

// Hann and Hamming windows of `length` samples (float32 or float64); periodic ones are
// for spectral analysis (the symmetric window of length + 1 without its last sample).
Tensor hann_window(int64_t length, bool periodic = true, DType dtype = DType::Float32,
                   CallSite where = CallSite::current());
Tensor hamming_window(int64_t length, bool periodic = true, DType dtype = DType::Float32,
                      CallSite where = CallSite::current());

// The short-time Fourier transform of real signals [..., samples]: the frames (as
// frame, without pad_end unless asked) times `window` (default: the periodic Hann window
// of frame_length; pass ones for none), through rfft of fft_length (default: the smallest
// power of two >= frame_length). Shape [..., frames, fft_length / 2 + 1].
Tensor stft(const Tensor& signals, int64_t frame_length, int64_t frame_step,
            std::optional<int64_t> fft_length = std::nullopt, std::optional<Tensor> window = std::nullopt,
            bool pad_end = false, CallSite where = CallSite::current());
// The signals whose stft is `stfts`: irfft of each frame, cropped (or padded) to
// frame_length, times `window` (default: the periodic Hann window, as TensorFlow),
// overlapped and added. Pass inverse_stft_window(...) for a perfect reconstruction.
Tensor inverse_stft(const Tensor& stfts, int64_t frame_length, int64_t frame_step,
                    std::optional<int64_t> fft_length = std::nullopt,
                    std::optional<Tensor> window = std::nullopt, CallSite where = CallSite::current());
// The window that makes inverse_stft invert stft with `forward_window` (default: the
// periodic Hann window of frame_length in `dtype`): the forward window divided by the
// sum of its squares overlapped every frame_step samples (tf.signal.inverse_stft_window_fn).
Tensor inverse_stft_window(int64_t frame_length, int64_t frame_step,
                           std::optional<Tensor> forward_window = std::nullopt, DType dtype = DType::Float32,
                           CallSite where = CallSite::current());

}  // namespace ef::signal
