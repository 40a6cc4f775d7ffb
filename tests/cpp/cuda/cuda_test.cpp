// CUDA devices: copies, placement, and every CUDA kernel against the CPU on the same
// inputs. Needs a GPU (each test skips with the reason without one), except the
// CudaCodegen and CudaUnavailable tests, which run everywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <tuple>

#include "backends/cuda/codegen.h"
#include "cuda/cuda_test_inputs.h"
#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/core/cuda.h"
#include "eagerflow/eagerflow.h"
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_same;
using testing::kGPU;
using testing::random_of;
using testing::valid_second_operand;

using ::testing::HasSubstr;
using testing::rand64;

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::is_available()) GTEST_SKIP() << "needs a CUDA device: " << cuda::unavailable_reason();
  }
};

TEST(CudaUnavailable, MovingToAGpuWithoutOneSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_FALSE(cuda::unavailable_reason().empty());
  EXPECT_ERROR(ones({2}).gpu(), UnimplementedError, "CUDA:0", cuda::unavailable_reason());
}

TEST(CudaCodegen, EveryOpWithACudaKernelHasAFunctor) {
  // The builders give an elementwise op a CUDA kernel exactly when functors.cuh has it.
  int with_kernel = 0;
  for (const OpDef* op : registered_ops()) {
    // contiguous, cast and the fused programs have CUDA kernels of their own.
    if (!op->traits.elementwise || op->traits.view || op->name == "contiguous" || op->name == "cast" ||
        op->name.starts_with("fused_"))
      continue;
    const bool has = op->kernels[static_cast<int>(DeviceType::CUDA)] != nullptr;
    EXPECT_EQ(has, cuda::find_elementwise_functor(op->name) != nullptr) << op->name;
    with_kernel += has;
  }
  EXPECT_GT(with_kernel, 40);
}

TEST(CudaCodegen, EveryFunctorNamesARegisteredOp) {
  for (const auto& [name, source] : cuda::all_kernel_sources()) EXPECT_THAT(source, HasSubstr("ef_kernel"));
  for (const OpDef* op : registered_ops()) (void)op;
  EXPECT_NO_THROW(find_op("add"));
  EXPECT_EQ(cuda::find_elementwise_functor("no_such_op"), nullptr);
}

