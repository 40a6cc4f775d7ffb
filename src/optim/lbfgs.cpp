// L-BFGS as torch.optim.LBFGS.step computes it (see lbfgs.h); the state and the order of
// operations follow PyTorch's so that float64 iterates agree to rounding.
#include "eagerflow/optim/lbfgs.h"

#include <algorithm>
#include <cmath>

#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/runtime/context.h"
#include "strong_wolfe.h"

namespace ef::optim {
namespace {

using detail::dot;
using detail::max_abs;

// Note [LBFGS and outer tapes]: step() moves the variables the way an optimizer's update
// does; a tape active around step() must not record that arithmetic (nor see the reads
// of the variables it does). So step() runs with this thread's recorder removed, and
// puts it back only while the closure runs, under LBFGS' own tape (the closure is model
// code: outer tapes see it as they would see a call to it outside step()).
class RecordingPaused {
 public:
  RecordingPaused() : saved_(Context::current().recorder) { Context::current().recorder = nullptr; }
  ~RecordingPaused() { Context::current().recorder = saved_; }
  RecordingPaused(const RecordingPaused&) = delete;
  RecordingPaused& operator=(const RecordingPaused&) = delete;
  OpRecorder* saved() const { return saved_; }

 private:
  OpRecorder* saved_;
};

class RecordingResumed {
 public:
  explicit RecordingResumed(OpRecorder* outer) { Context::current().recorder = outer; }
  ~RecordingResumed() { Context::current().recorder = nullptr; }
  RecordingResumed(const RecordingResumed&) = delete;
  RecordingResumed& operator=(const RecordingResumed&) = delete;
};

thread_local OpRecorder* outer_recorder = nullptr;  // while step() runs: what RecordingPaused saved

Tensor flatten(const Tensor& x) { return reshape(x, {x.num_elements()}); }

Tensor concat_flat(const std::vector<Tensor>& parts) {
  if (parts.size() == 1) return flatten(parts[0]);
  std::vector<Tensor> flat;
  flat.reserve(parts.size());
  for (const Tensor& p : parts) flat.push_back(flatten(p));
  return concat(flat, 0);
}

}  // namespace

LBFGS::LBFGS(std::vector<Variable> variables, LBFGSOptions options, CallSite where)
    : variables_(std::move(variables)), options_(std::move(options)) {
  try {
    if (variables_.empty()) fail("LBFGS: expected at least one variable, got none");
    const DType dtype = variables_[0].dtype();
    for (size_t i = 0; i < variables_.size(); ++i) {
      const Variable& v = variables_[i];
      if (!is_floating(v.dtype()))
        fail("LBFGS: variable '", v.name(), "' has dtype ", v.dtype(),
             "; only float32 and float64 variables train");
      if (v.dtype() != dtype)
        fail("LBFGS: all variables must have one dtype, but '", variables_[0].name(), "' is ", dtype,
             " and '", v.name(), "' is ", v.dtype());
      for (size_t j = 0; j < i; ++j)
        if (variables_[j].same_as(v))
          fail("LBFGS: variable '", v.name(), "' is listed twice (positions ", j, " and ", i, ")");
    }
    const LBFGSOptions& o = options_;
    if (!(o.learning_rate > 0 && std::isfinite(o.learning_rate)))
      fail("LBFGS: learning_rate must be a finite number > 0, got ", o.learning_rate);
    if (o.max_iter < 1) fail("LBFGS: max_iter must be >= 1, got ", o.max_iter);
    max_eval_ = o.max_eval.value_or(o.max_iter * 5 / 4);
    if (max_eval_ < 1) fail("LBFGS: max_eval must be >= 1, got ", max_eval_);
    if (!(o.tolerance_grad >= 0)) fail("LBFGS: tolerance_grad must be >= 0, got ", o.tolerance_grad);
    if (!(o.tolerance_change >= 0)) fail("LBFGS: tolerance_change must be >= 0, got ", o.tolerance_change);
    if (o.history_size < 1) fail("LBFGS: history_size must be >= 1, got ", o.history_size);
    if (!o.line_search_fn.empty() && o.line_search_fn != "strong_wolfe")
      fail("LBFGS: line_search_fn must be empty (fixed steps) or \"strong_wolfe\", got \"", o.line_search_fn,
           "\"");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

LBFGS::Evaluation LBFGS::evaluate(const std::function<Tensor()>& closure, Tensor* loss_tensor) {
  Tensor loss;
  std::vector<Tensor> grads;
  {
    RecordingResumed resumed(outer_recorder);  // Note [LBFGS and outer tapes]
    GradientTape tape;
    for (const Variable& v : variables_) tape.watch(v);
    loss = closure();
    if (!loss.defined())
      fail("LBFGS.step: the closure returned an undefined tensor; it must return the loss");
    if (!is_floating(loss.dtype()) || loss.num_elements() != 1)
      fail("LBFGS.step: the closure must return the loss as a one-element float tensor, got dtype ",
           loss.dtype(), " and shape ", loss.shape());
    grads = tape.gradient(loss, variables_, Tensor(), UnconnectedGradients::Zero);
  }
  if (loss_tensor) *loss_tensor = loss;
  return {loss.item<double>(), concat_flat(grads)};
}

// variables = base + t * direction, as torch's p.add_(direction, alpha=t).
void LBFGS::set_flat(const std::vector<Tensor>& base, double t, const Tensor& direction) {
  int64_t offset = 0;
  for (size_t i = 0; i < variables_.size(); ++i) {
    const int64_t n = variables_[i].shape().num_elements();
    Tensor part = variables_.size() == 1 ? direction : slice(direction, {offset}, {n});
    variables_[i].assign(base[i] + reshape(part, variables_[i].shape()) * t);
    offset += n;
  }
}

// The two-loop recursion: -H g with H the L-BFGS inverse-Hessian approximation whose
// initial matrix is h_diag_ * I (PyTorch's order of operations, q and r as there).
Tensor LBFGS::direction(const Tensor& flat_grad) {
  const size_t k = old_dirs_.size();
  std::vector<double> al(k);
  Tensor q = -flat_grad;
  for (size_t j = k; j-- > 0;) {
    al[j] = dot(old_stps_[j], q) * ro_[j];
    q = q - old_dirs_[j] * al[j];
  }
  Tensor r = q * h_diag_;
  for (size_t j = 0; j < k; ++j) {
    const double be = dot(old_dirs_[j], r) * ro_[j];
    r = r + old_stps_[j] * (al[j] - be);
  }
  return r;
}

Tensor LBFGS::step(const std::function<Tensor()>& closure, CallSite where) {
  try {
    if (!closure) fail("LBFGS.step: the closure is empty; it must compute and return the loss");
    RecordingPaused paused;  // Note [LBFGS and outer tapes]
    OpRecorder* const enclosing = outer_recorder;
    outer_recorder = paused.saved();
    struct Restore {
      OpRecorder* value;
      ~Restore() { outer_recorder = value; }
    } restore{enclosing};

    const LBFGSOptions& o = options_;
    const bool line_search = o.line_search_fn == "strong_wolfe";
    Tensor orig_loss;
    Evaluation now = evaluate(closure, &orig_loss);
    double loss = now.loss;
    Tensor flat_grad = now.flat_grad;
    int64_t current_evals = 1;
    ++func_evals_;
    bool opt_cond = max_abs(flat_grad) <= o.tolerance_grad;
    if (opt_cond) return orig_loss;

    for (int64_t n_iter = 1; n_iter <= o.max_iter; ++n_iter) {
      ++n_iter_;
      // Descent direction.
      if (n_iter_ == 1) {
        d_ = -flat_grad;
        old_dirs_.clear();
        old_stps_.clear();
        ro_.clear();
        h_diag_ = 1;
      } else {
        Tensor y = flat_grad - prev_flat_grad_;
        Tensor s = d_ * t_;
        const double ys = dot(y, s);
        if (ys > 1e-10) {  // keep the pair only where the curvature condition holds
          if (static_cast<int64_t>(old_dirs_.size()) == o.history_size) {
            old_dirs_.pop_front();
            old_stps_.pop_front();
            ro_.pop_front();
          }
          old_dirs_.push_back(y);
          old_stps_.push_back(s);
          ro_.push_back(1. / ys);
          h_diag_ = ys / dot(y, y);  // scale of the initial inverse Hessian
        }
        d_ = direction(flat_grad);
      }
      prev_flat_grad_ = flat_grad;
      prev_loss_ = loss;

      // Step length: min(1, 1/|g|_1) * lr on the very first iteration, else lr.
      t_ = n_iter_ == 1 ? std::min(1., 1. / reduce_sum(abs(flat_grad)).item<double>()) * o.learning_rate
                        : o.learning_rate;
      const double gtd = dot(flat_grad, d_);
      if (gtd > -o.tolerance_change) break;  // no descent along d

      int64_t ls_evals = 0;
      std::vector<Tensor> x;
      for (const Variable& v : variables_) x.push_back(v.value());
      if (line_search) {
        auto at = [&](double t) {
          set_flat(x, t, d_);
          Evaluation e{};
          try {
            e = evaluate(closure);
          } catch (...) {
            for (size_t i = 0; i < x.size(); ++i) variables_[i].assign(x[i]);
            throw;
          }
          for (size_t i = 0; i < x.size(); ++i) variables_[i].assign(x[i]);
          return detail::DirectionalValue{e.loss, e.flat_grad};
        };
        detail::LineSearchResult found =
            detail::strong_wolfe(at, t_, d_, loss, flat_grad, gtd, 1e-4, 0.9, o.tolerance_change);
        loss = found.loss;
        flat_grad = found.flat_grad;
        t_ = found.t;
        ls_evals = found.evaluations;
        set_flat(x, t_, d_);
        opt_cond = max_abs(flat_grad) <= o.tolerance_grad;
      } else {
        set_flat(x, t_, d_);
        // The last iteration does not evaluate at its new point: the next step() does.
        if (n_iter != o.max_iter) {
          now = evaluate(closure);
          loss = now.loss;
          flat_grad = now.flat_grad;
          opt_cond = max_abs(flat_grad) <= o.tolerance_grad;
          ls_evals = 1;
        }
      }
      current_evals += ls_evals;
      func_evals_ += ls_evals;

      // Stopping tests, in PyTorch's order.
      if (n_iter == o.max_iter || current_evals >= max_eval_ || opt_cond) break;
      if (max_abs(d_) * std::abs(t_) <= o.tolerance_change) break;  // = max |t d|: rounding is monotone
      if (std::abs(loss - prev_loss_) < o.tolerance_change) break;
    }
    return orig_loss;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::optim
