// What the LAPACK-backed linalg ops share (see lapack.h).
#include "ops/linalg/lapack.h"

#include "eagerflow/core/threading.h"

namespace ef::linalg_detail {

void check_matrices(std::string_view op, const Tensor& x, std::string_view arg, bool square,
                    DTypeSet dtypes) {
  if (!x.defined()) fail(op, ": argument '", arg, "' is undefined");
  if (!cpu::contains(dtypes, x.dtype()))
    fail(op, ": argument '", arg, "' has dtype ", x.dtype(),
         ", which this op does not support (supported: ", detail::dtype_set_names(dtypes), ")");
  if (x.rank() < 2)
    fail(op, ": argument '", arg, "' must have rank >= 2 (a matrix, or a batch of them), got shape ",
         x.shape());
  const int64_t m = x.shape().dim(-2), n = x.shape().dim(-1);
  if (square && m != n && m != kUnknownDim && n != kUnknownDim)
    fail(op, ": argument '", arg, "' must be a batch of square matrices, got shape ", x.shape());
}

Shape batch_shape(const Shape& shape) {
  return Shape(std::span<const int64_t>(shape.begin(), shape.end() - 2));
}

Shape broadcast_batch(const OpCall& call, size_t i, size_t j, std::string_view arg_i,
                      std::string_view arg_j) {
  const Shape &a = call.inputs[i].shape(), &b = call.inputs[j].shape();
  try {
    return broadcast_shapes(batch_shape(a), batch_shape(b), call.op.name);
  } catch (const InvalidArgumentError&) {
    fail(call.op.name, ": the batch dimensions of '", arg_i, "' (shape ", a, ") and '", arg_j, "' (shape ", b,
         ") cannot be broadcast together");
  }
}

int64_t columns_per_item(int64_t batches, int64_t cols) {
  const int64_t threads = num_threads();
  if (batches >= threads || cols <= 64) return std::max<int64_t>(cols, 1);
  return std::max<int64_t>(64, (cols + threads - 1) / threads);
}

void check_lapack_size(const OpCall& call, int64_t dim) {
  if (dim > INT_MAX)
    fail<ResourceExhaustedError>(call.op.name, ": matrix dimension ", dim,
                                 " is too large for LAPACK (at most ", INT_MAX, ")");
}

BatchOffsets::BatchOffsets(const Tensor& input, const Shape& out_batch) : out_batch_(out_batch.dims()) {
  const TensorImpl& impl = *input.impl();
  const int r = impl.shape.rank(), batch = out_batch.rank(), offset = batch - (r - 2);
  row_stride_ = impl.strides[r - 2];
  col_stride_ = impl.strides[r - 1];
  strides_ = Dims(static_cast<size_t>(batch), 0);
  index_strides_ = Dims(static_cast<size_t>(batch), 0);
  int64_t entries = 1;
  for (int i = batch - 1; i >= 0; --i) {
    const int j = i - offset;
    if (j < 0) continue;
    if (impl.shape[j] != 1) {
      strides_[i] = impl.strides[j];
      index_strides_[i] = entries;
    }
    entries *= impl.shape[j];
  }
}

int64_t BatchOffsets::walk(int64_t entry, const Dims& strides) const {
  int64_t off = 0;
  for (int i = static_cast<int>(out_batch_.size()) - 1; i >= 0; --i) {
    off += (entry % out_batch_[i]) * strides[i];
    entry /= out_batch_[i];
  }
  return off;
}

void infer_solve_like(const OpCall& call, OutputMetas& out) {
  detail::check_input_count(call, 2);
  check_matrices(call.op.name, call.inputs[0], "matrix", true);
  check_matrices(call.op.name, call.inputs[1], "rhs", false);
  detail::check_same_dtype(call, 0, 1, "matrix", "rhs");
  const Shape &a = call.inputs[0].shape(), &b = call.inputs[1].shape();
  const int64_t n = std::max(a.dim(-2), a.dim(-1)), rows = b.dim(-2);
  if (n != rows && n != kUnknownDim && rows != kUnknownDim)
    fail(call.op.name, ": 'matrix' of shape ", a, " and 'rhs' of shape ", b,
         " do not match: rhs must have as many rows as the matrix");
  Dims dims = broadcast_batch(call, 0, 1, "matrix", "rhs").dims();
  dims.push_back(rows == kUnknownDim ? n : rows);
  dims.push_back(b.dim(-1));
  out.add(call.inputs[0].dtype(), Shape(std::move(dims)));
}

}  // namespace ef::linalg_detail
