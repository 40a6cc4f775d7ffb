// matmul: 2-D and batched matrix products with NumPy-broadcast batch dimensions.
//
// Float32/float64 go to OpenBLAS. Strided inputs whose last two dimensions BLAS can
// read (a transposed view has unit stride in one of them) are passed with a transpose
// flag and leading dimension instead of being copied. Work is split over (batch entry,
// output row) across ef::parallel_for, each piece one single-threaded GEMM
// (Note [one thread pool] in backends/cpu/blas.h). Integers use a blocked loop.
#include <algorithm>
#include <climits>
#include <type_traits>

#include "backends/cpu/blas.h"
#include "backends/cuda/kernels.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/linalg.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/math/complex.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;

enum MatMulAttr { kTransposeA, kTransposeB };

// Broadcasts two batch-dimension lists (unknown dimensions allowed); false when a
// definite mismatch rules it out.
bool broadcast_batch(const Shape& a, const Shape& b, Dims& out) {
  const int ra = a.rank() - 2, rb = b.rank() - 2, r = std::max(ra, rb);
  for (int i = 0; i < r; ++i) {
    int64_t da = i - (r - ra) >= 0 ? a[i - (r - ra)] : 1;
    int64_t db = i - (r - rb) >= 0 ? b[i - (r - rb)] : 1;
    if (da == db || db == 1) out.push_back(da);
    else if (da == 1) out.push_back(db);
    else if (da == kUnknownDim) out.push_back(db);
    else if (db == kUnknownDim) out.push_back(da);
    else return false;
  }
  return true;
}

void infer_matmul(const OpCall& call, OutputMetas& out) {
  const Tensor& a = call.inputs[0];
  const Tensor& b = call.inputs[1];
  const bool ta = call.attrs.get_bool(kTransposeA), tb = call.attrs.get_bool(kTransposeB);
  detail::check_dtype(call, a.dtype(), kNumericTypes, "a");
  detail::check_same_dtype(call, 0, 1, "a", "b");
  if (a.rank() < 2 || b.rank() < 2)
    fail(call.op.name, ": both arguments must have rank >= 2 (matrices, or batches of them), got a with shape ",
         a.shape(), " and b with shape ", b.shape());
  const Shape &sa = a.shape(), &sb = b.shape();
  const int ra = sa.rank(), rb = sb.rank();
  int64_t m = ta ? sa[ra - 1] : sa[ra - 2], ka = ta ? sa[ra - 2] : sa[ra - 1];
  int64_t kb = tb ? sb[rb - 1] : sb[rb - 2], n = tb ? sb[rb - 2] : sb[rb - 1];
  if (ka != kb && ka != kUnknownDim && kb != kUnknownDim)
    fail(call.op.name, ": inner dimensions do not match: a has shape ", sa, " (transpose_a=", ta ? "true" : "false",
         ") and b has shape ", sb, " (transpose_b=", tb ? "true" : "false", "), contracting ", ka, " with ", kb);
  Dims dims;
  if (!broadcast_batch(sa, sb, dims))
    fail(call.op.name, ": the batch dimensions of a (shape ", sa, ") and b (shape ", sb,
         ") cannot be broadcast together");
  dims.push_back(m);
  dims.push_back(n);
  Shape shape(std::move(dims));
  validate_shape(shape, call.op.name, "output", size_of(a.dtype()), true);
  out.add(a.dtype(), std::move(shape));
}

// One operand as the kernel sees it: the logical (after the transpose flag) matrix
// strides, and per-batch-dimension strides aligned with the output's batch dims.
struct Operand {
  const void* data = nullptr;
  int64_t row_stride = 0, col_stride = 0;
  int64_t batch_strides[kMaxRank] = {};
};

Operand make_operand(const Tensor& t, bool transpose, const Shape& out_shape) {
  const TensorImpl& impl = *t.impl();
  const int r = impl.shape.rank(), batch = out_shape.rank() - 2, offset = batch - (r - 2);
  Operand op;
  op.data = static_cast<const char*>(impl.storage->data()) + impl.offset * static_cast<int64_t>(size_of(impl.dtype));
  op.row_stride = impl.strides[transpose ? r - 1 : r - 2];
  op.col_stride = impl.strides[transpose ? r - 2 : r - 1];
  for (int i = 0; i < batch; ++i) {
    int j = i - offset;
    op.batch_strides[i] = (j < 0 || impl.shape[j] == 1) ? 0 : impl.strides[j];
  }
  return op;
}

// Offset (in elements) of batch entry `index` of an operand.
int64_t batch_offset(const Operand& op, const Shape& out_shape, int64_t index) {
  int64_t off = 0;
  for (int i = out_shape.rank() - 3; i >= 0; --i) {
    off += (index % out_shape[i]) * op.batch_strides[i];
    index /= out_shape[i];
  }
  return off;
}

