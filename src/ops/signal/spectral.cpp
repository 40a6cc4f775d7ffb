// tf.signal's framing, windows and short-time Fourier transforms, composed from public
// ops (gather, unsorted_segment_sum, rfft, irfft), so their gradients and graph forms are
// those ops'.
#include <cmath>
#include <numbers>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/ops/signal.h"
#include "ops/op_helpers.h"

namespace ef::signal {
namespace {

void check_positive(std::string_view op, std::string_view arg, int64_t value) {
  if (value < 1) fail(op, ": argument '", arg, "' must be at least 1, got ", value);
}

// The size of `x`'s axis `axis`, which must be known (frame counts are shapes).
int64_t known_size(const Tensor& x, int axis, std::string_view op) {
  const int64_t n = x.shape()[axis];
  if (n == kUnknownDim)
    fail(op, ": axis ", axis, " of argument 'signal' (shape ", x.shape(),
         ") has an unknown size; the number of frames must be known");
  return n;
}

// An axis permutation of rank `rank` that moves axis `from` to position `to`.
std::vector<int64_t> moving_axis(int rank, int from, int to) {
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i)
    if (i != from) perm.push_back(i);
  perm.insert(perm.begin() + to, from);
  return perm;
}

// 0.5 - 0.5 cos or 0.54 - 0.46 cos over `length` samples (a, b: the cosine's weights).
Tensor cosine_window(std::string_view op, int64_t length, bool periodic, DType dtype, double a, double b) {
  if (length < 0) fail(op, ": argument 'window_length' must not be negative, got ", length);
  if (dtype != DType::Float32 && dtype != DType::Float64 && !is_half(dtype))
    fail(op, ": argument 'dtype' must be a float dtype, got ", dtype);
  std::vector<double> w(static_cast<size_t>(length), 1.0);
  const int64_t denominator = periodic ? length : length - 1;
  if (length > 1)
    for (int64_t i = 0; i < length; ++i)
      w[static_cast<size_t>(i)] =
          a - b * std::cos(2 * std::numbers::pi * static_cast<double>(i) / denominator);
  return cast(constant(w, Shape{length}), dtype);
}

// The sample each element of [frames, frame_length] frames reads: i * frame_step + j.
Tensor frame_positions(int64_t frames, int64_t frame_length, int64_t frame_step) {
  std::vector<int64_t> positions(static_cast<size_t>(frames * frame_length));
  for (int64_t i = 0; i < frames; ++i)
    for (int64_t j = 0; j < frame_length; ++j)
      positions[static_cast<size_t>(i * frame_length + j)] = i * frame_step + j;
  return constant(positions, Shape{frames, frame_length});
}

int64_t default_fft_length(int64_t frame_length) {
  int64_t n = 1;
  while (n < frame_length) n *= 2;
  return n;
}

Tensor window_or_hann(const std::optional<Tensor>& window, int64_t frame_length, DType dtype,
                      std::string_view op) {
  if (!window) return hann_window(frame_length, true, dtype);
  if (window->rank() != 1 || (window->shape()[0] != kUnknownDim && window->shape()[0] != frame_length))
    fail(op, ": argument 'window' must have shape [", frame_length, "] (frame_length), got ",
         window->shape());
  return *window;
}

}  // namespace

Tensor frame(const Tensor& signal, int64_t frame_length, int64_t frame_step, bool pad_end, double pad_value,
             int axis, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_positive("frame", "frame_length", frame_length);
    check_positive("frame", "frame_step", frame_step);
    if (!signal.defined()) fail("frame: argument 'signal' is an undefined tensor");
    if (signal.rank() < 1) fail("frame: argument 'signal' must have at least one axis, got a scalar");
    const int a = normalize_axis(axis, signal.rank(), "frame");
    const int64_t length = known_size(signal, a, "frame");
    Tensor padded = signal;
    int64_t frames = 0;
    if (pad_end) {
      frames = (length + frame_step - 1) / frame_step;
      const int64_t needed = frames > 0 ? (frames - 1) * frame_step + frame_length : 0;
      if (needed > length) {
        std::vector<std::pair<int64_t, int64_t>> paddings(static_cast<size_t>(signal.rank()), {0, 0});
        paddings[static_cast<size_t>(a)].second = needed - length;
        padded = pad(signal, paddings, "CONSTANT", pad_value);
      }
    } else {
      frames = length >= frame_length ? 1 + (length - frame_length) / frame_step : 0;
    }
    return gather(padded, frame_positions(frames, frame_length, frame_step), a);
  });
}

