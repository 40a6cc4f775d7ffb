#include <eagerflow/eagerflow.h>

#include <iostream>

int main() {
  ef::Tensor x = ef::constant({{2.f}});
  std::cout << x * x << "\n";
  std::cout << ef::exp(ef::constant({1.0, 2.0})) << "\n";
}
