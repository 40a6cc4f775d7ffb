// The "first program" of README.md, kept here so the build proves it compiles and
// `ctest` runs it. Keep the two in sync.
#include <eagerflow/eagerflow.h>
#include <iostream>

int main() {
  ef::Tensor x = ef::constant({{2.f}});
  std::cout << ef::matmul(x, x) << "\n";  // Tensor([[4.]], shape=(1, 1), dtype=float32)

  ef::Tensor a = ef::random::normal({3, 3}, 0, 1, ef::DType::Float32, /*seed=*/42);
  ef::Tensor y = ef::reduce_sum(ef::relu(a) * 2 + 1, /*axis=*/1);
  if (y[0] > y[1]) std::cout << "row 0 wins: " << y << "\n";  // branch on a tensor's value

  ef::Variable w(ef::ones({2, 2}), "w");
  ef::GradientTape tape;                        // trainable variables read here are watched
  ef::Tensor loss = ef::reduce_sum(w * w);
  ef::Tensor dw = tape.gradient(loss, w);       // 2 * w
  w.assign_sub(0.1f * dw);

  auto f = [](const ef::Tensor& x) { return ef::pow(x, 3.0); };
  std::cout << ef::grad(ef::grad(f))(ef::constant(2.0)) << "\n";  // 12.0: grad composes

  // Your own gradient for a function: finite where the formula's own overflows.
  auto log1pexp = ef::custom_gradient([](const ef::Tensor& x) {
    ef::Tensor e = ef::exp(x);
    return ef::WithGradient{ef::log(1 + e), [e](const ef::Tensor& dy) { return dy * (1 - 1 / (1 + e)); }};
  });
  std::cout << ef::grad(log1pexp)(ef::constant(100.f)) << "\n";  // 1.0
}