// C rows [i0, i1) of one batch entry, for integers: blocked over k and j so a block of
// B stays in cache while rows of A stream past. Arithmetic wraps (unsigned).
template <class T>
void int_matmul_rows(const T* a, int64_t as_r, int64_t as_c, const T* b, int64_t bs_r, int64_t bs_c, T* c,
                     int64_t i0, int64_t i1, int64_t n, int64_t k) {
  using U = std::make_unsigned_t<T>;
  constexpr int64_t kBlockK = 128, kBlockN = 512;
  U acc[kBlockN];
  for (int64_t j0 = 0; j0 < n; j0 += kBlockN) {
    const int64_t w = std::min(kBlockN, n - j0);
    for (int64_t i = i0; i < i1; ++i) {
      std::fill(acc, acc + w, U(0));
      for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
        for (int64_t p = k0; p < std::min(k, k0 + kBlockK); ++p) {
          const U av = static_cast<U>(a[i * as_r + p * as_c]);
          const T* brow = b + p * bs_r + j0 * bs_c;
          if (bs_c == 1) {
#pragma omp simd
            for (int64_t j = 0; j < w; ++j) acc[j] += av * static_cast<U>(brow[j]);
          } else {
            for (int64_t j = 0; j < w; ++j) acc[j] += av * static_cast<U>(brow[j * bs_c]);
          }
        }
      }
      for (int64_t j = 0; j < w; ++j) c[i * n + j0 + j] = static_cast<T>(acc[j]);
    }
  }
}

template <class T>
void matmul_typed(const OpCall& call, Tensor& out) {
  const bool ta = call.attrs.get_bool(kTransposeA), tb = call.attrs.get_bool(kTransposeB);
  const Shape& os = out.shape();
  const int r = os.rank();
  const int64_t m = os[r - 2], n = os[r - 1];
  const Tensor& a_in = call.inputs[0];
  const int64_t k = ta ? a_in.shape()[a_in.rank() - 2] : a_in.shape()[a_in.rank() - 1];
  T* c = typed_output<T>(out);
  const int64_t total = out.num_elements();
  if (total == 0) return;
  if (k == 0) {  // an empty sum: zeros
    std::fill(c, c + total, T(0));
    return;
  }
  const int64_t batches = total / (m * n);
  Tensor a = a_in, b = call.inputs[1];
  constexpr bool kBlas = std::is_floating_point_v<T>;
  BlasMatrix la, lb;
  Operand pa = make_operand(a, ta, os), pb = make_operand(b, tb, os);
  if constexpr (kBlas) {
    // Inputs BLAS cannot read as they are get one contiguous copy.
    if (!blas_layout(m, k, pa.row_stride, pa.col_stride, la)) {
      a = a.contiguous();
      pa = make_operand(a, ta, os);
      blas_layout(m, k, pa.row_stride, pa.col_stride, la);
    }
    if (!blas_layout(k, n, pb.row_stride, pb.col_stride, lb)) {
      b = b.contiguous();
      pb = make_operand(b, tb, os);
      blas_layout(k, n, pb.row_stride, pb.col_stride, lb);
    }
    if (n > INT_MAX || k > INT_MAX)
      fail<ResourceExhaustedError>(call.op.name, ": dimensions too large for BLAS (n = ", n, ", k = ", k, ")");
  }
  const T* a_data = static_cast<const T*>(pa.data);
  const T* b_data = static_cast<const T*>(pb.data);
  // When A is a single row or B a single column, the product is a matrix times a
  // vector (GEMV, without GEMM's packing), if the vector's stride is one BLAS accepts.
  // Decided per product, never per thread chunk, so results do not depend on threads.
  const int64_t inc_a = k == 1 ? 1 : pa.col_stride, inc_b = k == 1 ? 1 : pb.row_stride;
  const bool a_vector_ok = inc_a >= 1 && inc_a <= INT_MAX, b_vector_ok = inc_b >= 1 && inc_b <= INT_MAX;
  const BlasMatrix lbt{!lb.trans, lb.ld};  // op(B)^T, n x k
  if constexpr (kBlas) {
    // Few output rows (a vector times a matrix): split the columns instead.
    if (batches * m < 8 && n >= 512) {
      const double ns_per_col = static_cast<double>(m) * static_cast<double>(k) * 0.04;
      for (int64_t bi = 0; bi < batches; ++bi) {
        const T* ab = a_data + batch_offset(pa, os, bi);
        const T* bb = b_data + batch_offset(pb, os, bi);
        T* cb = c + bi * m * n;
        parallel_for(n, ns_per_col, [&](int64_t j0, int64_t j1) {
          if (m == 1 && a_vector_ok) gemv(lbt, j1 - j0, k, bb + j0 * pb.col_stride, ab, inc_a, cb + j0, 1);
          else gemm(la, lb, m, j1 - j0, k, ab, bb + j0 * pb.col_stride, cb + j0, n);
        });
      }
      return;
    }
  }
  // Rows of every batch entry form one index space [0, batches * m), split across
  // threads; a chunk runs one GEMM per batch entry it touches.
  const double ns_per_row = static_cast<double>(n) * static_cast<double>(k) * (kBlas ? 0.04 : 0.6);
  parallel_for(batches * m, ns_per_row, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end;) {
      const int64_t bi = row / m, i0 = row % m, i1 = std::min(m, i0 + (end - row));
      const T* ab = a_data + batch_offset(pa, os, bi);
      const T* bb = b_data + batch_offset(pb, os, bi);
      T* cb = c + bi * m * n;
      if constexpr (kBlas) {
        for (int64_t s = i0; s < i1; s += INT_MAX) {  // BLAS takes int sizes
          const int64_t rows = std::min<int64_t>(INT_MAX, i1 - s);
          if (n == 1 && b_vector_ok) gemv(la, rows, k, ab + s * pa.row_stride, bb, inc_b, cb + s, 1);
          else if (m == 1 && a_vector_ok) gemv(lbt, n, k, bb, ab + s * pa.row_stride, inc_a, cb + s * n, 1);
          else gemm(la, lb, rows, n, k, ab + s * pa.row_stride, bb, cb + s * n, n);
        }
      } else {
        int_matmul_rows<T>(ab, pa.row_stride, pa.col_stride, bb, pb.row_stride, pb.col_stride, cb, i0, i1, n, k);
      }
      row += i1 - i0;
    }
  });
}

