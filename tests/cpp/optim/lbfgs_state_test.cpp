// Note [LBFGS state]: what LBFGS carries between steps is saved by checkpoints and
// restored exactly; a damaged state is rejected before anything changes.
#include <filesystem>
#include <unistd.h>

#include "test_util.h"

namespace ef {
namespace {

// f(w) = sum_i c_i (w_i - i)^2 / 2 + sum_i w_i^4 / 4: not quadratic, so the curvature
// pairs change from step to step.
Tensor bumpy(const Variable& w) {
  Tensor target = constant({0.0, 1.0, 2.0, 3.0, -1.0});
  Tensor c = constant({1.0, 10.0, 50.0, 100.0, 3.0});
  return reduce_sum(c * square(w - target)) * 0.5 + reduce_sum(square(square(w))) * 0.25;
}

optim::LBFGSOptions options(std::string line_search) {
  optim::LBFGSOptions o;
  o.max_iter = 3;
  o.max_eval = 100;
  o.history_size = 4;
  o.tolerance_grad = 0;
  o.tolerance_change = 0;
  o.line_search_fn = std::move(line_search);
  return o;
}

std::string temp_path(const std::string& tag) {
  return (std::filesystem::path(::testing::TempDir()) /
          ("ef_lbfgs_" + tag + "_" + std::to_string(::getpid()) + ".safetensors"))
      .string();
}

TEST(LBFGSState, CheckpointedRunContinuesBitForBit) {
  for (std::string search : {"", "strong_wolfe"}) {
    // Reference: 5 uninterrupted steps.
    Variable w(fill({5}, 0.5, DType::Float64), "w");
    optim::LBFGS lbfgs({w}, options(search));
    for (int i = 0; i < 2; ++i) lbfgs.step([&] { return bumpy(w); });
    const std::string path = temp_path("continue" + search);
    io::Checkpoint({{"w", w}, {"lbfgs", lbfgs}}).save(path);
    const int64_t pairs = lbfgs.history_length();
    ASSERT_GT(pairs, 1);
    for (int i = 0; i < 3; ++i) lbfgs.step([&] { return bumpy(w); });

    // A fresh variable and optimizer restored after step 2 take the same 3 steps.
    Variable w2(zeros({5}, DType::Float64), "w");
    optim::LBFGS restored({w2}, options(search));
    io::Checkpoint({{"w", w2}, {"lbfgs", restored}}).restore(path);
    EXPECT_EQ(restored.history_length(), pairs);
    for (int i = 0; i < 3; ++i) restored.step([&] { return bumpy(w2); });
    EXPECT_EQ(w2.value().to_vector<double>(), w.value().to_vector<double>()) << search;
    EXPECT_EQ(restored.iterations(), lbfgs.iterations());
    EXPECT_EQ(restored.function_evaluations(), lbfgs.function_evaluations());
    std::filesystem::remove(path);
  }
}

TEST(LBFGSState, KeysBeforeAndAfterTheFirstStep) {
  Variable a(fill({2, 3}, 1.0f, DType::Float32), "a"), b(fill({4}, 1.0f, DType::Float32), "b");
  optim::LBFGS lbfgs({a, b}, options(""));
  std::map<std::string, Tensor> state = lbfgs.state();
  EXPECT_FALSE(state.count("d"));
  EXPECT_FALSE(state.count("prev_flat_grad"));
  testing::expect_meta(state.at("old_dirs"), {0, 10}, DType::Float32);
  testing::expect_meta(state.at("ro"), {0}, DType::Float64);
  lbfgs.step([&] { return reduce_sum(square(a)) + reduce_sum(square(square(b))); });
  state = lbfgs.state();
  testing::expect_meta(state.at("d"), {10}, DType::Float32);
  ASSERT_GT(lbfgs.history_length(), 0);
  testing::expect_meta(state.at("old_stps"), {lbfgs.history_length(), 10}, DType::Float32);
  EXPECT_EQ(state.at("n_iter").item<int64_t>(), lbfgs.iterations());
  io::Checkpoint ckpt{{"a", a}, {"b", b}, {"opt", lbfgs}};
  EXPECT_TRUE(ckpt.state().count("opt/old_dirs"));
}

TEST(LBFGSState, DamagedStatesAreRejectedAndChangeNothing) {
  Variable w(fill({5}, 0.5, DType::Float64), "w");
  optim::LBFGS lbfgs({w}, options(""));
  lbfgs.step([&] { return bumpy(w); });
  const std::map<std::string, Tensor> good = lbfgs.state();
  const int64_t pairs = lbfgs.history_length(), iterations = lbfgs.iterations();
  ASSERT_GT(pairs, 0);
  auto damaged = [&](const std::function<void(std::map<std::string, Tensor>&)>& damage) {
    std::map<std::string, Tensor> s = good;
    damage(s);
    return s;
  };
  struct Case {
    std::string what;
    std::map<std::string, Tensor> state;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"missing key", damaged([](auto& s) { s.erase("h_diag"); }), "'h_diag'"},
      {"extra key", damaged([](auto& s) { s["momentum"] = constant(1.0); }), "unexpected key(s) 'momentum'"},
      {"wrong dtype", damaged([](auto& s) { s["d"] = cast(s["d"], DType::Float32); }), "'d'"},
      {"wrong size", damaged([](auto& s) { s["prev_flat_grad"] = zeros({6}, DType::Float64); }), "[6]"},
      {"pairs disagree", damaged([&](auto& s) { s["old_stps"] = zeros({pairs + 1, 5}, DType::Float64); }), "'old_stps'"},
      {"too many pairs", damaged([](auto& s) {
         s["old_dirs"] = s["old_stps"] = zeros({5, 5}, DType::Float64);
         s["ro"] = fill({5}, 1.0, DType::Float64);
       }),
       "history_size = 4"},
      {"negative ro", damaged([&](auto& s) { s["ro"] = fill({pairs}, -1.0, DType::Float64); }), "positive and finite"},
      {"negative count", damaged([](auto& s) { s["n_iter"] = constant(int64_t{-2}); }), ">= 0"},
      {"nan step", damaged([](auto& s) { s["t"] = constant(std::nan("")); }), "finite"},
      {"direction without an iteration", damaged([](auto& s) {
         s["n_iter"] = constant(int64_t{0});
         s["old_dirs"] = s["old_stps"] = zeros({0, 5}, DType::Float64);
         s["ro"] = zeros({0}, DType::Float64);
       }),
       "n_iter is 0"},
  };
  const std::vector<double> before = w.value().to_vector<double>();
  for (const Case& c : cases) {
    try {
      lbfgs.restore_state(c.state, "test state");
      ADD_FAILURE() << c.what << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("test state"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(lbfgs.iterations(), iterations);
  EXPECT_EQ(lbfgs.history_length(), pairs);
  EXPECT_EQ(w.value().to_vector<double>(), before);

  // A checkpoint whose L-BFGS part is damaged restores nothing, the variable included.
  Variable w2(zeros({5}, DType::Float64), "w");
  optim::LBFGS other({w2}, options(""));
  std::map<std::string, Tensor> file;
  for (const auto& [key, value] : cases[0].state) file["lbfgs/" + key] = value;
  file["w"] = w.value();
  EXPECT_THROW(io::Checkpoint({{"w", w2}, {"lbfgs", other}}).restore_state(file), NotFoundError);
  EXPECT_EQ(w2.value().to_vector<double>(), std::vector<double>(5, 0.0));
  EXPECT_EQ(other.iterations(), 0);
}

}  // namespace
}  // namespace ef