// Every kernel source the backend generates compiles to PTX with clang in CUDA mode,
// without the toolkit (Note [CUDA without the toolkit]): device code errors show up on
// machines without a GPU. All sources go into one file, each kernel renamed.
TEST(CudaCodegen, EveryGeneratedKernelCompilesToPtx) {
  const char* clang = std::getenv("EF_CLANGXX");
  std::string compiler = clang ? clang : "clang++";
  if (std::system((compiler + " --version >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "needs clang++ to compile CUDA device code";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ef_cuda_ptx_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const cuda::DeviceHeader& h : cuda::device_headers()) std::ofstream(dir / h.name) << h.text;
  std::ofstream all(dir / "all.cu");
  int count = 0;
  for (auto [name, source] : cuda::all_kernel_sources()) {
    const size_t at = source.find("ef_kernel(");
    ASSERT_NE(at, std::string::npos) << name;
    source.replace(at, 9, "ef_kernel_" + name);
    all << source << "\n";
    ++count;
  }
  all.close();
  EXPECT_GT(count, 100);
  const std::string cmd =
      compiler + " -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib " +
      "-std=c++17 -O1 -S -Wno-unknown-cuda-version -Werror -I" + dir.string() + " " +
      (dir / "all.cu").string() + " -o " + (dir / "all.ptx").string() + " 2>" + (dir / "log").string();
  const int rc = std::system(cmd.c_str());
  std::ifstream log(dir / "log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << text.substr(0, 4000);
  std::ifstream ptx(dir / "all.ptx");
  std::string ptx_text((std::istreambuf_iterator<char>(ptx)), std::istreambuf_iterator<char>());
  EXPECT_THAT(ptx_text, HasSubstr(".entry ef_kernel_add_float32"));
  std::filesystem::remove_all(dir);
}

// docs/cuda_coverage.md lists every op and whether it has a CUDA kernel; regenerate it
// with `make docs` (EF_UPDATE_DOCS=1) after giving an op one.
TEST(CudaCodegen, CoverageTableIsCurrent) {
  std::string table =
      "# CUDA coverage\n\n"
      "Generated from the op registry by `make docs` (tests/cpp/cuda/cuda_test.cpp); do not edit.\n"
      "An op without a CUDA kernel raises UnimplementedError on a GPU, naming the op and the device.\n"
      "docs/cuda.md says how each kind of kernel works.\n\n"
      "| op | CUDA kernel |\n| --- | --- |\n";
  int with = 0, total = 0;
  for (const OpDef* op : registered_ops()) {
    const bool has = op->kernels[static_cast<int>(DeviceType::CUDA)] != nullptr;
    table += "| `" + std::string(op->name) + "` | " + (has ? "yes" : "no") + " |\n";
    with += has;
    ++total;
  }
  table += "\n" + std::to_string(with) + " of " + std::to_string(total) + " ops.\n";
  testing::expect_generated_doc(std::filesystem::path(EF_SOURCE_DIR) / "docs" / "cuda_coverage.md", table);
}

TEST_F(Cuda, DescribesTheDevice) {
  EXPECT_GE(cuda::device_count(), 1);
  EXPECT_FALSE(cuda::device_name(0).empty());
  EXPECT_THAT(cuda::compute_capability(0), HasSubstr("."));
  EXPECT_ERROR(cuda::device_name(cuda::device_count()), InvalidArgumentError, "no CUDA device");
}

TEST_F(Cuda, CopiesRoundTripEveryDtypeAndLayout) {
  for (DType t : kAllDTypes) {
    if (is_complex(t)) continue;  // computed on the CPU only so far (Note [complex dtypes])
    Tensor x = cast(random_of(DType::Float64, {3, 5, 4}, 1), t);
    Tensor g = x.gpu();
    EXPECT_EQ(g.device(), kGPU);
    EXPECT_EQ(g.dtype(), t);
    expect_same(x, g, 0);
    Tensor back = g.cpu();
    EXPECT_EQ(back.device(), kCPU);
    EXPECT_EQ(back.to_vector<double>(), x.to_vector<double>()) << t;
    // A strided view copies as its logical values.
    Tensor view = transpose(g, {2, 0, 1});
    EXPECT_EQ(view.cpu().to_vector<double>(), transpose(x, {2, 0, 1}).to_vector<double>()) << t;
  }
  EXPECT_EQ(zeros({0, 3}).gpu().cpu().shape(), Shape({0, 3}));
}

TEST_F(Cuda, ReadingValuesCopiesToTheHost) {
  Tensor g = constant(std::vector<float>{1.5f, -2.f}, {2}).gpu();
  EXPECT_EQ(g[1].item<float>(), -2.f);
  EXPECT_TRUE(static_cast<bool>(g[0] > 1.f));
  EXPECT_THAT(g.to_string(), HasSubstr("1.5"));
  EXPECT_ERROR(g.data<float>(), InvalidArgumentError, "CUDA:0");
}

TEST_F(Cuda, EveryElementwiseKernelMatchesTheCpu) {
  int checked = 0;
  for (const OpDef* op : registered_ops()) {
    if (!op->traits.elementwise || op->traits.view) continue;
    const cuda::ElementwiseFunctor* f = cuda::find_elementwise_functor(op->name);
    if (!f || f->param_attr >= 0 || f->arity == 3) continue;  // these need attrs: tested on their own
    for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool}) {
      if (!(f->dtypes & (1u << static_cast<int>(t)))) continue;
      SCOPED_TRACE(std::string(op->name) + " " + std::string(name(t)));
      // Broadcasting ([4,1,6] with [5,1]) and a transposed operand.
      std::vector<Tensor> cpu_in{random_of(t, {4, 5, 6}, 7)};
      if (f->arity == 2)
        cpu_in = {random_of(t, {4, 1, 6}, 8),
                  valid_second_operand(op->name, transpose(random_of(t, {1, 5}, 9), {1, 0}))};
      std::vector<Tensor> gpu_in;
      for (const Tensor& x : cpu_in) gpu_in.push_back(x.gpu());
      Tensor want = run_op(*op, cpu_in, Attrs{}, CallSite::current());
      Tensor got = run_op(*op, gpu_in, Attrs{}, CallSite::current());
      expect_same(want, got, t == DType::Float32 ? 2e-6 : 1e-12);
      ++checked;
    }
  }
  EXPECT_GT(checked, 80);
}

TEST_F(Cuda, IntegerDivisionsCheckTheirOperandsFirst) {
  Tensor x = constant(std::vector<int32_t>{7, -7, 5}, {3}).gpu(),
         y = constant(std::vector<int32_t>{2, 0, 1}, {3}).gpu();
  EXPECT_ERROR(divide(x, y), InvalidArgumentError, "integer division by zero");
  EXPECT_ERROR(floormod(x, y), InvalidArgumentError, "integer division by zero");
  EXPECT_ERROR(pow(x, constant(std::vector<int32_t>{1, -1, 2}, {3}).gpu()), InvalidArgumentError, "negative");
  expect_same(floordiv(x.cpu(), constant(std::vector<int32_t>{2, -3, -1}, {3})),
              floordiv(x, constant(std::vector<int32_t>{2, -3, -1}, {3}).gpu()), 0);
}

TEST_F(Cuda, CastsBetweenEveryDtypePair) {
  const DType types[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool};
  Tensor values = constant(std::vector<double>{0, -0.5, 2.7, -3.9, 1e10, -1e10, NAN, INFINITY}, {8});
  for (DType from : types)
    for (DType to : types) {
      Tensor x = cast(from == DType::Float64 ? values : cast(values, DType::Float32), from);
      expect_same(cast(x, to), cast(x.gpu(), to), 0);
    }
}

TEST_F(Cuda, ReductionsMatchTheCpu) {
  Tensor x = random_of(DType::Float64, {6, 7, 300}, 3);
  for (Axes axes : {Axes(), Axes(0), Axes(2), Axes({0, 2}), Axes(1)}) {
    expect_same(reduce_sum(x, axes), reduce_sum(x.gpu(), axes), 1e-12);
    expect_same(reduce_max(x, axes, true), reduce_max(x.gpu(), axes, true), 0);
    expect_same(reduce_min(x, axes), reduce_min(x.gpu(), axes), 0);
    expect_same(reduce_mean(x, axes), reduce_mean(x.gpu(), axes), 1e-12);
    expect_same(reduce_prod(x * 0.1 + 1.0, axes), reduce_prod((x * 0.1 + 1.0).gpu(), axes), 1e-10);
  }
  Tensor f = cast(x, DType::Float32);
  expect_same(reduce_sum(f), reduce_sum(f.gpu()), 1e-5);
  // Few outputs over many elements: the parts of each output are reduced by several
  // blocks, then combined.
  Tensor long_rows = random_of(DType::Float64, {3, 200001}, 6);
  for (Axes axes : {Axes(), Axes(1)}) {
    expect_same(reduce_sum(long_rows, axes), reduce_sum(long_rows.gpu(), axes), 1e-12);
    expect_same(reduce_max(long_rows, axes), reduce_max(long_rows.gpu(), axes), 0);
    expect_same(reduce_min(transpose(long_rows, {1, 0}), Axes(0)),
                reduce_min(transpose(long_rows.gpu(), {1, 0}), Axes(0)), 0);
  }
  Tensor with_nan =
      where(equal(range(0, 500000, 1, DType::Int64), 377777), NAN, random_of(DType::Float64, {500000}, 7));
  expect_same(reduce_max(with_nan), reduce_max(with_nan.gpu()), 0);
  Tensor big_ints = random_of(DType::Int64, {400000}, 8);
  expect_same(reduce_sum(big_ints), reduce_sum(big_ints.gpu()), 0);
  Tensor i = random_of(DType::Int64, {50, 40}, 4);
  expect_same(reduce_sum(i, Axes(1)), reduce_sum(i.gpu(), Axes(1)), 0);
  Tensor b = random_of(DType::Bool, {50, 40}, 5);
  expect_same(reduce_any(b, Axes(0)), reduce_any(b.gpu(), Axes(0)), 0);
  expect_same(reduce_all(b, Axes(0)), reduce_all(b.gpu(), Axes(0)), 0);
  // A transposed input, and an empty reduced axis (the identity).
  expect_same(reduce_sum(transpose(x, {2, 0, 1}), Axes(2)),
              reduce_sum(transpose(x.gpu(), {2, 0, 1}), Axes(2)), 1e-12);
  Tensor empty = zeros({3, 0});
  expect_same(reduce_sum(empty, Axes(1)), reduce_sum(empty.gpu(), Axes(1)), 0);
  expect_same(reduce_max(empty, Axes(1)), reduce_max(empty.gpu(), Axes(1)), 0);
}

TEST_F(Cuda, MatmulMatchesTheCpu) {
  for (DType t : {DType::Float32, DType::Float64}) {
    const double tol = t == DType::Float32 ? 1e-5 : 1e-12;
    Tensor a = random_of(t, {37, 19}, 1), b = random_of(t, {19, 23}, 2);
    expect_same(matmul(a, b), matmul(a.gpu(), b.gpu()), tol);
    expect_same(matmul(b, a, true, true), matmul(b.gpu(), a.gpu(), true, true), tol);
    Tensor ba = random_of(t, {2, 3, 5, 4}, 3), bb = random_of(t, {3, 4, 6}, 4);
    expect_same(matmul(ba, bb), matmul(ba.gpu(), bb.gpu()), tol);
    Tensor one = random_of(t, {1, 4, 6}, 5);
    expect_same(matmul(ba, one), matmul(ba.gpu(), one.gpu()), tol);
    expect_same(matmul(transpose(a, {1, 0}), a), matmul(transpose(a.gpu(), {1, 0}), a.gpu()), tol);
    expect_same(matmul(zeros({3, 0}, t), zeros({0, 4}, t)),
                matmul(zeros({3, 0}, t).gpu(), zeros({0, 4}, t).gpu()), 0);
  }
  EXPECT_ERROR(matmul(ones({2, 2}, DType::Int32).gpu(), ones({2, 2}, DType::Int32).gpu()), UnimplementedError,
               "matmul", "int32");
}

TEST_F(Cuda, HostScalarsFollowAndOtherMixesAreErrors) {
  Tensor g = ones({3}).gpu();
  Tensor y = g * 2.f + constant(1.f);
  EXPECT_EQ(y.device(), kGPU);
  EXPECT_EQ(y.cpu().to_vector<float>(), (std::vector<float>{3, 3, 3}));
  EXPECT_ERROR(g + ones({3}), InvalidArgumentError, "add", "CUDA:0", "CPU:0");
}

TEST_F(Cuda, DeviceScopePlacesNewTensors) {
  DeviceScope scope(kGPU);
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.device(), kGPU);
  EXPECT_EQ(reduce_sum(ones({4, 4})).item<float>(), 16.f);
}

TEST_F(Cuda, EachStepOfADenseLayerMatchesTheCpu) {
  for (bool taped : {false, true}) {
    SCOPED_TRACE(taped ? "under a tape" : "no tape");
    // Random ops draw new numbers on every call (TensorFlow's op seeds): draw once.
    const Tensor x0 = rand64({8, 5}, 1), w0 = rand64({5, 3}, 2), b0 = rand64({3}, 3);
    auto steps = [&](Device d) {
      Tensor x = x0.to(d), w = w0.to(d), b = b0.to(d);
      std::optional<GradientTape> tape;
      if (taped) {
        tape.emplace();
        tape->watch(w);
      }
      std::vector<Tensor> out{x, w, b};
      out.push_back(matmul(x, w));
      out.push_back(out.back() + b);
      out.push_back(tanh(out.back()));
      out.push_back(out.back() - 0.5);
      out.push_back(square(out.back()));
      out.push_back(reduce_mean(out.back()));
      return out;
    };
    std::vector<Tensor> cpu = steps(kCPU), gpu = steps(kGPU);
    for (size_t i = 0; i < cpu.size(); ++i) {
      SCOPED_TRACE("step " + std::to_string(i));
      expect_same(cpu[i], gpu[i], 1e-12);
    }
  }
}

TEST_F(Cuda, GradientsOfADenseLayerMatchTheCpu) {
  const Tensor x0 = rand64({8, 5}, 1), w0 = rand64({5, 3}, 2), b0 = rand64({3}, 3);
  auto loss_and_grads = [&](Device d) {
    Tensor x = x0.to(d), w = w0.to(d), b = b0.to(d);
    GradientTape tape;
    tape.watch(w);
    tape.watch(b);
    Tensor loss = reduce_mean(square(tanh(matmul(x, w) + b) - 0.5));
    std::vector<Tensor> g = tape.gradient(loss, {w, b});
    return std::vector<Tensor>{loss, g[0], g[1]};
  };
  std::vector<Tensor> cpu = loss_and_grads(kCPU), gpu = loss_and_grads(kGPU);
  for (size_t i = 0; i < cpu.size(); ++i) expect_same(cpu[i], gpu[i], 1e-12);
}

TEST_F(Cuda, ActivationsWithAttrsAndSelectMatchTheCpu) {
  Tensor x = random_of(DType::Float64, {5, 7}, 11);
  expect_same(leaky_relu(x, 0.3), leaky_relu(x.gpu(), 0.3), 1e-12);
  expect_same(gelu(x), gelu(x.gpu()), 1e-12);
  expect_same(gelu(x, true), gelu(x.gpu(), true), 1e-12);
  Tensor c = random_of(DType::Bool, {5, 1}, 12);
  Tensor y = random_of(DType::Float64, {7}, 13);
  expect_same(where(c, x, y), where(c.gpu(), x.gpu(), y.gpu()), 0);
  expect_same(where(c, x, 0.0), where(c.gpu(), x.gpu(), 0.0), 0);
}

TEST_F(Cuda, CopyingOpsMatchTheCpu) {
  Tensor a = random_of(DType::Float32, {3, 4}, 1), b = random_of(DType::Float32, {3, 2}, 2);
  expect_same(concat({a, b}, 1), concat({a.gpu(), b.gpu()}, 1), 0);
  expect_same(concat({transpose(a, {1, 0}), transpose(b, {1, 0})}, 0),
              concat({transpose(a.gpu(), {1, 0}), transpose(b.gpu(), {1, 0})}, 0), 0);
  expect_same(pad(a, {{1, 2}, {0, 3}}), pad(a.gpu(), {{1, 2}, {0, 3}}), 0);
  expect_same(pad(a, {{1, 0}, {2, 1}}, "CONSTANT", 7), pad(a.gpu(), {{1, 0}, {2, 1}}, "CONSTANT", 7), 0);
  EXPECT_ERROR(pad(a.gpu(), {{1, 1}, {1, 1}}, "REFLECT"), UnimplementedError, "pad", "REFLECT");
  expect_same(tile(a, {2, 3}), tile(a.gpu(), {2, 3}), 0);
  Tensor i = random_of(DType::Int64, {2, 3, 2}, 3);
  expect_same(tile(i, {1, 2, 2}), tile(i.gpu(), {1, 2, 2}), 0);
  expect_same(split(a, 2, 1)[1], split(a.gpu(), 2, 1)[1], 0);
}

TEST_F(Cuda, SoftmaxAndCrossEntropyMatchTheCpu) {
  Tensor logits = random_of(DType::Float64, {6, 10}, 21) * 4.0;
  for (int64_t axis : {-1, 0}) {
    expect_same(softmax(logits, axis), softmax(logits.gpu(), axis), 1e-12);
    expect_same(log_softmax(logits, axis), log_softmax(logits.gpu(), axis), 1e-12);
  }
  Tensor labels = softmax(random_of(DType::Float64, {6, 10}, 22));
  expect_same(softmax_cross_entropy_with_logits(labels, logits),
              softmax_cross_entropy_with_logits(labels.gpu(), logits.gpu()), 1e-12);
  Tensor ids = constant(std::vector<int64_t>{0, 9, 3, 3, 5, 1}, {6});
  expect_same(sparse_softmax_cross_entropy_with_logits(ids, logits),
              sparse_softmax_cross_entropy_with_logits(ids.gpu(), logits.gpu()), 1e-12);
  Tensor bad = constant(std::vector<int64_t>{0, 10, 3, 3, 5, 1}, {6});
  EXPECT_ERROR(sparse_softmax_cross_entropy_with_logits(bad.gpu(), logits.gpu()), InvalidArgumentError,
               "label value of 10");
}

TEST_F(Cuda, IndexingOpsMatchTheCpu) {
  Tensor x = random_of(DType::Float32, {5, 4, 3}, 31);
  Tensor idx = constant(std::vector<int64_t>{3, 0, 3, 1}, {2, 2});
  for (int64_t axis : {0, 1, 2}) {
    Tensor in_range = axis == 2 ? constant(std::vector<int32_t>{2, 0, 1}, {3}) : idx;
    expect_same(gather(x, in_range, axis), gather(x.gpu(), in_range.gpu(), axis), 0);
  }
  EXPECT_ERROR(gather(x.gpu(), constant(std::vector<int64_t>{5}, {1}).gpu()), InvalidArgumentError, "5");
  Tensor batch_idx = constant(std::vector<int64_t>{2, 0, 1, 1, 3, 0, 0, 2, 3, 3}, {5, 2});
  for (int64_t axis : {1, 2}) {
    Tensor in_range =
        axis == 2 ? constant(std::vector<int64_t>{2, 0, 1, 1, 0, 0, 0, 2, 1, 2}, {5, 2}) : batch_idx;
    expect_same(gather(x, in_range, axis, 1), gather(x.gpu(), in_range.gpu(), axis, 1), 0);
  }
  Tensor ids = constant(std::vector<int32_t>{0, 2, -1, 7, 1}, {5});
  expect_same(one_hot(ids, 4), one_hot(ids.gpu(), 4), 0);
  expect_same(one_hot(ids, 3, 5.0, -1.0, 0, DType::Float64),
              one_hot(ids.gpu(), 3, 5.0, -1.0, 0, DType::Float64), 0);
  Tensor v = constant(std::vector<double>{1, 3, 3, -2, NAN, 0, 3, -2}, {2, 4});
  for (int64_t axis : {0, 1}) {
    expect_same(argmax(v, axis), argmax(v.gpu(), axis), 0);
    expect_same(argmin(v, axis, DType::Int32), argmin(v.gpu(), axis, DType::Int32), 0);
  }
  Tensor big = random_of(DType::Float32, {3, 1000}, 32);
  expect_same(argmax(big, 1), argmax(big.gpu(), 1), 0);
  Tensor w = random_of(DType::Int32, {4, 5}, 33);
  expect_same(where(greater(w, 0)), where(greater(w.gpu(), 0)), 0);
}

TEST_F(Cuda, GatherNdAndScattersMatchTheCpu) {
  Tensor x = random_of(DType::Float32, {4, 5, 3}, 91);
  Tensor idx = constant(std::vector<int64_t>{3, 1, 0, 4, 3, 1}, {3, 2});
  expect_same(gather_nd(x, idx), gather_nd(x.gpu(), idx.gpu()), 0);
  Tensor updates = random_of(DType::Float64, {3, 3}, 92);
  expect_same(scatter_nd(idx, updates, {4, 5, 3}), scatter_nd(idx.gpu(), updates.gpu(), {4, 5, 3}), 1e-12);
  Tensor base = random_of(DType::Int64, {4, 5, 3}, 93), int_updates = random_of(DType::Int64, {3, 3}, 94);
  expect_same(tensor_scatter_nd_add(base, idx, int_updates),
              tensor_scatter_nd_add(base.gpu(), idx.gpu(), int_updates.gpu()), 0);
  EXPECT_ERROR(gather_nd(x.gpu(), constant(std::vector<int64_t>{4, 0}, {1, 2}).gpu()), InvalidArgumentError,
               "4");
  // An embedding's gradient (gather's) is a scatter-add: trained on the device.
  Tensor table = random_of(DType::Float64, {6, 4}, 95), ids = constant(std::vector<int64_t>{1, 5, 1, 0}, {4});
  auto grad = [&](Device d) {
    Tensor t = table.to(d);
    GradientTape tape;
    tape.watch(t);
    Tensor loss = reduce_sum(square(gather(t, ids.to(d))));
    return tape.gradient(loss, {t})[0];
  };
  expect_same(grad(kCPU), grad(kGPU), 1e-12);
}

TEST_F(Cuda, SortsMatchTheCpu) {
  Tensor x = floor(random_of(DType::Float32, {5, 40, 3}, 101) * 3.0);
  for (int64_t axis : {0, 1, 2})
    for (std::string direction : {"ASCENDING", "DESCENDING"}) {
      expect_same(sort(x, axis, direction), sort(x.gpu(), axis, direction), 0);
      expect_same(argsort(x, axis, direction), argsort(x.gpu(), axis, direction), 0);
    }
  Tensor rows = random_of(DType::Int64, {6, 50}, 102);
  TopKResult want = top_k(rows, 7), got = top_k(rows.gpu(), 7);
  expect_same(want.values, got.values, 0);
  expect_same(want.indices, got.indices, 0);
}

TEST_F(Cuda, ScansMatchTheCpu) {
  Tensor x = random_of(DType::Float64, {4, 6, 3}, 41);
  for (int64_t axis : {0, 1, 2})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        expect_same(cumsum(x, axis, exclusive, reverse), cumsum(x.gpu(), axis, exclusive, reverse), 1e-12);
        expect_same(cumprod(x, axis, exclusive, reverse), cumprod(x.gpu(), axis, exclusive, reverse), 1e-12);
      }
  Tensor i = random_of(DType::Int32, {10, 3}, 42);
  expect_same(cumsum(i, 0), cumsum(i.gpu(), 0), 0);
}

