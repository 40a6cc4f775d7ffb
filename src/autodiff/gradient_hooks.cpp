// The gradient-hook registry, and the hooks of one gradient() call (Note [gradient
// hooks] in eagerflow/autodiff/gradient_hooks.h).
#include "eagerflow/autodiff/gradient_hooks.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "autodiff/tape_internal.h"
#include "eagerflow/ops/operators.h"

namespace ef {
namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<const void*, std::shared_ptr<GradientHook>> hooks;  // by Variable::key()
  std::atomic<size_t> count{0};  // hooks.size(), read without the lock on every gradient() call
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: registrations may outlive statics
  return *r;
}

GradientHookScope*& innermost_scope() {
  thread_local GradientHookScope* scope = nullptr;
  return scope;
}

void unregister(const std::vector<Variable>& variables) {
  if (variables.empty()) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const Variable& v : variables) r.hooks.erase(v.key());
  r.count = r.hooks.size();
}

}  // namespace

GradientHookRegistration register_gradient_hook(const std::vector<Variable>& variables,
                                                std::shared_ptr<GradientHook> hook) {
  if (!hook) fail("register_gradient_hook: the hook is null");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const Variable& v : variables)
    if (r.hooks.count(v.key()))
      fail<FailedPreconditionError>("register_gradient_hook: variable '", v.name(),
                                    "' has a gradient hook already (one hook per variable)");
  for (const Variable& v : variables) r.hooks[v.key()] = hook;
  r.count = r.hooks.size();
  return GradientHookRegistration(variables);
}

GradientHookScope::GradientHookScope(std::shared_ptr<GradientHook> hook)
    : hook_(std::move(hook)), outer_(std::exchange(innermost_scope(), this)) {
  if (!hook_) fail("GradientHookScope: the hook is null");
}

GradientHookScope::~GradientHookScope() {
  // Usually the innermost; one closed out of order (a Python object) is unlinked where it is.
  for (GradientHookScope** link = &innermost_scope(); *link; link = &(*link)->outer_)
    if (*link == this) {
      *link = outer_;
      return;
    }
}

GradientHookRegistration::~GradientHookRegistration() { unregister(variables_); }

GradientHookRegistration::GradientHookRegistration(GradientHookRegistration&& other) noexcept
    : variables_(std::exchange(other.variables_, {})) {}

GradientHookRegistration& GradientHookRegistration::operator=(GradientHookRegistration&& other) noexcept {
  if (this != &other) {
    unregister(variables_);
    variables_ = std::exchange(other.variables_, {});
  }
  return *this;
}

namespace detail {

FinalGradientFn*& final_gradient_listener() {
  thread_local FinalGradientFn* listener = nullptr;
  return listener;
}

HookedGradients::HookedGradients(const std::vector<GradientTape::Source>& sources,
                                 const std::vector<size_t>& first, bool recorded) {
  Registry& r = registry();
  const std::shared_ptr<GradientHook>* scoped = innermost_scope() ? &innermost_scope()->hook() : nullptr;
  if (r.count.load(std::memory_order_relaxed) == 0 && !scoped) return;
  // The hooks of the call's variables, each with its variables in the call's order.
  std::vector<std::shared_ptr<GradientHook>> hooks;
  std::vector<std::vector<Variable>> variables_of_hook;
  sources_.resize(sources.size());
  {
    std::lock_guard lock(r.mutex);
    for (size_t i = 0; i < sources.size(); ++i) {
      const Variable* v = std::get_if<Variable>(&sources[i]);
      if (!v) continue;
      auto found = r.hooks.find(v->key());
      const std::shared_ptr<GradientHook>* hook = found != r.hooks.end() ? &found->second : scoped;
      if (!hook) continue;
      size_t h = 0;
      while (h < hooks.size() && hooks[h] != *hook) ++h;
      if (h == hooks.size()) {
        hooks.push_back(*hook);
        variables_of_hook.emplace_back();
      }
      sources_[i] = {static_cast<int>(h), variables_of_hook[h].size(), first[i + 1] - first[i], Tensor()};
      variables_of_hook[h].push_back(*v);
    }
  }
  if (hooks.empty()) return;
  flat_to_source_.assign(first.back(), -1);
  for (size_t i = 0; i < sources.size(); ++i)
    for (size_t k = first[i]; k < first[i + 1]; ++k) flat_to_source_[k] = static_cast<int>(i);
  for (size_t h = 0; h < hooks.size(); ++h) calls_.push_back(hooks[h]->begin(variables_of_hook[h], recorded));
  // A variable this tape never saw read has its (undefined) gradient now.
  for (Source& s : sources_)
    if (s.hook >= 0 && s.reads_left == 0) calls_[static_cast<size_t>(s.hook)]->ready(s.index, Tensor());
}

HookedGradients::~HookedGradients() = default;

void HookedGradients::source_final(size_t flat, const Tensor& gradient) {
  const int i = flat < flat_to_source_.size() ? flat_to_source_[flat] : -1;
  if (i < 0) return;
  Source& s = sources_[static_cast<size_t>(i)];
  if (s.hook < 0) return;
  // A variable's gradient is the sum over the tensors read from it.
  if (gradient.defined()) s.sum = s.sum.defined() ? add(s.sum, gradient) : gradient;
  if (--s.reads_left == 0)
    calls_[static_cast<size_t>(s.hook)]->ready(s.index, std::exchange(s.sum, Tensor()));
}

void HookedGradients::finish(std::vector<Tensor>& result) {
  for (size_t h = 0; h < calls_.size(); ++h) {
    std::vector<Tensor> given = calls_[h]->finish();
    size_t k = 0;
    for (size_t i = 0; i < sources_.size(); ++i) {
      if (sources_[i].hook != static_cast<int>(h)) continue;
      if (k == given.size())
        fail<InternalError>("gradient: a gradient hook returned ", given.size(),
                            " gradients for more variables");
      result[i] = given[k++];
    }
    if (k != given.size())
      fail<InternalError>("gradient: a gradient hook returned ", given.size(), " gradients for ", k,
                          " variables");
  }
}

}  // namespace detail
}  // namespace ef
