// LBFGS: limited-memory BFGS over a list of variables, modelled on torch.optim.LBFGS
// (same options, same algorithm, same state carried from one step() to the next, so
// that in float64 the iterates agree with PyTorch's to rounding).
//
//   ef::Variable w(ef::zeros({10}, ef::DType::Float64), "w");
//   ef::optim::LBFGSOptions options;
//   options.line_search_fn = "strong_wolfe";
//   ef::optim::LBFGS lbfgs({w}, options);
//   for (int i = 0; i < 5; ++i)
//     lbfgs.step([&] { return loss_of(w); });   // up to max_iter iterations per step
//
// Why not an Optimizer: L-BFGS needs the loss as a function (it re-evaluates it while it
// moves, and the line search evaluates it at trial points), and its state is one flat
// vector history over all variables together rather than per-variable slots. So step()
// takes a closure that returns the loss and computes the gradients itself, under its
// own GradientTape over the variables. Checkpoints still save it, history included:
// io::Checkpoint{{"model", model}, {"lbfgs", lbfgs}} (Note [LBFGS state] below).
//
// The algorithm works on the flattened concatenation of all variables, in their dtype
// (all variables share one float dtype). Scalars (step length, curvature yᵀs, the
// initial Hessian scale) are kept in double. Its updates are not recorded by tapes that
// are active around step(): the variables are assigned new values the way an
// optimizer's update is, not differentiated through.
//
// Without a line search this is also exactly torch7's lbfgs.lua (the scheme of the
// sparse-autoencoder benchmark): fixed steps, the first of length
// min(1, 1/‖g‖₁)·learning_rate and then learning_rate, a curvature pair (s, y) kept only
// when yᵀs > 1e-10. lbfgs.lua differs only in its stopping tests (‖g‖₁ ≤ tolFun and
// ‖t·d‖₁ ≤ tolX where PyTorch uses max-norms), which decide when it stops, never where
// an iterate lands.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable.h"

namespace ef::optim {

// torch.optim.LBFGS' options (PyTorch's name `lr` is `learning_rate` here, as in every
// eagerflow optimizer).
struct LBFGSOptions {
  double learning_rate = 1.0;
  int64_t max_iter = 20;            // iterations per step()
  std::optional<int64_t> max_eval;  // loss evaluations per step(); default max_iter * 5 / 4
  double tolerance_grad = 1e-7;     // stop when max |g| <= this
  double tolerance_change = 1e-9;   // stop when the step or the loss changes less than this
  int64_t history_size = 100;       // curvature pairs (s, y) kept
  std::string line_search_fn;       // "" (fixed steps) or "strong_wolfe"
};

class LBFGS {
 public:
  // Throws InvalidArgumentError for an empty or repeated variable, variables that are
  // not all of one float dtype, or an option out of range (learning_rate <= 0,
  // max_iter < 1, max_eval < 1, a negative tolerance, history_size < 1, an unknown
  // line_search_fn).
  explicit LBFGS(std::vector<Variable> variables, LBFGSOptions options = {},
                 CallSite where = CallSite::current());

  // Runs up to max_iter L-BFGS iterations (fewer when a stopping test holds), calling
  // `closure` for the loss (a one-element float tensor) and differentiating it with
  // respect to the variables; returns the loss of the first evaluation, at the variables'
  // values on entry, as torch does. Throws InvalidArgumentError for an empty closure or
  // a loss that is not a one-element float tensor; an error in the first evaluation
  // leaves the variables and the state untouched, one in a later evaluation (the closure
  // throwing) leaves the variables at the last iterate reached (a line search restores
  // its trial point first).
  Tensor step(const std::function<Tensor()>& closure, CallSite where = CallSite::current());

  const std::vector<Variable>& variables() const { return variables_; }
  const LBFGSOptions& options() const { return options_; }
  // L-BFGS iterations and loss evaluations over all step() calls so far.
  int64_t iterations() const { return n_iter_; }
  int64_t function_evaluations() const { return func_evals_; }
  // Curvature pairs held now (at most history_size).
  int64_t history_length() const { return static_cast<int64_t>(old_dirs_.size()); }

  // Note [LBFGS state]: everything step() carries to the next call, by name, as
  // checkpoints save it (io::Checkpoint{{"lbfgs", lbfgs}} stores "lbfgs/<name>"):
  //   n_iter, func_evals         int64 scalars
  //   t, h_diag, prev_loss       float64 scalars
  //   old_dirs, old_stps         [pairs, n]: the kept y and s, oldest first, in the
  //                              variables' dtype (n = their total element count)
  //   ro                         [pairs] float64: 1 / yᵀs of each pair
  //   d, prev_flat_grad          [n]: the last direction and gradient; present once
  //                              an iteration has run (n_iter > 0)
  // Restoring it into an LBFGS over variables of the same sizes (and restoring the
  // variables) continues exactly where the saved one stopped.
  std::map<std::string, Tensor> state() const;
  // Throws, naming `source`, the key and the shapes, unless `state` is a state this
  // LBFGS could have saved: every key above with its dtype and shape, no other, counts
  // >= 0, at most history_size pairs, positive finite ro (InvalidArgumentError;
  // NotFoundError for a missing key). Changes nothing.
  void check_state(const std::map<std::string, Tensor>& state, const std::string& source = "<state>") const;
  // check_state, then replaces the state (not the variables' values) with `state`.
  void restore_state(const std::map<std::string, Tensor>& state, const std::string& source = "<state>",
                     CallSite where = CallSite::current());

 private:
  struct Evaluation {
    double loss;
    Tensor flat_grad;  // the gradient of every variable, flattened and concatenated
  };
  Evaluation evaluate(const std::function<Tensor()>& closure, Tensor* loss_tensor = nullptr);
  void set_flat(const std::vector<Tensor>& base, double t, const Tensor& direction);
  Tensor direction(const Tensor& flat_grad);

  std::vector<Variable> variables_;
  LBFGSOptions options_;
  int64_t max_eval_;
  // State carried across step() calls, named as in torch.optim.LBFGS.
  int64_t n_iter_ = 0, func_evals_ = 0;
  Tensor d_, prev_flat_grad_;
  double t_ = 0, h_diag_ = 1, prev_loss_ = 0;
  std::deque<Tensor> old_dirs_, old_stps_;  // y and s of each kept pair
  std::deque<double> ro_;                   // 1 / yᵀs
};

}  // namespace ef::optim
