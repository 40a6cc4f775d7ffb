// The generated CUDA kernels that use no block barriers, run as host code (the
// prelude's EF_HOST_EMULATION branch: the test loops over the grid) and compared with
// the CPU ops on the same inputs. This checks their index arithmetic, broadcasting
// and functor math on machines without a GPU; tests/cpp/cuda/cuda_test.cpp checks
// them again on a GPU.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "backends/cuda/codegen.h"
#include "backends/cuda/kernels.h"
#include "cuda/cuda_test_inputs.h"
#include "eagerflow/eagerflow.h"
#include "ops/nn/window_geometry.h"
#include "test_util.h"

namespace ef {
namespace {

using testing::random_of;
using testing::valid_second_operand;

// Mirrors EfDims of device_code/prelude.cuh.
struct EfDims {
  long long v[8] = {};
};

// Every source below compiled once, as host code, into one shared library.
class Emulated {
 public:
  static Emulated* get() {
    static Emulated* e = [] {
      auto* built = new Emulated();
      return built->build() ? built : nullptr;
    }();
    return e;
  }
  template <class Fn>
  Fn kernel(const std::string& name) {
    void* f = dlsym(handle_, ("ef_kernel_" + name).c_str());
    if (!f) ADD_FAILURE() << "no emulated kernel " << name;
    return reinterpret_cast<Fn>(f);
  }
  // Runs `launch` once per thread of a grid of 3 blocks of 4 threads (the kernels'
  // grid-stride loops cover any size).
  template <class Launch>
  void run(Launch&& launch) {
    *blocks_ = 3;
    *threads_ = 4;
    for (long long b = 0; b < 3; ++b)
      for (int t = 0; t < 4; ++t) {
        *block_ = b;
        *thread_ = t;
        launch();
      }
  }
  static std::vector<std::pair<std::string, std::string>> sources();

