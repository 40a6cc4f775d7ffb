#include "eagerflow/autodiff/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_set>

#include "autodiff/gradient_check_internal.h"
#include "autodiff/tape_internal.h"
#include "eagerflow/autodiff/forward_accumulator.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/random.h"
#include "eagerflow/ops/reduction.h"

namespace ef::testing {
namespace {

using Function = std::function<Tensor(const std::vector<Tensor>&)>;
using Inputs = std::vector<Tensor>;

constexpr double kStep = 1e-5;

// The highest order at which each op's gradient function passed a check.
struct VerifiedOrders {
  std::mutex mutex;
  std::map<const OpDef*, int> order;

  void mark(const std::unordered_set<const OpDef*>& ops, int verified_order) {
    std::lock_guard lock(mutex);
    for (const OpDef* op : ops) order[op] = std::max(order[op], verified_order);
  }
  int get(const OpDef* op) {
    std::lock_guard lock(mutex);
    auto it = order.find(op);
    return it == order.end() ? 0 : it->second;
  }
};

VerifiedOrders& verified_orders() {
  static VerifiedOrders orders;
  return orders;
}

// The same, for gradients computed on traced graphs (Note [graph-mode gradient checks]).
VerifiedOrders& graph_verified_orders() {
  static VerifiedOrders orders;
  return orders;
}

using ef::detail::ObservedGradientFunctions;

// The jvp rules verified by check_gradients (Note [forward-mode checks]): 1 when a
// forward-mode derivative using them agreed with central differences and reverse mode,
// 2 when, besides, a tape differentiated them (reverse-over-forward) and agreed.
VerifiedOrders& jvp_verified_orders() {
  static VerifiedOrders orders;
  return orders;
}

// The jvp rules whose traced graph gave the eager tangent (Note [forward-mode checks]).
VerifiedOrders& jvp_graph_verified() {
  static VerifiedOrders orders;
  return orders;
}

// Collects into `ops` the jvp rules that forward mode runs while it lives.
class ObservedJvpRules {
 public:
  explicit ObservedJvpRules(std::unordered_set<const OpDef*>& ops)
      : saved_(std::exchange(ef::detail::jvp_rules_run(), &ops)) {}
  ~ObservedJvpRules() { ef::detail::jvp_rules_run() = saved_; }
  ObservedJvpRules(const ObservedJvpRules&) = delete;
  ObservedJvpRules& operator=(const ObservedJvpRules&) = delete;

 private:
  std::unordered_set<const OpDef*>* saved_;
};

// sum(f(inputs)) as a double.
double total(const Function& f, const Inputs& inputs) {
  return reduce_sum(cast(f(inputs), DType::Float64)).item<double>();
}

// The tape's gradients of sum(f) with respect to every input (zeros where unconnected).
Inputs tape_gradients(const Function& f, const Inputs& inputs) {
  GradientTape tape;
  for (const Tensor& x : inputs) tape.watch(x);
  Tensor y = reduce_sum(cast(f(inputs), DType::Float64));
  return tape.gradient(y, inputs, Tensor(), UnconnectedGradients::Zero);
}

// inputs with element j of input i moved by delta.
Inputs nudged(const Inputs& inputs, size_t i, size_t j, double delta) {
  Inputs out = inputs;
  std::vector<double> values = inputs[i].to_vector<double>();
  values[j] += delta;
  out[i] = constant(values, inputs[i].shape());
  return out;
}

// Compares `analytic` (per input) with central differences of `scalar`.
void compare(const std::function<double(const Inputs&)>& scalar, const Inputs& inputs, const Inputs& analytic,
             int order, double tolerance, GradientCheckResult& result) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<double> tape = analytic[i].to_vector<double>();
    std::vector<double> x = inputs[i].to_vector<double>();
    for (size_t j = 0; j < x.size(); ++j) {
      double h = kStep * std::max(1.0, std::fabs(x[j]));
      double numeric = (scalar(nudged(inputs, i, j, h)) - scalar(nudged(inputs, i, j, -h))) / (2 * h);
      double error = std::fabs(tape[j] - numeric) / (1 + std::fabs(numeric));
      if (!(error <= result.max_error)) result.max_error = std::isnan(error) ? INFINITY : error;
      if (!(error <= tolerance) && result.ok) {
        result.ok = false;
        std::ostringstream os;
        os << "order " << order << ": d/d input " << i << " element " << j << ": tape gives " << tape[j]
           << ", central differences give " << numeric << " (relative error " << error << ", tolerance "
           << tolerance << ")";
        result.message = os.str();
      }
    }
  }
}

