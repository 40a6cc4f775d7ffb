// Module tracking (paths, order, sharing, errors), Layer's lazy build, Sequential.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

struct Block : nn::Layer {
  Block() : Layer("block") {}
  nn::Dense& first = add_module<nn::Dense>("first", 3, nn::DenseOptions{.activation = "relu"});
  nn::Dense& second = add_module<nn::Dense>("second", 2, nn::DenseOptions{.use_bias = false});
  Tensor call(const Tensor& x, bool) override { return second(first(x)); }
};

struct Net : nn::Layer {
  Net() : Layer("net") {}
  Variable scale = track_variable("scale", Variable(constant(2.0f), "scale"));
  Variable steps = track_variable("steps", Variable(constant(0.0f), "steps", /*trainable=*/false));
  Block& block = add_module<Block>("block");
  Tensor call(const Tensor& x, bool training) override { return block(x, training) * scale; }
};

TEST(Module, TracksVariablesBySubmodulePathInOrder) {
  Net net;
  EXPECT_EQ(net.variables().size(), 2u);  // the Dense layers are not built yet
  Tensor y = net(ones({4, 5}));
  testing::expect_meta(y, {4, 2}, DType::Float32);
  std::vector<std::string> paths;
  for (auto& [path, v] : net.named_variables()) paths.push_back(path);
  EXPECT_EQ(paths, (std::vector<std::string>{"scale", "steps", "block/first/kernel", "block/first/bias",
                                              "block/second/kernel"}));
  EXPECT_EQ(net.trainable_variables().size(), 4u);
  ASSERT_EQ(net.non_trainable_variables().size(), 1u);
  EXPECT_TRUE(net.non_trainable_variables()[0].same_as(net.steps));
  EXPECT_EQ(net.block.first.kernel().shape(), Shape({5, 3}));
  EXPECT_EQ(net.block.first.kernel().name(), "dense/kernel");
  EXPECT_THAT(net.summary(), ::testing::HasSubstr("block/first/kernel"));
  EXPECT_THAT(net.summary(), ::testing::HasSubstr("Total params: 26 (trainable: 25)"));
}

TEST(Module, SharedModulesAndVariablesAreListedOnce) {
  nn::Module root("root");
  auto shared = std::make_shared<nn::Dense>(2);
  (*shared)(ones({1, 2}));
  root.track_module("a", shared);
  root.track_module("b", shared);
  Variable v(ones({1}), "v");
  root.track_variable("v", v);
  auto other = std::make_shared<nn::Module>("other");
  other->track_variable("v_again", v);
  root.track_module("other", other);
  auto named = root.named_variables();
  ASSERT_EQ(named.size(), 3u);
  EXPECT_EQ(named[0].first, "v");
  EXPECT_EQ(named[1].first, "a/kernel");
  EXPECT_EQ(named[2].first, "a/bias");
}

TEST(Module, RejectsBadNames) {
  nn::Module m("m");
  m.track_variable("w", Variable(ones({1})));
  EXPECT_ERROR(m.track_variable("w", Variable(ones({1}))), InvalidArgumentError, "already tracks", "\"w\"");
  EXPECT_ERROR(m.add_module<nn::Module>("w"), InvalidArgumentError, "already tracks");
  EXPECT_ERROR(m.track_variable("a/b", Variable(ones({1}))), InvalidArgumentError, "no '/'");
  EXPECT_ERROR(m.track_module("null", std::shared_ptr<nn::Module>()), InvalidArgumentError, "null module");
}

TEST(Layer, BuildsOnceFromTheFirstInput) {
  nn::Dense dense(4);
  EXPECT_FALSE(dense.built());
  EXPECT_ERROR(dense.kernel(), FailedPreconditionError, "built on its first call");
  Tensor y = dense(ones({2, 3}, DType::Float64));
  EXPECT_TRUE(dense.built());
  EXPECT_EQ(dense.dtype(), DType::Float64);
  EXPECT_EQ(dense.kernel().dtype(), DType::Float64);
  testing::expect_meta(y, {2, 4}, DType::Float64);
  // A different number of features than it was built for is an error naming both.
  EXPECT_ERROR(dense(ones({2, 5}, DType::Float64)), InvalidArgumentError, "built for 3 input features",
               "[2, 5]");
  EXPECT_ERROR(dense(ones({2, 3})), InvalidArgumentError, "dtype float64", "float32");
  EXPECT_ERROR(nn::Dense(0), InvalidArgumentError, "'units' must be positive");
  nn::Dense scalar_in(2);
  EXPECT_ERROR(scalar_in(ones({3})), InvalidArgumentError, "rank >= 2");
  EXPECT_FALSE(scalar_in.built());  // a failed build can be retried
}

TEST(Sequential, NamesLayersUniquelyAndRunsThemInOrder) {
  nn::Sequential model;
  model.add(nn::Flatten());
  model.add(nn::Dense(8, {.activation = "relu"}));
  model.add(nn::Dropout(0.5, /*seed=*/1));
  auto& out = model.add(nn::Dense(3));
  Tensor x = random::normal({5, 2, 2}, 0, 1, DType::Float32, 3);
  Tensor eval = model(x);
  testing::expect_meta(eval, {5, 3}, DType::Float32);
  std::vector<std::string> paths;
  for (auto& [path, v] : model.named_variables()) paths.push_back(path);
  EXPECT_EQ(paths, (std::vector<std::string>{"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"}));
  EXPECT_EQ(out.kernel().shape(), Shape({8, 3}));
  // Inference is deterministic (Dropout is the identity); training mode is not.
  expect_values(model(x), eval.to_vector<double>(), 0);
  EXPECT_NE(model(x, /*training=*/true).to_vector<double>(), eval.to_vector<double>());
  EXPECT_ERROR(model.add(nn::Dense(2)), FailedPreconditionError, "after the model was built");
  nn::Sequential empty;
  EXPECT_ERROR(empty(x), InvalidArgumentError, "has no layers");
}

TEST(Sequential, TrainsWithAnOptimizer) {
  // y = 3x - 1 fitted by a single Dense unit.
  random::set_seed(0);
  nn::Sequential model;
  model.add(nn::Dense(1));
  Tensor x = reshape(linspace(-1, 1, 32), {32, 1});
  Tensor y = 3.0f * x - 1.0f;
  optim::SGD sgd(0.5);
  nn::losses::MeanSquaredError mse;
  model(x);
  for (int step = 0; step < 200; ++step) sgd.minimize([&] { return mse(y, model(x)); }, model.trainable_variables());
  random::set_seed(std::nullopt);
  auto* dense = dynamic_cast<nn::Dense*>(model.layers()[0].get());
  ASSERT_NE(dense, nullptr);
  expect_values(dense->kernel().value(), {3.0}, 1e-3);
  expect_values(dense->bias().value(), {-1.0}, 1e-3);
}

}  // namespace
}  // namespace ef
