// Whole programs on a CUDA device against the same programs on the CPU: higher-order
// and custom gradients, forward mode, control flow inside functions, every optimizer
// (L-BFGS too), checkpoints saved from and restored onto the device, and reductions
// large enough to take the multi-block path. Each test skips without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>

#include "cuda/cuda_test_inputs.h"
#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/core/cuda.h"
#include "eagerflow/eagerflow.h"
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_same;
using testing::kGPU;
using testing::rand64;

class CudaPrograms : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::is_available()) GTEST_SKIP() << "needs a CUDA device: " << cuda::unavailable_reason();
  }
};

// Runs `program` on the CPU and on the GPU (its inputs moved there) and compares every
// output.
void expect_same_on_both(const std::function<std::vector<Tensor>(Device)>& program, double rtol = 1e-12) {
  const std::vector<Tensor> cpu = program(kCPU), gpu = program(kGPU);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    ASSERT_TRUE(gpu[i].defined());
    expect_same(cpu[i], gpu[i], rtol);
  }
}

TEST_F(CudaPrograms, SecondAndThirdOrderGradients) {
  const Tensor x0 = rand64({5, 4}, 1), w0 = rand64({4, 3}, 2);
  expect_same_on_both([&](Device d) {
    Tensor x = x0.to(d), w = w0.to(d);
    GradientTape outer, middle, inner;
    for (GradientTape* t : {&outer, &middle, &inner}) t->watch(x);
    Tensor y = reduce_sum(tanh(matmul(x, w)) * reduce_sum(sin(x), Axes(1), true)) + reduce_sum(exp(x * 0.3));
    Tensor g1 = inner.gradient(y, x);
    Tensor g2 = middle.gradient(reduce_sum(g1 * g1), x);
    Tensor g3 = outer.gradient(reduce_sum(g2), x);
    return std::vector<Tensor>{y, g1, g2, g3};
  });
}

TEST_F(CudaPrograms, CustomGradients) {
  UnaryFunction log1pexp = custom_gradient([](const Tensor& x) {
    Tensor e = exp(x);
    return WithGradient{log(1 + e), [e](const Tensor& dy) { return dy * (1 - 1 / (1 + e)); }};
  });
  const Tensor x0 = constant(std::vector<double>{-3, 0, 0.7, 50, 200}, {5});
  expect_same_on_both([&](Device d) {
    Tensor x = x0.to(d);
    GradientTape outer, inner;
    outer.watch(x);
    inner.watch(x);
    Tensor y = reduce_sum(log1pexp(x));
    Tensor g = inner.gradient(y, x);
    return std::vector<Tensor>{y, g, outer.gradient(reduce_sum(g), x)};
  });
}

TEST_F(CudaPrograms, ForwardModeAndHessianVectorProducts) {
  const Tensor x0 = rand64({6, 5}, 3), w0 = rand64({5, 4}, 4), v0 = rand64({6, 5}, 5);
  expect_same_on_both([&](Device d) {
    Tensor x = x0.to(d), w = w0.to(d), v = v0.to(d);
    auto f = [&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{softmax(matmul(tanh(in[0]), w)), reduce_logsumexp(in[0] * in[0], Axes(1))};
    };
    auto [outputs, tangents] = jvp(f, {x}, {v});
    // Forward over reverse: the Hessian of sum(sigmoid(x)^3) along v.
    ForwardAccumulator acc(x, v);
    GradientTape tape;
    tape.watch(x);
    Tensor g = tape.gradient(reduce_sum(pow(sigmoid(x), 3.0)), x);
    return std::vector<Tensor>{outputs[0], outputs[1], tangents[0], tangents[1], g, acc.jvp(g)};
  });
}

