// Saved models: functions with variables, control flow and unknown dimensions survive a
// save and a load bit for bit; loaded variables train; bad directories are refused.
#include <eagerflow/saved_model/saved_model.h>

#include <filesystem>

#include "io/io_test_util.h"

namespace ef {
namespace {

using saved_model::Export;
using saved_model::LoadedModel;
using testing::TempDir;

const std::vector<TensorSpec> kBatchOf4 = {{DType::Float32, {kUnknownDim, 4}, "x"}};

// A two-layer perceptron with its variables.
struct Mlp {
  Variable w1{random::normal({4, 8}, 0.0, 1.0, DType::Float32, 1), "w1"};
  Variable b1{zeros({8}) + 0.1f, "b1"};
  Variable w2{random::normal({8, 3}, 0.0, 1.0, DType::Float32, 2), "w2"};
  Tensor operator()(const Tensor& x) const { return softmax(matmul(relu(matmul(x, w1) + b1), w2)); }
};

// The trace of a function with an input signature.
ConcreteFunction trace(const Function& f) { return f.get_concrete_function(std::vector<Tensor>{}); }

// Expects `f` to throw E whose message contains `part`.
template <class E, class F>
void expect_error(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying '" << part << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

void expect_close(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.shape(), b.shape());
  const auto x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol) << "element " << i;
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
}

TEST(SavedModel, ASavedFunctionGivesTheSameOutputsAfterLoading) {
  TempDir dir("saved_mlp");
  Mlp mlp;
  Function f([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{mlp(in[0])}; }, "predict",
             kBatchOf4);
  saved_model::save(dir.file("model"),
                    {{.name = "serving_default", .function = trace(f), .signature = true}});
  const LoadedModel m = saved_model::load(dir.file("model"));
  EXPECT_EQ(m.signature_keys(), std::vector<std::string>{"serving_default"});
  const Tensor x = random::normal({5, 4}, 0.0, 1.0, DType::Float32, 3);
  expect_same(m.call_signature("serving_default", {{"x", x}}).at("output_0"), mlp(x));
  expect_same(m.call("serving_default", {x})[0], f({x})[0]);
  // Any batch size (the dimension stayed unknown), and the variables are copies.
  EXPECT_EQ(m.call("serving_default", {zeros({1, 4})})[0].shape(), Shape({1, 3}));
  ASSERT_EQ(m.variables().size(), 3u);
  for (const Variable& v : m.variables())
    expect_same(v.value(), v.name() == "w1"   ? mlp.w1.value()
                           : v.name() == "b1" ? mlp.b1.value()
                                              : mlp.w2.value());
  mlp.w1.assign(zeros({4, 8}));
  EXPECT_NE(m.call("serving_default", {x})[0].to_vector<float>(), mlp(x).to_vector<float>());
  EXPECT_EQ(m.format_version(), saved_model::kFormatVersion);
}

TEST(SavedModel, ControlFlowAndIntegerLoopsRoundTrip) {
  TempDir dir("saved_control");
  // The Collatz length of n (while with a nested cond), and a branch on the sum of x.
  Function f(
      [](const std::vector<Tensor>& in) {
        auto steps = while_loop([](const std::vector<Tensor>& v) { return v[0] > 1; },
                                [](const std::vector<Tensor>& v) {
                                  Tensor next = cond(
                                      equal(floormod(v[0], 2), 0), [&] { return floordiv(v[0], 2); },
                                      [&] { return v[0] * 3 + 1; });
                                  return std::vector<Tensor>{next, v[1] + 1};
                                },
                                {in[0], constant(0)});
        Tensor y = cond(
            reduce_sum(in[1]) > 0.f, [&] { return in[1] * 2.f; }, [&] { return -in[1]; });
        return std::vector<Tensor>{steps[1], y};
      },
      "collatz", std::vector<TensorSpec>{{DType::Int32, {}, "n"}, {DType::Float32, {kUnknownDim}, "x"}});
  saved_model::save(dir.file("m"), {{.name = "run", .function = trace(f), .output_names = {"steps", "y"}}});
  const LoadedModel m = saved_model::load(dir.file("m"));
  EXPECT_TRUE(m.signature_keys().empty());
  const auto out = m.call("run", {constant(27), constant({1.f, -3.f})});
  EXPECT_EQ(out[0].item<int>(), 111);
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{-1.f, 3.f}));
  EXPECT_EQ(m.call("run", {constant(6), constant({2.f})})[1].to_vector<float>(), std::vector<float>{4.f});
  EXPECT_EQ(m.get("run").output_names, (std::vector<std::string>{"steps", "y"}));
}

