#include "eagerflow/nn/mixed_precision.h"

#include <mutex>

#include "eagerflow/core/error.h"

namespace ef::nn {

Policy::Policy(const std::string& name) : name_(name) {
  struct Known {
    const char* name;
    DType compute, variable;
  };
  static constexpr Known kPolicies[] = {
      {"float32", DType::Float32, DType::Float32},       {"float64", DType::Float64, DType::Float64},
      {"float16", DType::Float16, DType::Float16},       {"bfloat16", DType::BFloat16, DType::BFloat16},
      {"mixed_float16", DType::Float16, DType::Float32}, {"mixed_bfloat16", DType::BFloat16, DType::Float32},
  };
  for (const Known& k : kPolicies)
    if (name == k.name) {
      compute_ = k.compute;
      variable_ = k.variable;
      return;
    }
  fail("Policy: unknown policy '", name,
       "'; expected float32, float64, float16, bfloat16, mixed_float16 or mixed_bfloat16");
}

namespace {
std::mutex policy_mutex;
std::optional<Policy>& stored_policy() {
  static std::optional<Policy> policy;
  return policy;
}
}  // namespace

void set_global_policy(const Policy& policy) {
  std::lock_guard lock(policy_mutex);
  stored_policy() = policy;
}

void clear_global_policy() {
  std::lock_guard lock(policy_mutex);
  stored_policy().reset();
}

std::optional<Policy> global_policy() {
  std::lock_guard lock(policy_mutex);
  return stored_policy();
}

}  // namespace ef::nn
