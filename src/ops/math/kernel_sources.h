// What compiled fused kernels (Note [compiled fused kernels] in fused_compile.cpp) are
// built from, fixed when the library is built: the text of the headers they include,
// and the compiler and target that built the library. Defined in kernel_sources.cpp.in,
// which CMake fills in.
#pragma once

#include <span>
#include <string_view>

namespace ef::detail {

struct KernelHeader {
  std::string_view path;  // as included: "backends/cpu/float_math.h"
  std::string_view text;
};
std::span<const KernelHeader> kernel_headers();

std::string_view kernel_compiler();  // the C++ compiler that built the library
std::string_view kernel_arch();      // its -march value; empty for the compiler's default

}  // namespace ef::detail
