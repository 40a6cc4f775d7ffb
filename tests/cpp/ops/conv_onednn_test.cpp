// The oneDNN kernels of conv2d and its gradient ops (src/ops/nn/conv2d_onednn.cpp)
// against the im2col kernels, on random shapes: strides, dilations, SAME and VALID,
// batch 1, odd sizes, one channel. Both paths run in one process through the internal
// mode switch; ctest also reruns the Conv2d* suites with EF_ONEDNN=0 and =always.
// Skipped where the build has no oneDNN.
#include <cmath>
#include <random>

#include "ops/nn/conv2d_onednn.h"
#include "test_util.h"

namespace ef {
namespace {

using detail::OnednnMode;
using testing::expect_values;
using testing::rand64;

// Sets the mode for a scope and restores the previous one.
class ModeScope {
 public:
  explicit ModeScope(OnednnMode mode) : saved_(detail::onednn_mode()) { detail::set_onednn_mode(mode); }
  ~ModeScope() { detail::set_onednn_mode(saved_); }
  ModeScope(const ModeScope&) = delete;
  ModeScope& operator=(const ModeScope&) = delete;

 private:
  OnednnMode saved_;
};

struct RandomCase {
  Shape input, filter;
  std::vector<int64_t> strides, dilations;
  std::string padding;
  std::string describe() const {
    return "input " + input.to_string() + " filter " + filter.to_string() + " strides " +
           std::to_string(strides[0]) + "," + std::to_string(strides[1]) + " dilations " +
           std::to_string(dilations[0]) + "," + std::to_string(dilations[1]) + " " + padding;
  }
};

// Random convolutions whose output is not empty.
std::vector<RandomCase> random_cases(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](std::initializer_list<int64_t> values) {
    return *(values.begin() + std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng));
  };
  std::vector<RandomCase> cases;
  while (static_cast<int>(cases.size()) < count) {
    RandomCase c;
    const int64_t n = pick({1, 1, 2, 3, 5}), h = pick({1, 3, 5, 7, 8, 11}), w = pick({1, 4, 5, 9, 13});
    const int64_t ci = pick({1, 1, 2, 3, 8, 13, 16}), co = pick({1, 3, 8, 17, 32});
    const int64_t kh = pick({1, 2, 3, 5}), kw = pick({1, 2, 3});
    c.input = Shape{n, h, w, ci};
    c.filter = Shape{kh, kw, ci, co};
    c.strides = {pick({1, 1, 2, 3}), pick({1, 2})};
    c.dilations = {pick({1, 1, 2}), pick({1, 3})};
    c.padding = pick({0, 1}) ? "SAME" : "VALID";
    if (c.padding == "VALID" &&
        ((kh - 1) * c.dilations[0] + 1 > h || (kw - 1) * c.dilations[1] + 1 > w))
      continue;  // no output position
    cases.push_back(c);
  }
  return cases;
}

// Uniform float32 values in [-1, 1), the same for the same seed.
Tensor rand32(const Shape& shape, int64_t seed) {
  return random::stateless_uniform(shape, {seed, 0}, -1, 1, DType::Float32);
}

// Expects a and b (float32) to agree to float32 accuracy for sums of `terms` products of
// values in [-1, 1].
void expect_close(const Tensor& a, const Tensor& b, int64_t terms, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  const double tol = 4e-7 * static_cast<double>(terms) + 1e-6;
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_NEAR(x[i], y[i], tol) << what << ", element " << i;
}

// The three kernels' outputs under `mode`.
std::vector<Tensor> run_kernels(const RandomCase& c, const Tensor& x, const Tensor& w, const Tensor& dy,
                                OnednnMode mode) {
  ModeScope scope(mode);
  return {conv2d(x, w, c.strides, c.padding, c.dilations),
          conv2d_backprop_input(x.shape(), w, dy, c.strides, c.padding, c.dilations),
          conv2d_backprop_filter(x, w.shape(), dy, c.strides, c.padding, c.dilations)};
}

class ConvOnednn : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!detail::onednn_built()) GTEST_SKIP() << "built without oneDNN (libdnnl-dev)";
  }
};

TEST_F(ConvOnednn, MatchesIm2colOnRandomShapes) {
  int64_t seed = 1;
  for (const RandomCase& c : random_cases(60, 7)) {
    SCOPED_TRACE(c.describe());
    const Tensor x = rand32(c.input, seed++), w = rand32(c.filter, seed++);
    const Tensor dy = rand32(conv2d(x, w, c.strides, c.padding, c.dilations).shape(), seed++);
    const std::vector<Tensor> ours = run_kernels(c, x, w, dy, OnednnMode::Off);
    const std::vector<Tensor> dnnl = run_kernels(c, x, w, dy, OnednnMode::Always);
    const int64_t out_pixels = dy.shape()[0] * dy.shape()[1] * dy.shape()[2];
    expect_close(dnnl[0], ours[0], c.filter[0] * c.filter[1] * c.filter[2], "conv2d");
    expect_close(dnnl[1], ours[1], c.filter[0] * c.filter[1] * c.filter[3], "conv2d_backprop_input");
    expect_close(dnnl[2], ours[2], out_pixels, "conv2d_backprop_filter");
  }
}

