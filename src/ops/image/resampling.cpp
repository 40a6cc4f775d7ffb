// The per-axis maps of each resize method (TensorFlow's formulas; see each function) and
// the separable kernel that applies a pair of them.
#include "ops/image/resampling.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>

#include "backends/cpu/elementwise.h"
#include "eagerflow/core/error.h"
#include "eagerflow/core/threading.h"

namespace ef::image {
namespace {

// ScaleAndTranslate's kernels (TensorFlow's sampling_kernels.h), each zero past its radius.
struct SamplingKernel {
  std::string_view name;
  double radius;
  double (*at)(double x);  // x >= 0
};

double lanczos(double x, double radius) {
  if (x > radius) return 0.0;
  if (x <= 1e-3) return 1.0;
  const double pi_x = std::numbers::pi * x;
  return radius * std::sin(pi_x) * std::sin(pi_x / radius) / (pi_x * pi_x);
}

constexpr SamplingKernel kSamplingKernels[] = {
    {"lanczos1", 1.0, [](double x) { return lanczos(x, 1.0); }},
    {"lanczos3", 3.0, [](double x) { return lanczos(x, 3.0); }},
    {"lanczos5", 5.0, [](double x) { return lanczos(x, 5.0); }},
    // sigma = radius / 3.
    {"gaussian", 1.5, [](double x) { return x >= 1.5 ? 0.0 : std::exp(-x * x / (2 * 0.5 * 0.5)); }},
    {"box", 1.0, [](double x) { return x < 0.5    ? 1.0
                                       : x == 0.5 ? 0.5
                                                  : 0.0; }},
    {"triangle", 1.0, [](double x) { return x < 1.0 ? 1.0 - x : 0.0; }},
    // Keys' cubic with a = -0.5.
    {"keyscubic", 2.0,
     [](double x) {
       return x >= 2.0   ? 0.0
              : x >= 1.0 ? ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
                         : (1.5 * x - 2.5) * x * x + 1.0;
     }},
    // Mitchell-Netravali with B = C = 1/3.
    {"mitchellcubic", 2.0,
     [](double x) {
       return x >= 2.0   ? 0.0
              : x >= 1.0 ? ((-7.0 / 18.0 * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0
                         : (7.0 / 6.0 * x - 2.0) * x * x + 8.0 / 9.0;
     }},
};

const SamplingKernel* find_kernel(std::string_view name) {
  for (const SamplingKernel& k : kSamplingKernels)
    if (k.name == name) return &k;
  return nullptr;
}

// Entries of every map are bounded: a raw scale_and_translate with a tiny scale and
// antialiasing would otherwise read the whole input for every output pixel.
constexpr int64_t kMaxMapEntries = int64_t{1} << 28;

// ResizeNearestNeighbor, half-pixel centers: pixel min(floor((o + 0.5) * in / out), in - 1),
// computed in float32 as TensorFlow (and PyTorch's nearest-exact) do: where the product
// is an integer, float32 and double can round to different sides of it and pick
// neighbouring pixels.
AxisMap nearest_axis(int64_t in, int64_t out) {
  AxisMap m{.in = in, .out = out};
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    m.add(std::min(static_cast<int64_t>(std::floor((static_cast<float>(o) + 0.5f) * scale)), in - 1), 1.0);
    m.end_pixel();
  }
  return m;
}

// ResizeArea: output pixel o averages the input interval [o * in / out, (o + 1) * in / out),
// each input pixel weighted by the length it overlaps.
AxisMap area_axis(int64_t in, int64_t out) {
  AxisMap m{.in = in, .out = out};
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  for (int64_t o = 0; o < out; ++o) {
    const double lo = static_cast<double>(o) * scale, hi = static_cast<double>(o + 1) * scale;
    for (auto i = static_cast<int64_t>(std::floor(lo)); i < static_cast<int64_t>(std::ceil(hi)); ++i) {
      const double overlap = std::min(static_cast<double>(i + 1), hi) - std::max(static_cast<double>(i), lo);
      if (overlap > 0) m.add(std::min(i, in - 1), overlap / scale);
    }
    m.end_pixel();
  }
  return m;
}

}  // namespace

AxisMap AxisMap::transposed() const {
  AxisMap t{.in = out, .out = in};
  t.offsets.assign(static_cast<size_t>(in) + 1, 0);
  for (int64_t i : index) ++t.offsets[static_cast<size_t>(i) + 1];
  for (size_t i = 1; i < t.offsets.size(); ++i) t.offsets[i] += t.offsets[i - 1];
  t.index.resize(index.size());
  t.weight.resize(weight.size());
  std::vector<int64_t> next(t.offsets.begin(), t.offsets.end() - 1);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t e = offsets[static_cast<size_t>(o)]; e < offsets[static_cast<size_t>(o) + 1]; ++e) {
      const auto slot = static_cast<size_t>(next[static_cast<size_t>(index[static_cast<size_t>(e)])]++);
      t.index[slot] = o;
      t.weight[slot] = weight[static_cast<size_t>(e)];
    }
  return t;
}

void check_resize_method(std::string_view method, std::string_view op) {
  if (method != "bilinear" && method != "bicubic" && method != "nearest" && method != "area")
    fail(op, ": argument 'method' = \"", method,
         "\" is not one of bilinear, nearest, bicubic, area, lanczos3, lanczos5, gaussian, mitchellcubic");
}

AxisMap scale_and_translate_axis(std::string_view kernel_name, bool antialias, double scale, double translate,
                                 int64_t in, int64_t out, std::string_view op) {
  const SamplingKernel* kernel = find_kernel(kernel_name);
  if (kernel == nullptr)
    fail(op, ": argument 'kernel_type' = \"", kernel_name,
         "\" is not one of lanczos1, lanczos3, lanczos5, gaussian, box, triangle, keyscubic, mitchellcubic");
  if (!(scale > 0) || !std::isfinite(scale) || !std::isfinite(translate))
    fail(op, ": arguments 'scale' and 'translate' must be finite and the scale positive, got scale ", scale,
         " and translate ", translate);
  const double inv_scale = 1.0 / scale;
  // Downscaling with antialiasing widens the kernel to the input pixels one output covers.
  const double kernel_scale = antialias ? std::max(inv_scale, 1.0) : 1.0;
  const double reach = kernel->radius * kernel_scale;
  const double span = std::min(2 * std::ceil(reach) + 1, static_cast<double>(in));
  if (span * static_cast<double>(out) > static_cast<double>(kMaxMapEntries))
    fail(op, ": a scale of ", scale, " would read ", span, " input pixels for each of ", out,
         " output pixels; resize in steps");
  AxisMap m{.in = in, .out = out};
  std::vector<double> taps;
  for (int64_t o = 0; o < out; ++o) {
    const double sample = (static_cast<double>(o) + 0.5 - translate) * inv_scale;
    // Outside the input: no taps, a zero pixel.
    if (sample < 0 || sample > static_cast<double>(in)) {
      m.end_pixel();
      continue;
    }
    const int64_t first =
        std::clamp(static_cast<int64_t>(std::ceil(sample - reach - 0.5)), int64_t{0}, in - 1);
    const int64_t last =
        std::clamp(static_cast<int64_t>(std::floor(sample + reach - 0.5)), int64_t{0}, in - 1);
    taps.clear();
    double total = 0;
    for (int64_t i = first; i <= last; ++i) {
      taps.push_back(kernel->at(std::abs(static_cast<double>(i) + 0.5 - sample) / kernel_scale));
      total += taps.back();
    }
    // The taps inside the input sum to 1 (TensorFlow leaves a near-zero total alone).
    const double norm = std::abs(total) >= 1000.0 * FLT_MIN ? 1.0 / total : 1.0;
    // A zero weight is left out so that a NaN it would multiply stays out too.
    for (int64_t i = first; i <= last; ++i)
      if (const double w = taps[static_cast<size_t>(i - first)] * norm; w != 0) m.add(i, w);
    m.end_pixel();
  }
  return m;
}

AxisMap resize_axis(std::string_view method, int64_t in, int64_t out, std::string_view op) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  // Half-pixel bilinear and bicubic are ScaleAndTranslate's triangle and Keys cubic
  // kernels, unwidened: the sample point (o + 0.5) * in / out - 0.5 reads its two
  // (four) neighbours, and taps outside the input drop out with renormalization.
  if (method == "bilinear") return scale_and_translate_axis("triangle", false, scale, 0.0, in, out, op);
  if (method == "bicubic") return scale_and_translate_axis("keyscubic", false, scale, 0.0, in, out, op);
  if (method == "nearest") return nearest_axis(in, out);
  check_resize_method(method, op);
  return area_axis(in, out);
}