TEST_F(Cuda, CreationAndRandomOpsGiveTheCpusNumbers) {
  std::vector<Tensor> cpu, gpu;
  for (Device d : {kCPU, kGPU}) {
    DeviceScope scope(d);
    random::set_seed(5);
    std::vector<Tensor>& out = d == kCPU ? cpu : gpu;
    out.push_back(range(0, 10, 3, DType::Int64));
    out.push_back(linspace(0, 1, 7));
    out.push_back(eye(3, 4));
    out.push_back(random::uniform({50}));
    out.push_back(random::normal({50}, 0, 1, DType::Float64));
    out.push_back(random::uniform({20}, 0, 100, DType::Int32));
    out.push_back(shape(zeros({2, 5})));
  }
  for (size_t i = 0; i < cpu.size(); ++i) {
    SCOPED_TRACE("op " + std::to_string(i));
    expect_same(cpu[i], gpu[i], 0);
  }
}

TEST_F(Cuda, FunctionsRunOnTheDevice) {
  auto f = function([](Tensor x, Tensor y) { return reduce_sum(tanh(x * y + 1.0) * x); });
  Tensor x = random_of(DType::Float64, {64, 33}, 51), y = random_of(DType::Float64, {33}, 52);
  expect_same(f(x, y), f(x.gpu(), y.gpu()), 1e-12);
  auto g = function([](Tensor x) { return exp(x) * 2.0 - x; });
  expect_same(g(x), g(x.gpu()), 1e-12);
}

