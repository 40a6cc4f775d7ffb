// oneDNN kernels for conv2d, conv2d_backprop_input and conv2d_backprop_filter.
//
// Note [conv2d on oneDNN]
// ~~~~~~~~~~~~~~~~~~~~~~~
// When it is used: float32 only (float64 and every case below stays on im2col + GEMM
// in conv2d.cpp), in builds that found libdnnl-dev, for the kernels and shapes where it
// measured faster (prefer_* below), unless EF_ONEDNN=0 (EF_ONEDNN=always: wherever
// it can, which the tests use to cover oneDNN on every shape). A case falls back to
// im2col when a dimension is zero, a tensor needs 2^30 elements or more, oneDNN rejects
// the geometry, asks for over 256 MB of scratch memory, or offers only its reference
// ("ref:") implementation, which is slower than ours.
//
// Why: oneDNN's JIT convolutions beat im2col + OpenBLAS on the forward pass of every
// shape measured, up to 4x where the input has few channels (a first layer), once the
// filter is reordered into the blocked layout the primitive chooses (format "any");
// its gradients win on some shapes and lose on others, so each kernel goes where it
// measured faster (prefer_* below, with the numbers).
//
// Threading (Note [one thread pool] in core/threading.h): Debian's oneDNN runs on
// OpenMP. Letting it start its own team next to our pool would put 4 busy threads on 2
// cores, so oneDNN always runs single-threaded here: the batch is cut into at most
// kMaxSlices slices of equal size, our parallel_for runs the slices, and each call
// into oneDNN (primitive creation included, which fixes the primitive's thread count)
// happens with OpenMP's thread count set to 1 on the calling thread and restored after,
// so no OpenMP thread is ever started and other OpenMP users in the process (PyTorch)
// keep their setting. The slicing depends on the batch size only, never on the thread
// count, so results do not depend on the number of threads.
//
// Primitives are cached by problem (kind, shapes, strides, dilations, padding and the
// slice's batch size), as are the filter reorders; a primitive runs on several threads
// at once, each with its own scratchpad (scratchpad mode "user").
#include "ops/nn/conv2d_onednn.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#ifdef EF_HAVE_ONEDNN
#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "eagerflow/core/threading.h"

extern "C" {
// OpenMP's runtime (libgomp, which libdnnl links), declared here because clang builds
// may lack omp.h.
int omp_get_max_threads();
void omp_set_num_threads(int);
}
#endif