void matmul_cpu(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_in<kNumericTypes>(outputs[0].dtype(), call.op.name,
                             [&](auto tag) { matmul_typed<typename decltype(tag)::type>(call, outputs[0]); });
}

// C = op(A) op(B) gives dA = dC op(B)^T and dB = op(A)^T dC, folded back through the
// transposes with matmul's own flags (TensorFlow's _MatMulGrad), never a materialized
// transpose. Batched gradients come out in the broadcast batch shape; the tape sums
// them down to each input's batch dimensions.
std::vector<Tensor> matmul_grad(const GradCall& call) {
  const Tensor &a = call.forward.inputs[0], &b = call.forward.inputs[1], &g = call.output_grads[0];
  const bool ta = call.forward.attrs.get_bool(kTransposeA), tb = call.forward.attrs.get_bool(kTransposeB);
  // Each product is computed only when its input needs a gradient (a layer's input
  // batch usually does not: that saves one of the three GEMMs of a training step).
  auto grad_a = [&] {
    if (!call.needs(0)) return Tensor();
    if (!ta) return tb ? matmul(g, b, false, false) : matmul(g, b, false, true);
    return tb ? matmul(b, g, true, true) : matmul(b, g, false, true);
  };
  auto grad_b = [&] {
    if (!call.needs(1)) return Tensor();
    if (!ta) return tb ? matmul(g, a, true, false) : matmul(a, g, true, false);
    return tb ? matmul(g, a, true, true) : matmul(a, g, false, false);
  };
  return {grad_a(), grad_b()};
}

// Batch dimensions broadcast, so a batched operand only needs its batch lined up in
// front (size-1 axes after it where its element has fewer dimensions than the other's).
// A batched matrix times a shared one is one GEMM on the rows of all elements.
std::vector<Tensor> batch_matmul(const BatchCall& call) {
  const Tensor &a = call.input(0), &b = call.input(1);
  const bool ta = call.attrs().get_bool(kTransposeA);
  if (call.is_batched(0) && !call.is_batched(1) && !ta && b.rank() == 2 && a.shape().is_fully_defined() &&
      a.num_elements() > 0) {
    const Tensor rows = reshape(a, Shape{-1, a.shape()[a.rank() - 1]});
    Dims dims(a.shape().dims().begin(), a.shape().dims().end() - 1);
    const Tensor product = run_op(call.call.op, {rows, b}, call.attrs(), CallSite::current());
    dims.push_back(product.shape()[1]);
    return {reshape(product, Shape(dims))};
  }
  const int rank = std::max(detail::element_rank(call, 0), detail::element_rank(call, 1));
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < 2; ++i) {
    const Tensor& x = call.input(i);
    if (!call.is_batched(i) || x.rank() == rank + 1) {
      inputs.push_back(x);
      continue;
    }
    Dims dims{x.shape()[0]};
    for (int d = x.rank(); d < rank + 1; ++d) dims.push_back(1);
    for (int d = 1; d < x.rank(); ++d) dims.push_back(x.shape()[d]);
    inputs.push_back(reshape(x, Shape(dims)));
  }
  return detail::run_batched(call, inputs, call.attrs());
}

const OpDef& kMatMul = define_op({
    .name = "matmul",
    .attr_names = {"transpose_a", "transpose_b"},
    .infer = infer_matmul,
    .kernels = {matmul_cpu, cuda::matmul_kernel},
    .gradient = matmul_grad,
    .gradient_uses = kGradientReadsInputs,  // never C (Note [gradient uses])
    .jvp = detail::jvp_multilinear<>,
    .batch = batch_matmul,
});

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, CallSite where) {
  if (a.defined() && b.defined() && (is_complex(a.dtype()) || is_complex(b.dtype())))
    return detail::with_call_site(where,
                                  [&] { return detail::complex_matmul(a, b, transpose_a, transpose_b); });
  return run_op(kMatMul, {a, b}, {transpose_a, transpose_b}, where);
}

}  // namespace ef
