// The CUDA kernels' sources. Elementwise ops, casts, copies, fills and reductions are
// each one small template (a grid-stride loop over strided operands) instantiated per
// functor and dtype as CUDA C++ text; NVRTC compiles each text the first time it is
// needed (kernel_cache.h). The functors and the prelude they share are the files of
// device_code/, embedded into the library when it is built.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eagerflow/core/dtype.h"

namespace ef::cuda {

// The header files kernels include, by name ("prelude.cuh", "functors.cuh").
struct DeviceHeader {
  std::string_view name;
  std::string_view text;
};
std::span<const DeviceHeader> device_headers();

// The C++ type of `dtype` in device code ("float", "long long", "bool"). Throws
// UnimplementedError naming `op` for dtypes the CUDA kernels do not compute yet.
std::string_view device_type(DType dtype, std::string_view op);

// out[i] = call(inputs at element i), over operands with up to 8 strided dimensions.
// `call` is the functor expression with the inputs as in0, in1: made by the helpers
// below. Kernel name: ef_kernel.
std::string elementwise_source(std::string_view call, std::span<const DType> inputs, DType output,
                               std::string_view op);
// "ef_op_add()(IN0, IN1)"; with `param`, the map kernel's double argument comes last.
std::string functor_call(std::string_view op_name, int arity, bool param = false);
std::string convert_call(DType output, std::string_view op);    // "ef_convert<float>(IN0)"
// cast's call for the target dtype `target`, computed into `output`: convert_call, but a
// small integer target arrives widened (Note [small integer dtypes]), so the value is
// converted to it first and floats saturate at its range, not at the wide dtype's.
std::string cast_call(DType target, DType output, std::string_view op);

// The C++ type that holds `dtype`'s elements in device memory: device_type's, or for
// the storage-only dtypes a struct of functors.cuh (half) or a narrow integer.
std::string_view storage_type(DType dtype);

// out[i] = src at element i converted to `to`, cast's rules, for every pair of dtypes
// including the storage-only ones (which only the dispatcher's widening and narrowing
// and cast's saturation use: Notes [half-precision dtypes], [small integer dtypes]).
std::string convert_source(DType from, DType to);

// dst[i] = src at element i, moving `element_size`-byte words (any dtype).
std::string copy_source(size_t element_size);

// out[i] = value for i < n.
std::string fill_source(DType dtype, std::string_view op);

// out[o] = reduce(identity, in over the reduced dimensions), one block per output.
std::string reduce_source(std::string_view reducer, DType dtype, std::string_view op);
inline constexpr int kReduceBlock = 256;

// An elementwise op that device_code/functors.cuh computes: ef_op_<op>, for the
// dtypes in `dtypes` (bit i: DType i).
struct ElementwiseFunctor {
  std::string_view op;
  int arity = 1;
  uint32_t dtypes = 0;
  bool bool_output = false;  // comparisons and predicates
  int param_attr = -1;       // the attr passed to the functor as `param` (alpha, ...), if any
  int dtype_input = 0;       // the input whose dtype selects the functor's type
};
// The op's functor, or null when CUDA has none (its ops then have no CUDA kernel).
const ElementwiseFunctor* find_elementwise_functor(std::string_view op);
// The dtypes the CUDA kernels compute in (not float16/bfloat16 yet).
uint32_t device_dtypes();

// out[o] = the index (of type `index`) of the first largest (is_max) or smallest
// element of each reduced line, the first NaN winning; one block per output.
std::string arg_reduce_source(DType dtype, DType index, bool is_max, std::string_view op);
// out[i] = x[offsets[i / row] + i % row], moving `element_size`-byte words.
std::string gather_rows_source(size_t element_size);
// out[offsets[t] + s] += updates[t * row + s] with atomic adds (or, for bool).
std::string scatter_add_source(DType dtype, std::string_view op);
// Sorting by rank: each element of a contiguous [outer, n, inner] tensor counts the
// elements of its line that come before it (NaN largest, ties by position: the CPU's
// stable total order) and, when its rank is below k, writes its value and/or its
// int32 position at that rank. O(n^2) per line, one thread per element.
std::string sort_rank_source(DType dtype, bool descending, bool values, bool indices, std::string_view op);
// Scans of contiguous [outer, n, inner] lines, one thread per line: `combine` is
// "sum" or "prod"; floats accumulate in double, integers wrap.
std::string scan_source(DType dtype, std::string_view combine, bool exclusive, bool reverse,
                        std::string_view op);

// The sliding-window kernels (codegen_window.cpp), NHWC, one thread per output element.
enum class WindowKernel {
  Conv2d,
  Conv2dBackpropInput,
  Conv2dBackpropFilter,
  MaxPool,
  MaxPoolGrad,
  AvgPool,
  AvgPoolGrad,
  MaxPoolGradGrad,
};
std::string window_source(WindowKernel kind, DType dtype, std::string_view op);

// Every source the backend generates for the ops and dtypes it supports, with a name
// for each, so that a test can compile them all without a GPU.
std::vector<std::pair<std::string, std::string>> all_kernel_sources();

}  // namespace ef::cuda
