// Complex tensors (Note [complex dtypes]): the primitives complex/real/imag/abs, the
// composed arithmetic, the ops that move complex elements, printing, and the clear
// errors of every other op.
#include <complex>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_meta;
using testing::expect_values;
using C = std::complex<double>;

// A complex128 tensor of `values` in `shape`.
Tensor c128(const std::vector<C>& values, const Shape& shape) {
  std::vector<double> re, im;
  for (const C& z : values) {
    re.push_back(z.real());
    im.push_back(z.imag());
  }
  return complex(constant(re, shape), constant(im, shape));
}

void expect_complex(const Tensor& t, const std::vector<C>& expected, double tol = 1e-12) {
  ASSERT_TRUE(is_complex(t.dtype())) << t.to_string();
  const Tensor want = c128(expected, Shape{static_cast<int64_t>(expected.size())});
  expect_values(real(t), real(want).to_vector<double>(), tol);
  expect_values(imag(t), imag(want).to_vector<double>(), tol);
}

TEST(Complex, BuildsFromPartsAndSplitsBack) {
  const Tensor z = complex(constant({1.f, -2.f}), constant({3.f, 4.f}));
  expect_meta(z, Shape{2}, DType::Complex64);
  expect_values(real(z), {1, -2});
  expect_values(imag(z), {3, 4});
  expect_meta(real(z), Shape{2}, DType::Float32);
  // complex128 from float64, broadcasting the parts.
  const Tensor w = complex(constant({1.0, 2.0}), constant(5.0));
  expect_meta(w, Shape{2}, DType::Complex128);
  expect_values(imag(w), {5, 5});
  // A real tensor is its own real part and has no imaginary part.
  expect_values(real(constant({7.f})), {7});
  expect_values(imag(constant({7.f})), {0});
}

TEST(Complex, ArithmeticMatchesStdComplex) {
  const std::vector<C> a = {{1, 2}, {-3, 0.5}, {0, -1}, {1e200, 1e200}};
  const std::vector<C> b = {{0.5, -1}, {2, 2}, {-4, 3}, {1e200, -1e200}};
  const Tensor x = c128(a, Shape{4}), y = c128(b, Shape{4});
  std::vector<C> sum, difference, product, quotient;
  for (size_t i = 0; i < a.size(); ++i) {
    sum.push_back(a[i] + b[i]);
    difference.push_back(a[i] - b[i]);
    product.push_back(i == 3 ? C(0, 0) : a[i] * b[i]);
    quotient.push_back(a[i] / b[i]);
  }
  expect_complex(add(x, y), sum);
  expect_complex(subtract(x, y), difference);
  expect_complex(divide(x, y), quotient);  // |b|^2 = 2e400 would overflow unscaled
  const Tensor small = slice(multiply(x, y), {0}, {3});
  expect_complex(small, {product[0], product[1], product[2]});
  expect_complex(negative(x), {-a[0], -a[1], -a[2], -a[3]});
  expect_complex(multiply(x, 2.0), {a[0] * 2.0, a[1] * 2.0, a[2] * 2.0, a[3] * 2.0});
  expect_complex(conj(x), {std::conj(a[0]), std::conj(a[1]), std::conj(a[2]), std::conj(a[3])});
  expect_values(abs(x), {std::abs(a[0]), std::abs(a[1]), std::abs(a[2]), std::abs(a[3])}, 1e-12);
  expect_values(angle(x), {std::arg(a[0]), std::arg(a[1]), std::arg(a[2]), std::arg(a[3])}, 1e-12);
  expect_complex(exp(slice(x, {0}, {3})), {std::exp(a[0]), std::exp(a[1]), std::exp(a[2])});
  expect_complex(log(slice(x, {0}, {3})), {std::log(a[0]), std::log(a[1]), std::log(a[2])});
  expect_values(cast(equal(x, x), DType::Int32), {1, 1, 1, 1});
  expect_values(cast(not_equal(x, conj(x)), DType::Int32), {1, 1, 1, 1});
}

