// Variables that start with rank 0's values: broadcast_variables and MirroredScope
// (eagerflow/distribute/distribute.h).
#include "distribute/process_group.h"
#include "eagerflow/distribute/distribute.h"
#include "eagerflow/runtime/variable.h"

namespace ef::distribute {

MirroredScope::MirroredScope()
    : hook_((detail::group("MirroredScope"), [](Variable& v) { broadcast_variables({v}); })) {}

void broadcast_variables(const std::vector<Variable>& variables, int root) {
  for (Variable v : variables) v.assign(broadcast(v.value(), root));  // a handle: assigns the variable
}

}  // namespace ef::distribute
