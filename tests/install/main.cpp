// Prints 2 * 2 through an installed eagerflow; scripts/install_test.sh checks the output.
#include <eagerflow/eagerflow.h>

#include <iostream>

int main() {
  std::cout << ef::constant({{2.f}}) * ef::constant({{2.f}}) << "\n";
}