TEST_F(Cuda, ATrainingStepMatchesTheCpu) {
  // A two-layer classifier with softmax cross entropy: loss and every gradient.
  const Tensor x0 = rand64({16, 12}, 61), w1_0 = rand64({12, 8}, 62), w2_0 = rand64({8, 4}, 63);
  const Tensor labels0 = constant(std::vector<int64_t>{0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 3, 3}, {16});
  auto step = [&](Device d) {
    Tensor x = x0.to(d), w1 = w1_0.to(d), w2 = w2_0.to(d), labels = labels0.to(d);
    GradientTape tape;
    tape.watch(w1);
    tape.watch(w2);
    Tensor h = relu(matmul(x, w1));
    Tensor loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(labels, matmul(h, w2)));
    std::vector<Tensor> g = tape.gradient(loss, {w1, w2});
    return std::vector<Tensor>{loss, g[0], g[1], w1 - 0.1 * g[0]};
  };
  std::vector<Tensor> cpu = step(kCPU), gpu = step(kGPU);
  for (size_t i = 0; i < cpu.size(); ++i) {
    SCOPED_TRACE("value " + std::to_string(i));
    expect_same(cpu[i], gpu[i], 1e-12);
  }
}

TEST_F(Cuda, KerasFitOnTheDeviceMatchesTheCpu) {
  random::set_seed(3);
  const Tensor x0 = random::normal({64, 6}), y0 = random::normal({64, 2});
  auto fit = [&](Device d, bool eager) {
    DeviceScope scope(d);
    random::set_seed(5);
    auto model = std::make_shared<nn::Sequential>();
    model->add(nn::Dense(8, {.activation = "tanh"}));
    model->add(nn::Dense(2));
    (*model)(zeros({1, 6}));
    model->compile({.optimizer = std::make_shared<optim::Adam>(0.01),
                    .loss = std::make_shared<nn::losses::MeanSquaredError>(),
                    .run_eagerly = eager});
    auto history =
        model->fit(x0.to(d), y0.to(d), {.batch_size = 16, .epochs = 3, .verbose = 0, .shuffle = false});
    for (const Variable& v : model->variables()) EXPECT_EQ(v.value().device(), d) << v.name();
    return history->history().at("loss");
  };
  for (bool eager : {true, false}) {
    std::vector<double> cpu = fit(kCPU, eager), gpu = fit(kGPU, eager);
    ASSERT_EQ(cpu.size(), gpu.size());
    for (size_t i = 0; i < cpu.size(); ++i)
      EXPECT_NEAR(cpu[i], gpu[i], 1e-5) << "epoch " << i << " eager " << eager;
  }
}

