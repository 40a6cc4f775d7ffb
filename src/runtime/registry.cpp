// The op registry: every primitive op by name, for graph mode and tooling. The hot
// path never comes here: public op functions hold their OpDef directly.
#include <algorithm>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "eagerflow/runtime/op_def.h"
#include "ops/batch_helpers.h"

namespace ef {
namespace {

struct Registry {
  std::mutex mutex;
  std::deque<OpDef> defs;  // a deque keeps addresses stable as it grows
  std::unordered_map<std::string, const OpDef*> by_name;
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: ops are referenced until exit
  return *r;
}

}  // namespace

const OpDef& define_op(OpDef def) {
  if (def.name.empty()) fail<InternalError>("define_op: an op needs a name");
  if (!def.infer) fail<InternalError>("define_op: op '", def.name, "' has no inference function");
  // Every op either has a gradient or says why it has none (docs/dev/adding_an_op.md).
  if (!def.gradient && def.not_differentiable.empty())
    fail<InternalError>("define_op: op '", def.name,
                        "' needs a gradient function, or not_differentiable set to the reason it has none");
  if (def.gradient && !def.not_differentiable.empty())
    fail<InternalError>("define_op: op '", def.name, "' has a gradient but is also marked not differentiable");
  if (def.jvp && !def.not_differentiable.empty())
    fail<InternalError>("define_op: op '", def.name, "' has a jvp rule but is marked not differentiable");
  // A view op's kernel only describes a view of its input's storage (Note [views]),
  // the same on every device: it serves them all.
  if (def.traits.view)
    for (KernelFn& kernel : def.kernels)
      if (!kernel) kernel = def.kernels[static_cast<int>(DeviceType::CPU)];
  // Elementwise ops share one batching rule (Note [vectorization]).
  if (def.traits.elementwise && !def.batch) def.batch = detail::batch_broadcasting;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string key(def.name);
  if (r.by_name.count(key)) fail<InternalError>("define_op: op '", def.name, "' is defined twice");
  const OpDef& stored = r.defs.emplace_back(std::move(def));
  r.by_name.emplace(std::move(key), &stored);
  return stored;
}

std::vector<const OpDef*> registered_ops() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const OpDef*> out;
  for (const OpDef& d : r.defs) out.push_back(&d);
  std::sort(out.begin(), out.end(), [](const OpDef* a, const OpDef* b) { return a->name < b->name; });
  return out;
}

const OpDef& find_op(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(std::string(name));
  if (it == r.by_name.end()) fail<NotFoundError>("find_op: no op named '", name, "' is registered");
  return *it->second;
}

}  // namespace ef
