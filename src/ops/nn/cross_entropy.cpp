// Softmax cross-entropy losses, fused as in TensorFlow: one pass computes each row's
// log-sum-exp and the loss, without materializing log_softmax (a composite would make
// a full-size temporary per step). sigmoid_cross_entropy_with_logits is a composite.
#include <cmath>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/nn/softmax_kernels.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// Dimensions equal or one unknown (graph mode, Note [unknown dimensions]).
bool compatible(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int d = 0; d < a.rank(); ++d)
    if (a[d] != b[d] && a[d] != kUnknownDim && b[d] != kUnknownDim) return false;
  return true;
}

constexpr double kLossElementNs = 3.0;

// ---- softmax_cross_entropy_with_logits(labels, logits, axis) ----
enum DenseAttr { kAxis };

void infer_dense(const OpCall& call, OutputMetas& out) {
  const Tensor &labels = call.inputs[0], &logits = call.inputs[1];
  detail::check_dtype(call, logits.dtype(), cpu::kFloatTypes, "logits");
  detail::check_same_dtype(call, 1, 0, "logits", "labels");
  if (logits.rank() == 0) fail(call.op.name, ": argument 'logits' must have at least one dimension, got a scalar");
  if (!compatible(labels.shape(), logits.shape()))
    fail(call.op.name, ": labels and logits must have the same shape, got labels ", labels.shape(), " and logits ",
         logits.shape());
  const int axis = normalize_axis(call.attrs.get_int(kAxis), logits.rank(), call.op.name);
  Dims dims;
  for (int d = 0; d < logits.rank(); ++d)
    if (d != axis) dims.push_back(logits.shape()[d]);
  out.add(logits.dtype(), Shape(dims));
}

// sum_j z_j * (lse - x_j) over one row with stride `s` between classes.
template <class T>
T dense_row_loss(const T* z, const T* x, int64_t n, int64_t s) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) m = std::max(m, x[j * s]);
  T sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(x[j * s] - m);
  const T log_sum = std::log(sum);  // see detail::MaxLogSum
  T loss = 0;
  for (int64_t j = 0; j < n; ++j) loss += z[j * s] * (log_sum - (x[j * s] - m));
  return loss;
}

void dense_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor labels = call.inputs[0].contiguous(), logits = call.inputs[1].contiguous();
  const int axis = normalize_axis(call.attrs.get_int(kAxis), logits.rank(), call.op.name);
  const detail::AxisGeometry g = detail::axis_geometry(logits.shape(), axis);
  cpu::dispatch_in<cpu::kFloatTypes>(logits.dtype(), call.op.name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* z = cpu::typed_data<T>(labels);
    const T* x = cpu::typed_data<T>(logits);
    T* loss = cpu::typed_output<T>(outputs[0]);
    // One output per (outer, inner) pair; rows are contiguous when inner == 1.
    parallel_for(g.outer * g.inner, kLossElementNs * static_cast<double>(g.n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t base = (r / g.inner) * g.n * g.inner + r % g.inner;
        if (g.inner == 1) {
          // (No structured binding: clang cannot use one inside the simd loop.)
          const detail::MaxLogSum<T> lse = detail::row_max_log_sum(x + base, g.n);
          const T m = lse.max, log_sum = lse.log_sum;
          T l = 0;
#pragma omp simd reduction(+ : l)
          for (int64_t j = 0; j < g.n; ++j) l += z[base + j] * (log_sum - (x[base + j] - m));
          loss[r] = l;
        } else {
          loss[r] = dense_row_loss(z + base, x + base, g.n, g.inner);
        }
      }
    });
  });
}

// loss = sum_j z_j (lse(x) - x_j), so d loss/d x = softmax(x) * sum(z) - z and
// d loss/d z = lse(x) - x = -log_softmax(x). TensorFlow writes the first as
// softmax(x) - z, which assumes every row of labels sums to 1; the form here is the
// same for such labels and exact for any others.
std::vector<Tensor> dense_grad(const GradCall& call) {
  const Tensor &labels = call.forward.inputs[0], &logits = call.forward.inputs[1];
  const int64_t axis = normalize_axis(call.forward.attrs.get_int(kAxis), logits.rank(), call.forward.op.name);
  Tensor g = expand_dims(call.output_grads[0], axis);
  Tensor mass = reduce_sum(labels, axis, true);
  Tensor d_logits = subtract(multiply(softmax(logits, axis), mass), labels);
  return {multiply(g, negative(log_softmax(logits, axis))), multiply(g, d_logits)};
}