namespace ef::detail {

namespace {
std::atomic<OnednnMode>& mode_flag() {
  static std::atomic<OnednnMode> mode{[] {
    const char* v = std::getenv("EF_ONEDNN");
    if (!onednn_built() || (v != nullptr && std::strcmp(v, "0") == 0)) return OnednnMode::Off;
    return v != nullptr && std::strcmp(v, "always") == 0 ? OnednnMode::Always : OnednnMode::Auto;
  }()};
  return mode;
}
}  // namespace

OnednnMode onednn_mode() { return mode_flag().load(std::memory_order_relaxed); }
void set_onednn_mode(OnednnMode mode) { mode_flag().store(onednn_built() ? mode : OnednnMode::Off); }

#ifndef EF_HAVE_ONEDNN

bool onednn_built() { return false; }
bool onednn_conv2d(const ConvProblem&, const float*, const float*, float*) { return false; }
bool onednn_conv2d_backprop_input(const ConvProblem&, const float*, const float*, float*) { return false; }
bool onednn_conv2d_backprop_filter(const ConvProblem&, const float*, const float*, float*) { return false; }

#else

bool onednn_built() { return true; }

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Which kernels go to oneDNN (mode Auto), from bench/cpp/conv_kernels.cpp on this
// project's 2-core AVX2 machine (shared, so +-15%), batch 32, im2col time / oneDNN
// time, medians at 1 thread (at 2 threads the same picture, noisier):
//                                    forward  backprop_input  backprop_filter
//   28x28x1 -> 32, 3x3 (CNN conv1)     4.6          0.67            3.7
//   32x32x3 -> 32, 3x3 SAME            3.3          0.80            3.0
//   13x13x32 -> 64, 3x3 (CNN conv2)    1.02         1.34            0.75
//   14x14x64 -> 64, 3x3 SAME           1.06         1.28            0.84
//   28x28x32 -> 64, 3x3 stride 2 SAME  1.24         1.27            1.06
//   16x16x16 -> 32, 3x3 dilation 2     1.48         1.73            0.42
//   28x28x16 -> 16, 5x5 SAME, batch 1  2.0          2.3             2.2
// so: the forward pass always; the input gradient unless the input has few channels
// (oneDNN's data gradient computes 8-channel blocks); the filter gradient only for
// few input channels, where im2col's GEMM is too thin and ours runs direct loops (a
// single small image is faster on oneDNN too, but one case is too little to go on).
// The Fashion-MNIST CNN's training epoch (bench/python/bench_training.py, 1 thread)
// went from 30.3 s to 22.0 s.
constexpr int64_t kFewChannels = 8;
bool prefer_forward(const ConvProblem&) { return true; }
bool prefer_backprop_input(const ConvProblem& p) { return p.c >= kFewChannels; }
bool prefer_backprop_filter(const ConvProblem& p) { return p.c < kFewChannels; }

// At most this many batch slices (Note [conv2d on oneDNN]): enough for the cores of a
// small machine, few enough that each slice keeps oneDNN's loops long.
constexpr int64_t kMaxSlices = 8;
// Rough cost of one multiply-add on oneDNN's JIT kernels, for parallel_for.
constexpr double kNsPerMac = 0.02;
// Cached primitives kept at most; the cache is emptied when full (a fuzzer or a
// model with many shapes must not grow it without bound).
constexpr size_t kMaxCached = 256;
// Tensors and attributes of this many elements or more stay on im2col (see usable).
constexpr int64_t kMaxIndex = int64_t{1} << 30;
// A primitive asking for more scratch memory than this (per thread) is not used.
constexpr size_t kMaxScratchpadBytes = size_t{256} << 20;

enum class Kind : int64_t { Forward, BackpropInput, BackpropFilter };

// OpenMP's thread count is 1 on this thread while the guard lives (see the Note).
class SingleThreaded {
 public:
  SingleThreaded() : saved_(omp_get_max_threads()) {
    if (saved_ != 1) omp_set_num_threads(1);
  }
  ~SingleThreaded() {
    if (saved_ != 1) omp_set_num_threads(saved_);
  }
  SingleThreaded(const SingleThreaded&) = delete;
  SingleThreaded& operator=(const SingleThreaded&) = delete;