 private:
  bool build() {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("ef_cuda_emulation_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const cuda::DeviceHeader& h : cuda::device_headers()) std::ofstream(dir / h.name) << h.text;
    std::ofstream all(dir / "all.cpp");
    for (auto [name, source] : sources()) {
      source.replace(source.find("ef_kernel("), 9, "ef_kernel_" + name);
      all << source << "\n";
    }
    all.close();
    const std::string cmd = "c++ -std=c++17 -O1 -fPIC -shared -DEF_HOST_EMULATION -w -I" + dir.string() +
                            " " + (dir / "all.cpp").string() + " -o " + (dir / "all.so").string() + " 2>" +
                            (dir / "log").string();
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir / "log");
      ADD_FAILURE() << "the emulated kernels do not compile:\n"
                    << std::string(std::istreambuf_iterator<char>(log), {});
      return false;
    }
    handle_ = dlopen((dir / "all.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    std::filesystem::remove_all(dir);
    if (!handle_) return false;
    block_ = static_cast<long long*>(dlsym(handle_, "ef_emu_block"));
    blocks_ = static_cast<long long*>(dlsym(handle_, "ef_emu_blocks"));
    thread_ = static_cast<int*>(dlsym(handle_, "ef_emu_thread"));
    threads_ = static_cast<int*>(dlsym(handle_, "ef_emu_threads"));
    return block_ && blocks_ && thread_ && threads_;
  }
  void* handle_ = nullptr;
  long long *block_ = nullptr, *blocks_ = nullptr;
  int *thread_ = nullptr, *threads_ = nullptr;
};

const DType kTypes[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool};

std::vector<std::pair<std::string, std::string>> Emulated::sources() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const OpDef* op : registered_ops()) {
    const cuda::ElementwiseFunctor* f = cuda::find_elementwise_functor(op->name);
    if (!f || f->param_attr >= 0 || f->arity == 3) continue;
    for (DType t : kTypes) {
      if (!(f->dtypes & (1u << static_cast<int>(t)))) continue;
      std::vector<DType> ins(static_cast<size_t>(f->arity), t);
      out.emplace_back(std::string(op->name) + "_" + std::string(name(t)),
                       cuda::elementwise_source(cuda::functor_call(f->op, f->arity), ins,
                                                f->bool_output ? DType::Bool : t, op->name));
    }
  }
  for (DType from : kTypes)
    for (DType to : kTypes)
      out.emplace_back("cast_" + std::string(name(from)) + "_" + std::string(name(to)),
                       cuda::elementwise_source(cuda::convert_call(to, "cast"),
                                                std::span<const DType>(&from, 1), to, "cast"));
  for (DType half : {DType::Float16, DType::BFloat16}) {
    out.emplace_back("widen_" + std::string(name(half)), cuda::convert_source(half, DType::Float32));
    out.emplace_back("round_" + std::string(name(half)), cuda::convert_source(DType::Float32, half));
  }
  for (DType small : kAllDTypes) {
    if (!is_small_integer(small)) continue;
    const std::string n(name(small));
    const DType wide = compute_dtype(small);
    out.emplace_back("widen_" + n, cuda::convert_source(small, wide));
    out.emplace_back("narrow_" + n, cuda::convert_source(wide, small));
    for (DType from : kTypes)
      out.emplace_back("cast_" + std::string(name(from)) + "_" + n,
                       cuda::elementwise_source(cuda::cast_call(small, wide, "cast"),
                                                std::span<const DType>(&from, 1), wide, "cast"));
  }
  for (int k : {0, 1, 2, 5})  // the window kernels without barriers: max pooling's use none either
    out.emplace_back("window" + std::to_string(k),
                     cuda::window_source(static_cast<cuda::WindowKernel>(k), DType::Float64, "window"));
  out.emplace_back("window3", cuda::window_source(cuda::WindowKernel::MaxPool, DType::Float64, "window"));
  out.emplace_back("window4", cuda::window_source(cuda::WindowKernel::MaxPoolGrad, DType::Float64, "window"));
  out.emplace_back("window6", cuda::window_source(cuda::WindowKernel::AvgPoolGrad, DType::Float64, "window"));
  out.emplace_back("window7",
                   cuda::window_source(cuda::WindowKernel::MaxPoolGradGrad, DType::Float64, "window"));
  out.emplace_back("cumsum", cuda::scan_source(DType::Float64, "sum", true, true, "cumsum"));
  out.emplace_back("gather_rows", cuda::gather_rows_source(8));
  out.emplace_back("sort_asc", cuda::sort_rank_source(DType::Float64, false, true, true, "sort"));
  out.emplace_back("sort_desc", cuda::sort_rank_source(DType::Float64, true, true, true, "sort"));
  out.emplace_back("scatter_add", cuda::scatter_add_source(DType::Float64, "scatter_nd"));
  out.emplace_back("scatter_add_int32", cuda::scatter_add_source(DType::Int32, "scatter_nd"));
  return out;
}

class CudaEmulation : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("c++ --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "needs a host C++ compiler";
    emulated_ = Emulated::get();
    ASSERT_NE(emulated_, nullptr);
  }
  Emulated* emulated_ = nullptr;
};

// Same values, NaN where NaN (floats to a few ulps: C's libm may differ in the last bit).
void expect_same(const Tensor& want, const Tensor& got, const std::string& what) {
  std::vector<double> a = want.to_vector<double>(), b = got.to_vector<double>();
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]))
      EXPECT_TRUE(std::isnan(b[i])) << what << " element " << i;
    else if (std::isinf(a[i]) || !is_floating(want.dtype()))
      EXPECT_EQ(a[i], b[i]) << what << " element " << i;
    else
      EXPECT_NEAR(a[i], b[i], 1e-6 * (1 + std::fabs(a[i]))) << what << " element " << i;
  }
}

void* ptr(const Tensor& t) { return const_cast<void*>(t.raw_data()); }