TEST_F(CudaPrograms, ControlFlowInsideFunctionsAndItsGradients) {
  // A data-dependent loop count and a branch on a device value, traced once per
  // device; the tape differentiates through the call.
  Function f(
      [](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];
        std::vector<Tensor> loop =
            while_loop([](const std::vector<Tensor>& v) { return reduce_sum(v[1]) < 40.0; },
                       [](const std::vector<Tensor>& v) {
                         return std::vector<Tensor>{v[0] + 1, v[1] * 1.5 + 0.1};
                       },
                       {constant(0), x});
        Tensor branch = cond(
            reduce_max(loop[1]) > 5.0, [&] { return sin(loop[1]) * x; }, [&] { return loop[1] - x; });
        return std::vector<Tensor>{cast(loop[0], DType::Float64), branch};
      },
      "loop_and_branch");
  for (double scale : {1.0, 0.05}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    const Tensor x0 = abs(rand64({7}, 6)) * scale + 0.5;
    expect_same_on_both([&](Device d) {
      Tensor x = x0.to(d);
      GradientTape tape;
      tape.watch(x);
      std::vector<Tensor> out = f({x});
      // The loop counter starts as a host constant, so it stays on the CPU.
      EXPECT_EQ(out[0].device(), kCPU);
      return std::vector<Tensor>{out[0].to(d), out[1], tape.gradient(reduce_sum(out[1]), x)};
    });
  }
}

TEST_F(CudaPrograms, EveryOptimizerKeepsItsSlotsOnTheDevice) {
  using Make = std::function<std::shared_ptr<optim::Optimizer>()>;
  const std::vector<std::pair<std::string, Make>> optimizers{
      {"SGD", [] { return std::make_shared<optim::SGD>(0.1, 0.9, true); }},
      {"Adam", [] { return std::make_shared<optim::Adam>(0.05); }},
      {"AdamW", [] { return std::make_shared<optim::AdamW>(0.05, 0.01); }},
      {"RMSprop", [] { return std::make_shared<optim::RMSprop>(0.05, 0.9, 0.5, 1e-7, true); }},
      {"Adagrad", [] { return std::make_shared<optim::Adagrad>(0.1); }},
  };
  const Tensor w0 = rand64({4, 3}, 7), x0 = rand64({8, 4}, 8), y0 = rand64({8, 3}, 9);
  for (const auto& [name, maker] : optimizers) {
    const auto& make = maker;  // clang 14 captures no structured bindings
    SCOPED_TRACE(name);
    expect_same_on_both([&](Device d) {
      DeviceScope scope(d);
      Variable w(w0.to(d), "w");
      Tensor x = x0.to(d), y = y0.to(d);
      std::shared_ptr<optim::Optimizer> opt = make();
      for (int step = 0; step < 4; ++step)
        opt->minimize([&] { return reduce_mean(square(matmul(x, w) - y)); }, {w});
      for (const Variable& slot : opt->slot_variables()) EXPECT_EQ(slot.value().device(), d) << slot.name();
      return std::vector<Tensor>{w.value()};
    });
  }
}

TEST_F(CudaPrograms, RecurrentLayersBuiltInAScopeRunOutsideIt) {
  // The layers' variables are made under a device scope; the calls run without one, so
  // every tensor a layer makes for itself (zero states) must follow its inputs.
  const Tensor x0 = rand64({3, 5, 4}, 14);
  for (bool lstm : {true, false}) {
    SCOPED_TRACE(lstm ? "LSTM" : "GRU");
    expect_same_on_both([&](Device d) {
      std::shared_ptr<nn::Recurrent> layer;
      {
        DeviceScope scope(d);
        random::set_seed(15);
        layer = lstm ? nn::LSTM(6, {.return_sequences = true}) : nn::GRU(6, {.return_sequences = true});
        (*layer)(zeros({1, 5, 4}, DType::Float64));
      }
      Tensor x = x0.to(d);
      GradientTape tape;
      Tensor y = (*layer)(x);
      std::vector<Tensor> out{y};
      for (const Tensor& g : tape.gradient(reduce_sum(y * y), layer->trainable_variables())) out.push_back(g);
      return out;
    });
  }
}