// Expects the graph's values to equal the tape's up to rounding (the same kernels run;
// only the order in which gradient contributions are summed may differ).
void compare_with_graph(const Tensor& graph, const Tensor& tape, const std::string& what,
                        GradientCheckResult& result) {
  std::vector<double> g = graph.to_vector<double>(), t = tape.to_vector<double>();
  for (size_t j = 0; j < g.size() && result.ok; ++j) {
    const bool same = g[j] == t[j] || (std::isnan(g[j]) && std::isnan(t[j])) ||
                      std::fabs(g[j] - t[j]) <= 1e-10 * (1 + std::fabs(t[j]));
    if (same) continue;
    result.ok = false;
    std::ostringstream os;
    os << "graph mode: " << what << " element " << j << ": the traced graph gives " << g[j]
       << ", eager execution gives " << t[j];
    result.message = os.str();
  }
}

// Expects two analytic results to agree up to rounding.
void compare_analytic(const Tensor& got, const Tensor& want, const std::string& what, double tolerance,
                      GradientCheckResult& result) {
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t j = 0; j < g.size() && result.ok; ++j) {
    const double error = std::fabs(g[j] - w[j]) / (1 + std::fabs(w[j]));
    if (error <= tolerance || (std::isnan(g[j]) && std::isnan(w[j]))) continue;
    result.ok = false;
    std::ostringstream os;
    os << what << " element " << j << ": " << g[j] << ", expected " << w[j] << " (relative error " << error
       << ")";
    result.message = os.str();
  }
}

// The same tangent from a traced graph: equal up to rounding (the same kernels run).
void check_jvp_in_graph_mode(const Function& f, const Inputs& inputs, const Inputs& directions,
                             const Tensor& tangent, GradientCheckResult& result) {
  const detail::GraphJvpFn graph_jvp = detail::graph_jvp();
  if (!graph_jvp) return;
  detail::GraphJvp graph;
  try {
    graph = graph_jvp(f, inputs, directions);
  } catch (const UnimplementedError&) {
    return;  // something f builds has no forward mode in graphs (a while_loop): the eager checks stand
  } catch (const Error& e) {
    result.ok = false;
    result.message = std::string("graph mode: forward mode failed: ") + e.what();
    return;
  }
  compare_with_graph(graph.tangent, tangent, "forward mode: the tangent", result);
  if (result.ok) jvp_graph_verified().mark(graph.rules, 1);
}

double dot(const Inputs& a, const Inputs& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += reduce_sum(multiply(a[i], b[i])).item<double>();
  return sum;
}