Tensor overlap_and_add(const Tensor& signal, int64_t frame_step, CallSite where) {
  return detail::with_call_site(where, [&]() -> Tensor {
    check_positive("overlap_and_add", "frame_step", frame_step);
    if (!signal.defined()) fail("overlap_and_add: argument 'signal' is an undefined tensor");
    const int rank = signal.rank();
    if (rank < 2)
      fail("overlap_and_add: argument 'signal' must have shape [..., frames, frame_length], got ",
           signal.shape());
    if (is_complex(signal.dtype()))
      return complex(overlap_and_add(real(signal), frame_step), overlap_and_add(imag(signal), frame_step));
    const int64_t frames = known_size(signal, rank - 2, "overlap_and_add");
    const int64_t frame_length = known_size(signal, rank - 1, "overlap_and_add");
    const int64_t length = std::max<int64_t>(0, (frames - 1) * frame_step + frame_length);
    // Sum sample j of frame i into output sample i * frame_step + j: the frame axes first,
    // as segment ids, then the output axis back to the end.
    std::vector<int64_t> to_front(static_cast<size_t>(rank));
    to_front[0] = rank - 2;
    to_front[1] = rank - 1;
    for (int i = 0; i < rank - 2; ++i) to_front[static_cast<size_t>(i + 2)] = i;
    const Tensor summed = unsorted_segment_sum(transpose(signal, to_front),
                                               frame_positions(frames, frame_length, frame_step), length);
    return transpose(summed, moving_axis(rank - 1, 0, rank - 2));
  });
}

Tensor hann_window(int64_t length, bool periodic, DType dtype, CallSite where) {
  return detail::with_call_site(
      where, [&] { return cosine_window("hann_window", length, periodic, dtype, 0.5, 0.5); });
}

Tensor hamming_window(int64_t length, bool periodic, DType dtype, CallSite where) {
  return detail::with_call_site(
      where, [&] { return cosine_window("hamming_window", length, periodic, dtype, 0.54, 0.46); });
}

Tensor stft(const Tensor& signals, int64_t frame_length, int64_t frame_step,
            std::optional<int64_t> fft_length, std::optional<Tensor> window, bool pad_end, CallSite where) {
  return detail::with_call_site(where, [&] {
    if (!signals.defined()) fail("stft: argument 'signals' is an undefined tensor");
    if (signals.dtype() != DType::Float32 && signals.dtype() != DType::Float64)
      fail("stft: argument 'signals' must be float32 or float64, got ", signals.dtype());
    const Tensor frames = frame(signals, frame_length, frame_step, pad_end);
    const Tensor windowed = multiply(frames, window_or_hann(window, frame_length, signals.dtype(), "stft"));
    return rfft(windowed, fft_length.value_or(default_fft_length(frame_length)));
  });
}

Tensor inverse_stft(const Tensor& stfts, int64_t frame_length, int64_t frame_step,
                    std::optional<int64_t> fft_length, std::optional<Tensor> window, CallSite where) {
  return detail::with_call_site(where, [&] {
    if (!stfts.defined()) fail("inverse_stft: argument 'stfts' is an undefined tensor");
    if (!is_complex(stfts.dtype()))
      fail("inverse_stft: argument 'stfts' must be complex64 or complex128, got ", stfts.dtype());
    check_positive("inverse_stft", "frame_length", frame_length);
    check_positive("inverse_stft", "frame_step", frame_step);
    if (stfts.rank() < 2)
      fail("inverse_stft: argument 'stfts' must have shape [..., frames, fft_unique_bins], got ",
           stfts.shape());
    const int64_t n = fft_length.value_or(default_fft_length(frame_length));
    Tensor frames = irfft(stfts, n);
    if (n > frame_length) {
      std::vector<int64_t> begin(static_cast<size_t>(frames.rank()), 0),
          size(static_cast<size_t>(frames.rank()), -1);
      size.back() = frame_length;
      frames = slice(frames, begin, size);
    } else if (n < frame_length) {
      std::vector<std::pair<int64_t, int64_t>> paddings(static_cast<size_t>(frames.rank()), {0, 0});
      paddings.back().second = frame_length - n;
      frames = pad(frames, paddings);
    }
    const DType dtype = real_dtype(stfts.dtype());
    return overlap_and_add(multiply(frames, window_or_hann(window, frame_length, dtype, "inverse_stft")),
                           frame_step);
  });
}

Tensor inverse_stft_window(int64_t frame_length, int64_t frame_step, std::optional<Tensor> forward_window,
                           DType dtype, CallSite where) {
  return detail::with_call_site(where, [&] {
    check_positive("inverse_stft_window", "frame_length", frame_length);
    check_positive("inverse_stft_window", "frame_step", frame_step);
    const Tensor forward = window_or_hann(forward_window, frame_length, dtype, "inverse_stft_window");
    // The squared window summed over every frame overlapping a sample: fold it into
    // rows of frame_step, add the rows, and repeat the sums over the frame.
    const int64_t overlaps = (frame_length + frame_step - 1) / frame_step;
    const Tensor squares = pad(square(forward), {{0, overlaps * frame_step - frame_length}});
    const Tensor sums = reduce_sum(reshape(squares, Shape{overlaps, frame_step}), {0}, true);
    const Tensor denominator = reshape(tile(sums, {overlaps, 1}), Shape{overlaps * frame_step});
    return divide(forward, slice(denominator, {0}, {frame_length}));
  });
}

}  // namespace ef::signal
