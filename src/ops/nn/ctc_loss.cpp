// ctc_loss (tf.nn.ctc_loss with dense labels; torch.nn.functional.ctc_loss with
// reduction="none"): the negative log-probability of each label sequence under the
// connectionist temporal classification of Graves et al. (2006), summed over every
// alignment by the forward-backward algorithm in log space.
//
// Note [ctc_loss gradient]: the forward op computes the forward variables (alpha) only;
// its gradient op ctc_loss_grad runs forward and backward (beta) and gives
//   d loss / d logits[t, c] = softmax(logits[t])[c] - sum_{s : l'(s) = c} alpha_t(s) beta_t(s) / (p y_t(c)),
// where l' is the label sequence with blanks around and between its labels, y_t the
// softmax at frame t and p the sequence's probability. Frames past a sequence's
// logit_length get zero. ctc_loss_grad has no derivative of its own (nor has
// TensorFlow's), so second derivatives and forward-over-reverse raise
// UnimplementedError instead of being silently zero. A label sequence that no
// alignment fits (too long for its frames) has loss +inf and a NaN gradient.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "ops/batch_helpers.h"
#include "ops/nn/softmax_kernels.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

using namespace cpu;

enum CtcInput { kLogits, kLabels, kLabelLength, kLogitLength };
enum CtcAttr { kBlank };

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double hi = std::max(a, b);
  return hi + std::log1p(std::exp(std::min(a, b) - hi));
}

void infer_shapes(const OpCall& call) {
  detail::check_input_count(call, 4);
  const Tensor& logits = call.inputs[kLogits];
  const Tensor& labels = call.inputs[kLabels];
  detail::check_dtype(call, logits.dtype(), kFloatTypes, "logits");
  for (auto [k, arg] :
       {std::pair{kLabels, "labels"}, {kLabelLength, "label_length"}, {kLogitLength, "logit_length"}})
    detail::check_dtype(call, call.inputs[k].dtype(), kIntTypes, arg);
  if (logits.rank() != 3)
    fail(call.op.name, ": argument 'logits' must have rank 3 [frames, batch, classes], got shape ",
         logits.shape());
  if (labels.rank() != 2)
    fail(call.op.name, ": argument 'labels' must have rank 2 [batch, max_label_length], got shape ",
         labels.shape());
  const int64_t batch = logits.shape()[1];
  auto same_batch = [&](int64_t b) { return b == batch || b == kUnknownDim || batch == kUnknownDim; };
  if (!same_batch(labels.shape()[0]))
    fail(call.op.name, ": arguments 'labels' of shape ", labels.shape(), " and 'logits' of shape ",
         logits.shape(), " have different batch sizes");
  for (auto [k, arg] : {std::pair{kLabelLength, "label_length"}, {kLogitLength, "logit_length"}})
    if (call.inputs[k].rank() != 1 || !same_batch(call.inputs[k].shape()[0]))
      fail(call.op.name, ": argument '", arg, "' must have shape [", batch, "], got ",
           call.inputs[k].shape());
  const int64_t classes = logits.shape()[2];
  const int64_t blank = call.attrs.get_int(kBlank);
  if (classes != kUnknownDim && (blank < -classes || blank >= classes))
    fail(call.op.name, ": argument 'blank_index' = ", blank, " is outside [", -classes, ", ", classes, ")");
}

// The blank class; a negative blank_index counts from the end (known once the logits are).
int64_t blank_of(const OpCall& call) {
  const int64_t blank = call.attrs.get_int(kBlank);
  return blank < 0 ? blank + call.inputs[kLogits].shape()[2] : blank;
}

void infer_ctc_loss(const OpCall& call, OutputMetas& out) {
  infer_shapes(call);
  out.add(call.inputs[kLogits].dtype(), Shape{call.inputs[kLogits].shape()[1]});
}

void infer_ctc_loss_grad(const OpCall& call, OutputMetas& out) {
  infer_shapes(call);
  out.add(call.inputs[kLogits].dtype(), call.inputs[kLogits].shape());
}

// One sequence of the batch: its frames' log-softmax and its extended labels.
struct Sequence {
  int64_t frames = 0;
  std::vector<int64_t> extended;  // blank, l1, blank, l2, ..., blank
  std::vector<double> log_probs;  // [frames, classes]
};

