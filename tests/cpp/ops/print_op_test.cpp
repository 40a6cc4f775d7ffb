// The print op: formats, errors, and printing on every run of a traced function and of
// a loop body (not once, while tracing).
#include "test_util.h"

namespace ef {
namespace {

std::string printed(const std::function<void()>& body) {
  ::testing::internal::CaptureStderr();
  body();
  return ::testing::internal::GetCapturedStderr();
}

TEST(PrintOp, FormatsTensorsAndText) {
  EXPECT_EQ(printed([] { print_format("x = {}, n = {}\n", {constant({1.5f, -2.f}), constant(int64_t{7})}); }),
            "x = [ 1.5 -2. ], n = 7\n");
  EXPECT_EQ(printed([] { print("step", 3, constant({true, false}), "{braces}"); }),
            "step 3 [ True False] {braces}\n");
  EXPECT_EQ(printed([] { print_format("{{}} {}\n", {constant(0.25)}); }), "{} 0.25\n");
  EXPECT_EQ(printed([] { print_format("empty {}\n", {zeros({0, 3})}); }), "empty []\n");
}

TEST(PrintOp, BadFormatsAreErrors) {
  EXPECT_ERROR(print_format("{} {}", {constant(1.0)}), InvalidArgumentError, "print", "2 \"{}\" slot(s)",
               "1 tensor(s)");
  EXPECT_ERROR(print_format("a { b", {}), InvalidArgumentError, "print", "unmatched '{'");
  EXPECT_ERROR(print_format("}", {}), InvalidArgumentError, "unmatched '}'");
}

TEST(PrintOp, RunsOnEveryCallOfATracedFunction) {
  auto f = function([](Tensor x) {
    print_format("x={}\n", {x});
    return x * 2.0;
  });
  std::string out = printed([&] {
    f(constant({1.0}));
    f(constant({3.0}));
  });
  EXPECT_EQ(out, "x=[1.]\nx=[3.]\n");  // once per call with the call's value; nothing while tracing
  EXPECT_EQ(f.trace_count(), 1);
}

TEST(PrintOp, RunsOnEveryIterationOfALoopBodyInAFunction) {
  auto f = function([](Tensor n) {
    return while_loop([&](const std::vector<Tensor>& v) { return v[0] < n; },
                      [](const std::vector<Tensor>& v) {
                        print_format("i={}\n", {v[0]});
                        return std::vector<Tensor>{v[0] + int64_t{1}};
                      },
                      {constant(int64_t{0})})[0];
  });
  EXPECT_EQ(printed([&] { f(constant(int64_t{3})); }), "i=0\ni=1\ni=2\n");
}

TEST(PrintOp, DoesNotDisturbGradients) {
  Tensor x = constant({2.0, 3.0});
  GradientTape tape;
  tape.watch(x);
  Tensor y;
  std::string out = printed([&] {
    y = reduce_sum(x * x);
    print("y", y);
  });
  EXPECT_EQ(out, "y 13.0\n");
  testing::expect_values(tape.gradient(y, x), {4, 6});
}

}  // namespace
}  // namespace ef