 private:
  int saved_;
};

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The convolution's descriptors for a slice of `batch` images.
struct Geometry {
  memory::desc src, weights_any, weights_hwio, dst;
  memory::dims strides, dilations, pad_l, pad_r;
};

// False when oneDNN's output-size rule, out = (in + pad_l + pad_r - k_eff) / stride + 1,
// cannot give TensorFlow's output size (it always can for SAME and VALID).
bool make_geometry(const ConvProblem& p, int64_t batch, Geometry& geo) {
  const Window2d& g = p.g;
  const int64_t keff_h = (g.k_h - 1) * g.dilation_h + 1, keff_w = (g.k_w - 1) * g.dilation_w + 1;
  const int64_t pad_b = std::max<int64_t>((g.out_h - 1) * g.stride_h + keff_h - g.in_h - g.pad_top, 0);
  const int64_t pad_r = std::max<int64_t>((g.out_w - 1) * g.stride_w + keff_w - g.in_w - g.pad_left, 0);
  if ((g.in_h + g.pad_top + pad_b - keff_h) / g.stride_h + 1 != g.out_h ||
      (g.in_w + g.pad_left + pad_r - keff_w) / g.stride_w + 1 != g.out_w)
    return false;
  const auto f32 = memory::data_type::f32;
  geo.src = memory::desc({batch, p.c, g.in_h, g.in_w}, f32, Tag::nhwc);
  geo.weights_any = memory::desc({p.o, p.c, g.k_h, g.k_w}, f32, Tag::any);
  geo.weights_hwio = memory::desc({p.o, p.c, g.k_h, g.k_w}, f32, Tag::hwio);
  geo.dst = memory::desc({batch, p.o, g.out_h, g.out_w}, f32, Tag::nhwc);
  geo.strides = {g.stride_h, g.stride_w};
  geo.dilations = {g.dilation_h - 1, g.dilation_w - 1};  // oneDNN counts extra gaps
  geo.pad_l = {g.pad_top, g.pad_left};
  geo.pad_r = {pad_b, pad_r};
  return true;
}

// A primitive for one slice size, with the reorder between our HWIO filter and the
// primitive's filter layout (none when they agree).
struct Plan {
  dnnl::primitive conv;
  memory::desc weights;  // the primitive's filter (or filter gradient) layout
  std::optional<dnnl::reorder> weights_reorder;
  memory::desc scratchpad;
  size_t scratchpad_bytes = 0;
};

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool is_reference(const char* impl) { return std::strncmp(impl, "ref", 3) == 0; }

// Builds the plan, or returns null when oneDNN has no fast implementation.
std::shared_ptr<Plan> build_plan(Kind kind, const ConvProblem& p, int64_t batch) {
  Geometry geo;
  if (!make_geometry(p, batch, geo)) return nullptr;
  const auto alg = dnnl::algorithm::convolution_direct;
  const dnnl::primitive_attr attr = user_scratchpad();
  const dnnl::engine& eng = cpu_engine();
  auto plan = std::make_shared<Plan>();
  const dnnl::convolution_forward::desc fwd(dnnl::prop_kind::forward_training, alg, geo.src, geo.weights_any, geo.dst,
                                            geo.strides, geo.dilations, geo.pad_l, geo.pad_r);
  const dnnl::convolution_forward::primitive_desc fwd_pd(fwd, attr, eng);
  const char* impl = nullptr;
  if (kind == Kind::Forward) {
    impl = fwd_pd.impl_info_str();
    plan->conv = dnnl::convolution_forward(fwd_pd);
    plan->weights = fwd_pd.weights_desc();
    plan->scratchpad = fwd_pd.scratchpad_desc();
  } else if (kind == Kind::BackpropInput) {
    const dnnl::convolution_backward_data::desc bwd(alg, geo.src, geo.weights_any, geo.dst, geo.strides, geo.dilations,
                                                    geo.pad_l, geo.pad_r);
    const dnnl::convolution_backward_data::primitive_desc pd(bwd, attr, eng, fwd_pd);
    impl = pd.impl_info_str();
    plan->conv = dnnl::convolution_backward_data(pd);
    plan->weights = pd.weights_desc();
    plan->scratchpad = pd.scratchpad_desc();
  } else {
    const dnnl::convolution_backward_weights::desc bwd(alg, geo.src, geo.weights_any, geo.dst, geo.strides,
                                                       geo.dilations, geo.pad_l, geo.pad_r);
    const dnnl::convolution_backward_weights::primitive_desc pd(bwd, attr, eng, fwd_pd);
    impl = pd.impl_info_str();
    plan->conv = dnnl::convolution_backward_weights(pd);
    plan->weights = pd.diff_weights_desc();
    plan->scratchpad = pd.scratchpad_desc();
  }
  plan->scratchpad_bytes = plan->scratchpad.get_size();
  if (is_reference(impl) || plan->scratchpad_bytes > kMaxScratchpadBytes) return nullptr;
  if (plan->weights != geo.weights_hwio) {
    // The filter goes into the primitive's layout; the filter gradient comes out of it.
    const bool into = kind != Kind::BackpropFilter;
    const memory::desc& from = into ? geo.weights_hwio : plan->weights;
    const memory::desc& to = into ? plan->weights : geo.weights_hwio;
    plan->weights_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to, attr));
  }
  return plan;
}

using Key = std::array<int64_t, 16>;

// The cached plan for (kind, problem, slice size); null when oneDNN cannot take it
// (remembered too, so a rejected shape is not tried again).
std::shared_ptr<Plan> plan_for(Kind kind, const ConvProblem& p, int64_t batch) {
  cpu_engine();  // created before the cache, so destroyed after the primitives at exit
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<Plan>> cache;
  const Window2d& g = p.g;
  const Key key{static_cast<int64_t>(kind), batch, p.c, p.o, g.in_h, g.in_w, g.k_h, g.k_w, g.stride_h,
                g.stride_w, g.dilation_h, g.dilation_w, g.pad_top, g.pad_left, g.out_h, g.out_w};
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::shared_ptr<Plan> plan;
  try {
    plan = build_plan(kind, p, batch);
  } catch (const dnnl::error&) {
    plan = nullptr;  // unsupported geometry or sizes: im2col takes it
  }
  std::lock_guard lock(mutex);
  if (cache.size() >= kMaxCached) cache.clear();
  cache.emplace(key, plan);
  return plan;
}

