// Common subexpression elimination: one sweep in index order; each node's inputs are
// first redirected to the survivors of earlier merges, so whole duplicated chains merge
// in one sweep. A later duplicate is replaced by the earlier node (Note [optimized
// copies] in passes.h: values only move to earlier nodes).
//
// What counts as the same computation:
// - ops: the same OpDef, attrs equal bit for bit (0.0 and -0.0 differ, as they can
//   change results), the same inputs. Never random ops (each draws new numbers) or
//   stateful ones.
// - constants: same device, dtype, shape and bytes, up to kMaxConstantElements (bigger
//   ones are rarely duplicated and costly to compare).
// - variable reads: the same variable and the same `order_after`, which for a read is
//   the variable's last assignment before it; so reads separated by an assignment
//   never merge. Nor do reads separated by any node that might assign without being an
//   assignment node of this graph (a cond or while_loop, whose branches are sub-graphs,
//   a stateful op): such a node starts a new "state epoch", part of a read's identity.
#include <bit>
#include <cstring>

#include "graph/passes/passes.h"

namespace ef::detail {

namespace {

constexpr int64_t kMaxConstantElements = 4096;

bool same_attrs(const Attrs& a, const Attrs& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto* x = std::get_if<double>(&a[i]);
    const auto* y = std::get_if<double>(&b[i]);
    if (x && y) {
      if (std::bit_cast<uint64_t>(*x) != std::bit_cast<uint64_t>(*y)) return false;
    } else if (!(a[i] == b[i])) {
      return false;
    }
  }
  return true;
}

bool mergeable_constant(const Node& n) {
  const Tensor& v = n.value;
  return v.defined() && !v.is_symbolic() && v.device().type == DeviceType::CPU &&
         v.num_elements() <= kMaxConstantElements;
}

// The constant's bytes in row-major order.
std::vector<std::byte> constant_bytes(const Tensor& v) {
  const Tensor c = v.contiguous();
  const auto* p = static_cast<const std::byte*>(c.raw_data());
  return std::vector<std::byte>(p, p + c.num_elements() * static_cast<int64_t>(size_of(c.dtype())));
}

void mix(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

}  // namespace

bool common_subexpression_elimination(PassGraph& g) {
  Replacements replaced;
  // Candidates by hash; equality is checked on lookup.
  std::unordered_multimap<size_t, int> seen;
  std::unordered_map<int, std::vector<std::byte>> bytes;  // of constants seen
  std::vector<int> epoch(g.nodes.size(), 0);               // of reads
  int state_epoch = 0;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    Node& n = g.node(i);
    for (ValueRef& in : n.inputs) in = replaced.resolve(in);
    const bool may_change_state = n.stateful() || (n.kind != NodeKind::kOp && n.kind != NodeKind::kConstant &&
                                                    n.kind != NodeKind::kPlaceholder && n.kind != NodeKind::kReadVariable);
    if (may_change_state) ++state_epoch;
    epoch[static_cast<size_t>(i)] = state_epoch;
    size_t h = static_cast<size_t>(n.kind);
    switch (n.kind) {
      case NodeKind::kOp:
        if (n.op->traits.random || n.stateful() || !n.control_inputs.empty()) continue;
        mix(h, std::hash<const void*>{}(n.op));
        mix(h, n.attrs.hash());
        for (const ValueRef& in : n.inputs) {
          mix(h, static_cast<size_t>(in.node));
          mix(h, static_cast<size_t>(in.index));
        }
        break;
      case NodeKind::kConstant: {
        if (!mergeable_constant(n)) continue;
        std::vector<std::byte> b = constant_bytes(n.value);
        mix(h, static_cast<size_t>(n.value.dtype()));
        for (int d = 0; d < n.value.rank(); ++d) mix(h, static_cast<size_t>(n.value.shape()[d]));
        mix(h, std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(b.data()), b.size())));
        bytes.emplace(i, std::move(b));
        break;
      }
      case NodeKind::kReadVariable:
        mix(h, std::hash<const void*>{}(n.variable->key()));
        mix(h, static_cast<size_t>(state_epoch));
        for (int a : n.order_after) mix(h, static_cast<size_t>(a));
        break;
      default:
        continue;
    }
    auto same = [&](const Node& m, int j) {
      if (m.kind != n.kind) return false;
      switch (n.kind) {
        case NodeKind::kOp:
          return m.op == n.op && m.inputs == n.inputs && same_attrs(m.attrs, n.attrs);
        case NodeKind::kConstant:
          return m.value.dtype() == n.value.dtype() && m.value.shape() == n.value.shape() &&
                 m.value.device() == n.value.device() && bytes.at(j) == bytes.at(i);
        case NodeKind::kReadVariable:
          return m.variable->key() == n.variable->key() && m.order_after == n.order_after &&
                 epoch[static_cast<size_t>(j)] == epoch[static_cast<size_t>(i)];
        default:
          return false;
      }
    };
    int match = -1;
    for (auto [it, end] = seen.equal_range(h); it != end; ++it)
      if (same(g.node(it->second), it->second)) {
        match = it->second;
        break;
      }
    if (match < 0) {
      seen.emplace(h, i);
      continue;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k)
      replaced.replace({i, static_cast<int>(k)}, {match, static_cast<int>(k)});
  }
  replaced.apply(g);  // the outputs, and inputs of nothing else (already redirected)
  return !replaced.empty();
}

}  // namespace ef::detail