// Library code that makes tensors of its own (masks, indices, zero gradients, metric
// thresholds) makes them where its inputs are, with no device scope active.
TEST_F(CudaPrograms, TensorsMadeInsideOpsFollowTheirInputs) {
  const Tensor x0 = rand64({4, 6}, 16), img0 = rand64({2, 7, 7, 3}, 17), f0 = rand64({3, 3, 3, 2}, 18);
  expect_same_on_both(
      [&](Device d) {
        Tensor x = x0.to(d), img = img0.to(d), f = f0.to(d);
        GradientTape tape(/*persistent=*/true);
        tape.watch(x);
        tape.watch(img);
        random::set_seed(19);
        Tensor dropped = dropout(x, 0.5);
        Tensor depthwise = depthwise_conv2d(img, f, {2, 2}, "SAME");
        auto [top, top_index] = top_k(x, 3);
        Tensor sorted = sort(x, 0);
        Tensor batch_gathered =
            gather(x, constant(std::vector<int64_t>{2, 0, 1, 1, 0, 2, 5, 4}, {4, 2}).to(d), 1, 1);
        Tensor repeated = repeat(x, {2}, 0);
        std::vector<Tensor> halves =
            split(x, 2, 1);  // the second half's gradient is a released output's zeros
        Tensor loss = reduce_sum(dropped) + reduce_sum(square(depthwise)) + reduce_sum(top * top) +
                      reduce_sum(sin(sorted)) + reduce_sum(batch_gathered) + reduce_sum(repeated) +
                      reduce_sum(exp(halves[0]));
        std::vector<Tensor> out{dropped, depthwise, loss, tape.gradient(loss, x), tape.gradient(loss, img)};
        Tensor y = tanh(matmul(x, transpose(x, {1, 0})));
        out.push_back(tape.jacobian(y, x));
        out.push_back(tape.batch_jacobian(y, x));
        Variable unused(zeros({3}, DType::Float64).to(d), "unused");
        out.push_back(tape.gradient(loss, {unused}, Tensor(), UnconnectedGradients::Zero)[0]);
        nn::metrics::Precision precision({0.2, 0.6});
        nn::metrics::AUC auc(20);
        const Tensor labels = cast(x > 0.0, DType::Float32), scores = cast(sigmoid(x * 3.0), DType::Float32);
        precision.update_state(labels, scores);
        auc.update_state(labels, scores);
        out.push_back(precision.result().to(d));
        out.push_back(auc.result().to(d));
        return out;
      },
      1e-6);  // the metrics count in float32
}

TEST_F(CudaPrograms, LbfgsWithALineSearch) {
  const Tensor a0 = rand64({20, 6}, 10), b0 = rand64({20}, 11);
  expect_same_on_both(
      [&](Device d) {
        Variable w(zeros({6}, DType::Float64).to(d), "w");
        Tensor a = a0.to(d), b = b0.to(d);
        optim::LBFGS lbfgs({w}, {.max_iter = 15, .history_size = 5, .line_search_fn = "strong_wolfe"});
        Tensor first = lbfgs.step([&] {
          Tensor residual = reshape(matmul(a, reshape(w.value(), {6, 1})), {20}) - b;
          return reduce_sum(square(residual)) + reduce_sum(pow(w.value(), 4.0));
        });
        EXPECT_EQ(w.value().device(), d);
        return std::vector<Tensor>{first, w.value()};
      },
      1e-9);
}

TEST_F(CudaPrograms, CheckpointsSaveFromAndRestoreOntoTheDevice) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ef_cuda_ckpt_" + std::to_string(::getpid()))).string();
  Variable w(rand64({3, 4}, 12).gpu(), "w");
  auto opt = std::make_shared<optim::Adam>(0.1);
  opt->minimize([&] { return reduce_sum(square(w.value())); }, {w});
  io::Checkpoint({{"w", w}, {"opt", *opt}}).save(path);
  // Onto the device (the variable and the slots stay there) and onto the CPU.
  for (Device d : {kGPU, kCPU}) {
    Variable restored(zeros({3, 4}, DType::Float64).to(d), "w");
    auto restored_opt = std::make_shared<optim::Adam>(0.1);
    restored_opt->minimize([&] { return reduce_sum(restored.value()); }, {restored});  // makes its slots
    io::Checkpoint({{"w", restored}, {"opt", *restored_opt}}).restore(path);
    const Tensor m = restored_opt->slot(restored, "m").value();
    EXPECT_EQ(restored.value().device(), d);
    EXPECT_EQ(m.device(), d);
    EXPECT_EQ(restored.value().cpu().to_vector<double>(), w.value().cpu().to_vector<double>());
    EXPECT_EQ(m.cpu().to_vector<double>(), opt->slot(w, "m").value().cpu().to_vector<double>());
    EXPECT_EQ(restored_opt->iterations(), 1);
  }
  std::filesystem::remove(path);
}

