// Saving and restoring what LBFGS carries between step() calls (Note [LBFGS state] in
// lbfgs.h), validated completely before anything changes.
#include <cmath>
#include <set>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/optim/lbfgs.h"

namespace ef::optim {
namespace {

int64_t total_elements(const std::vector<Variable>& variables) {
  int64_t n = 0;
  for (const Variable& v : variables) n += v.shape().num_elements();
  return n;
}

Tensor stacked(const std::deque<Tensor>& rows, int64_t n, DType dtype) {
  if (rows.empty()) return zeros({0, n}, dtype);
  return stack(std::vector<Tensor>(rows.begin(), rows.end()), 0);
}

// Looks keys up, checking dtype and shape, and lists the keys it was not asked for.
class StateReader {
 public:
  StateReader(const std::map<std::string, Tensor>& state, const std::string& source)
      : state_(state), context_("LBFGS.restore_state: " + source) {}

  const std::string& context() const { return context_; }
  bool has(const std::string& key) const { return state_.count(key) != 0; }

  const Tensor& get(const std::string& key, DType dtype, const Shape& shape) {
    auto it = state_.find(key);
    if (it == state_.end())
      fail<NotFoundError>(context_, ": key '", key, "' (dtype ", dtype, ", shape ", shape, ") is missing");
    if (it->second.dtype() != dtype || it->second.shape() != shape)
      fail(context_, ": key '", key, "' has dtype ", it->second.dtype(), " and shape ", it->second.shape(),
           " but LBFGS expects dtype ", dtype, " and shape ", shape);
    used_.insert(key);
    return it->second;
  }
  int64_t count(const std::string& key) {
    const int64_t v = get(key, DType::Int64, Shape{}).item<int64_t>();
    if (v < 0) fail(context_, ": key '", key, "' is ", v, ", a count must be >= 0");
    return v;
  }
  double number(const std::string& key) {
    const double v = get(key, DType::Float64, Shape{}).item<double>();
    if (!std::isfinite(v)) fail(context_, ": key '", key, "' is ", v, ", expected a finite number");
    return v;
  }
  void expect_no_other_keys() const {
    std::string list;
    for (const auto& [key, value] : state_)
      if (!used_.count(key)) list += (list.empty() ? "'" : ", '") + key + "'";
    if (!list.empty()) fail(context_, ": unexpected key(s) ", list, " (Note [LBFGS state] in lbfgs.h lists the keys)");
  }

 private:
  const std::map<std::string, Tensor>& state_;
  std::string context_;
  std::set<std::string> used_;
};

}  // namespace

std::map<std::string, Tensor> LBFGS::state() const {
  const int64_t n = total_elements(variables_);
  const DType dtype = variables_[0].dtype();
  std::map<std::string, Tensor> out{
      {"n_iter", constant(n_iter_)},
      {"func_evals", constant(func_evals_)},
      {"t", constant(t_)},
      {"h_diag", constant(h_diag_)},
      {"prev_loss", constant(prev_loss_)},
      {"old_dirs", stacked(old_dirs_, n, dtype)},
      {"old_stps", stacked(old_stps_, n, dtype)},
      {"ro", constant(std::vector<double>(ro_.begin(), ro_.end()), Shape{history_length()})},
  };
  if (d_.defined()) out.emplace("d", d_);
  if (prev_flat_grad_.defined()) out.emplace("prev_flat_grad", prev_flat_grad_);
  return out;
}

void LBFGS::check_state(const std::map<std::string, Tensor>& state, const std::string& source) const {
  StateReader in(state, source);
  const int64_t n = total_elements(variables_);
  const DType dtype = variables_[0].dtype();
  const int64_t n_iter = in.count("n_iter");
  in.count("func_evals");
  for (const char* key : {"t", "h_diag", "prev_loss"}) in.number(key);
  if (!in.has("old_dirs"))
    fail<NotFoundError>(in.context(), ": key 'old_dirs' (dtype ", dtype, ", shape [pairs, ", n, "]) is missing");
  const Shape& pairs_shape = state.at("old_dirs").shape();
  const int64_t pairs = pairs_shape.rank() == 2 ? pairs_shape[0] : -1;
  if (pairs < 0 || pairs > options_.history_size)
    fail(in.context(), ": key 'old_dirs' has shape ", pairs_shape, " but LBFGS expects [pairs, ", n,
         "] with at most history_size = ", options_.history_size, " pairs");
  in.get("old_dirs", dtype, Shape{pairs, n});
  in.get("old_stps", dtype, Shape{pairs, n});
  for (double r : in.get("ro", DType::Float64, Shape{pairs}).to_vector<double>())
    if (!(r > 0) || !std::isfinite(r))
      fail(in.context(), ": key 'ro' holds ", r, ", but every 1 / yᵀs of a kept pair is positive and finite");
  for (const char* key : {"d", "prev_flat_grad"}) {
    if (n_iter > 0) in.get(key, dtype, Shape{n});
    else if (in.has(key))
      fail(in.context(), ": key '", key, "' is present but n_iter is 0 (no iteration has run to produce it)");
  }
  if (n_iter == 0 && pairs > 0) fail(in.context(), ": n_iter is 0 but ", pairs, " curvature pairs are given");
  in.expect_no_other_keys();
}

void LBFGS::restore_state(const std::map<std::string, Tensor>& state, const std::string& source, CallSite where) {
  try {
    check_state(state, source);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  n_iter_ = state.at("n_iter").item<int64_t>();
  func_evals_ = state.at("func_evals").item<int64_t>();
  t_ = state.at("t").item<double>();
  h_diag_ = state.at("h_diag").item<double>();
  prev_loss_ = state.at("prev_loss").item<double>();
  old_dirs_.clear();
  old_stps_.clear();
  ro_.clear();
  const std::vector<double> ro = state.at("ro").to_vector<double>();
  // The state joins the variables' flat gradients: it goes to their device (a
  // checkpoint read from disk is on the CPU).
  const Device device = variables_.front().value().device();
  for (size_t j = 0; j < ro.size(); ++j) {
    const int64_t row = static_cast<int64_t>(j);
    old_dirs_.push_back(state.at("old_dirs")[row].contiguous().to(device));
    old_stps_.push_back(state.at("old_stps")[row].contiguous().to(device));
    ro_.push_back(ro[j]);
  }
  auto optional = [&](const char* key) { return state.count(key) ? state.at(key).to(device) : Tensor(); };
  d_ = optional("d");
  prev_flat_grad_ = optional("prev_flat_grad");
}

}  // namespace ef::optim