// Note [forward-mode checks]: check_gradients also runs f under a ForwardAccumulator
// with the inputs as primals and random directions v as tangents. The tangent of f must
// equal central differences of f along v, element by element, and the reverse mode's
// <u, J v> = <Jᵀu, v> for a random u. When some op f reaches has no jvp rule
// (UnimplementedError), nothing is verified. At second order, the Hessian-vector
// product H v that nested tapes gave is computed twice more: the accumulator around a
// tape's gradient (forward-over-reverse) and a tape around the accumulator's tangent of
// sum(f) (reverse-over-forward). The same tangent is also built into a graph around f's
// trace and must come out equal (graph/gradient_check_graph.cpp, as for gradients). The
// rules that ran get the "jvp" marks of docs/gradient_coverage.md.
void check_forward_mode(const Function& f, const Inputs& inputs, const Inputs& directions, int order,
                        const Inputs& second, double tolerance, GradientCheckResult& result) {
  if (!result.ok) return;
  std::unordered_set<const OpDef*> rules;
  Tensor y, tangent;
  try {
    ObservedJvpRules observe(rules);
    ForwardAccumulator acc(inputs, directions);
    y = cast(f(inputs), DType::Float64);
    tangent = acc.jvp(y, UnconnectedGradients::Zero);
  } catch (const UnimplementedError&) {
    return;  // an op without a forward-mode rule: the reverse-mode checks stand alone
  }
  auto along = [&](double h) {
    Inputs moved;
    for (size_t i = 0; i < inputs.size(); ++i) moved.push_back(add(inputs[i], multiply(directions[i], h)));
    return cast(f(moved), DType::Float64).to_vector<double>();
  };
  double scale = 1;
  for (const Tensor& x : inputs)
    for (double v : x.to_vector<double>()) scale = std::max(scale, std::fabs(v));
  const double h = kStep * scale;
  const std::vector<double> plus = along(h), minus = along(-h), t = tangent.to_vector<double>();
  for (size_t j = 0; j < t.size() && result.ok; ++j) {
    const double numeric = (plus[j] - minus[j]) / (2 * h),
                 error = std::fabs(t[j] - numeric) / (1 + std::fabs(numeric));
    if (!(error <= result.max_error)) result.max_error = std::isnan(error) ? INFINITY : error;
    if (error <= tolerance) continue;
    result.ok = false;
    std::ostringstream os;
    os << "forward mode: output element " << j << ": the jvp gives " << t[j] << ", central differences along "
       << "the tangent give " << numeric << " (relative error " << error << ", tolerance " << tolerance
       << ")";
    result.message = os.str();
  }
  if (!result.ok) return;
  // Reverse mode: <u, J v> against <Jᵀ u, v>.
  const Tensor u = random::uniform(y.shape(), -1, 1, DType::Float64, 7);
  Inputs vjp;
  {
    GradientTape tape;
    for (const Tensor& x : inputs) tape.watch(x);
    Tensor out = cast(f(inputs), DType::Float64);
    vjp = tape.gradient(out, inputs, u, UnconnectedGradients::Zero);
  }
  const double forward = reduce_sum(multiply(u, tangent)).item<double>(), reverse = dot(vjp, directions);
  if (std::fabs(forward - reverse) > tolerance * (1 + std::fabs(reverse))) {
    result.ok = false;
    std::ostringstream os;
    os << "forward mode: <u, J v> = " << forward << " from the jvp, but <J^T u, v> = " << reverse
       << " from the tape";
    result.message = os.str();
    return;
  }
  jvp_verified_orders().mark(rules, 1);
  check_jvp_in_graph_mode(f, inputs, directions, tangent, result);
  if (!result.ok || order < 2) return;

  std::unordered_set<const OpDef*> nested;
  try {
    ObservedJvpRules observe(nested);
    Inputs hvp;
    {
      ForwardAccumulator acc(inputs, directions);
      Inputs g = tape_gradients(f, inputs);
      hvp = acc.jvp(g, UnconnectedGradients::Zero);
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      compare_analytic(hvp[i], second[i], "forward-over-reverse: d/d input " + std::to_string(i), 1e-8,
                       result);
    Inputs reverse_over_forward;
    {
      GradientTape tape;
      for (const Tensor& x : inputs) tape.watch(x);
      ForwardAccumulator acc(inputs, directions);
      Tensor jv = acc.jvp(reduce_sum(cast(f(inputs), DType::Float64)), UnconnectedGradients::Zero);
      reverse_over_forward = tape.gradient(jv, inputs, Tensor(), UnconnectedGradients::Zero);
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      compare_analytic(reverse_over_forward[i], second[i],
                       "reverse-over-forward: d/d input " + std::to_string(i), 1e-8, result);
  } catch (const UnimplementedError&) {
    return;  // the gradient functions reach an op without a rule: first order stands
  }
  if (!result.ok) return;
  // The rules of the gradient functions' ops were checked against H v as well.
  jvp_verified_orders().mark(nested, 1);
  jvp_verified_orders().mark(rules, 2);
}

// Note [graph-mode gradient checks]: f's value and gradients again, on a traced graph.
void check_in_graph_mode(const Function& f, const Inputs& inputs, const Inputs& directions, int order,
                         const Inputs& first, const Inputs& second, GradientCheckResult& result) {
  const detail::GraphGradientsFn graph_gradients = detail::graph_gradients();
  if (!graph_gradients || !result.ok) return;
  detail::GraphGradients graph;
  try {
    graph = graph_gradients(f, inputs, directions, order);
  } catch (const Error& e) {
    result.ok = false;
    result.message = std::string("graph mode: tracing or running f failed: ") + e.what();
    return;
  }
  compare_with_graph(graph.total, reduce_sum(cast(f(inputs), DType::Float64)), "sum(f)", result);
  for (size_t i = 0; i < inputs.size(); ++i)
    compare_with_graph(graph.first[i], first[i], "d/d input " + std::to_string(i), result);
  if (result.ok) graph_verified_orders().mark(graph.first_order_ops, 1);
  if (order < 2) return;
  for (size_t i = 0; i < inputs.size(); ++i)
    compare_with_graph(graph.second[i], second[i], "order 2: d/d input " + std::to_string(i), result);
  // As on tapes: the first-order gradient nodes were differentiated in turn, and agreed.
  if (result.ok) {
    graph_verified_orders().mark(graph.first_order_ops, 2);
    graph_verified_orders().mark(graph.second_order_ops, 2);
  }
}

// The batching rules verified by check_gradients (Note [vectorization checks]).
VerifiedOrders& batch_verified() {
  static VerifiedOrders orders;
  return orders;
}

// Note [vectorization checks]: check_gradients also vectorizes f (ef::vectorized_map)
// over a batch of three points near the inputs, and the tape's gradients of sum(f)
// through vmap with the batch on each input's last axis (per-example gradients), and
// expects both to equal f and its gradients computed one element at a time, up to
// rounding. The batching rules that ran get the "batching" mark of
// docs/gradient_coverage.md. Functions that draw random numbers (each element draws its
// own) or whose elements' outputs differ in shape are not compared.
void check_vectorized(const Function& f, const Inputs& inputs, GradientCheckResult& result) {
  const detail::GraphVectorizeCheckFn vectorize_check = detail::graph_vectorize_check();
  if (!vectorize_check || !result.ok) return;
  const detail::VectorizedCheck check = vectorize_check(f, inputs);
  if (!check.checked) return;
  if (!check.error.empty()) {
    result.ok = false;
    result.message = "vectorization: " + check.error;
    return;
  }
  batch_verified().mark(check.rules, 1);
}

}  // namespace

namespace detail {
GraphVectorizeCheckFn& graph_vectorize_check() {
  static GraphVectorizeCheckFn fn = nullptr;
  return fn;
}
GraphGradientsFn& graph_gradients() {
  static GraphGradientsFn fn = nullptr;
  return fn;
}
GraphJvpFn& graph_jvp() {
  static GraphJvpFn fn = nullptr;
  return fn;
}
}  // namespace detail

GradientCheckResult check_gradients(const Function& f, const std::vector<Tensor>& raw_inputs, int order,
                                    double tolerance) {
  Inputs inputs;
  for (const Tensor& x : raw_inputs) inputs.push_back(cast(x, DType::Float64));
  GradientCheckResult result;

  // First order: the tape against differences of sum(f).
  std::unordered_set<const OpDef*> ops_differentiated;
  Inputs first;
  {
    ObservedGradientFunctions observe(ops_differentiated);
    first = tape_gradients(f, inputs);
  }
  compare([&](const Inputs& in) { return total(f, in); }, inputs, first, 1, tolerance, result);
  if (result.ok) verified_orders().mark(ops_differentiated, 1);
  Inputs directions;
  for (size_t i = 0; i < inputs.size(); ++i)
    directions.push_back(
        random::uniform(inputs[i].shape(), -1, 1, DType::Float64, 1000 + static_cast<int64_t>(i)));
  if (order < 2) {
    check_in_graph_mode(f, inputs, {}, order, first, {}, result);
    check_forward_mode(f, inputs, directions, order, {}, tolerance, result);
    check_vectorized(f, inputs, result);
    return result;
  }

  // Second order: G(x) = sum_i <grad_i f(x), v_i> for a fixed direction v. Its gradient
  // by nested tapes against differences of G, itself computed by the (inner) tape.
  auto directional = [&](const Inputs& in) {
    Inputs g = tape_gradients(f, in);
    Tensor sum = constant(0.0);
    for (size_t i = 0; i < in.size(); ++i) sum = add(sum, reduce_sum(multiply(g[i], directions[i])));
    return sum;
  };
  Inputs second;
  {
    GradientTape outer;
    for (const Tensor& x : inputs) outer.watch(x);
    Tensor g = directional(inputs);
    second = outer.gradient(g, inputs, Tensor(), UnconnectedGradients::Zero);
  }
  compare([&](const Inputs& in) { return directional(in).item<double>(); }, inputs, second, 2,
          tolerance * 10, result);
  // Their gradient functions were differentiated in turn, and agreed.
  if (result.ok) verified_orders().mark(ops_differentiated, 2);
  check_in_graph_mode(f, inputs, directions, order, first, second, result);
  check_forward_mode(f, inputs, directions, order, second, tolerance, result);
  check_vectorized(f, inputs, result);
  return result;
}

std::string gradient_coverage_table() {
  std::vector<const OpDef*> ops = registered_ops();
  int differentiable = 0, first = 0, second = 0, graph = 0, jvp_rules = 0, jvp_first = 0, jvp_second = 0,
      jvp_graph_count = 0, batch_rules = 0, batch_checked = 0;
  std::ostringstream rows;
  for (const OpDef* op : ops) {
    const int verified = verified_orders().get(op), in_graph = graph_verified_orders().get(op);
    const int jvp = jvp_verified_orders().get(op), jvp_graph = jvp_graph_verified().get(op);
    const bool has_gradient = op->gradient != nullptr;
    differentiable += has_gradient;
    first += verified >= 1;
    second += verified >= 2;
    jvp_rules += op->jvp != nullptr;
    jvp_first += op->jvp && jvp >= 1;
    jvp_second += op->jvp && jvp >= 2;
    jvp_graph_count += op->jvp && jvp_graph >= 1;
    const bool batch_ok = op->batch && batch_verified().get(op) >= 1;
    batch_rules += op->batch != nullptr;
    batch_checked += batch_ok;
    // Random ops draw for each element, so no loop gives the same numbers: their rules
    // are tested by what the draws must satisfy (vectorized_map_test.cpp).
    const char* batching = !op->batch          ? "loop"
                           : op->traits.random ? "draws per element"
                           : batch_ok          ? "✓"
                                               : "–";
    rows << "| `" << op->name << "` | ";
    graph += has_gradient && in_graph >= 2;
    if (has_gradient)
      rows << "yes | " << (verified >= 1 ? "✓" : "–") << " | " << (verified >= 2 ? "✓" : "–") << " | "
           << (in_graph >= 2   ? "✓"
               : in_graph == 1 ? "1st order only"
                               : "–")
           << " | "
           << (!op->jvp   ? "no rule |"
               : jvp >= 2 ? "✓ | ✓"
               : jvp == 1 ? "✓ | –"
                          : "– | –")
           << " | "
           << (!op->jvp         ? ""
               : jvp_graph >= 1 ? "✓"
                                : "–")
           << " | " << batching << " |\n";
    else
      rows << "no: " << op->not_differentiable << " | | | | | | | " << batching << " |\n";
  }
  std::ostringstream os;
  os << "# Gradient coverage\n\n"
     << "Generated by `make docs` from the C++ test suite; a test fails when this file is out of date.\n\n"
     << "- **gradient**: the op defines a gradient function, or says why it has none (gradients stop "
        "there).\n"
     << "- **1st order / 2nd order**: `ef::testing::check_gradients` compared the tape with float64 central\n"
     << "  differences on a function using the op, and the gradient function itself was differentiated\n"
     << "  (nested tapes) and agreed at second order.\n"
     << "- **graph mode**: the same checks traced into a graph (placeholders, `gradients()` nodes, one\n"
     << "  `Session` run) gave the tape's value and gradients of both orders (Note [graph-mode gradient "
        "checks]).\n"
     << "- **jvp**: the op's forward-mode rule (`OpDef::jvp`) gave, under a `ForwardAccumulator`, the "
        "tangent\n"
     << "  that central differences along it and the reverse mode's `<u, J v> = <Jᵀu, v>` give, or the\n"
     << "  Hessian-vector product of nested tapes when it ran inside a gradient (forward-over-reverse).\n"
     << "  \"no rule\": a tangent reaching the op raises UnimplementedError. A test fails when a rule is\n"
     << "  unverified (Note [forward-mode checks]).\n"
     << "- **jvp 2nd order**: a tape differentiated the rule (reverse-over-forward) and the result "
        "agreed.\n"
     << "- **jvp graph mode**: the same tangent, built as graph nodes by a `ForwardAccumulator` around f's\n"
     << "  trace (placeholders, one `Session` run), equalled the eager one.\n"
     << "- **batching**: the op's batching rule (`OpDef::batch`) ran inside `ef::vectorized_map` of a "
        "function\n"
     << "  using the op, and of its gradient (per-example gradients), and both equalled the loop over the\n"
     << "  elements (Note [vectorization checks]). \"loop\": no rule, so vectorized_map runs the op once "
        "per\n"
     << "  element; \"draws per element\": a random op, whose batch draws independent numbers for every "
        "element.\n\n"
     << ops.size() << " primitive ops; " << differentiable << " differentiable; verified: " << first
     << " at first order, " << second << " at second order, " << graph << " at both orders in graph mode; "
     << jvp_rules << " jvp rules, " << jvp_first << " verified, " << jvp_second << " also at second order, "
     << jvp_graph_count << " also in graph mode; " << batch_rules << " batching rules, " << batch_checked
     << " verified.\n\n"
     << "| op | gradient | 1st order | 2nd order | graph mode | jvp | jvp 2nd order | jvp graph mode | "
        "batching |\n"
     << "|---|---|---|---|---|---|---|---|---|\n"
     << rows.str();
  return os.str();
}

std::vector<std::string> unverified_batch_rules() {
  std::vector<std::string> names;
  for (const OpDef* op : registered_ops())
    if (op->batch && !op->traits.random && batch_verified().get(op) < 1) names.emplace_back(op->name);
  return names;
}

std::vector<std::string> unverified_jvp_rules() {
  std::vector<std::string> names;
  for (const OpDef* op : registered_ops())
    if (op->jvp && jvp_verified_orders().get(op) < 1) names.emplace_back(op->name);
  return names;
}

}  // namespace ef::testing
