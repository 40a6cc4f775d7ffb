// Tensor::to_string: TensorFlow's layout around NumPy's str of the values. Every
// expected string here was produced by NumPy 1.24 (`str(np.array(...))`).
#include <numeric>

#include "test_util.h"

namespace ef {
namespace {

template <class T>
Tensor iota(const Shape& shape, T start = 0) {
  std::vector<T> v(static_cast<size_t>(shape.num_elements()));
  std::iota(v.begin(), v.end(), start);
  return constant(v, shape);
}

// The values part of the printed tensor, as NumPy would print them.
std::string values_of(const Tensor& t) {
  std::string s = t.to_string();
  size_t begin = std::string("Tensor(").size();
  if (s[begin] == '\n') ++begin;
  return s.substr(begin, s.rfind(", shape=") - begin);
}

TEST(Print, Scalars) {
  EXPECT_EQ(constant(4.f).to_string(), "Tensor(4.0, shape=(), dtype=float32)");
  EXPECT_EQ(constant(0.1).to_string(), "Tensor(0.1, shape=(), dtype=float64)");
  EXPECT_EQ(constant(0.1f).to_string(), "Tensor(0.1, shape=(), dtype=float32)");
  EXPECT_EQ(constant(1e-5f).to_string(), "Tensor(1e-05, shape=(), dtype=float32)");
  EXPECT_EQ(constant(-2.5).to_string(), "Tensor(-2.5, shape=(), dtype=float64)");
  EXPECT_EQ(constant(7).to_string(), "Tensor(7, shape=(), dtype=int32)");
  EXPECT_EQ(constant(int64_t{-9000000000}).to_string(), "Tensor(-9000000000, shape=(), dtype=int64)");
  EXPECT_EQ(constant(true).to_string(), "Tensor(True, shape=(), dtype=bool)");
  EXPECT_EQ(constant(NAN).to_string(), "Tensor(nan, shape=(), dtype=float32)");
  EXPECT_EQ(constant(-INFINITY).to_string(), "Tensor(-inf, shape=(), dtype=float32)");
}

TEST(Print, OneDimensional) {
  EXPECT_EQ(constant({1.5f, 2.f, 3.f}).to_string(), "Tensor([1.5 2.  3. ], shape=(3,), dtype=float32)");
  EXPECT_EQ(constant({-1, 10, 3}).to_string(), "Tensor([-1 10  3], shape=(3,), dtype=int32)");
  EXPECT_EQ(constant({true, false}).to_string(), "Tensor([ True False], shape=(2,), dtype=bool)");
  EXPECT_EQ(values_of(constant({-0.5f, 2.25f})), "[-0.5   2.25]");
  EXPECT_EQ(values_of(constant({0.1, 0.25, 1.0 / 3})), "[0.1        0.25       0.33333333]");
}

TEST(Print, TwoDimensionalIsMultiLineLikeTensorFlow) {
  EXPECT_EQ(constant({{1.f, 2.f}, {3.f, 4.f}}).to_string(),
            "Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)");
  EXPECT_EQ(values_of(constant({{true, false}, {false, true}})), "[[ True False]\n [False  True]]");
  EXPECT_EQ(constant({{2.f}}).to_string(), "Tensor([[2.]], shape=(1, 1), dtype=float32)");
}

TEST(Print, ThreeDimensional) {
  EXPECT_EQ(values_of(iota<int>({2, 3, 4})),
            "[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]");
}

TEST(Print, NanAndInfinity) {
  EXPECT_EQ(values_of(constant({1.f, NAN, INFINITY, -INFINITY})), "[  1.  nan  inf -inf]");
}

TEST(Print, ScientificNotation) {
  EXPECT_EQ(values_of(constant({1e-5f, 1.f})), "[1.e-05 1.e+00]");
  EXPECT_EQ(values_of(constant({1e20f, 1.5f})), "[1.0e+20 1.5e+00]");
  EXPECT_EQ(values_of(constant({1.f, 2000.f})), "[1.e+00 2.e+03]");
  EXPECT_EQ(values_of(constant({1e10f})), "[1.e+10]");
}

TEST(Print, LongRowsWrapAt75Columns) {
  EXPECT_EQ(values_of(iota<int64_t>({30})),
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n 24 25 26 27 28 29]");
  std::vector<float> lin(20);
  for (int i = 0; i < 20; ++i) lin[i] = static_cast<float>(i / 19.0);
  EXPECT_EQ(values_of(constant(lin, {20})),
            "[0.         0.05263158 0.10526316 0.15789473 0.21052632 0.2631579\n"
            " 0.31578946 0.36842105 0.42105263 0.47368422 0.5263158  0.57894737\n"
            " 0.6315789  0.68421054 0.7368421  0.7894737  0.84210527 0.8947368\n"
            " 0.94736844 1.        ]");
}

TEST(Print, LargeTensorsAreSummarized) {
  EXPECT_EQ(values_of(iota<int>({40, 50})),
            "[[   0    1    2 ...   47   48   49]\n [  50   51   52 ...   97   98   99]\n"
            " [ 100  101  102 ...  147  148  149]\n ...\n [1850 1851 1852 ... 1897 1898 1899]\n"
            " [1900 1901 1902 ... 1947 1948 1949]\n [1950 1951 1952 ... 1997 1998 1999]]");
  EXPECT_EQ(values_of(iota<float>({2000})), "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
  std::string big3 = values_of(iota<int>({10, 10, 30}));
  std::string head =
      "[[[   0    1    2 ...   27   28   29]\n  [  30   31   32 ...   57   58   59]\n"
      "  [  60   61   62 ...   87   88   89]\n  ...\n  [ 210  211  212 ...  237  238  239]\n";
  EXPECT_EQ(big3.substr(0, head.size()), head);
  EXPECT_NE(big3.find("  [ 870  871  872 ...  897  898  899]]\n\n ...\n\n [[2100 2101 2102 ... 2127 2128 2129]"),
            std::string::npos)
      << big3;
  EXPECT_EQ(big3.substr(big3.size() - 37), "[2970 2971 2972 ... 2997 2998 2999]]]");
}

TEST(Print, EmptyTensors) {
  EXPECT_EQ(zeros({0, 3}).to_string(), "Tensor([], shape=(0, 3), dtype=float32)");
  EXPECT_EQ(zeros({2, 0}).to_string(), "Tensor([], shape=(2, 0), dtype=float32)");
  EXPECT_EQ(zeros({0}, DType::Int32).to_string(), "Tensor([], shape=(0,), dtype=int32)");
}

TEST(Print, SymbolicAndUndefined) {
  EXPECT_EQ(Tensor().to_string(), "Tensor(<undefined>)");
  EXPECT_EQ(symbolic_tensor(DType::Float32, {kUnknownDim, 3}).to_string(),
            "Tensor(<symbolic>, shape=(None, 3), dtype=float32)");
  std::ostringstream os;
  os << constant({1, 2});
  EXPECT_EQ(os.str(), "Tensor([1 2], shape=(2,), dtype=int32)");
}

}  // namespace
}  // namespace ef