TEST_F(CudaPrograms, LargeReductionsSplitAcrossBlocks) {
  // Few outputs and long lines take the two-launch path (each output split among blocks).
  const Tensor x = random::uniform({3, 1 << 20}, -1.0, 1.0, DType::Float64, 13);
  for (Axes axes : {Axes(), Axes(1), Axes({0, 1})}) {
    expect_same(reduce_sum(x, axes), reduce_sum(x.gpu(), axes), 1e-12);
    expect_same(reduce_max(x, axes), reduce_max(x.gpu(), axes), 0);
    expect_same(reduce_min(x, axes), reduce_min(x.gpu(), axes), 0);
  }
  const Tensor f = cast(x, DType::Float32);
  expect_same(reduce_sum(f), reduce_sum(f.gpu()), 1e-5);
  expect_same(argmax(x, 1), argmax(x.gpu(), 1), 0);
  const Tensor flags = x > 0.9999;
  expect_same(reduce_any(flags), reduce_any(flags.gpu()), 0);
  expect_same(reduce_all(flags), reduce_all(flags.gpu()), 0);
}

// Note [half-precision dtypes]: on a GPU as on the CPU, every op computes float16 and
// bfloat16 in float32 and rounds its outputs once.
TEST_F(CudaPrograms, HalfConversionsAreTheCpusBitForBit) {
  std::vector<uint16_t> patterns(65536);
  for (uint32_t b = 0; b < 65536; ++b) patterns[b] = static_cast<uint16_t>(b);
  const Tensor floats = random::normal({4096}, 0.0, 300.0, DType::Float32, 30);
  for (DType half : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(name(half));
    Tensor all = detail::empty_tensor(half, {65536});
    std::memcpy(const_cast<void*>(all.raw_data()), patterns.data(), 65536 * 2);
    auto bits_of = [](const Tensor& t) {
      const Tensor host = t.cpu().contiguous();
      const auto* p = static_cast<const unsigned char*>(host.raw_data());
      return std::vector<unsigned char>(
          p, p + host.num_elements() * static_cast<int64_t>(size_of(host.dtype())));
    };
    EXPECT_EQ(bits_of(cast(all, DType::Float32)), bits_of(cast(all.gpu(), DType::Float32)));
    EXPECT_EQ(bits_of(cast(floats, half)), bits_of(cast(floats.gpu(), half)));
    EXPECT_EQ(bits_of(cast(cast(all, DType::Float32), half)),
              bits_of(cast(cast(all.gpu(), DType::Float32), half)));
  }
}

TEST_F(CudaPrograms, HalfPrecisionOpsAndGradients) {
  for (DType half : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(name(half));
    const Tensor a0 = cast(rand64({8, 16}, 20), half), b0 = cast(rand64({16, 5}, 21), half);
    const Tensor x0 = cast(rand64({2, 6, 6, 3}, 22), half), f0 = cast(rand64({3, 3, 3, 4}, 23), half);
    // Both devices round the same float32 results, which may differ in their last bits
    // (cuBLAS sums in another order): allow one ulp of the half dtype.
    expect_same_on_both(
        [&](Device d) {
          Tensor a = a0.to(d), b = b0.to(d), x = x0.to(d), f = f0.to(d);
          GradientTape tape;
          tape.watch(a);
          tape.watch(f);
          Tensor y = softmax(matmul(tanh(a) * 2.0, b));
          Tensor conv = max_pool2d(relu(conv2d(x, f, {1, 1}, "SAME")), {2, 2}, {2, 2}, "VALID");
          Tensor loss = reduce_sum(y * y) + reduce_mean(conv);
          std::vector<Tensor> g = tape.gradient(loss, {a, f});
          DeviceScope scope(d);
          random::set_seed(11);  // the same stream on both devices
          return std::vector<Tensor>{y,
                                     conv,
                                     loss,
                                     g[0],
                                     g[1],
                                     reduce_sum(a, Axes(1)),
                                     argmax(a, 1),
                                     cast(a, DType::Float64),
                                     ones({3}, half),
                                     random::uniform({64}, -1, 1, half, 3)};
        },
        half == DType::Float16 ? 1e-3 : 8e-3);
  }
}