// The batch cut into slices of `size` images (the last one may be smaller), each with
// its plan: at most two distinct plans.
struct Slices {
  int64_t size = 0, count = 0;
  std::shared_ptr<Plan> full, last;

  int64_t begin(int64_t s) const { return s * size; }
  int64_t length(int64_t s, int64_t n) const { return std::min(size, n - s * size); }
  const Plan& plan(int64_t s) const { return s + 1 == count ? *last : *full; }
};

bool make_slices(Kind kind, const ConvProblem& p, Slices& s) {
  s.size = (p.n + kMaxSlices - 1) / kMaxSlices;
  s.count = (p.n + s.size - 1) / s.size;
  const int64_t last = p.n - (s.count - 1) * s.size;
  s.full = plan_for(kind, p, s.size);
  s.last = last == s.size ? s.full : plan_for(kind, p, last);
  return s.full && s.last;
}

// Whether oneDNN should take the case: mode and preference, no empty dimension, and
// every tensor well within 32-bit indexing (oneDNN's JIT kernels index with int).
// Each factor is below kMaxIndex, so no partial product overflows.
bool product_fits(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t f : factors)
    if ((product *= f) >= kMaxIndex) return false;
  return true;
}

bool usable(const ConvProblem& p, bool preferred) {
  const OnednnMode mode = onednn_mode();
  if (mode == OnednnMode::Off || (mode == OnednnMode::Auto && !preferred)) return false;
  const Window2d& g = p.g;
  for (int64_t d : {p.n, p.c, p.o, g.in_h, g.in_w, g.out_h, g.out_w, g.k_h, g.k_w})
    if (d <= 0 || d >= kMaxIndex) return false;
  for (int64_t d : {g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, g.pad_top, g.pad_left})
    if (d >= kMaxIndex) return false;
  return product_fits({p.n, g.in_h, g.in_w, p.c}) && product_fits({p.n, g.out_h, g.out_w, p.o}) &&
         product_fits({g.k_h, g.k_w, p.c, p.o});
}

double slice_cost(const ConvProblem& p, int64_t size) {
  const Window2d& g = p.g;
  return kNsPerMac * static_cast<double>(size * g.out_h * g.out_w) * static_cast<double>(g.k_h * g.k_w * p.c * p.o);
}

// Runs `reorder` from `src` (laid out as `from`) into `dst` (laid out as `to`) on this thread.
void run_reorder(const dnnl::reorder& reorder, const memory::desc& from, const float* src, const memory::desc& to,
                 float* dst) {
  const dnnl::engine& eng = cpu_engine();
  memory src_m(from, eng, const_cast<float*>(src)), dst_m(to, eng, dst);
  dnnl::stream stream(eng);
  reorder.execute(stream, src_m, dst_m);
  stream.wait();
}

// Reorders the HWIO filter w into the primitive's layout, or returns w unchanged.
struct Filter {
  std::vector<float> buffer;
  const float* data = nullptr;
};
void prepare_filter(const Plan& plan, const ConvProblem& p, const float* w, Filter& f) {
  if (!plan.weights_reorder) {
    f.data = w;
    return;
  }
  f.buffer.resize(plan.weights.get_size() / sizeof(float));
  Geometry geo;
  make_geometry(p, 1, geo);
  run_reorder(*plan.weights_reorder, geo.weights_hwio, w, plan.weights, f.buffer.data());
  f.data = f.buffer.data();
}

// Runs plan.conv on images [begin, begin + len) with the given arguments (pointers to
// the slice's first image), on this thread.
void run_slice(Kind kind, const Plan& plan, const ConvProblem& p, int64_t len, const float* src, const float* weights,
               const float* dst, std::vector<char>& scratch) {
  Geometry geo;
  make_geometry(p, len, geo);
  const dnnl::engine& eng = cpu_engine();
  scratch.resize(std::max<size_t>(plan.scratchpad_bytes, 1));
  memory src_m(geo.src, eng, const_cast<float*>(src)), dst_m(geo.dst, eng, const_cast<float*>(dst));
  memory w_m(plan.weights, eng, const_cast<float*>(weights)), scratch_m(plan.scratchpad, eng, scratch.data());
  dnnl::stream stream(eng);
  const int src_arg = kind == Kind::BackpropInput ? DNNL_ARG_DIFF_SRC : DNNL_ARG_SRC;
  const int w_arg = kind == Kind::BackpropFilter ? DNNL_ARG_DIFF_WEIGHTS : DNNL_ARG_WEIGHTS;
  const int dst_arg = kind == Kind::Forward ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST;
  plan.conv.execute(stream, {{src_arg, src_m}, {w_arg, w_m}, {dst_arg, dst_m}, {DNNL_ARG_SCRATCHPAD, scratch_m}});
  stream.wait();
}