namespace {

using cpu::typed_data;
using cpu::typed_output;

// An estimate of one multiply-add over a channel vector, for parallel_for's grain.
constexpr double kTapNs = 0.4;

// Applies `map` along one axis of x, viewed as [outer, map.in, inner], into y [outer,
// map.out, inner]: each output row of `inner` values is a weighted sum of input rows.
template <class T>
void resample_axis(const T* x, T* y, int64_t outer, int64_t inner, const AxisMap& map) {
  const double taps =
      static_cast<double>(map.index.size()) / static_cast<double>(std::max<int64_t>(map.out, 1));
  parallel_for(outer * map.out, kTapNs * taps * static_cast<double>(inner), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / map.out, o = r % map.out;
      T* row = y + r * inner;
      std::fill(row, row + inner, T(0));
      for (int64_t e = map.offsets[static_cast<size_t>(o)]; e < map.offsets[static_cast<size_t>(o) + 1];
           ++e) {
        const T w = static_cast<T>(map.weight[static_cast<size_t>(e)]);
        const T* src = x + (b * map.in + map.index[static_cast<size_t>(e)]) * inner;
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) row[i] += w * src[i];
      }
    }
  });
}

template <class T>
void resample_typed(const Tensor& x_in, Tensor& y, const AxisMap& rows, const AxisMap& cols) {
  const Tensor x = x_in.contiguous();
  const int64_t n = x.shape()[0], c = x.shape()[3];
  // The axis whose pass leaves the smaller intermediate goes first: a tall image made
  // wide would otherwise pass through [N, in_h, out_w, C].
  const bool width_first = rows.in * cols.out <= rows.out * cols.in;
  const Shape between = width_first ? Shape{n, rows.in, cols.out, c} : Shape{n, rows.out, cols.in, c};
  Tensor tmp = ef::detail::empty_tensor(x.dtype(), between, kCPU, "resample");
  T* t = typed_output<T>(tmp);
  if (width_first) {
    resample_axis(typed_data<T>(x), t, n * rows.in, c, cols);
    resample_axis(static_cast<const T*>(t), typed_output<T>(y), n, cols.out * c, rows);
  } else {
    resample_axis(typed_data<T>(x), t, n, cols.in * c, rows);
    resample_axis(static_cast<const T*>(t), typed_output<T>(y), n * rows.out, c, cols);
  }
}

}  // namespace

void resample(const Tensor& x, Tensor& y, const AxisMap& rows, const AxisMap& cols) {
  if (y.num_elements() == 0) return;
  cpu::dispatch_in<cpu::kNumericTypes>(y.dtype(), "resample", [&](auto tag) {
    resample_typed<typename decltype(tag)::type>(x, y, rows, cols);
  });
}

}  // namespace ef::image
