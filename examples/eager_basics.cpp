// The first things the eager-execution announcements show, in C++:
// matmul and print, a loop that branches on a tensor's value, and how cheap an op is.
#include <eagerflow/eagerflow.h>

#include <chrono>
#include <cstdio>
#include <iostream>

int main() {
  // Ops run immediately and return tensors you can print.
  ef::Tensor x = ef::constant({{2.f}});
  ef::Tensor m = ef::matmul(x, x);
  std::cout << "matmul: " << m << "\n";

  // Host control flow that depends on tensor values: no graph, no session.
  ef::random::set_seed(1);
  ef::Tensor a = ef::random::uniform({10});
  ef::Tensor b = ef::random::uniform({10});
  int i = 0;
  for (; i < 100; ++i) {
    a = a * a;
    if (a[0] > b[0]) break;
  }
  std::cout << "loop stopped at i = " << i << "\n";

  // Collatz: iterate on a scalar tensor until it reaches 1.
  ef::Tensor n = ef::constant(27);
  int steps = 0;
  while (n != 1) {
    n = ef::equal(ef::floormod(n, 2), 0) ? ef::floordiv(n, 2) : 3 * n + 1;
    ++steps;
  }
  std::cout << "collatz(27) reaches 1 after " << steps << " steps\n";

  // The cost of one tiny op, dispatch included.
  ef::Tensor one = ef::constant({1.f});
  ef::Tensor acc = ef::constant({0.f});
  const int kOps = 100000;
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < kOps; ++k) acc = acc + one;
  std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  std::printf("%d tiny adds: %.1f ms (%.3f us per op), result %s\n", kOps, took.count() / 1000,
              took.count() / kOps, acc.to_string().c_str());
}
