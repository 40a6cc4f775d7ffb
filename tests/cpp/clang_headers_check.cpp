// The public headers and the README's first examples must compile with clang as well as
// with GCC (which builds everything else). ctest `headers_compile_with_clang` runs
// `clang++ -std=c++20 -fsyntax-only` on this file when clang++ is installed; it is not
// part of eagerflow_tests. Linked against the library, it also runs: it exits non-zero
// when a tensor's dtype or shape is not the one written beside it.
//
// It exists because clang cannot deduce the element type of ef::constant's nested
// initializer lists when they are written through an alias template (creation.h).
#include <eagerflow/eagerflow.h>

#include <cstdint>
#include <iostream>
#include <vector>

namespace {

int failures = 0;

void expect(const ef::Tensor& t, ef::DType dtype, const ef::Shape& shape, const char* what) {
  if (t.dtype() != dtype || t.shape() != shape) {
    std::cerr << what << ": got " << t.dtype() << " " << t.shape() << ", expected " << dtype << " " << shape
              << "\n";
    ++failures;
  }
}

void expect_ragged_throws(const char* what, auto make) {
  try {
    make();
    std::cerr << what << ": a ragged list did not throw\n";
    ++failures;
  } catch (const ef::InvalidArgumentError&) {
  }
}

// README.md, "A first program", and the overview comments of the headers.
void readme_examples() {
  ef::Tensor x = ef::constant({{2.f}});
  expect(ef::matmul(x, x), ef::DType::Float32, {1, 1}, "README matmul");

  ef::Variable w(ef::ones({2, 2}), "w");
  ef::GradientTape tape;
  ef::Tensor loss = ef::reduce_sum(w * w);
  ef::Tensor dw = tape.gradient(loss, w);
  expect(dw, ef::DType::Float32, {2, 2}, "README tape");

  auto f = [](const ef::Tensor& v) { return ef::pow(v, 3.0); };
  expect(ef::grad(ef::grad(f))(ef::constant(2.0)), ef::DType::Float64, {}, "README grad(grad)");

  auto a = ef::constant({{1.f, 2.f}, {3.f, 4.f}});
  expect(a, ef::DType::Float32, {2, 2}, "creation.h a");
  auto b = ef::constant(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  expect(b, ef::DType::Int64, {2, 3}, "creation.h b");
  expect(ef::zeros({3, 4}), ef::DType::Float32, {3, 4}, "creation.h zeros");
  expect(ef::range(0, 10, 2), ef::DType::Int32, {5}, "creation.h range");
}

// Every element type at ranks 1 to 3, the deepest rank, and ragged lists.
void nested_lists() {
  expect(ef::constant({1.f, 2.f}), ef::DType::Float32, {2}, "float rank 1");
  expect(ef::constant({{1.0, 2.0}}), ef::DType::Float64, {1, 2}, "double rank 2");
  expect(ef::constant({{{1}, {2}}}), ef::DType::Int32, {1, 2, 1}, "int rank 3");
  expect(ef::constant({int64_t{1}}), ef::DType::Int64, {1}, "int64 rank 1");
  expect(ef::constant({{int64_t{1}}, {int64_t{2}}}), ef::DType::Int64, {2, 1}, "int64 rank 2");
  expect(ef::constant({{{true, false}}}), ef::DType::Bool, {1, 1, 2}, "bool rank 3");
  expect(ef::constant({{{{{{{{1.f}}}}}}}}), ef::DType::Float32, {1, 1, 1, 1, 1, 1, 1, 1}, "rank 8");
  expect_ragged_throws("int rank 2", [] { return ef::constant({{1, 2}, {3}}); });
  expect_ragged_throws("float rank 3", [] { return ef::constant({{{1.f}, {2.f, 3.f}}}); });
}

}  // namespace

int main() {
  readme_examples();
  nested_lists();
  if (failures == 0) std::cout << "all examples have the documented dtypes and shapes\n";
  return failures == 0 ? 0 : 1;
}