// On CUDA devices: sum_j z_j (lse - (x_j - m)) composed of the device's kernels.
void dense_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor &labels = call.inputs[0], &logits = call.inputs[1];
  if (logits.num_elements() == 0) return cuda::fill(outputs[0], 0.0);
  const int64_t axis = normalize_axis(call.attrs.get_int(kAxis), logits.rank(), call.op.name);
  Tensor shifted = subtract(logits, reduce_max(logits, axis, true));
  Tensor log_sum = log(reduce_sum(exp(shifted), axis, true));
  outputs[0] = reduce_sum(multiply(labels, subtract(log_sum, shifted)), axis);
}

// Each row's loss depends on that row only: the partial derivatives of dense_grad times
// the tangents, summed over the class axis.
std::vector<Tensor> dense_jvp(const JvpCall& call) {
  const Tensor &labels = call.forward.inputs[0], &logits = call.forward.inputs[1];
  const int64_t axis = normalize_axis(call.forward.attrs.get_int(kAxis), logits.rank(), call.forward.op.name);
  Tensor terms;
  if (call.has_tangent(0)) terms = multiply(negative(log_softmax(logits, axis)), call.input_tangents[0]);
  if (call.has_tangent(1)) {
    Tensor d_logits = subtract(multiply(softmax(logits, axis), reduce_sum(labels, axis, true)), labels);
    Tensor term = multiply(d_logits, call.input_tangents[1]);
    terms = terms.defined() ? add(terms, term) : term;
  }
  return {reduce_sum(terms, axis)};
}

const OpDef& kDense = define_op({
    .name = "softmax_cross_entropy_with_logits",
    .attr_names = {"axis"},
    .infer = infer_dense,
    .kernels = {dense_cpu, dense_cuda},
    .gradient = dense_grad,
    .gradient_uses = kGradientReadsInputs,  // labels and logits, not the loss (Note [gradient uses])
    .jvp = dense_jvp,
    .batch = [](const BatchCall& call) { return detail::batch_shifting_axis(call, kAxis); },
});

// ---- sparse_softmax_cross_entropy_with_logits(labels, logits) ----
void infer_sparse(const OpCall& call, OutputMetas& out) {
  const Tensor &labels = call.inputs[0], &logits = call.inputs[1];
  detail::check_dtype(call, labels.dtype(), cpu::kIntTypes, "labels");
  detail::check_dtype(call, logits.dtype(), cpu::kFloatTypes, "logits");
  if (logits.rank() == 0) fail(call.op.name, ": argument 'logits' must have at least one dimension, got a scalar");
  Dims batch(logits.shape().dims().begin(), logits.shape().dims().end() - 1);
  if (!compatible(labels.shape(), Shape(batch)))
    fail(call.op.name, ": labels must have the shape of logits without its last (class) dimension: logits ",
         logits.shape(), " needs labels ", Shape(batch), ", got ", labels.shape());
  out.add(logits.dtype(), Shape(batch));
}

void sparse_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor labels = call.inputs[0].contiguous(), logits = call.inputs[1].contiguous();
  const int64_t rows = labels.num_elements();
  const int64_t n = logits.shape().dim(-1);
  cpu::dispatch_in<cpu::kIntTypes>(labels.dtype(), call.op.name, [&](auto label_tag) {
    using L = typename decltype(label_tag)::type;
    const L* ids = cpu::typed_data<L>(labels);
    // Labels are data, not shapes, so they are checked here (inference cannot see
    // them in graph mode) — before any output is written.
    for (int64_t r = 0; r < rows; ++r)
      if (ids[r] < 0 || static_cast<int64_t>(ids[r]) >= n)
        fail(call.op.name, ": received a label value of ", static_cast<int64_t>(ids[r]), " at index ", r,
             " (flat), outside the valid range of class ids [0, ", n, ") for logits of shape ", logits.shape());
    cpu::dispatch_in<cpu::kFloatTypes>(logits.dtype(), call.op.name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = cpu::typed_data<T>(logits);
      T* loss = cpu::typed_output<T>(outputs[0]);
      parallel_for(rows, kLossElementNs * static_cast<double>(n), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T* row = x + r * n;
          const detail::MaxLogSum<T> lse = detail::row_max_log_sum(row, n);
          loss[r] = lse.log_sum - (row[ids[r]] - lse.max);
        }
      });
    });
  });
}