TEST_F(CudaEmulation, ElementwiseKernelsMatchTheCpuWithBroadcasting) {
  int checked = 0;
  for (const OpDef* op : registered_ops()) {
    const cuda::ElementwiseFunctor* f = cuda::find_elementwise_functor(op->name);
    if (!f || f->param_attr >= 0 || f->arity == 3) continue;
    for (DType t : kTypes) {
      if (!(f->dtypes & (1u << static_cast<int>(t)))) continue;
      const std::string what = std::string(op->name) + "_" + std::string(name(t));
      // x [5, 6] with y [6] broadcast over rows: two dimensions, y's row stride 0.
      std::vector<Tensor> in{random_of(t, {5, 6}, 1)};
      if (f->arity == 2) in.push_back(valid_second_operand(op->name, random_of(t, {6}, 2)));
      Tensor want = run_op(*op, in, Attrs{}, CallSite::current());
      Tensor got = detail::empty_tensor(want.dtype(), want.shape());
      EfDims sizes, so, s0, s1;
      sizes.v[0] = 5, sizes.v[1] = 6, so.v[0] = 6, so.v[1] = 1, s0.v[0] = 6, s0.v[1] = 1, s1.v[1] = 1;
      long long n = 30;
      int rank = 2;
      void* out = ptr(got);
      if (f->arity == 1) {
        auto fn =
            emulated_->kernel<void (*)(void*, const void*, long long, int, EfDims, EfDims, EfDims, double)>(
                what);
        emulated_->run([&] { fn(out, ptr(in[0]), n, rank, sizes, so, s0, 0.0); });
      } else {
        auto fn = emulated_->kernel<void (*)(void*, const void*, const void*, long long, int, EfDims, EfDims,
                                             EfDims, EfDims, double)>(what);
        emulated_->run([&] { fn(out, ptr(in[0]), ptr(in[1]), n, rank, sizes, so, s0, s1, 0.0); });
      }
      expect_same(want, got, what);
      ++checked;
    }
  }
  EXPECT_GT(checked, 80);
}

// The widening and rounding kernels of the half dtypes are the CPU's conversions bit for
// bit: every one of the 65,536 patterns widened (NaN payloads too), and rounding every
// widened pattern and the floats on either side of each midpoint between neighbours.
TEST_F(CudaEmulation, HalfConversionsAreTheCpusBitForBit) {
  using MapFn = void (*)(void*, const void*, long long, int, EfDims, EfDims, EfDims, double);
  auto run = [&](const std::string& kernel, const void* in, void* out, long long n) {
    EfDims sizes, strides;
    sizes.v[0] = n, strides.v[0] = 1;
    auto fn = emulated_->kernel<MapFn>(kernel);
    emulated_->run([&] { fn(out, in, n, 1, sizes, strides, strides, 0.0); });
  };
  for (DType half : {DType::Float16, DType::BFloat16}) {
    const std::string n(name(half));
    const bool f16 = half == DType::Float16;
    std::vector<uint16_t> patterns(65536);
    for (uint32_t b = 0; b < 65536; ++b) patterns[b] = static_cast<uint16_t>(b);
    std::vector<float> widened(65536);
    run("widen_" + n, patterns.data(), widened.data(), 65536);
    std::vector<float> to_round;
    for (uint32_t b = 0; b < 65536; ++b) {
      const float want = f16 ? float16_to_float(patterns[b]) : bfloat16_to_float(patterns[b]);
      ASSERT_EQ(std::bit_cast<uint32_t>(widened[b]), std::bit_cast<uint32_t>(want)) << n << " pattern " << b;
      to_round.push_back(want);
      if (b + 1 < 65536 && std::isfinite(want)) {  // the midpoint to the next pattern, and its neighbours
        const float next = f16 ? float16_to_float(static_cast<uint16_t>(b + 1))
                               : bfloat16_to_float(static_cast<uint16_t>(b + 1));
        if (!std::isfinite(next)) continue;
        const float mid = static_cast<float>((static_cast<double>(want) + next) / 2);
        to_round.insert(to_round.end(), {mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY)});
      }
    }
    to_round.insert(to_round.end(), {1e30f, -1e30f, 65519.f, 65520.f, 3.4e38f, 1e-30f, -1e-30f});
    std::vector<uint16_t> rounded(to_round.size());
    run("round_" + n, to_round.data(), rounded.data(), static_cast<long long>(to_round.size()));
    for (size_t i = 0; i < to_round.size(); ++i)
      ASSERT_EQ(rounded[i], f16 ? float_to_float16(to_round[i]) : float_to_bfloat16(to_round[i]))
          << n << " rounding " << to_round[i] << " (bits " << std::bit_cast<uint32_t>(to_round[i]) << ")";
  }
}