TEST_F(ConvOnednn, BatchLargerThanTheSliceCount) {
  // 19 images: slices of 3 and a last slice of 1, each with its own primitive.
  const RandomCase c{{19, 9, 7, 4}, {3, 3, 4, 6}, {1, 2}, {1, 1}, "SAME"};
  const Tensor x = rand32(c.input, 11), w = rand32(c.filter, 12);
  const Tensor dy = rand32(conv2d(x, w, c.strides, c.padding, c.dilations).shape(), 13);
  const std::vector<Tensor> ours = run_kernels(c, x, w, dy, OnednnMode::Off);
  const std::vector<Tensor> dnnl = run_kernels(c, x, w, dy, OnednnMode::Always);
  expect_close(dnnl[0], ours[0], 36, "conv2d");
  expect_close(dnnl[1], ours[1], 54, "conv2d_backprop_input");
  expect_close(dnnl[2], ours[2], 19 * 9 * 4, "conv2d_backprop_filter");
}

TEST_F(ConvOnednn, ResultsDoNotDependOnTheThreadCount) {
  const RandomCase c{{32, 13, 13, 8}, {3, 3, 8, 16}, {1, 1}, {1, 1}, "VALID"};
  const Tensor x = rand32(c.input, 21), w = rand32(c.filter, 22);
  const Tensor dy = rand32(conv2d(x, w, c.strides, c.padding, c.dilations).shape(), 23);
  const int saved = num_threads();
  set_num_threads(1);
  const std::vector<Tensor> one = run_kernels(c, x, w, dy, OnednnMode::Always);
  set_num_threads(2);
  const std::vector<Tensor> two = run_kernels(c, x, w, dy, OnednnMode::Always);
  set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i) expect_values(two[i], one[i].to_vector<double>(), 0);
}

TEST_F(ConvOnednn, BackpropOpsAreTheAdjointsInFloat32) {
  // <conv2d(x, w), dy> = <x, backprop_input(w, dy)> = <w, backprop_filter(x, dy)>, each
  // side from oneDNN, summed in float64.
  ModeScope scope(OnednnMode::Always);
  int64_t seed = 300;
  for (const RandomCase& c : random_cases(10, 8)) {
    SCOPED_TRACE(c.describe());
    const Tensor x = rand32(c.input, seed++), w = rand32(c.filter, seed++);
    const Tensor y = conv2d(x, w, c.strides, c.padding, c.dilations);
    const Tensor dy = rand32(y.shape(), seed++);
    auto dot = [](const Tensor& a, const Tensor& b) {
      return reduce_sum(cast(a, DType::Float64) * cast(b, DType::Float64)).item<double>();
    };
    const double lhs = dot(y, dy), scale = 1e-5 * static_cast<double>(y.num_elements() + x.num_elements());
    EXPECT_NEAR(dot(x, conv2d_backprop_input(x.shape(), w, dy, c.strides, c.padding, c.dilations)), lhs, scale);
    EXPECT_NEAR(dot(w, conv2d_backprop_filter(x, w.shape(), dy, c.strides, c.padding, c.dilations)), lhs, scale);
  }
}

TEST_F(ConvOnednn, TapeGradientsMatchTheFloat64Path) {
  // A float32 training step's gradients (oneDNN for every kernel, first and second
  // order) against the same computation in float64 (im2col, checked by finite
  // differences in conv_test.cpp).
  ModeScope scope(OnednnMode::Always);
  const RandomCase c{{3, 8, 7, 5}, {3, 2, 5, 4}, {2, 1}, {1, 2}, "SAME"};
  auto grads = [&](DType dtype) {
    const Tensor x = cast(rand32(c.input, 41), dtype), w = cast(rand32(c.filter, 42), dtype);
    GradientTape outer;
    outer.watch(x);
    outer.watch(w);
    GradientTape inner;
    inner.watch(x);
    inner.watch(w);
    const Tensor loss = reduce_sum(square(conv2d(x, w, c.strides, c.padding, c.dilations)));
    const std::vector<Tensor> sources{x, w};
    const std::vector<Tensor> g = inner.gradient(loss, sources);
    const Tensor gg = reduce_sum(square(g[0])) + reduce_sum(square(g[1]));
    const std::vector<Tensor> second = outer.gradient(gg, sources);
    return std::vector<Tensor>{g[0], g[1], second[0], second[1]};
  };
  const std::vector<Tensor> f32 = grads(DType::Float32), f64 = grads(DType::Float64);
  for (size_t i = 0; i < f32.size(); ++i) {
    SCOPED_TRACE("gradient " + std::to_string(i));
    const std::vector<double> a = f32[i].to_vector<double>(), b = f64[i].to_vector<double>();
    double max_ref = 0;
    for (double v : b) max_ref = std::max(max_ref, std::fabs(v));
    for (size_t j = 0; j < a.size(); ++j) ASSERT_NEAR(a[j], b[j], 1e-5 * max_ref) << "element " << j;
  }
}

TEST_F(ConvOnednn, Float64StaysOnIm2col) {
  // oneDNN takes float32 only: float64 gives the same bits in every mode.
  const RandomCase c{{2, 6, 5, 3}, {3, 3, 3, 4}, {1, 1}, {1, 1}, "SAME"};
  const Tensor x = rand64(c.input, 51), w = rand64(c.filter, 52);
  const Tensor dy = rand64(conv2d(x, w, c.strides, c.padding, c.dilations).shape(), 53);
  const std::vector<Tensor> off = run_kernels(c, x, w, dy, OnednnMode::Off);
  const std::vector<Tensor> always = run_kernels(c, x, w, dy, OnednnMode::Always);
  for (size_t i = 0; i < off.size(); ++i) expect_values(always[i], off[i].to_vector<double>(), 0);
}

}  // namespace
}  // namespace ef