TEST_F(Cuda, ConvolutionsMatchTheCpu) {
  struct Case {
    std::vector<int64_t> strides;
    std::string padding;
    std::vector<int64_t> dilations;
  };
  for (DType t : {DType::Float32, DType::Float64}) {
    const double tol = t == DType::Float32 ? 1e-5 : 1e-12;
    Tensor x = random_of(t, {2, 9, 8, 3}, 71), f = random_of(t, {3, 2, 3, 4}, 72);
    for (const Case& c : {Case{{1, 1}, "VALID", {1, 1}}, Case{{2, 1}, "SAME", {1, 1}},
                          Case{{1, 2}, "SAME", {2, 1}}, Case{{3, 3}, "VALID", {1, 2}}}) {
      SCOPED_TRACE(c.padding + " " + std::to_string(c.strides[0]) + std::to_string(c.dilations[0]));
      Tensor y = conv2d(x, f, c.strides, c.padding, c.dilations);
      expect_same(y, conv2d(x.gpu(), f.gpu(), c.strides, c.padding, c.dilations), tol);
      Tensor dy = random_of(t, y.shape(), 73);
      expect_same(conv2d_backprop_input(x.shape(), f, dy, c.strides, c.padding, c.dilations),
                  conv2d_backprop_input(x.shape(), f.gpu(), dy.gpu(), c.strides, c.padding, c.dilations),
                  tol);
      expect_same(conv2d_backprop_filter(x, f.shape(), dy, c.strides, c.padding, c.dilations),
                  conv2d_backprop_filter(x.gpu(), f.shape(), dy.gpu(), c.strides, c.padding, c.dilations),
                  tol);
    }
  }
}