TEST_F(CudaEmulation, CastsMatchTheCpu) {
  Tensor values = constant(std::vector<double>{0, -0.5, 2.7, -3.9, 1e10, -1e10, NAN, INFINITY}, {8});
  for (DType from : kTypes)
    for (DType to : kTypes) {
      const std::string what = "cast_" + std::string(name(from)) + "_" + std::string(name(to));
      Tensor x = cast(from == DType::Float64 ? values : cast(values, DType::Float32), from);
      Tensor want = cast(x, to), got = detail::empty_tensor(to, x.shape());
      EfDims sizes, strides;
      sizes.v[0] = 8, strides.v[0] = 1;
      auto fn =
          emulated_->kernel<void (*)(void*, const void*, long long, int, EfDims, EfDims, EfDims, double)>(
              what);
      emulated_->run([&] { fn(ptr(got), ptr(x), 8, 1, sizes, strides, strides, 0.0); });
      expect_same(want, got, what);
    }
}

// Note [small integer dtypes]: widening, narrowing (low bits kept) and cast into a small
// integer computed in its wide dtype (floats saturating at the small range).
TEST_F(CudaEmulation, SmallIntegerConversionsMatchTheCpu) {
  using MapFn = void (*)(void*, const void*, long long, int, EfDims, EfDims, EfDims, double);
  auto run = [&](const std::string& kernel, const Tensor& in, Tensor& out) {
    EfDims sizes, strides;
    sizes.v[0] = in.num_elements(), strides.v[0] = 1;
    auto fn = emulated_->kernel<MapFn>(kernel);
    emulated_->run([&] { fn(ptr(out), ptr(in), in.num_elements(), 1, sizes, strides, strides, 0.0); });
  };
  const Tensor values = constant(std::vector<double>{0, -0.5, 2.7, -3.9, 1e10, -1e10, NAN, INFINITY, 300.5,
                                                     -129, 65535.9, 4294967295.0, -32769, 127.9},
                                 {14});
  const Tensor wide_ints =
      constant(std::vector<int64_t>{0, 1, -1, 127, 128, -128, -129, 255, 256, 65535, 65536, -32769,
                                    4294967295, 4294967296, int64_t{1} << 40},
               {15});
  for (DType small : kAllDTypes) {
    if (!is_small_integer(small)) continue;
    const std::string n(name(small));
    const DType wide = compute_dtype(small);
    for (DType from : kTypes) {
      const std::string what = "cast_" + std::string(name(from)) + "_" + n;
      Tensor x = cast(from == DType::Float64 ? values : cast(values, DType::Float32), from);
      Tensor got = detail::empty_tensor(wide, x.shape());
      run(what, x, got);
      expect_same(cast(cast(x, small), wide), got, what);
    }
    const Tensor wide_values = cast(wide_ints, wide);
    Tensor narrowed = detail::empty_tensor(small, wide_values.shape());
    run("narrow_" + n, wide_values, narrowed);
    expect_same(cast(wide_values, small), narrowed, "narrow_" + n);
    Tensor widened = detail::empty_tensor(wide, narrowed.shape());
    run("widen_" + n, narrowed, widened);
    expect_same(cast(narrowed, wide), widened, "widen_" + n);
  }
}

