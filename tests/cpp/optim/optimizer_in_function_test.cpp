// Optimizers inside graphs and functions (Note [optimizer state lives in variables]):
// a traced training step updates like eager steps, its slots and counters are created on
// the first trace, and schedules follow the step the graph runs at.
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>()>;

std::vector<std::pair<std::string, MakeOptimizer>> optimizers() {
  return {
      {"sgd", [] { return std::make_unique<optim::SGD>(0.1); }},
      {"nesterov", [] { return std::make_unique<optim::SGD>(0.05, 0.9, true); }},
      {"adam",
       [] {
         return std::make_unique<optim::Adam>(optim::ExponentialDecay{0.1, 2, 0.5});
       }},
      {"amsgrad", [] { return std::make_unique<optim::Adam>(0.05, 0.8, 0.99, 1e-7, true); }},
      {"adamw",
       [] {
         return std::make_unique<optim::AdamW>(optim::CosineDecay{0.1, 4, 0.1}, 0.1);
       }},
      {"rmsprop", [] { return std::make_unique<optim::RMSprop>(0.01, 0.9, 0.5, 1e-7, true); }},
      {"adagrad", [] { return std::make_unique<optim::Adagrad>(0.1); }},
  };
}

Tensor train_step(optim::Optimizer& opt, Variable& w, const Tensor& x) {
  Tensor loss;
  std::vector<Tensor> grads;
  {
    GradientTape tape;
    loss = reduce_sum(square(w * x - 1.0));
    grads = tape.gradient(loss, std::vector<Variable>{w});
  }
  opt.apply_gradients(grads, {w});
  return loss;
}

TEST(OptimizerInFunction, ATracedStepMatchesEagerStepsFromTheFirstCall) {
  const Tensor x = constant({0.5, -1.5, 2.0});
  for (const auto& [name, make] : optimizers()) {
    SCOPED_TRACE(name);
    Variable eager_w(constant({1.0, -2.0, 0.5}), "w"), traced_w(constant({1.0, -2.0, 0.5}), "w");
    std::unique_ptr<optim::Optimizer> eager_opt = make(), traced_opt = make();
    auto step = function([&](Tensor data) { return train_step(*traced_opt, traced_w, data); });
    for (int i = 0; i < 6; ++i) {
      const Tensor expected = train_step(*eager_opt, eager_w, x);
      EXPECT_NEAR(step(x).item<double>(), expected.item<double>(), 1e-12) << "step " << i;
      expect_values(traced_w.value(), eager_w.value().to_vector<double>(), 1e-12);
    }
    EXPECT_EQ(step.trace_count(), 1);
    EXPECT_EQ(traced_opt->iterations(), 6);
    EXPECT_DOUBLE_EQ(traced_opt->current_learning_rate(), eager_opt->current_learning_rate());
    for (const std::string& slot : traced_opt->slot_names())
      expect_values(traced_opt->slot(traced_w, slot).value(),
                    eager_opt->slot(eager_w, slot).value().to_vector<double>(), 1e-12);
  }
}

TEST(OptimizerInFunction, GraphModeRunsAdvanceTheStep) {
  Variable eager_w(constant({1.0, -2.0}), "w"), graph_w(constant({1.0, -2.0}), "w");
  optim::Adam eager_opt(optim::ExponentialDecay{0.1, 1, 0.5}),
      graph_opt(optim::ExponentialDecay{0.1, 1, 0.5});
  const Tensor x = constant({2.0, 3.0});
  Graph g;
  Operation train;
  {
    Graph::Scope scope(g);
    const Tensor loss = reduce_sum(square(graph_w * x - 1.0));
    train = graph_opt.apply_gradients(gradients({loss}, std::vector<Variable>{graph_w}), {graph_w});
    EXPECT_ERROR(graph_opt.minimize([&] { return loss; }, {graph_w}), FailedPreconditionError,
                 "run the training operation that apply_gradients returns");
  }
  ASSERT_TRUE(train.defined());
  Session session(g);
  session.run(global_variables_initializer(g));
  for (int i = 0; i < 4; ++i) {
    train_step(eager_opt, eager_w, x);
    session.run(train);
    expect_values(graph_w.value(), eager_w.value().to_vector<double>(), 1e-12);
  }
  EXPECT_EQ(graph_opt.iterations(), 4);
  EXPECT_FALSE(eager_opt.apply_gradients({constant({0.0, 0.0})}, {eager_w}).defined());  // eagerly: done
}

TEST(OptimizerInFunction, SchedulesOfANumberRunOnlyEagerly) {
  Variable w(constant({1.0}), "w");
  optim::SGD host_schedule(
      optim::LearningRate(std::function<double(int64_t)>([](int64_t s) { return 1.0 / (s + 1); })));
  auto host_step = function([&](Tensor x) { return train_step(host_schedule, w, x); });
  EXPECT_ERROR(host_step(constant({1.0})), UnimplementedError, "schedule given as a function of a number",
               "inside a graph or function");
  // The same schedule with ops on the step tensor runs anywhere.
  Variable eager_w(constant({1.0}), "w"), traced_w(constant({1.0}), "w");
  auto rate = [](const Tensor& step) { return 1.0 / (cast(step, DType::Float64) + 1.0); };
  optim::SGD eager_opt{optim::LearningRate(optim::LearningRate::TensorSchedule(rate))};
  optim::SGD traced_opt{optim::LearningRate(optim::LearningRate::TensorSchedule(rate))};
  auto step = function([&](Tensor x) { return train_step(traced_opt, traced_w, x); });
  for (int i = 0; i < 3; ++i) {
    train_step(eager_opt, eager_w, constant({1.0}));
    step(constant({1.0}));
  }
  expect_values(traced_w.value(), eager_w.value().to_vector<double>(), 1e-12);
  EXPECT_DOUBLE_EQ(traced_opt.current_learning_rate(), 0.25);
}

TEST(OptimizerInFunction, LayersAndSlotsAreCreatedOnTheFirstTraceOnly) {
  nn::Dense dense(2);
  optim::Adam adam(0.01);
  auto step = function([&](Tensor x) {
    Tensor loss;
    std::vector<Tensor> grads;
    {
      GradientTape tape;
      loss = reduce_mean(square(dense(x)));
      grads = tape.gradient(loss, dense.trainable_variables());
    }
    adam.apply_gradients(grads, dense.trainable_variables());
    return loss;
  });
  const Tensor before = step(ones({4, 3}));  // builds the layer, creates the slots
  EXPECT_FALSE(before.is_symbolic());
  EXPECT_EQ(adam.slot_variables().size(), 4u);
  step(ones({2, 3}));  // a new batch size: a second trace, which reuses them
  EXPECT_EQ(step.trace_count(), 2);
  EXPECT_EQ(adam.iterations(), 2);
  EXPECT_EQ(adam.slot_variables().size(), 4u);
}

}  // namespace
}  // namespace ef