// Forward and backprop_input: the filter w goes in; src and dst are the images on
// either side (x and y, or dx and dy). False, with nothing the caller keeps written,
// when oneDNN cannot take the case.
bool run_with_filter(Kind kind, const ConvProblem& p, const float* w, const float* src, const float* dst) {
  SingleThreaded single;
  Slices s;
  if (!make_slices(kind, p, s)) return false;
  const int64_t src_image = p.g.in_h * p.g.in_w * p.c, dst_image = p.g.out_h * p.g.out_w * p.o;
  try {
    Filter full_w, last_w;
    prepare_filter(*s.full, p, w, full_w);
    if (s.last != s.full) prepare_filter(*s.last, p, w, last_w);
    parallel_for(s.count, slice_cost(p, s.size), [&](int64_t begin, int64_t end) {
      SingleThreaded worker;
      std::vector<char> scratch;
      for (int64_t i = begin; i < end; ++i) {
        const float* wd = i + 1 == s.count && s.last != s.full ? last_w.data : full_w.data;
        run_slice(kind, s.plan(i), p, s.length(i, p.n), src + s.begin(i) * src_image, wd,
                  dst + s.begin(i) * dst_image, scratch);
      }
    });
  } catch (const dnnl::error&) {
    return false;  // out of memory inside oneDNN: im2col overwrites whatever was written
  }
  return true;
}

}  // namespace

bool onednn_conv2d(const ConvProblem& p, const float* x, const float* w, float* y) {
  return usable(p, prefer_forward(p)) && run_with_filter(Kind::Forward, p, w, x, y);
}

bool onednn_conv2d_backprop_input(const ConvProblem& p, const float* w, const float* dy, float* dx) {
  return usable(p, prefer_backprop_input(p)) && run_with_filter(Kind::BackpropInput, p, w, dx, dy);
}

bool onednn_conv2d_backprop_filter(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  if (!usable(p, prefer_backprop_filter(p))) return false;
  SingleThreaded single;
  Slices s;
  if (!make_slices(Kind::BackpropFilter, p, s)) return false;
  // Each slice writes its partial gradient in the primitive's layout; the partials are
  // reordered to HWIO and summed in slice order (a fixed association).
  const int64_t size = p.g.k_h * p.g.k_w * p.c * p.o;
  const size_t blocked = std::max(s.full->weights.get_size(), s.last->weights.get_size()) / sizeof(float);
  const int64_t x_image = p.g.in_h * p.g.in_w * p.c, y_image = p.g.out_h * p.g.out_w * p.o;
  std::vector<float> partial(static_cast<size_t>(s.count * size)), raw(static_cast<size_t>(s.count) * blocked);
  Geometry geo;
  make_geometry(p, 1, geo);
  try {
    parallel_for(s.count, slice_cost(p, s.size), [&](int64_t begin, int64_t end) {
      SingleThreaded worker;
      std::vector<char> scratch;
      for (int64_t i = begin; i < end; ++i) {
        const Plan& plan = s.plan(i);
        float* hwio = partial.data() + i * size;
        float* out = plan.weights_reorder ? raw.data() + i * blocked : hwio;
        run_slice(Kind::BackpropFilter, plan, p, s.length(i, p.n), x + s.begin(i) * x_image, out,
                  dy + s.begin(i) * y_image, scratch);
        if (plan.weights_reorder) run_reorder(*plan.weights_reorder, plan.weights, out, geo.weights_hwio, hwio);
      }
    });
  } catch (const dnnl::error&) {
    return false;
  }
  std::copy(partial.begin(), partial.begin() + size, dw);
  for (int64_t i = 1; i < s.count; ++i) {
    const float* part = partial.data() + i * size;
#pragma omp simd
    for (int64_t j = 0; j < size; ++j) dw[j] += part[j];
  }
  return true;
}

#endif  // EF_HAVE_ONEDNN

}  // namespace ef::detail