TEST(SavedModel, LoadedVariablesTrainWithATapeAndAnOptimizer) {
  TempDir dir("saved_train");
  Mlp mlp;
  Function f([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{mlp(in[0])}; }, "predict",
             kBatchOf4);
  saved_model::save(dir.file("m"), {{.name = "predict", .function = trace(f)}});
  const LoadedModel m = saved_model::load(dir.file("m"));
  const Tensor x = random::normal({6, 4}, 0.0, 1.0, DType::Float32, 4);
  const auto loss_of = [&](auto&& forward, const std::vector<Variable>& vars) {
    GradientTape tape;
    Tensor loss = reduce_sum(square(forward()));
    return std::pair{loss, tape.gradient(loss, std::vector<Variable>(vars))};
  };
  // The loaded variables in the original's order (a file lists them in first-use order).
  std::vector<Variable> loaded;
  for (const char* name : {"w1", "b1", "w2"})
    for (const Variable& v : m.trainable_variables())
      if (v.name() == name) loaded.push_back(v);
  ASSERT_EQ(loaded.size(), 3u);
  auto [loss, grads] = loss_of([&] { return m.call("predict", {x})[0]; }, loaded);
  auto [loss0, grads0] = loss_of([&] { return mlp(x); }, {mlp.w1, mlp.b1, mlp.w2});
  ASSERT_EQ(grads.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(grads[i].defined());
    expect_close(grads[i], grads0[i], 1e-5);
  }
  optim::SGD sgd(0.5);
  sgd.apply_gradients(grads, loaded);
  const float after = reduce_sum(square(m.call("predict", {x})[0])).item<float>();
  EXPECT_NE(after, loss.item<float>());
}

TEST(SavedModel, RandomOpsDrawNewNumbersOnEachCallOfTheLoadedFunction) {
  TempDir dir("saved_random");
  Function f(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + random::uniform({3}, 0, 1)}; },
      "noise", std::vector<TensorSpec>{{DType::Float32, {3}, "x"}});
  saved_model::save(dir.file("m"), {{.name = "noise", .function = trace(f)}});
  const LoadedModel m = saved_model::load(dir.file("m"));
  const Tensor a = m.call("noise", {zeros({3})})[0], b = m.call("noise", {zeros({3})})[0];
  EXPECT_NE(a.to_vector<float>(), b.to_vector<float>());
}

TEST(SavedModel, SavingReplacesAnEarlierSavedModelAndNothingElse) {
  TempDir dir("saved_replace");
  Function one([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1.f}; }, "one",
               kBatchOf4);
  Function two([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 2.f}; }, "two",
               kBatchOf4);
  saved_model::save(dir.file("m"), {{.name = "f", .function = trace(one)}});
  saved_model::save(dir.file("m"), {{.name = "f", .function = trace(two)}});
  EXPECT_EQ(saved_model::load(dir.file("m")).call("f", {zeros({1, 4})})[0].to_vector<float>()[0], 2.f);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m"});  // no temporary folder left
  std::filesystem::create_directories(dir.path() / "other" / "data");
  EXPECT_THROW(saved_model::save(dir.file("other"), {{.name = "f", .function = trace(one)}}),
               FailedPreconditionError);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "other" / "data"));
}

TEST(SavedModel, BadExportsAndCallsAreRefusedWithClearErrors) {
  TempDir dir("saved_bad");
  Function f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.f}; }, "double",
             kBatchOf4);
  expect_error<InvalidArgumentError>([&] { saved_model::save(dir.file("m"), {}); }, "nothing to save");
  expect_error<InvalidArgumentError>(
      [&] {
        saved_model::save(dir.file("m"),
                          {{.name = "f", .function = trace(f)}, {.name = "f", .function = trace(f)}});
      },
      "repeated");
  expect_error<InvalidArgumentError>(
      [&] {
        saved_model::save(dir.file("m"), {{.name = "f", .function = trace(f), .input_names = {"a", "b"}}});
      },
      "names 2 inputs");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "m"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{});
  saved_model::save(dir.file("m"), {{.name = "f", .function = trace(f), .signature = true}});
  const LoadedModel m = saved_model::load(dir.file("m"));
  expect_error<NotFoundError>([&] { m.get("g"); }, "no export named 'g'; it has 'f'");
  expect_error<InvalidArgumentError>([&] { m.call_signature("f", {}); }, "needs input 'x'");
  expect_error<InvalidArgumentError>(
      [&] {
        m.call_signature("f", {{"x", zeros({1, 4})}, {"y", zeros({1})}});
      },
      "has no input 'y'");
  expect_error<InvalidArgumentError>([&] { m.call("f", {zeros({2, 5})}); }, "argument 0");
  expect_error<NotFoundError>([&] { saved_model::load(dir.file("missing")); }, "not a directory");
}

}  // namespace
}  // namespace ef
