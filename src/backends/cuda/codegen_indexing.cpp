// Kernel sources of the reductions that return indices, gathers and scans (see
// codegen.h): each a small template that codegen.cpp's map and reduce kernels cannot
// express.
#include "backends/cuda/codegen.h"

namespace ef::cuda {

std::string arg_reduce_source(DType dtype, DType index, bool is_max, std::string_view op) {
  const std::string t(device_type(dtype, op)), it(device_type(index, op));
  const std::string better = is_max ? "v > best" : "v < best";
  const std::string block = std::to_string(kReduceBlock);
  // Each thread finds the first winner of its strided share; the tree then prefers a
  // NaN, else the better value, else the smaller index (the CPU's first-index rule).
  return "#include \"functors.cuh\"\n"
         "EF_KERNEL void ef_kernel(" +
         it + "* __restrict__ out, const " + t +
         "* __restrict__ in, "
         "long long outputs, long long count, int out_rank, EfDims out_sizes, EfDims out_strides, "
         "long long red_stride) {\n"
         "  EF_SHARED " +
         t + " best_value[" + block +
         "];\n"
         "  EF_SHARED long long best_index[" +
         block +
         "];\n"
         "  const int t = ef_thread_in_block();\n"
         "  for (long long o = ef_block_index(); o < outputs; o += ef_block_count()) {\n"
         "    const long long base = ef_offset(o, out_rank, out_sizes, out_strides);\n"
         "    long long bi = -1;\n"
         "    " +
         t + " best = static_cast<" + t +
         ">(0);\n"
         "    for (long long k = t; k < count; k += ef_block_size()) {\n"
         "      const " +
         t +
         " v = in[base + k * red_stride];\n"
         "      if (bi >= 0 && ef_isnan(best)) break;\n"
         "      if (bi < 0 || ef_isnan(v) || " +
         better +
         ") {\n"
         "        best = v;\n"
         "        bi = k;\n"
         "      }\n"
         "    }\n"
         "    best_value[t] = best;\n"
         "    best_index[t] = bi;\n"
         "    ef_sync_block();\n"
         "    for (int half = ef_block_size() / 2; half > 0; half /= 2) {\n"
         "      if (t < half) {\n"
         "        const " +
         t +
         " v = best_value[t + half], best = best_value[t];\n"
         "        const long long vi = best_index[t + half], bi = best_index[t];\n"
         "        bool take = false;\n"
         "        if (vi >= 0) {\n"
         "          if (bi < 0) take = true;\n"
         "          else if (ef_isnan(v)) take = !ef_isnan(best) || vi < bi;\n"
         "          else take = !ef_isnan(best) && (" +
         better +
         " || (v == best && vi < bi));\n"
         "        }\n"
         "        if (take) {\n"
         "          best_value[t] = v;\n"
         "          best_index[t] = vi;\n"
         "        }\n"
         "      }\n"
         "      ef_sync_block();\n"
         "    }\n"
         "    if (t == 0) out[o] = static_cast<" +
         it +
         ">(best_index[0] < 0 ? 0 : best_index[0]);\n"
         "    ef_sync_block();\n"
         "  }\n}\n";
}

std::string gather_rows_source(size_t element_size) {
  const std::string w = element_size == 1   ? "unsigned char"
                        : element_size == 2 ? "unsigned short"
                        : element_size == 4 ? "unsigned"
                                            : "unsigned long long";
  return "#include \"functors.cuh\"\n"
         "EF_KERNEL void ef_kernel(" +
         w + "* __restrict__ out, const " + w +
         "* __restrict__ x, "
         "const long long* __restrict__ offsets, long long n, long long row) {\n"
         "  const long long step = ef_block_count() * ef_block_size();\n"
         "  for (long long i = ef_block_index() * ef_block_size() + ef_thread_in_block(); i < n; i += step)\n"
         "    out[i] = x[offsets[i / row] + i % row];\n"
         "}\n";
}

std::string scatter_add_source(DType dtype, std::string_view op) {
  const std::string t(device_type(dtype, op));
  const std::string update = dtype == DType::Bool
                                 ? "if (updates[i]) out[at] = true;"  // the same value: no race
                                 : "ef_atomic_add(out + at, updates[i]);";
  return "#include \"functors.cuh\"\n"
         "EF_KERNEL void ef_kernel(" +
         t + "* __restrict__ out, const " + t +
         "* __restrict__ updates, "
         "const long long* __restrict__ offsets, long long n, long long row) {\n"
         "  const long long step = ef_block_count() * ef_block_size();\n"
         "  for (long long i = ef_block_index() * ef_block_size() + ef_thread_in_block(); i < n; i += step) "
         "{\n"
         "    const long long at = offsets[i / row] + i % row;\n"
         "    " +
         update +
         "\n"
         "  }\n}\n";
}

std::string sort_rank_source(DType dtype, bool descending, bool values, bool indices, std::string_view op) {
  const std::string t(device_type(dtype, op));
  // w (at m) comes before v (at j): strictly before in the total order, or equal and earlier.
  const std::string before = descending ? "ef_less_total(v, w)" : "ef_less_total(w, v)";
  return "#include \"functors.cuh\"\n"
         "EF_KERNEL void ef_kernel(" +
         t + "* __restrict__ values, int* __restrict__ indices, const " + t +
         "* __restrict__ x, long long total, long long n, long long inner, long long k) {\n"
         "  const long long step = ef_block_count() * ef_block_size();\n"
         "  for (long long e = ef_block_index() * ef_block_size() + ef_thread_in_block(); e < total; e += "
         "step) {\n"
         "    const long long in = e % inner, j = (e / inner) % n, o = e / (inner * n);\n"
         "    const long long base = o * n * inner + in;\n"
         "    const " +
         t +
         " v = x[e];\n"
         "    long long rank = 0;\n"
         "    for (long long m = 0; m < n; ++m) {\n"
         "      const " +
         t +
         " w = x[base + m * inner];\n"
         "      if (" +
         before +
         " || (m < j && !ef_less_total(v, w) && !ef_less_total(w, v))) ++rank;\n"
         "    }\n"
         "    if (rank >= k) continue;\n"
         "    const long long at = (o * k + rank) * inner + in;\n" +
         (values ? "    values[at] = v;\n" : "") +
         (indices ? "    indices[at] = static_cast<int>(j);\n" : "") + "  }\n}\n";
}

std::string scan_source(DType dtype, std::string_view combine, bool exclusive, bool reverse,
                        std::string_view op) {
  const std::string t(device_type(dtype, op));
  const bool floating = dtype == DType::Float32 || dtype == DType::Float64;
  const std::string acc = floating ? "double" : dtype == DType::Int32 ? "unsigned" : "unsigned long long";
  const std::string apply = combine == "sum" ? "acc = acc + " : "acc = acc * ";
  const std::string read = apply + "static_cast<" + acc + ">(x[at]);\n";
  const std::string write = "out[at] = static_cast<" + t + ">(acc);\n";
  return "#include \"functors.cuh\"\n"
         "EF_KERNEL void ef_kernel(" +
         t + "* __restrict__ out, const " + t +
         "* __restrict__ x, "
         "long long lines, long long n, long long inner) {\n"
         "  const long long step = ef_block_count() * ef_block_size();\n"
         "  for (long long line = ef_block_index() * ef_block_size() + ef_thread_in_block(); line < lines; "
         "line += step) {\n"
         "    const long long base = (line / inner) * n * inner + line % inner;\n"
         "    " +
         acc + " acc = " + (combine == "sum" ? "0" : "1") +
         ";\n"
         "    for (long long s = 0; s < n; ++s) {\n"
         "      const long long at = base + (" +
         (reverse ? "n - 1 - s" : "s") +
         ") * inner;\n"
         "      " +
         (exclusive ? write + "      " + read : read + "      " + write) + "    }\n  }\n}\n";
}

}  // namespace ef::cuda
