// MirroredScope: variables start with rank 0's values (eagerflow/distribute/distribute.h).
#include "distribute/process_group.h"
#include "eagerflow/distribute/distribute.h"
#include "eagerflow/runtime/variable.h"

namespace ef::distribute {

MirroredScope::MirroredScope()
    : hook_((detail::group("MirroredScope"), [](Variable& v) { v.assign(broadcast(v.value(), 0)); })) {}

}  // namespace ef::distribute