// Checks sequence b's lengths and labels and computes its log-softmax, in double.
template <class T>
Sequence read_sequence(const OpCall& call, const T* logits, const std::vector<int64_t>& labels,
                       const std::vector<int64_t>& label_length, const std::vector<int64_t>& logit_length,
                       int64_t b) {
  const Shape& shape = call.inputs[kLogits].shape();
  const int64_t max_frames = shape[0], batch = shape[1], classes = shape[2];
  const int64_t max_labels = call.inputs[kLabels].shape()[1];
  const int64_t blank = blank_of(call);
  const int64_t frames = logit_length[static_cast<size_t>(b)], length = label_length[static_cast<size_t>(b)];
  if (frames < 0 || frames > max_frames)
    fail(call.op.name, ": argument 'logit_length' holds ", frames, " at batch entry ", b, ", outside [0, ",
         max_frames, "]");
  if (length < 0 || length > max_labels)
    fail(call.op.name, ": argument 'label_length' holds ", length, " at batch entry ", b, ", outside [0, ",
         max_labels, "]");
  Sequence s{.frames = frames};
  s.extended.assign(static_cast<size_t>(2 * length + 1), blank);
  for (int64_t i = 0; i < length; ++i) {
    const int64_t label = labels[static_cast<size_t>(b * max_labels + i)];
    if (label < 0 || label >= classes || label == blank)
      fail(call.op.name, ": argument 'labels' holds ", label, " at [", b, ", ", i,
           "]; labels must be in [0, ", classes, ") and not the blank ", blank);
    s.extended[static_cast<size_t>(2 * i + 1)] = label;
  }
  s.log_probs.resize(static_cast<size_t>(frames * classes));
  std::vector<double> row(static_cast<size_t>(classes));  // the frame's logits, widened
  for (int64_t t = 0; t < frames; ++t) {
    const T* logit = logits + (t * batch + b) * classes;
    std::copy(logit, logit + classes, row.begin());
    detail::softmax_row<double, /*Log=*/true>(row.data(), &s.log_probs[static_cast<size_t>(t * classes)],
                                              classes);
  }
  return s;
}

// Whether the path may skip from extended label s - 2 to s (a label unlike the one
// before it; blanks cannot be skipped).
bool may_skip(const Sequence& seq, size_t s) {
  return s >= 2 && seq.extended[s] != seq.extended[0] && seq.extended[s] != seq.extended[s - 2];
}

// The forward variables alpha [frames, S], log-space, each including its frame's
// probability.
std::vector<double> forward_variables(const Sequence& seq, int64_t classes) {
  const size_t states = seq.extended.size();
  std::vector<double> alpha(static_cast<size_t>(seq.frames) * states, kNegInf);
  if (seq.frames == 0) return alpha;
  auto lp = [&](int64_t t, size_t s) {
    return seq.log_probs[static_cast<size_t>(t * classes + seq.extended[s])];
  };
  alpha[0] = lp(0, 0);
  if (states > 1) alpha[1] = lp(0, 1);
  for (int64_t t = 1; t < seq.frames; ++t) {
    const double* prev = &alpha[static_cast<size_t>(t - 1) * states];
    double* cur = &alpha[static_cast<size_t>(t) * states];
    for (size_t s = 0; s < states; ++s) {
      double a = prev[s];
      if (s >= 1) a = log_add(a, prev[s - 1]);
      if (may_skip(seq, s)) a = log_add(a, prev[s - 2]);
      cur[s] = a == kNegInf ? kNegInf : a + lp(t, s);
    }
  }
  return alpha;
}

// log p(labels | logits): the paths ending in the last label or the blank after it.
double log_likelihood(const Sequence& seq, const std::vector<double>& alpha) {
  const size_t states = seq.extended.size();
  if (seq.frames == 0) return states == 1 ? 0.0 : kNegInf;
  const double* last = &alpha[static_cast<size_t>(seq.frames - 1) * states];
  return states > 1 ? log_add(last[states - 1], last[states - 2]) : last[0];
}

