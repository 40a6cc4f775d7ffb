// A tensor's values as text, NumPy style ("[1. 2.5]", summarized when large): what
// Tensor::to_string shows inside "Tensor(...)", for the print op.
#pragma once

#include <string>

#include "eagerflow/core/tensor.h"

namespace ef::detail {

std::string format_values(const Tensor& t);

}  // namespace ef::detail