TEST_F(CudaEmulation, WindowKernelsMatchTheCpu) {
  using WindowFn2 = void (*)(void*, const void*, const void*, long long, cuda::WindowGeometry);
  using WindowFn1 = void (*)(void*, const void*, long long, cuda::WindowGeometry);
  Tensor x = random_of(DType::Float64, {2, 7, 6, 3}, 3), f = random_of(DType::Float64, {3, 2, 3, 4}, 4);
  for (const auto& [strides, padding] : std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{1, 1}, "VALID"}, {{2, 1}, "SAME"}, {{2, 3}, "SAME"}}) {
    const std::string what = padding + std::to_string(strides[0]) + std::to_string(strides[1]);
    const detail::Window2d g =
        detail::make_window(7, 6, 3, 2, Dims(strides.begin(), strides.end()), padding, Dims{1, 1}, "conv2d");
    const cuda::WindowGeometry geo = detail::cuda_window(g, 2, 3, 4);
    Tensor y = conv2d(x, f, strides, padding);
    Tensor got = detail::empty_tensor(DType::Float64, y.shape());
    auto conv = emulated_->kernel<WindowFn2>("window0");
    emulated_->run([&] { conv(ptr(got), ptr(x), ptr(f), got.num_elements(), geo); });
    expect_same(y, got, "conv2d " + what);
    Tensor dy = random_of(DType::Float64, y.shape(), 5);
    Tensor dx = conv2d_backprop_input(x.shape(), f, dy, strides, padding);
    Tensor got_dx = detail::empty_tensor(DType::Float64, x.shape());
    auto input = emulated_->kernel<WindowFn2>("window1");
    emulated_->run([&] { input(ptr(got_dx), ptr(f), ptr(dy), got_dx.num_elements(), geo); });
    expect_same(dx, got_dx, "backprop_input " + what);
    Tensor df = conv2d_backprop_filter(x, f.shape(), dy, strides, padding);
    Tensor got_df = detail::empty_tensor(DType::Float64, f.shape());
    auto filter = emulated_->kernel<WindowFn2>("window2");
    emulated_->run([&] { filter(ptr(got_df), ptr(x), ptr(dy), got_df.num_elements(), geo); });
    expect_same(df, got_df, "backprop_filter " + what);
  }
  // Pools: ties (rounded values) and the window rules of SAME padding.
  Tensor p = floor(x * 2.0);
  for (const auto& [k, s, padding] : std::vector<std::tuple<int64_t, int64_t, std::string>>{
           {2, 2, "VALID"}, {3, 2, "SAME"}, {3, 1, "SAME"}}) {
    const std::string what = padding + std::to_string(k) + std::to_string(s);
    const detail::Window2d g = detail::make_window(7, 6, k, k, Dims{s, s}, padding, Dims{1, 1}, "max_pool2d");
    const cuda::WindowGeometry geo = detail::cuda_window(g, 2, 3, 3);
    Tensor y = max_pool2d(p, {k, k}, {s, s}, padding);
    Tensor got = detail::empty_tensor(DType::Float64, y.shape());
    auto pool = emulated_->kernel<WindowFn1>("window3");
    emulated_->run([&] { pool(ptr(got), ptr(p), got.num_elements(), geo); });
    expect_same(y, got, "max_pool " + what);
    Tensor dy = random_of(DType::Float64, y.shape(), 6);
    Tensor dx = max_pool2d_grad(p, dy, {k, k}, {s, s}, padding);
    Tensor got_dx = detail::empty_tensor(DType::Float64, p.shape());
    auto grad = emulated_->kernel<WindowFn2>("window4");
    emulated_->run([&] { grad(ptr(got_dx), ptr(p), ptr(dy), got_dx.num_elements(), geo); });
    expect_same(dx, got_dx, "max_pool_grad " + what);
    Tensor avg = avg_pool2d(p, {k, k}, {s, s}, padding);
    auto avg_fn = emulated_->kernel<WindowFn1>("window5");
    emulated_->run([&] { avg_fn(ptr(got), ptr(p), got.num_elements(), geo); });
    expect_same(avg, got, "avg_pool " + what);
    Tensor avg_dx = avg_pool2d_grad(p.shape(), dy, {k, k}, {s, s}, padding);
    auto avg_grad = emulated_->kernel<WindowFn1>("window6");
    emulated_->run([&] { avg_grad(ptr(got_dx), ptr(dy), got_dx.num_elements(), geo); });
    expect_same(avg_dx, got_dx, "avg_pool_grad " + what);
    Tensor ddx = random_of(DType::Float64, p.shape(), 13);
    Tensor ddy = max_pool2d_grad_grad(p, ddx, {k, k}, {s, s}, padding);
    Tensor got_ddy = detail::empty_tensor(DType::Float64, ddy.shape());
    auto grad_grad = emulated_->kernel<WindowFn2>("window7");
    emulated_->run([&] { grad_grad(ptr(got_ddy), ptr(p), ptr(ddx), got_ddy.num_elements(), geo); });
    expect_same(ddy, got_ddy, "max_pool_grad_grad " + what);
  }
}

TEST_F(CudaEmulation, GatherAndScanMatchTheCpu) {
  Tensor x = random_of(DType::Float64, {4, 5, 3}, 7);
  Tensor idx = constant(std::vector<int64_t>{4, 0, 2, 2}, {4});
  Tensor want = gather(x, idx, 1), got = detail::empty_tensor(DType::Float64, want.shape());
  // gather as CUDA runs it: rows of 3 elements at offsets (o * 5 + idx[k]) * 3.
  Tensor offsets =
      constant(std::vector<int64_t>{12, 0, 6, 6, 27, 15, 21, 21, 42, 30, 36, 36, 57, 45, 51, 51}, {16});
  auto fn = emulated_->kernel<void (*)(void*, const void*, const void*, long long, long long)>("gather_rows");
  emulated_->run([&] { fn(ptr(got), ptr(x), ptr(offsets), got.num_elements(), 3); });
  expect_same(want, got, "gather");
  Tensor scanned = cumsum(x, 1, true, true), got_scan = detail::empty_tensor(DType::Float64, x.shape());
  auto scan = emulated_->kernel<void (*)(void*, const void*, long long, long long, long long)>("cumsum");
  emulated_->run([&] { scan(ptr(got_scan), ptr(x), 12, 5, 3); });
  expect_same(scanned, got_scan, "cumsum exclusive reverse");
}

