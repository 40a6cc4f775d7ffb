// Compiled kernels: a generated source (codegen.h) compiled by NVRTC for the device's
// architecture the first time it is needed, then kept in memory, and on disk under
// $EF_CUDA_CACHE_DIR (default ~/.cache/eagerflow/cuda) keyed by a hash of the source,
// its headers, the architecture and NVRTC's version, so later processes skip NVRTC.
#pragma once

#include <string>
#include <string_view>

#include "backends/cuda/runtime.h"

namespace ef::cuda {

// The function `ef_kernel` of `source` on device `d`. A compile error is an
// InternalError naming `op` with NVRTC's log (it is a bug in eagerflow).
api::CUfunction compiled_kernel(DeviceState& d, const std::string& source, std::string_view op);

}  // namespace ef::cuda
