// Helpers shared by the C++ tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <eagerflow/eagerflow.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace ef::testing {

// Expects `t` to have `shape` and `dtype`.
inline void expect_meta(const Tensor& t, const Shape& shape, DType dtype) {
  EXPECT_EQ(t.shape(), shape) << t.to_string();
  EXPECT_EQ(t.dtype(), dtype) << t.to_string();
}

// Expects the values of `t` (row-major, converted to double) to equal `expected`
// within `tol` (NaNs must match NaNs).
inline void expect_values(const Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size()) << t.to_string();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " of " << t.to_string();
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "element " << i << " of " << t.to_string();
    } else {
      EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0, std::fabs(expected[i])))
          << "element " << i << " of " << t.to_string();
    }
  }
}

// Runs fn with the thread pool at `n` threads, then restores it.
template <class Fn>
void with_threads(int n, Fn fn) {
  const int before = num_threads();
  set_num_threads(n);
  try {
    fn();
  } catch (...) {
    set_num_threads(before);
    throw;
  }
  set_num_threads(before);
}

// 0, 1, 2, ... in `shape` (row-major), of `dtype`.
inline Tensor iota(const Shape& shape, DType dtype = DType::Float32) {
  return reshape(range(0, shape.num_elements(), 1, dtype), shape);
}

// An int64 tensor of `v` with `shape` (default: 1-D).
inline Tensor i64(std::vector<int64_t> v, Shape shape = {}) {
  if (shape.rank() == 0) shape = Shape{static_cast<int64_t>(v.size())};
  return constant(v, shape);
}

// Expects check_gradients (first and, by default, second order) to pass for f.
inline void expect_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                             const std::vector<Tensor>& inputs, int order = 2) {
  GradientCheckResult r = check_gradients(f, inputs, order);
  EXPECT_TRUE(r.ok) << r.message;
}

// Uniform float64 values in [lo, hi), from a fixed seed.
inline Tensor rand64(const Shape& shape, int64_t seed, double lo = -1, double hi = 1) {
  return random::uniform(shape, lo, hi, DType::Float64, seed);
}

// Expects the generated document at `path` (under docs/) to hold `text`; with
// EF_UPDATE_DOCS=1 (`make docs`) writes `text` there instead.
inline void expect_generated_doc(const std::filesystem::path& path, const std::string& text) {
  if (const char* update = std::getenv("EF_UPDATE_DOCS"); update && std::string(update) == "1") {
    std::ofstream(path) << text;
    return;
  }
  std::ifstream in(path);
  const std::string committed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(committed == text) << path.string() << " is out of date: run `make docs` and commit it";
}

// Expects `statement` to throw ErrorType whose message contains every one of `parts`.
#define EXPECT_ERROR(statement, ErrorType, ...)                                           \
  do {                                                                                    \
    try {                                                                                 \
      (void)(statement);                                                                  \
      ADD_FAILURE() << "expected " #ErrorType " from: " #statement;                       \
    } catch (const ErrorType& e) {                                                        \
      for (const std::string& part : std::vector<std::string>{__VA_ARGS__})               \
        EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr(part)) << "in: " #statement; \
    } catch (const std::exception& e) {                                                   \
      ADD_FAILURE() << "expected " #ErrorType ", got a different exception: " << e.what(); \
    }                                                                                     \
  } while (0)

}  // namespace ef::testing