TEST_F(CudaPrograms, MixedPrecisionTrainingMatchesTheCpu) {
  random::set_seed(3);
  const Tensor x0 = random::normal({64, 6}), y0 = random::normal({64, 2});
  for (const std::string policy : {"mixed_float16", "mixed_bfloat16"}) {
    SCOPED_TRACE(policy);
    auto fit = [&](Device d) {
      DeviceScope scope(d);
      nn::set_global_policy(nn::Policy(policy));
      random::set_seed(5);
      auto model = std::make_shared<nn::Sequential>();
      model->add(nn::Dense(16, {.activation = "relu"}));
      model->add(nn::Dense(2));
      (*model)(zeros({1, 6}));
      model->compile({.optimizer = std::make_shared<optim::Adam>(0.01),
                      .loss = std::make_shared<nn::losses::MeanSquaredError>()});
      // Host data: fit places each batch on the model's device (Note [batches go to the
      // model's device]).
      auto history = model->fit(x0, y0, {.batch_size = 16, .epochs = 3, .verbose = 0, .shuffle = false});
      EXPECT_EQ(model->predict(x0, 32).device(), d);
      nn::clear_global_policy();
      for (const Variable& v : model->variables()) {
        EXPECT_EQ(v.value().device(), d) << v.name();
        EXPECT_EQ(v.dtype(), DType::Float32) << v.name();
      }
      return history->history().at("loss");
    };
    const std::vector<double> cpu = fit(kCPU), gpu = fit(kGPU);
    ASSERT_EQ(cpu.size(), gpu.size());
    for (size_t i = 0; i < cpu.size(); ++i)
      EXPECT_NEAR(cpu[i], gpu[i], 2e-2 * std::fabs(cpu[i])) << "epoch " << i;
  }
}

}  // namespace
}  // namespace ef

namespace ef {
namespace {

// Note [small integer dtypes] on the device: widened there, computed by the int32 and
// int64 kernels, narrowed keeping the low bits; casts from floats saturate.
TEST_F(CudaPrograms, SmallIntegerDTypes) {
  const Tensor pixels = cast(constant(std::vector<int>{0, 17, 200, 255, 3, 128}, Shape{2, 3}), DType::UInt8);
  const Tensor floats = constant({300.5, -2.0, std::nan(""), 254.9, 1e10, -1e10});
  const Tensor big = constant(std::vector<uint32_t>{4294967295u, 7, 3000000000u}, Shape{3});
  expect_same_on_both([&](Device d) {
    Tensor p = pixels.to(d), f = floats.to(d), u = big.to(d);
    Tensor brightened = p + cast(constant(100).to(d), DType::UInt8);  // wraps past 255
    Tensor as_float = cast(p, DType::Float32) / 255.0;
    Tensor saturated = cast(f, DType::UInt8);
    Tensor sum = reduce_sum(p, Axes(1)), mean = reduce_mean(p);
    Tensor picked = gather(transpose(p), cast(constant({2, 0}).to(d), DType::Int16));
    Tensor sorted = sort(u), wrapped = u * 3 + 1;
    return std::vector<Tensor>{cast(brightened, DType::Int32), as_float,
                               cast(saturated, DType::Int32),  cast(sum, DType::Int32),
                               cast(mean, DType::Int32),       cast(picked, DType::Int32),
                               cast(sorted, DType::Int64),     cast(wrapped, DType::Int64),
                               cast(f, DType::Int16)};
  });
}

}  // namespace
}  // namespace ef