// The gradient of sequence b (Note [ctc_loss gradient]) into grad [frames, batch, classes].
template <class T>
void write_gradient(const Sequence& seq, const std::vector<double>& alpha, double log_p, int64_t classes,
                    int64_t batch, int64_t b, T* grad) {
  auto at = [&](int64_t t, int64_t c) -> T& { return grad[(t * batch + b) * classes + c]; };
  if (log_p == kNegInf) {  // no alignment fits: the loss is +inf and has no gradient
    for (int64_t t = 0; t < seq.frames; ++t)
      for (int64_t c = 0; c < classes; ++c) at(t, c) = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  const size_t states = seq.extended.size();
  auto lp = [&](int64_t t, int64_t c) { return seq.log_probs[static_cast<size_t>(t * classes + c)]; };
  // beta_t, from the last frame back; `later` is beta_{t+1}.
  std::vector<double> beta(states, kNegInf), later(states, kNegInf), by_class(static_cast<size_t>(classes));
  for (int64_t t = seq.frames - 1; t >= 0; --t) {
    for (size_t s = 0; s < states; ++s) {
      double v;
      if (t == seq.frames - 1) {
        v = s + 2 >= states ? 0.0 : kNegInf;  // paths end in the last label or the blank after it
      } else {
        v = later[s];
        if (s + 1 < states) v = log_add(v, later[s + 1]);
        if (s + 2 < states && may_skip(seq, s + 2)) v = log_add(v, later[s + 2]);
      }
      beta[s] = v == kNegInf ? kNegInf : v + lp(t, seq.extended[s]);
    }
    std::fill(by_class.begin(), by_class.end(), kNegInf);
    const double* a = &alpha[static_cast<size_t>(t) * states];
    for (size_t s = 0; s < states; ++s) {
      double& slot = by_class[static_cast<size_t>(seq.extended[s])];
      slot = log_add(slot, a[s] + beta[s]);
    }
    for (int64_t c = 0; c < classes; ++c) {
      const double occupancy = by_class[static_cast<size_t>(c)];
      const double posterior = occupancy == kNegInf ? 0.0 : std::exp(occupancy - lp(t, c) - log_p);
      at(t, c) = static_cast<T>(std::exp(lp(t, c)) - posterior);
    }
    std::swap(beta, later);
  }
}

// The loss of every sequence, or (gradient) d loss / d logits, into `out`.
template <class T>
void ctc_typed(const OpCall& call, Tensor& out, bool gradient) {
  const Tensor logits = call.inputs[kLogits].contiguous();
  const std::vector<int64_t> labels = call.inputs[kLabels].to_vector<int64_t>();
  const std::vector<int64_t> label_length = call.inputs[kLabelLength].to_vector<int64_t>();
  const std::vector<int64_t> logit_length = call.inputs[kLogitLength].to_vector<int64_t>();
  const int64_t max_frames = logits.shape()[0], batch = logits.shape()[1], classes = logits.shape()[2];
  const int64_t max_states = 2 * call.inputs[kLabels].shape()[1] + 1;
  const T* x = typed_data<T>(logits);
  T* y = typed_output<T>(out);
  if (gradient) std::fill(y, y + out.num_elements(), T(0));
  // A bad length or label found by a worker is rethrown here, the first one by batch entry.
  std::vector<std::exception_ptr> errors(static_cast<size_t>(batch));
  const double cost_ns = static_cast<double>(max_frames * (classes + max_states)) * (gradient ? 30.0 : 15.0);
  parallel_for(batch, cost_ns, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      try {
        const Sequence seq = read_sequence(call, x, labels, label_length, logit_length, b);
        const std::vector<double> alpha = forward_variables(seq, classes);
        const double log_p = log_likelihood(seq, alpha);
        if (gradient)
          write_gradient(seq, alpha, log_p, classes, batch, b, y);
        else
          y[b] = static_cast<T>(0.0 - log_p);  // +0, not -0, for a certain sequence
      } catch (...) {
        errors[static_cast<size_t>(b)] = std::current_exception();
      }
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void ctc_loss_cpu(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_in<kFloatTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    ctc_typed<typename decltype(tag)::type>(call, outputs[0], false);
  });
}

void ctc_loss_grad_cpu(const OpCall& call, std::span<Tensor> outputs) {
  dispatch_in<kFloatTypes>(outputs[0].dtype(), call.op.name, [&](auto tag) {
    ctc_typed<typename decltype(tag)::type>(call, outputs[0], true);
  });
}

const OpDef& ctc_loss_grad_def();

// d loss / d logits for the forward call's inputs: [frames, batch, classes].
Tensor loss_gradient(const OpCall& forward) {
  return run_op(ctc_loss_grad_def(), std::span<const Tensor>(forward.inputs), forward.attrs,
                CallSite::current());
}

std::vector<Tensor> ctc_loss_gradient(const GradCall& call) {
  const Tensor g = reshape(call.output_grads[0], {1, -1, 1});
  return {loss_gradient(call.forward) * g, Tensor(), Tensor(), Tensor()};
}

// The loss's tangent: <d loss / d logits, the logits' tangent> per sequence.
std::vector<Tensor> ctc_loss_jvp(const JvpCall& call) {
  return {reduce_sum(loss_gradient(call.forward) * call.input_tangents[kLogits], {0, 2})};
}

std::vector<Tensor> ctc_loss_grad_gradient(const GradCall& call) {
  fail<UnimplementedError>(call.forward.op.name,
                           ": ctc_loss has no second derivative (TensorFlow's has none either); "
                           "differentiate it once");
}

// Both ops treat their sequences independently: the vectorized batch is merged into
// the sequence axis (axis 1 of the time-major logits, axis 0 of the rest), the op runs
// once, and the result is split again (ctc_loss's losses [batch * sequences], the
// gradient's [frames, batch * sequences, classes]).
std::vector<Tensor> batch_ctc(const BatchCall& call) {
  const int64_t batch = call.batch_size;
  if (batch == kUnknownDim) return {};
  const Shape& logits = call.input(kLogits).shape();
  const int64_t sequences = logits[call.is_batched(kLogits) ? 2 : 1];
  if (sequences == kUnknownDim || logits[logits.rank() - 1] == kUnknownDim) return {};
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < call.call.inputs.size(); ++i) {
    const Tensor x = detail::batched_input(call, i);
    const Shape& s = x.shape();
    if (i == kLogits) {
      if (x.rank() != 4 || s[1] == kUnknownDim) return {};
      inputs.push_back(reshape(transpose(x, {1, 0, 2, 3}), {s[1], batch * sequences, s[3]}));
    } else {
      Dims merged{batch * sequences};
      for (int d = 2; d < x.rank(); ++d) merged.push_back(s[d]);
      inputs.push_back(reshape(x, Shape(merged)));
    }
  }
  const Tensor out = detail::run_batched(call, inputs, call.attrs())[0];
  if (out.rank() == 1) return {reshape(out, {batch, sequences})};
  const Shape& g = out.shape();
  return {transpose(reshape(out, {g[0], batch, sequences, g[2]}), {1, 0, 2, 3})};
}

