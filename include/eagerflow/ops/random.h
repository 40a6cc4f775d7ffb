#pragma once

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/scalar.h"

namespace ef {}  // namespace ef
