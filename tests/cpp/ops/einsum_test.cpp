// einsum: each part of the subscript grammar against hand-computed values or equivalent
// ops, several operands, dtypes, empty dimensions, graph mode, and bad equations.
#include <vector>

#include "test_util.h"

namespace ef {
namespace {

using ::ef::testing::expect_meta;
using ::ef::testing::expect_values;

// 0, 1, 2, ... as float64 unless told.
Tensor iota_tensor(const Shape& shape, DType dtype = DType::Float64) { return testing::iota(shape, dtype); }

TEST(Einsum, MatMulForms) {
  Tensor a = iota_tensor(Shape{2, 3}), b = iota_tensor(Shape{3, 4});
  std::vector<double> expected = matmul(a, b).to_vector<double>();
  expect_values(einsum("ij,jk->ik", {a, b}), expected, 1e-12);
  expect_values(einsum("ij,jk", {a, b}), expected, 1e-12);               // implicit output
  expect_values(einsum(" i j , j k -> i k ", {a, b}), expected, 1e-12);  // whitespace
  expect_values(einsum("ij,kj->ik", {a, transpose(b)}), expected, 1e-12);
  expect_values(einsum("ji,jk->ik", {transpose(a), b}), expected, 1e-12);
  expect_values(einsum("ik,jk->ij", {a, iota_tensor(Shape{4, 3})}),
                matmul(a, iota_tensor(Shape{4, 3}), false, true).to_vector<double>(), 1e-12);
  // Transposed output: the implicit order sorts labels, so "jk,ij" is still [i, k].
  expect_meta(einsum("ij,jk->ki", {a, b}), Shape{4, 2}, DType::Float64);
  expect_values(einsum("ij,jk->ki", {a, b}), transpose(matmul(a, b)).contiguous().to_vector<double>(), 1e-12);
  expect_values(einsum("jk,ij", {b, a}), expected, 1e-12);
}

TEST(Einsum, BatchedAndAttention) {
  Tensor q = iota_tensor(Shape{2, 3, 4, 5}), k = iota_tensor(Shape{2, 3, 6, 5});
  Tensor scores = einsum("bhqd,bhkd->bhqk", {q, k});
  expect_meta(scores, Shape{2, 3, 4, 6}, DType::Float64);
  expect_values(scores, matmul(q, k, false, true).to_vector<double>(), 1e-9);
  // The batch labels in a different order in b: b is transposed to match.
  Tensor kt = transpose(k, {1, 0, 2, 3});
  expect_values(einsum("bhqd,hbkd->bhqk", {q, kt}), scores.to_vector<double>(), 1e-9);
}

TEST(Einsum, SingleOperand) {
  Tensor x = iota_tensor(Shape{3, 3});
  expect_values(einsum("ii", {x}), {0 + 4 + 8});
  expect_values(einsum("ii->i", {x}), {0, 4, 8});
  expect_values(einsum("ij->", {x}), {36});
  expect_values(einsum("ij->j", {x}), {9, 12, 15});
  expect_values(einsum("ij->ji", {x}), {0, 3, 6, 1, 4, 7, 2, 5, 8});
  expect_values(einsum("ij", {x}), x.to_vector<double>());
  expect_values(einsum("ji", {x}), {0, 3, 6, 1, 4, 7, 2, 5, 8});  // implicit: sorted, so a transpose
  Tensor cube = iota_tensor(Shape{2, 2, 2});
  expect_values(einsum("iii->i", {cube}), {0, 7});
  expect_values(einsum("bii->b", {iota_tensor(Shape{2, 3, 3})}), {12, 39});
  expect_values(einsum("iij->ij", {cube}), {0, 1, 6, 7});
  expect_values(einsum("->", {constant(3.0)}), {3});
}

TEST(Einsum, OuterElementwiseAndSums) {
  Tensor u = constant({1.0, 2.0}), v = constant({3.0, 4.0, 5.0});
  expect_values(einsum("i,j->ij", {u, v}), {3, 4, 5, 6, 8, 10});
  expect_values(einsum("i,j", {u, v}), {3, 4, 5, 6, 8, 10});
  expect_values(einsum("i,i->", {u, u}), {5});
  expect_values(einsum("i,i->i", {u, u}), {1, 4});
  expect_values(einsum("i,j->", {u, v}), {36});  // each summed out of its own operand
  expect_values(einsum(",i->i", {constant(2.0), u}), {2, 4});
  Tensor a = iota_tensor(Shape{2, 3}), b = iota_tensor(Shape{2, 3});
  expect_values(einsum("ij,ij->i", {a, b}), {0 + 1 + 4, 9 + 16 + 25});
}

TEST(Einsum, Ellipsis) {
  Tensor a = iota_tensor(Shape{2, 3, 4}), b = iota_tensor(Shape{4, 5});
  std::vector<double> expected = matmul(a, b).to_vector<double>();
  expect_values(einsum("...ij,...jk->...ik", {a, b}), expected, 1e-9);  // ranks 1 and 0 broadcast
  expect_values(einsum("...ij,jk", {a, b}), expected, 1e-9);            // implicit: ellipsis first
  // Ellipses broadcast as NumPy: [5, 1] against [2] give [5, 2].
  Tensor x = iota_tensor(Shape{5, 1, 3}), y = iota_tensor(Shape{2, 3});
  expect_meta(einsum("...i,...i->...", {x, y}), Shape{5, 2}, DType::Float64);
  expect_values(einsum("...i,...i->...", {x, y}), reduce_sum(multiply(x, y), -1).to_vector<double>(), 1e-9);
  expect_values(einsum("i...->...", {a}), reduce_sum(a, 0).to_vector<double>(), 1e-9);
  // An ellipsis in the inputs only is summed (as PyTorch).
  expect_values(einsum("...i->i", {a}), reduce_sum(a, {0, 1}).to_vector<double>(), 1e-9);
  expect_values(einsum("...ii->...i", {iota_tensor(Shape{2, 3, 3})}), {0, 4, 8, 9, 13, 17});
}

TEST(Einsum, SizeOneBroadcasts) {
  Tensor a = iota_tensor(Shape{2, 1}), b = iota_tensor(Shape{3, 4});
  // j has size 1 in a and 3 in b: a broadcasts along j (NumPy).
  expect_values(einsum("ij,jk->ik", {a, b}), {0, 0, 0, 0, 12, 15, 18, 21});
  expect_meta(einsum("ij,kj->ijk", {iota_tensor(Shape{2, 1}), iota_tensor(Shape{4, 3})}), Shape{2, 3, 4},
              DType::Float64);
}

TEST(Einsum, ManyOperands) {
  Tensor a = iota_tensor(Shape{2, 3}), b = iota_tensor(Shape{3, 4}), c = iota_tensor(Shape{4, 5});
  Tensor d = iota_tensor(Shape{5, 2});
  expect_values(einsum("ij,jk,kl->il", {a, b, c}), matmul(matmul(a, b), c).to_vector<double>(), 1e-9);
  expect_values(einsum("ij,jk,kl,lm->im", {a, b, c, d}),
                matmul(matmul(matmul(a, b), c), d).to_vector<double>(), 1e-9);
  // A chain closed into a trace, and an outer product with a shared-label pair.
  expect_values(einsum("ij,jk,kl,li->", {a, b, c, d}),
                {reduce_sum(einsum("ii->i", {matmul(matmul(matmul(a, b), c), d)})).item<double>()}, 1e-6);
  Tensor u = constant({1.0, 2.0});
  expect_values(einsum("i,j,jk->ik", {u, constant({1.0, 1.0, 1.0}), b}), {12, 15, 18, 21, 24, 30, 36, 42});
}

TEST(Einsum, Dtypes) {
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    Tensor a = iota_tensor(Shape{2, 3}, dtype), b = iota_tensor(Shape{3, 2}, dtype);
    Tensor c = einsum("ij,jk->ik", {a, b});
    expect_meta(c, Shape{2, 2}, dtype);
    expect_values(c, {10, 13, 28, 40});
    expect_values(einsum("ii", {iota_tensor(Shape{3, 3}, dtype)}), {12});
  }
}

TEST(Einsum, EmptyDimensions) {
  expect_values(einsum("ij,jk->ik", {zeros(Shape{2, 0}), zeros(Shape{0, 3})}), {0, 0, 0, 0, 0, 0});
  expect_meta(einsum("ij,jk->ik", {zeros(Shape{0, 4}), zeros(Shape{4, 3})}), Shape{0, 3}, DType::Float32);
  expect_meta(einsum("bij,bjk->bik", {zeros(Shape{0, 2, 4}), zeros(Shape{0, 4, 3})}), Shape{0, 2, 3},
              DType::Float32);
}

TEST(Einsum, GraphModeWithUnknownDimensions) {
  Graph g;
  Tensor a, b, x, y, column, batched, outer, diagonal, chain, broadcast;
  {
    Graph::Scope scope(g);
    a = placeholder(DType::Float64, {kUnknownDim, 3, 4}, "a");
    b = placeholder(DType::Float64, {kUnknownDim, 4, kUnknownDim}, "b");
    x = placeholder(DType::Float64, {kUnknownDim, 3, 3}, "x");
    y = placeholder(DType::Float64, {kUnknownDim}, "y");
    batched = einsum("bij,bjk->bik", {a, b});  // unknown sizes: a broadcast multiply and a sum
    EXPECT_EQ(batched.shape(), (Shape{kUnknownDim, 3, kUnknownDim}));
    diagonal = einsum("bii->bi", {x});
    EXPECT_EQ(diagonal.shape(), (Shape{kUnknownDim, 3}));
    outer = einsum("i,j->ij", {y, y});
    chain = einsum("bij,bjk,k->bi", {a, b, y});
    // A size-1 j broadcasts against a known size 3 (the sum then runs over 3 copies).
    column = placeholder(DType::Float64, {kUnknownDim, 1}, "column");
    broadcast = einsum("ij,jk->ik", {column, iota_tensor(Shape{3, 2})});
    // A diagonal of unknown size cannot be sliced: a clear error, not a wrong answer.
    EXPECT_ERROR(einsum("ii->i", {placeholder(DType::Float64, {kUnknownDim, kUnknownDim})}),
                 UnimplementedError, "einsum", "diagonal", "'i'");
    EXPECT_ERROR(einsum("bij,bjk->bik", {a, placeholder(DType::Float64, {kUnknownDim, 5, 2})}),
                 InvalidArgumentError, "einsum", "'j'", "size 4", "size 5");
  }
  Session sess(g);
  Tensor va = iota_tensor(Shape{2, 3, 4}), vb = iota_tensor(Shape{2, 4, 5}), vx = iota_tensor(Shape{2, 3, 3});
  Tensor vy = iota_tensor(Shape{5});
  expect_values(sess.run(batched, {{a, va}, {b, vb}}), matmul(va, vb).to_vector<double>(), 1e-9);
  expect_values(sess.run(diagonal, {{x, vx}}), {0, 4, 8, 9, 13, 17});
  expect_values(sess.run(outer, {{y, constant({1.0, 2.0})}}), {1, 2, 2, 4});
  expect_values(sess.run(chain, {{a, va}, {b, vb}, {y, vy}}),
                einsum("bij,bjk,k->bi", {va, vb, vy}).to_vector<double>(), 1e-9);
  expect_values(sess.run(broadcast, {{column, constant({{1.0}, {2.0}})}}), {6, 9, 12, 18});
}

TEST(Einsum, BadEquations) {
  Tensor a = zeros(Shape{2, 3}), b = zeros(Shape{3, 4});
  EXPECT_ERROR(einsum("ij,jk->ik", {a}), InvalidArgumentError, "einsum", "2 input terms", "1 operands",
               "[2, 3]");
  EXPECT_ERROR(einsum("ij->i", {a, b}), InvalidArgumentError, "einsum", "1 input terms", "2 operands");
  EXPECT_ERROR(einsum("ijk,jk->ik", {a, b}), InvalidArgumentError, "einsum", "operand 0", "names 3",
               "[2, 3]");
  EXPECT_ERROR(einsum("i...,jk->ik", {zeros(Shape{}), b}), InvalidArgumentError, "einsum", "operand 0",
               "'...'");
  EXPECT_ERROR(einsum("ij,kj->ik", {a, b}), InvalidArgumentError, "einsum", "'j'", "size 3", "size 4",
               "[3, 4]");
  EXPECT_ERROR(einsum("ii->i", {a}), InvalidArgumentError, "einsum", "'i'", "diagonal", "[2, 3]");
  EXPECT_ERROR(einsum("ij,j%->i", {a, b}), InvalidArgumentError, "einsum", "equation", "'%'");
  EXPECT_ERROR(einsum("i.j->i", {a}), InvalidArgumentError, "einsum", "equation", "'.'");
  EXPECT_ERROR(einsum("ij->ik", {a}), InvalidArgumentError, "einsum", "'k'", "no input");
  EXPECT_ERROR(einsum("ij->ii", {a}), InvalidArgumentError, "einsum", "repeats", "'i'");
  EXPECT_ERROR(einsum("ij->i->j", {a}), InvalidArgumentError, "einsum", "more than one '->'");
  EXPECT_ERROR(einsum("...i...->i", {a}), InvalidArgumentError, "einsum", "more than one '...'");
  EXPECT_ERROR(einsum("ij,jk", {a, zeros(Shape{3, 4}, DType::Float64)}), InvalidArgumentError, "einsum",
               "operand 1", "float64", "float32", "[3, 4]");
  EXPECT_ERROR(einsum("i", {constant({true, false})}), InvalidArgumentError, "einsum", "bool", "[2]");
  EXPECT_ERROR(einsum("", {}), InvalidArgumentError, "einsum", "operands");
}

}  // namespace
}  // namespace ef