TEST_F(CudaEmulation, SortsByRankMatchTheCpu) {
  using SortFn = void (*)(void*, void*, const void*, long long, long long, long long, long long);
  // Ties and NaNs: the CPU's stable total order (NaN largest).
  Tensor x = floor(random_of(DType::Float64, {3, 7, 2}, 11) * 2.0);
  x = where(reshape(equal(range(0, 42, 1, DType::Int64), 9), {3, 7, 2}), NAN, x);
  for (bool descending : {false, true}) {
    const std::string direction = descending ? "DESCENDING" : "ASCENDING";
    Tensor values = detail::empty_tensor(DType::Float64, x.shape()),
           indices = detail::empty_tensor(DType::Int32, x.shape());
    auto fn = emulated_->kernel<SortFn>(descending ? "sort_desc" : "sort_asc");
    emulated_->run([&] { fn(ptr(values), ptr(indices), ptr(x), 42, 7, 2, 7); });
    expect_same(sort(x, 1, direction), values, "sort " + direction);
    expect_same(argsort(x, 1, direction), indices, "argsort " + direction);
  }
  Tensor rows = floor(random_of(DType::Float64, {4, 9}, 12) * 2.0);
  TopKResult want = top_k(rows, 3);
  Tensor values = detail::empty_tensor(DType::Float64, {4, 3}),
         indices = detail::empty_tensor(DType::Int32, {4, 3});
  auto fn = emulated_->kernel<SortFn>("sort_desc");
  emulated_->run([&] { fn(ptr(values), ptr(indices), ptr(rows), 36, 9, 1, 3); });
  expect_same(want.values, values, "top_k values");
  expect_same(want.indices, indices, "top_k indices");
}

TEST_F(CudaEmulation, RowGathersAndScatterAddsMatchTheCpu) {
  using RowsFn = void (*)(void*, const void*, const void*, long long, long long);
  Tensor x = random_of(DType::Float64, {4, 5, 3}, 8);
  Tensor idx = constant(std::vector<int64_t>{3, 1, 0, 4, 3, 1}, {3, 2});
  Tensor want = gather_nd(x, idx), got = detail::empty_tensor(DType::Float64, want.shape());
  Tensor offsets = constant(std::vector<int64_t>{(3 * 5 + 1) * 3, (0 * 5 + 4) * 3, (3 * 5 + 1) * 3}, {3});
  auto rows = emulated_->kernel<RowsFn>("gather_rows");
  emulated_->run([&] { rows(ptr(got), ptr(x), ptr(offsets), got.num_elements(), 3); });
  expect_same(want, got, "gather_nd rows");
  // Duplicate index tuples add up.
  Tensor updates = random_of(DType::Float64, {3, 3}, 9);
  Tensor scattered = scatter_nd(idx, updates, {4, 5, 3});
  Tensor got_scatter = zeros({4, 5, 3}, DType::Float64);
  auto add = emulated_->kernel<RowsFn>("scatter_add");
  emulated_->run([&] { add(ptr(got_scatter), ptr(updates), ptr(offsets), updates.num_elements(), 3); });
  expect_same(scattered, got_scatter, "scatter_nd");
  Tensor int_updates = random_of(DType::Int32, {3, 3}, 10);
  Tensor got_ints = zeros({4, 5, 3}, DType::Int32);
  auto add_ints = emulated_->kernel<RowsFn>("scatter_add_int32");
  emulated_->run(
      [&] { add_ints(ptr(got_ints), ptr(int_updates), ptr(offsets), int_updates.num_elements(), 3); });
  expect_same(scatter_nd(idx, int_updates, {4, 5, 3}), got_ints, "scatter_nd int32");
}

}  // namespace
}  // namespace ef
