// The first programs of the eager-execution seed documents, as C++ tests.
#include <sstream>
#include <string>

#include "test_util.h"

namespace ef {
namespace {

// x = [[2.]]; m = tf.matmul(x, x); print(m)
TEST(SeedPrograms, MatmulAndPrint) {
  Tensor x = constant({{2.f}});
  Tensor m = matmul(x, x);
  std::ostringstream out;
  out << m;
  EXPECT_EQ(out.str(), "Tensor([[4.]], shape=(1, 1), dtype=float32)");
}

// a = random_uniform((10,)); for i in range(100): a = a*a; if a[0] > b[0]: break
TEST(SeedPrograms, LoopWithTensorValuedBreak) {
  random::set_seed(7);
  Tensor a = random::uniform({10});
  Tensor b = random::uniform({10});
  float a0 = a[0].item<float>(), b0 = b[0].item<float>();
  int i = 0;
  for (; i < 100; ++i) {
    a = a * a;
    if (a[0] > b[0]) break;
  }
  // The same loop on plain floats.
  int expected = 0;
  for (; expected < 100; ++expected) {
    a0 = a0 * a0;
    if (a0 > b0) break;
  }
  EXPECT_EQ(i, expected);
}

// The recitation's fizzbuzz: host control flow on tensor values.
std::string fizzbuzz(int max_num) {
  std::string out;
  Tensor counter = constant(0);
  Tensor max = constant(max_num);
  for (int k = 1; k <= max.item<int>(); ++k) {
    Tensor num = constant(k);
    if (floormod(num, 3) == 0 && floormod(num, 5) == 0) out += "FizzBuzz ";
    else if (floormod(num, 3) == 0) out += "Fizz ";
    else if (floormod(num, 5) == 0) out += "Buzz ";
    else out += std::to_string(num.item<int>()) + " ";
    counter += 1;
  }
  EXPECT_EQ(counter.item<int>(), max_num);
  return out;
}

TEST(SeedPrograms, FizzBuzz) {
  EXPECT_EQ(fizzbuzz(15), "1 2 Fizz 4 Buzz Fizz 7 8 Fizz Buzz 11 Fizz 13 14 FizzBuzz ");
}

// Collatz: a while loop whose condition is a tensor.
TEST(SeedPrograms, Collatz) {
  Tensor n = constant(int64_t{27});
  int steps = 0;
  while (n != 1) {
    n = (floormod(n, 2) == 0) ? floordiv(n, 2) : 3 * n + 1;
    ++steps;
  }
  EXPECT_EQ(steps, 111);
  EXPECT_EQ(n.dtype(), DType::Int64);
}

// W = Variable(ones((2,2))); b = Variable(zeros((2,))); forward([1, 0]) = W * x + b
TEST(SeedPrograms, EagerAffineModel) {
  Tensor W = ones({2, 2});
  Tensor b = zeros({2});
  Tensor out = W * constant({1.f, 0.f}) + b;
  testing::expect_values(out, {1, 0, 1, 0});
}

}  // namespace
}  // namespace ef