// On CUDA devices: the labels are checked on the host (one copy and a wait), then
// lse - (x_label - m) is composed of the device's kernels.
void sparse_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor &labels = call.inputs[0], &logits = call.inputs[1];
  const int64_t n = logits.shape().dim(-1);
  const std::vector<int64_t> ids = labels.to_vector<int64_t>();
  for (size_t r = 0; r < ids.size(); ++r)
    if (ids[r] < 0 || ids[r] >= n)
      fail(call.op.name, ": received a label value of ", ids[r], " at index ", r,
           " (flat), outside the valid range of class ids [0, ", n, ") for logits of shape ", logits.shape());
  if (outputs[0].num_elements() == 0) return;
  Tensor shifted = subtract(logits, reduce_max(logits, -1, true));
  Tensor log_sum = log(reduce_sum(exp(shifted), -1));
  Tensor picked = reduce_sum(multiply(shifted, one_hot(labels, n, 1, 0, -1, logits.dtype())), -1);
  outputs[0] = subtract(log_sum, picked);
}

// d loss/d logits = softmax(logits) - one_hot(labels); labels are integer class ids
// and get no gradient.
std::vector<Tensor> sparse_grad(const GradCall& call) {
  const Tensor &labels = call.forward.inputs[0], &logits = call.forward.inputs[1];
  Tensor g = expand_dims(call.output_grads[0], -1);
  Tensor target = one_hot(labels, logits.shape().dim(-1), 1, 0, -1, logits.dtype());
  return {Tensor(), multiply(g, subtract(softmax(logits, -1), target))};
}

// d loss = sum((softmax(logits) - one_hot(labels)) * t) over the classes.
std::vector<Tensor> sparse_jvp(const JvpCall& call) {
  const Tensor &labels = call.forward.inputs[0], &logits = call.forward.inputs[1];
  if (!call.has_tangent(1)) return {Tensor()};
  Tensor target = one_hot(labels, logits.shape().dim(-1), 1, 0, -1, logits.dtype());
  return {reduce_sum(multiply(subtract(softmax(logits, -1), target), call.input_tangents[1]), -1)};
}

const OpDef& kSparse = define_op({
    .name = "sparse_softmax_cross_entropy_with_logits",
    .infer = infer_sparse,
    .kernels = {sparse_cpu, sparse_cuda},
    .gradient = sparse_grad,
    .gradient_uses = kGradientReadsInputs,  // labels and logits, not the loss (Note [gradient uses])
    .jvp = sparse_jvp,
    .batch = detail::batch_leading_dims,
});

}  // namespace

Tensor softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, int64_t axis, CallSite where) {
  return run_op(kDense, {labels, logits}, {axis}, where);
}

Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, CallSite where) {
  return run_op(kSparse, {labels, logits}, {}, where);
}

Tensor sigmoid_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, CallSite where) {
  try {
    if (labels.dtype() != logits.dtype())
      fail("sigmoid_cross_entropy_with_logits: labels and logits must have the same dtype, got labels ",
           labels.dtype(), " and logits ", logits.dtype());
    if (!is_floating(logits.dtype()))
      fail("sigmoid_cross_entropy_with_logits: argument 'logits' must be float32 or float64, got ", logits.dtype());
    if (!compatible(labels.shape(), logits.shape()))
      fail("sigmoid_cross_entropy_with_logits: labels and logits must have the same shape, got labels ",
           labels.shape(), " and logits ", logits.shape());
    // TensorFlow's stable form of -z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)):
    // no exp of a positive number, exact for large |x|. Written with `where` rather than
    // maximum(x, 0) and -abs(x) so that the gradient at x = 0 is sigmoid(0) - z = 0.5 - z
    // (the tie rules of maximum and abs would give 1 - z there).
    const Tensor& x = logits;
    Tensor nonnegative = greater_equal(x, 0, where);
    Tensor relu_logits = ef::where(nonnegative, x, 0, where);
    Tensor neg_abs_logits = ef::where(nonnegative, -x, x, where);
    return relu_logits - x * labels + log1p(exp(neg_abs_logits, where), where);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
