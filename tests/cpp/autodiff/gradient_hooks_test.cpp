// Gradient hooks (Note [gradient hooks]): each hooked variable's gradient is announced
// once, during the backward pass, as soon as nothing more is added to it; what the hook
// returns is what gradient() returns.
#include "eagerflow/autodiff/gradient_hooks.h"

#include "eagerflow/autodiff/custom_gradient.h"
#include "test_util.h"

namespace ef {
namespace {

using testing::expect_values;
using testing::rand64;

void expect_values(const Tensor& got, const Tensor& want, double tolerance) {
  expect_values(got, want.to_vector<double>(), tolerance);
}

// Logs every event of the backward pass, and doubles the gradients it is given.
struct Log {
  std::vector<std::string> events;
  std::vector<bool> recorded;
};

class DoublingHook : public GradientHook {
 public:
  explicit DoublingHook(Log& log) : log_(log) {}

  std::unique_ptr<GradientHookCall> begin(std::span<const Variable> variables, bool recorded) override {
    log_.recorded.push_back(recorded);
    struct Call : GradientHookCall {
      Log& log;
      std::vector<Variable> variables;
      std::vector<Tensor> gradients;
      Call(Log& l, std::span<const Variable> v)
          : log(l), variables(v.begin(), v.end()), gradients(v.size()) {}
      void ready(size_t index, const Tensor& gradient) override {
        log.events.push_back("ready " + variables[index].name() + (gradient.defined() ? "" : " (none)"));
        if (gradient.defined()) gradients[index] = gradient * 2.0;
      }
      std::vector<Tensor> finish() override {
        log.events.push_back("finish");
        return gradients;
      }
    };
    return std::make_unique<Call>(log_, variables);
  }

 private:
  Log& log_;
};

// A layer whose backward pass logs when it runs.
Tensor logged_layer(Log& log, const std::string& name, const Tensor& x) {
  return custom_gradient([&log, name](const Tensor& in) {
    return WithGradient{tanh(in), [&log, name, in](const Tensor& dy) {
                          log.events.push_back("backward " + name);
                          return dy * (1.0 - square(tanh(in)));
                        }};
  })(x);
}

TEST(GradientHooks, EachGradientIsAnnouncedOnceWhenFinalDuringTheBackwardPass) {
  Variable w1(rand64({3, 4}, 1), "w1"), w2(rand64({4, 2}, 2), "w2"), unused(rand64({2}, 3), "unused");
  const std::vector<Variable> all{w1, w2, unused};
  Log log;
  auto registration = register_gradient_hook(all, std::make_shared<DoublingHook>(log));
  const Tensor x = rand64({5, 3}, 4);
  GradientTape tape(/*persistent=*/true);
  // w2 is read twice: its gradient is final only after both reads' gradients.
  const Tensor h = logged_layer(log, "layer 1", matmul(x, w1.value()));
  const Tensor y = logged_layer(log, "layer 2", matmul(h, w2.value()) + matmul(h, w2.value()));
  const Tensor loss = reduce_sum(y * y);
  const std::vector<Tensor> got = tape.gradient(loss, all);

  const std::vector<std::string> expected{"ready unused (none)", "backward layer 2", "ready w2",
                                          "backward layer 1",    "ready w1",         "finish"};
  EXPECT_EQ(log.events, expected);
  EXPECT_EQ(log.recorded, std::vector<bool>{false});

  // What the hook returned, against the same gradients without it.
  Variable v1(w1.value()), v2(w2.value());
  GradientTape plain;
  const Tensor h2 = tanh(matmul(x, v1.value()));
  const Tensor y2 = tanh(matmul(h2, v2.value()) + matmul(h2, v2.value()));
  const std::vector<Tensor> want = plain.gradient(reduce_sum(y2 * y2), std::vector<Variable>{v1, v2});
  expect_values(got[0], want[0] * 2.0, 1e-12);
  expect_values(got[1], want[1] * 2.0, 1e-12);
  EXPECT_FALSE(got[2].defined());

  // Tensor sources and unhooked variables are untouched; hooked ones in the same call are not.
  Variable free(rand64({3, 4}, 5), "free");
  log.events.clear();
  const std::vector<GradientTape::Source> mixed{free, w2, h};
  const std::vector<Tensor> again = tape.gradient(loss, mixed);
  EXPECT_FALSE(again[0].defined());  // `free` was not read
  expect_values(again[1], want[1] * 2.0, 1e-12);
  EXPECT_EQ(log.events, (std::vector<std::string>{"backward layer 2", "ready w2", "finish"}));
}

TEST(GradientHooks, RecordedWhenAnOuterTapeWatches) {
  Variable w(rand64({3}, 1), "w");
  Log log;
  auto registration = register_gradient_hook({w}, std::make_shared<DoublingHook>(log));
  GradientTape outer;
  Tensor g;
  {
    GradientTape inner;
    const Tensor loss = reduce_sum(square(square(w.value())));
    g = inner.gradient(loss, w);  // 2 * 4 w^3, through the hook's ops
  }
  EXPECT_EQ(log.recorded, std::vector<bool>{true});
  // The hook's doubling was recorded: d/dw sum(8 w^3) = 24 w^2 (the outer call is hooked too).
  const Tensor gg = outer.gradient(reduce_sum(g), w);
  expect_values(gg, 24.0 * square(w.value()) * 2.0, 1e-12);
}

TEST(GradientHooks, OneHookPerVariableWhileRegistered) {
  Variable w(rand64({2}, 1), "w");
  Log log;
  {
    auto registration = register_gradient_hook({w}, std::make_shared<DoublingHook>(log));
    EXPECT_ERROR(register_gradient_hook({w}, std::make_shared<DoublingHook>(log)), FailedPreconditionError,
                 "variable 'w' has a gradient hook already");
    GradientTape tape;
    expect_values(tape.gradient(reduce_sum(w.value()), w), {2.0, 2.0}, 0);
  }
  GradientTape tape;  // unregistered: the plain gradient
  expect_values(tape.gradient(reduce_sum(w.value()), w), {1.0, 1.0}, 0);
  EXPECT_EQ(log.events, std::vector<std::string>({"ready w", "finish"}));
}

TEST(GradientHooks, AScopeHearsTheVariablesWithoutAHookOfTheirOwn) {
  Variable registered(rand64({2}, 1), "registered"), other(rand64({2}, 2), "other");
  Log by_registration, by_scope;
  auto registration = register_gradient_hook({registered}, std::make_shared<DoublingHook>(by_registration));
  {
    GradientHookScope scope(std::make_shared<DoublingHook>(by_scope));
    GradientTape tape;
    const Tensor loss = reduce_sum(registered.value() * 3.0) + reduce_sum(other.value() * 5.0);
    const std::vector<Tensor> g = tape.gradient(loss, std::vector<Variable>{registered, other});
    expect_values(g[0], {6.0, 6.0}, 0);
    expect_values(g[1], {10.0, 10.0}, 0);
  }
  EXPECT_EQ(by_registration.events, std::vector<std::string>({"ready registered", "finish"}));
  EXPECT_EQ(by_scope.events, std::vector<std::string>({"ready other", "finish"}));
  GradientTape tape;  // the scope has ended
  expect_values(tape.gradient(reduce_sum(other.value()), other), {1.0, 1.0}, 0);
}

}  // namespace
}  // namespace ef