TEST_F(Cuda, PoolsMatchTheCpu) {
  Tensor x = random_of(DType::Float64, {2, 7, 6, 3}, 81);
  // Ties (rounded values) and a NaN: the first maximum and NaN win, as on the CPU.
  x = floor(x * 2.0);
  x = where(reshape(equal(range(0, 2 * 7 * 6 * 3, 1, DType::Int64), 40), {2, 7, 6, 3}), NAN, x);
  for (const auto& [k, s, padding] : std::vector<std::tuple<int64_t, int64_t, std::string>>{
           {2, 2, "VALID"}, {3, 2, "SAME"}, {3, 1, "SAME"}, {2, 3, "VALID"}}) {
    SCOPED_TRACE(padding + " k" + std::to_string(k) + " s" + std::to_string(s));
    Tensor y = max_pool2d(x, {k, k}, {s, s}, padding);
    expect_same(y, max_pool2d(x.gpu(), {k, k}, {s, s}, padding), 0);
    Tensor dy = random_of(DType::Float64, y.shape(), 82);
    expect_same(max_pool2d_grad(x, dy, {k, k}, {s, s}, padding),
                max_pool2d_grad(x.gpu(), dy.gpu(), {k, k}, {s, s}, padding), 1e-12);
    Tensor ddx = random_of(DType::Float64, x.shape(), 83);
    expect_same(max_pool2d_grad_grad(x, ddx, {k, k}, {s, s}, padding),
                max_pool2d_grad_grad(x.gpu(), ddx.gpu(), {k, k}, {s, s}, padding), 0);
    expect_same(avg_pool2d(x, {k, k}, {s, s}, padding), avg_pool2d(x.gpu(), {k, k}, {s, s}, padding), 1e-12);
    expect_same(avg_pool2d_grad(x.shape(), dy, {k, k}, {s, s}, padding),
                avg_pool2d_grad(x.shape(), dy.gpu(), {k, k}, {s, s}, padding), 1e-12);
  }
}