TEST(Complex, ReductionsMatmulAndCasts) {
  const Tensor m = c128({{1, 1}, {2, 0}, {0, 3}, {-1, 2}}, Shape{2, 2});
  expect_complex(reduce_sum(m, {0}), {{1, 4}, {1, 2}});
  expect_complex(reduce_mean(m), {{0.5, 1.5}});
  const C a[2][2] = {{{1, 1}, {2, 0}}, {{0, 3}, {-1, 2}}};
  std::vector<C> product;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) product.push_back(a[i][0] * a[0][j] + a[i][1] * a[1][j]);
  expect_complex(matmul(m, m), product);
  expect_meta(cast(m, DType::Complex64), Shape{2, 2}, DType::Complex64);
  expect_values(cast(m, DType::Float64), {1, 2, 0, -1});  // the real part
  expect_complex(cast(constant({1, 2}), DType::Complex128), {{1, 0}, {2, 0}});
  expect_complex(zeros(Shape{2}, DType::Complex128), {{0, 0}, {0, 0}});
  expect_complex(ones_like(m), {{1, 0}, {1, 0}, {1, 0}, {1, 0}});
}

TEST(Complex, ElementMovingOpsAcceptIt) {
  const Tensor m = c128({{1, 1}, {2, 0}, {0, 3}, {-1, 2}, {5, 5}, {6, -6}}, Shape{2, 3});
  expect_complex(transpose(m), {{1, 1}, {-1, 2}, {2, 0}, {5, 5}, {0, 3}, {6, -6}});
  expect_complex(reshape(m, Shape{3, 2}), {{1, 1}, {2, 0}, {0, 3}, {-1, 2}, {5, 5}, {6, -6}});
  expect_complex(
      concat({m, m}, 0),
      {{1, 1}, {2, 0}, {0, 3}, {-1, 2}, {5, 5}, {6, -6}, {1, 1}, {2, 0}, {0, 3}, {-1, 2}, {5, 5}, {6, -6}});
  expect_complex(gather(m, testing::i64({2, 0}), 1), {{0, 3}, {1, 1}, {6, -6}, {-1, 2}});
  expect_complex(m[1], {{-1, 2}, {5, 5}, {6, -6}});
  expect_complex(tile(slice(m, {0, 0}, {1, 1}), {1, 2}), {{1, 1}, {1, 1}});
  expect_complex(transpose(m).contiguous(), {{1, 1}, {-1, 2}, {2, 0}, {5, 5}, {0, 3}, {6, -6}});
  // complex64 (8 bytes) and complex128 (16) through the same word copies.
  expect_complex(transpose(cast(m, DType::Complex64)), {{1, 1}, {-1, 2}, {2, 0}, {5, 5}, {0, 3}, {6, -6}},
                 1e-6);
}

TEST(Complex, PrintsAsNumPy) {
  const Tensor z = complex(constant({1.5f, -2.f}), constant({-2.f, 0.f}));
  EXPECT_THAT(z.to_string(), ::testing::HasSubstr("[ 1.5-2.j -2. +0.j]")) << z.to_string();
  EXPECT_THAT(z.to_string(), ::testing::HasSubstr("complex64"));
}

TEST(Complex, OtherOpsRefuseItClearly) {
  const Tensor z = complex(constant({1.f}), constant({2.f}));
  EXPECT_ERROR(sqrt(z), UnimplementedError, "sqrt", "complex64", "real", "imag");
  EXPECT_ERROR(maximum(z, z), UnimplementedError, "maximum", "complex64");
  EXPECT_ERROR(reduce_max(z), UnimplementedError, "complex64");
  EXPECT_ERROR(z.item<double>(), UnimplementedError, "complex64");
  EXPECT_ERROR(add(z, constant({1.f})), InvalidArgumentError, "add", "complex64", "float32");
  EXPECT_ERROR(complex(constant({1.f}), constant({1.0})), InvalidArgumentError, "complex", "float32",
               "float64");
  EXPECT_ERROR(complex(constant({1}), constant({1})), InvalidArgumentError, "complex", "int32");
  EXPECT_ERROR(complex(constant({1.f, 2.f}), constant({1.f, 2.f, 3.f})), InvalidArgumentError, "[2]", "[3]");
  EXPECT_ERROR(complex(constant({true}), constant({true})), InvalidArgumentError, "complex", "bool");
  EXPECT_ERROR(signal::fft(constant({1.0})), InvalidArgumentError, "fft", "float64");
}

TEST(Complex, WorksInsideFunctions) {
  Function f([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{abs(multiply(complex(in[0], in[1]), complex(in[1], in[0])))};
  });
  const Tensor re = constant({1.0, 2.0}), im = constant({3.0, -1.0});
  const std::vector<Tensor> out = f({re, im});
  expect_values(out[0], {std::abs(C(1, 3) * C(3, 1)), std::abs(C(2, -1) * C(-1, 2))}, 1e-12);
}

}  // namespace
}  // namespace ef
