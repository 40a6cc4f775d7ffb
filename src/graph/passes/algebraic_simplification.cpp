// Algebraic simplification: an op whose result is, bit for bit, one of its inputs is
// removed and its uses read that input. Every rule also requires the result to have the
// input's dtype and shape (output meta == input meta), so no rule hides a broadcast or
// a type change: x + zeros([3, 1]) with x of shape [3] broadcasts to [3, 3] and stays.
//
// The rules, and why each is exact in IEEE arithmetic (c is a constant all of whose
// elements have the value shown):
//   x * 1, 1 * x, x / 1   exact for every x, NaN and infinities included.
//   x + (-0.0), (-0.0) + x, x - (+0.0)
//                         exact for every float x. x + (+0.0) is NOT removed: it turns
//                         -0.0 into +0.0 (and x - (-0.0) is x + (+0.0)). Integer x + 0
//                         and x - 0 are exact.
//   negative(negative(x)) flips the sign bit twice.
//   reshape / broadcast_to / squeeze to x's own shape, identity, contiguous, cast to x's
//   own dtype, transpose by the identity permutation: the same values.
// Not done: x * 0 -> 0 (NaN * 0 and inf * 0 are NaN, -1 * 0 is -0.0), x - x -> 0 (NaN,
// inf), x / x -> 1: none is exact. (A signalling NaN would come out of x * 1 quiet; the
// rules treat NaNs by value, as the kernels do.)
#include <cmath>

#include "graph/passes/passes.h"

namespace ef::detail {

namespace {

// Whether constant node `n` has every element equal to `target`, sign of zero included.
bool constant_all(const Node& n, double target) {
  if (n.kind != NodeKind::kConstant || n.value.is_symbolic() || n.value.device().type != DeviceType::CPU) return false;
  const DType d = n.value.dtype();
  if (d != DType::Float32 && d != DType::Float64 && d != DType::Int32 && d != DType::Int64) return false;
  if (n.value.num_elements() > 4096) return false;  // checking would cost more than it saves
  for (double v : n.value.to_vector<double>())
    if (!(v == target) || std::signbit(v) != std::signbit(target)) return false;
  return true;
}

const OpDef* op_named(std::string_view name) {
  try {
    return &find_op(name);
  } catch (const NotFoundError&) {
    return nullptr;  // an op this build lacks simplifies nothing
  }
}

struct Ops {
  const OpDef* multiply = op_named("multiply");
  const OpDef* divide = op_named("divide");
  const OpDef* add = op_named("add");
  const OpDef* subtract = op_named("subtract");
  const OpDef* negative = op_named("negative");
  const OpDef* reshape = op_named("reshape");
  const OpDef* broadcast_to = op_named("broadcast_to");
  const OpDef* squeeze = op_named("squeeze");
  const OpDef* identity = op_named("identity");
  const OpDef* contiguous = op_named("contiguous");
  const OpDef* cast = op_named("cast");
  const OpDef* transpose = op_named("transpose");
};

bool identity_perm(const Attrs& attrs) {
  if (attrs.size() < 1 || !std::holds_alternative<Dims>(attrs[0])) return false;
  const Dims& perm = attrs.get_ints(0);
  const int64_t rank = static_cast<int64_t>(perm.size());
  for (int64_t i = 0; i < rank; ++i)
    if (perm[static_cast<size_t>(i)] != i && perm[static_cast<size_t>(i)] != i - rank) return false;
  return true;
}

int unknown_dims(const Shape& s) {
  int count = 0;
  for (int i = 0; i < s.rank(); ++i) count += s[i] == kUnknownDim;
  return count;
}

// The input whose value `n` returns unchanged, or node -1.
ValueRef simplified(const PassGraph& g, const Node& n, const Ops& ops) {
  const ValueRef none{-1, 0};
  if (n.kind != NodeKind::kOp || n.outputs.size() != 1 || n.inputs.empty() || !n.control_inputs.empty()) return none;
  const TensorMeta& out = n.outputs[0];
  auto same_meta = [&](ValueRef r) {
    const TensorMeta& m = g.node(r.node).outputs[static_cast<size_t>(r.index)];
    return m.dtype == out.dtype && m.shape == out.shape;
  };
  auto is_const = [&](size_t i, double v) { return constant_all(g.node(n.inputs[i].node), v); };
  const bool is_float = out.dtype == DType::Float32 || out.dtype == DType::Float64;
  const ValueRef a = n.inputs[0];
  const ValueRef b = n.inputs.size() > 1 ? n.inputs[1] : none;
  const OpDef* op = n.op;

  if (n.inputs.size() == 2) {
    ValueRef x = none;
    if (op == ops.multiply) x = is_const(1, 1.0) ? a : is_const(0, 1.0) ? b : none;
    else if (op == ops.divide) x = is_const(1, 1.0) ? a : none;
    else if (op == ops.add) {
      const double zero = is_float ? -0.0 : 0.0;
      x = is_const(1, zero) ? a : is_const(0, zero) ? b : none;
    } else if (op == ops.subtract) x = is_const(1, 0.0) ? a : none;
    return x.node >= 0 && same_meta(x) ? x : none;
  }
  if (n.inputs.size() != 1 || !same_meta(a)) return none;
  if (op == ops.negative) {
    const Node& inner = g.node(a.node);
    if (inner.kind == NodeKind::kOp && inner.op == ops.negative && same_meta(inner.inputs[0])) return inner.inputs[0];
    return none;
  }
  if (op == ops.identity || op == ops.contiguous || op == ops.cast) return a;
  if (op == ops.reshape) return unknown_dims(out.shape) <= 1 ? a : none;
  if (op == ops.broadcast_to || op == ops.squeeze) return out.shape.is_fully_defined() ? a : none;
  if (op == ops.transpose) return identity_perm(n.attrs) ? a : none;
  return none;
}

}  // namespace

bool algebraic_simplification(PassGraph& g) {
  static const Ops ops;
  Replacements replaced;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    Node& n = g.node(i);
    for (ValueRef& in : n.inputs) in = replaced.resolve(in);  // negative(negative(..)) chains
    const ValueRef x = simplified(g, n, ops);
    if (x.node >= 0) replaced.replace({i, 0}, x);
  }
  replaced.apply(g);
  return !replaced.empty();
}

}  // namespace ef::detail