TEST_F(Cuda, ConvolutionalNetworkFitMatchesTheCpu) {
  random::set_seed(7);
  const Tensor x0 = random::normal({32, 10, 10, 2}),
               y0 = cast(random::uniform({32}, 0, 3, DType::Int32), DType::Int64);
  auto fit = [&](Device d) {
    DeviceScope scope(d);
    random::set_seed(8);
    auto model = std::make_shared<nn::Sequential>();
    model->add(nn::Conv2D(4, {3, 3}, {.padding = "same", .activation = "relu"}));
    model->add(nn::MaxPool2D({2, 2}));
    model->add(nn::Flatten());
    model->add(nn::Dense(3));
    (*model)(zeros({1, 10, 10, 2}));
    model->compile({.optimizer = std::make_shared<optim::SGD>(0.05),
                    .loss = std::make_shared<nn::losses::SparseCategoricalCrossentropy>(
                        nn::losses::LossOptions{.from_logits = true})});
    auto history =
        model->fit(x0.to(d), y0.to(d), {.batch_size = 8, .epochs = 2, .verbose = 0, .shuffle = false});
    return history->history().at("loss");
  };
  std::vector<double> cpu = fit(kCPU), gpu = fit(kGPU);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(cpu[i], gpu[i], 1e-4) << "epoch " << i;
}

TEST_F(Cuda, MemoryIsCachedAndCounted) {
  cuda::reset_memory_stats();
  const size_t before = cuda::memory_info().current;
  {
    Tensor big = zeros({1 << 20}).gpu();
    EXPECT_GE(cuda::memory_info().current, before + (4u << 20));
  }
  EXPECT_EQ(cuda::memory_info().current, before);
  EXPECT_GE(cuda::memory_info().cached, 4u << 20);
  EXPECT_GE(cuda::memory_info().peak, before + (4u << 20));
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_info().cached, 0u);
}

TEST_F(Cuda, OutOfMemoryIsAnErrorAndTheDeviceKeepsWorking) {
  DeviceScope scope(kGPU);
  EXPECT_ERROR(zeros({int64_t{1} << 46}), ResourceExhaustedError, "out of memory", "CUDA:0");
  EXPECT_EQ(reduce_sum(ones({10})).item<float>(), 10.f);
}

}  // namespace
}  // namespace ef
