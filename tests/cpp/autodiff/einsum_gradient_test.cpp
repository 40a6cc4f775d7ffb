// Gradients of einsum (a composite: they come from its transposes, reshapes, matmuls,
// slices and sums), first and second order, for each lowering it picks.
#include <eagerflow/autodiff/gradient_check.h>

#include "test_util.h"

namespace ef {
namespace {

using testing::expect_gradients;
using testing::rand64;

// sum(w * y^2) for fixed weights w 1, 1.1, 1.2, ...: squared so that second derivatives
// are not zero, weighted so that a wrong permutation of y shows.
Tensor weighted_square(const Tensor& y) {
  Tensor w = reshape(add(multiply(range(0, y.shape().num_elements(), 1, y.dtype()), 0.1), 1), y.shape());
  return reduce_sum(multiply(square(y), w));
}

struct GradientCase {
  const char* equation;
  std::vector<Shape> shapes;
};

TEST(EinsumGradient, FirstAndSecondOrder) {
  const std::vector<GradientCase> cases = {
      {"ij,jk->ik", {{2, 3}, {3, 4}}},                      // matmul
      {"ji,kj->ik", {{3, 2}, {4, 3}}},                      // both transposed
      {"bhqd,bhkd->bhqk", {{2, 2, 3, 2}, {2, 2, 4, 2}}},    // attention scores
      {"bij,jk->bki", {{2, 3, 2}, {2, 3}}},                 // output permuted
      {"i,j->ij", {{3}, {2}}},                              // outer product
      {"ij,ij->i", {{2, 3}, {2, 3}}},                       // batched dot (multiply and sum)
      {"ii->i", {{3, 3}}},                                  // diagonal
      {"ii", {{3, 3}}},                                     // trace
      {"bii,bj->bij", {{2, 3, 3}, {2, 2}}},                 // diagonal, then broadcast product
      {"...ij,...jk->...ik", {{2, 3, 2}, {2, 4}}},          // ellipsis broadcasting
      {"ij,jk,kl->il", {{2, 3}, {3, 2}, {2, 3}}},           // a chain
      {"ij,jk,kl,li->", {{2, 3}, {3, 2}, {2, 3}, {3, 2}}},  // a closed chain (a trace)
      {"ij,j->ij", {{2, 1}, {3}}},                          // size-1 broadcast of a label
  };
  int64_t seed = 1;
  for (const GradientCase& c : cases) {
    std::vector<Tensor> inputs;
    for (const Shape& shape : c.shapes) inputs.push_back(rand64(shape, seed++));
    const std::string equation = c.equation;
    SCOPED_TRACE(equation);
    expect_gradients(
        [equation](const std::vector<Tensor>& in) { return weighted_square(einsum(equation, in)); }, inputs);
  }
}

}  // namespace
}  // namespace ef
