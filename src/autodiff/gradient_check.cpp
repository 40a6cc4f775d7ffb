#include "eagerflow/autodiff/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_set>

#include "autodiff/gradient_check_internal.h"
#include "autodiff/tape_internal.h"
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

}  // namespace

namespace detail {
GraphGradientsFn& graph_gradients() {
  static GraphGradientsFn fn = nullptr;
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
  if (order < 2) {
    check_in_graph_mode(f, inputs, {}, order, first, {}, result);
    return result;
  }

  // Second order: G(x) = sum_i <grad_i f(x), v_i> for a fixed direction v. Its gradient
  // by nested tapes against differences of G, itself computed by the (inner) tape.
  Inputs directions;
  for (size_t i = 0; i < inputs.size(); ++i)
    directions.push_back(random::uniform(inputs[i].shape(), -1, 1, DType::Float64, 1000 + static_cast<int64_t>(i)));
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
  return result;
}

std::string gradient_coverage_table() {
  std::vector<const OpDef*> ops = registered_ops();
  int differentiable = 0, first = 0, second = 0, graph = 0;
  std::ostringstream rows;
  for (const OpDef* op : ops) {
    const int verified = verified_orders().get(op), in_graph = graph_verified_orders().get(op);
    const bool has_gradient = op->gradient != nullptr;
    differentiable += has_gradient;
    first += verified >= 1;
    second += verified >= 2;
    rows << "| `" << op->name << "` | ";
    graph += has_gradient && in_graph >= 2;
    if (has_gradient)
      rows << "yes | " << (verified >= 1 ? "✓" : "–") << " | " << (verified >= 2 ? "✓" : "–") << " | "
           << (in_graph >= 2 ? "✓" : in_graph == 1 ? "1st order only" : "–") << " |\n";
    else
      rows << "no: " << op->not_differentiable << " | | | |\n";
  }
  std::ostringstream os;
  os << "# Gradient coverage\n\n"
     << "Generated by `make docs` from the C++ test suite; a test fails when this file is out of date.\n\n"
     << "- **gradient**: the op defines a gradient function, or says why it has none (gradients stop there).\n"
     << "- **1st order / 2nd order**: `ef::testing::check_gradients` compared the tape with float64 central\n"
     << "  differences on a function using the op, and the gradient function itself was differentiated\n"
     << "  (nested tapes) and agreed at second order.\n"
     << "- **graph mode**: the same checks traced into a graph (placeholders, `gradients()` nodes, one\n"
     << "  `Session` run) gave the tape's value and gradients of both orders (Note [graph-mode gradient checks]).\n\n"
     << ops.size() << " primitive ops; " << differentiable << " differentiable; verified: " << first
     << " at first order, " << second << " at second order, " << graph << " at both orders in graph mode.\n\n"
     << "| op | gradient | 1st order | 2nd order | graph mode |\n"
     << "|---|---|---|---|---|\n"
     << rows.str();
  return os.str();
}

}  // namespace ef::testing
