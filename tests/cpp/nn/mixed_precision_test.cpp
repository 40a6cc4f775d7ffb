// Mixed-precision policies: what a layer computes in, what its variables are stored in,
// and that training under a mixed policy follows float32 training.
#include "test_util.h"

namespace ef::nn {
namespace {

// Sets the global policy for one test and clears it after.
struct GlobalPolicy {
  explicit GlobalPolicy(const std::string& name) { set_global_policy(Policy(name)); }
  ~GlobalPolicy() { clear_global_policy(); }
};

TEST(MixedPrecision, PoliciesByName) {
  Policy mixed("mixed_bfloat16");
  EXPECT_EQ(mixed.compute_dtype(), DType::BFloat16);
  EXPECT_EQ(mixed.variable_dtype(), DType::Float32);
  EXPECT_TRUE(mixed.is_mixed());
  EXPECT_FALSE(Policy("float16").is_mixed());
  EXPECT_ERROR(Policy("mixed_float8"), InvalidArgumentError, "mixed_float8", "mixed_bfloat16");
  EXPECT_FALSE(global_policy().has_value());
}

TEST(MixedPrecision, LayersComputeInHalfAndKeepFloat32Weights) {
  for (const char* name : {"mixed_float16", "mixed_bfloat16"}) {
    GlobalPolicy policy(name);
    const DType half = Policy(name).compute_dtype();
    random::set_seed(1);
    Dense dense(3);
    Tensor x = random::normal({4, 5});
    GradientTape tape;
    Tensor y = dense(x);
    EXPECT_EQ(y.dtype(), half) << name;
    EXPECT_EQ(dense.kernel().dtype(), DType::Float32);
    EXPECT_TRUE(dense.kernel().autocast());
    // Outside the layer's call the variable reads as stored.
    EXPECT_EQ(dense.kernel().value().dtype(), DType::Float32);
    // The output is the float32 computation rounded once per op.
    Tensor want =
        matmul(cast(x, half), cast(dense.kernel().value(), half)) + cast(dense.bias().value(), half);
    EXPECT_EQ(y.to_vector<float>(), want.to_vector<float>());
    // Gradients reach the float32 master weights in float32.
    Tensor loss = losses::MeanSquaredError()(zeros({4, 3}), y);
    EXPECT_EQ(loss.dtype(), DType::Float32);
    std::vector<Tensor> grads = tape.gradient(loss, std::vector<Variable>{dense.kernel(), dense.bias()});
    EXPECT_EQ(grads[0].dtype(), DType::Float32);
    EXPECT_EQ(grads[1].dtype(), DType::Float32);
  }
}

TEST(MixedPrecision, LayerPolicyOverridesAndIsInTheConfig) {
  GlobalPolicy policy("mixed_bfloat16");
  auto softmax = std::make_shared<ActivationLayer>("softmax");
  softmax->set_dtype_policy(Policy("float32"));  // Keras' advice for the output layer
  Tensor probabilities = (*softmax)(cast(constant({{1.f, 2.f}}), DType::BFloat16));
  EXPECT_EQ(probabilities.dtype(), DType::Float32);
  EXPECT_EQ(std::get<std::string>(softmax->get_config().values.at("dtype")), "float32");
  EXPECT_ERROR(softmax->set_dtype_policy(Policy("float16")), FailedPreconditionError,
               "after the layer was built");
  auto again = layer_from_config("Activation", softmax->get_config());
  EXPECT_EQ(again->dtype_policy()->name(), "float32");
}

TEST(MixedPrecision, BatchNormalizationKeepsFloat32MovingStatistics) {
  GlobalPolicy policy("mixed_float16");
  BatchNormalization bn;
  Tensor y = bn(random::normal({8, 4}), /*training=*/true);
  EXPECT_EQ(y.dtype(), DType::Float16);
  for (const Variable& v : bn.variables()) EXPECT_EQ(v.dtype(), DType::Float32) << v.name();
}

// The same MLP, trained from the same initial weights under float32 and
// mixed_bfloat16, ends at nearly the same loss.
TEST(MixedPrecision, TrainingFollowsFloat32) {
  random::set_seed(11);
  Tensor x = random::normal({256, 8});
  Tensor y = reduce_sum(x * random::normal({8}), {1}, true);
  auto train = [&](const char* policy_name) {
    std::optional<GlobalPolicy> policy;
    if (policy_name) policy.emplace(policy_name);
    random::set_seed(2);
    auto model = std::make_shared<Sequential>();
    model->add(Dense(16, {.activation = "relu"}));
    model->add(Dense(1));
    model->compile({.optimizer = std::make_shared<optim::Adam>(0.01),
                    .loss = std::make_shared<losses::MeanSquaredError>()});
    auto history = model->fit(x, y, {.batch_size = 32, .epochs = 20, .verbose = 0, .shuffle = false});
    return history->history().at("loss").back();
  };
  const double full = train(nullptr), mixed = train("mixed_bfloat16");
  EXPECT_LT(full, 0.05);
  EXPECT_LT(mixed, 0.1);
  EXPECT_NEAR(mixed, full, 0.05);
}

}  // namespace
}  // namespace ef::nn
