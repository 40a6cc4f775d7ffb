// tensordot: contraction of two tensors over paired axes, as tf.tensordot. A composite
// of transpose, reshape and matmul (no kernel, no gradient of its own).
#include <algorithm>
#include <numeric>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/linalg.h"

namespace ef {
namespace {

// Axes [first, first + n).
std::vector<int64_t> iota(int64_t first, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

// One operand brought into matrix form: [free, contracted] (or [contracted, free] with
// `transposed`), using a reshape only when the contracted axes already sit at one end
// in the right order, else a transpose first.
struct MatrixForm {
  Tensor matrix;
  bool transposed = false;
};

MatrixForm to_matrix(const Tensor& x, const std::vector<int64_t>& contracted, bool contracted_first,
                     std::vector<int64_t>& free_dims, CallSite where) {
  const int rank = x.rank();
  const int64_t n = static_cast<int64_t>(contracted.size());
  std::vector<int64_t> free_axes;
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(contracted.begin(), contracted.end(), i) == contracted.end()) free_axes.push_back(i);
  int64_t free_size = 1, contracted_size = 1;
  for (int64_t a : free_axes) {
    free_dims.push_back(x.shape()[static_cast<int>(a)]);
    free_size *= x.shape()[static_cast<int>(a)];
  }
  for (int64_t a : contracted) contracted_size *= x.shape()[static_cast<int>(a)];
  if (contracted == iota(rank - n, n))  // [free..., contracted...]
    return {reshape(x, Shape{free_size, contracted_size}, where), contracted_first};
  if (contracted == iota(0, n))  // [contracted..., free...]
    return {reshape(x, Shape{contracted_size, free_size}, where), !contracted_first};
  std::vector<int64_t> perm = contracted_first ? contracted : free_axes;
  const std::vector<int64_t>& rest = contracted_first ? free_axes : contracted;
  perm.insert(perm.end(), rest.begin(), rest.end());
  Tensor t = transpose(x, perm, where);
  Shape shape = contracted_first ? Shape{contracted_size, free_size} : Shape{free_size, contracted_size};
  return {reshape(t, shape, where), false};
}

}  // namespace

Tensor tensordot(const Tensor& a, const Tensor& b, const TensordotAxes& axes, CallSite where) {
  try {
    if (!a.defined() || !b.defined()) fail("tensordot: an argument is undefined");
    if (a.dtype() != b.dtype())
      fail("tensordot: argument 'b' has dtype ", b.dtype(), " but argument 'a' has dtype ", a.dtype(),
           " (shapes ", a.shape(), " and ", b.shape(), "); both must have the same dtype");
    if (!is_numeric(a.dtype())) fail("tensordot: dtype ", a.dtype(), " is not supported (numbers only)");
    if (!a.shape().is_fully_defined() || !b.shape().is_fully_defined())
      fail<UnimplementedError>("tensordot: needs fully known shapes, got ", a.shape(), " and ", b.shape());
    const int ra = a.rank(), rb = b.rank();
    std::vector<int64_t> a_axes, b_axes;
    if (axes.is_count()) {
      const int64_t n = axes.count();
      if (n < 0 || n > ra || n > rb)
        fail("tensordot: argument 'axes' = ", n, " must be in [0, min(rank(a), rank(b))] = [0, ",
             std::min(ra, rb), "] for shapes ", a.shape(), " and ", b.shape());
      a_axes = iota(ra - n, n);
      b_axes = iota(0, n);
    } else {
      if (axes.a_axes().size() != axes.b_axes().size())
        fail("tensordot: argument 'axes' pairs ", axes.a_axes().size(), " axes of a with ", axes.b_axes().size(),
             " axes of b; the lists must be equally long");
      for (size_t i = 0; i < axes.a_axes().size(); ++i) {
        a_axes.push_back(normalize_axis(axes.a_axes()[i], ra, "tensordot", "axes (of a)"));
        b_axes.push_back(normalize_axis(axes.b_axes()[i], rb, "tensordot", "axes (of b)"));
      }
      if (ra == 0 && !a_axes.empty()) fail("tensordot: a is a scalar and has no axes to contract");
      if (rb == 0 && !b_axes.empty()) fail("tensordot: b is a scalar and has no axes to contract");
      // Pairs in the order of a's axes: the contracted block then often needs no transpose.
      std::vector<size_t> order(a_axes.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return a_axes[i] < a_axes[j]; });
      std::vector<int64_t> sa, sb;
      for (size_t i : order) {
        sa.push_back(a_axes[i]);
        sb.push_back(b_axes[i]);
      }
      a_axes = sa;
      b_axes = sb;
      for (size_t i = 1; i < a_axes.size(); ++i)
        if (a_axes[i] == a_axes[i - 1]) fail("tensordot: argument 'axes' repeats axis ", a_axes[i], " of a");
      std::vector<int64_t> sorted_b = b_axes;
      std::sort(sorted_b.begin(), sorted_b.end());
      for (size_t i = 1; i < sorted_b.size(); ++i)
        if (sorted_b[i] == sorted_b[i - 1]) fail("tensordot: argument 'axes' repeats axis ", sorted_b[i], " of b");
    }
    for (size_t i = 0; i < a_axes.size(); ++i) {
      int64_t da = a.shape()[static_cast<int>(a_axes[i])], db = b.shape()[static_cast<int>(b_axes[i])];
      if (da != db)
        fail("tensordot: axis ", a_axes[i], " of a (shape ", a.shape(), ") has size ", da, " but axis ", b_axes[i],
             " of b (shape ", b.shape(), ") has size ", db);
    }
    std::vector<int64_t> out_dims;
    MatrixForm ma = to_matrix(a, a_axes, false, out_dims, where);
    MatrixForm mb = to_matrix(b, b_axes, true, out_dims, where);
    Tensor product = matmul(ma.matrix, mb.matrix, ma.transposed, mb.transposed, where);
    return reshape(product, Shape(out_dims), where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