const OpDef& kCtcLoss = define_op({
    .name = "ctc_loss",
    .attr_names = {"blank_index"},
    .infer = infer_ctc_loss,
    .kernels = {ctc_loss_cpu},
    .gradient = ctc_loss_gradient,
    .gradient_uses = kGradientReadsInputs,
    .jvp = ctc_loss_jvp,
    .batch = batch_ctc,
});

const OpDef& kCtcLossGrad = define_op({
    .name = "ctc_loss_grad",
    .attr_names = {"blank_index"},
    .infer = infer_ctc_loss_grad,
    .kernels = {ctc_loss_grad_cpu},
    .gradient = ctc_loss_grad_gradient,
    .gradient_uses = kGradientReadsNoValues,
    .batch = batch_ctc,
});

const OpDef& ctc_loss_grad_def() { return kCtcLossGrad; }

}  // namespace

Tensor ctc_loss(const Tensor& labels, const Tensor& logits, const Tensor& label_length,
                const Tensor& logit_length, bool logits_time_major, int64_t blank_index, CallSite where) {
  const Tensor time_major =
      logits_time_major || logits.rank() != 3 ? logits : transpose(logits, {1, 0, 2}, where);
  return run_op(kCtcLoss, {time_major, labels, label_length, logit_length}, {blank_index}, where);
}

}  // namespace ef
