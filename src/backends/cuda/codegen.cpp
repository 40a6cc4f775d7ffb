#include "backends/cuda/codegen.h"

#include <algorithm>

#include "eagerflow/core/error.h"

namespace ef::cuda {
namespace {

constexpr uint32_t bit(DType t) { return uint32_t{1} << static_cast<int>(t); }
constexpr uint32_t kFloats = bit(DType::Float32) | bit(DType::Float64);
constexpr uint32_t kIntegers = bit(DType::Int32) | bit(DType::Int64);
constexpr uint32_t kNumeric = kFloats | kIntegers;
constexpr uint32_t kBool = bit(DType::Bool);

// The ops of device_code/functors.cuh. Integer divisions and pow are checked on the
// host first (ops/math/binary.cpp's checked kernels), as on the CPU.
constexpr ElementwiseFunctor kFunctors[] = {
    {"negative", 1, kNumeric},
    {"abs", 1, kNumeric},
    {"sign", 1, kNumeric},
    {"square", 1, kNumeric},
    {"reciprocal", 1, kFloats},
    {"exp", 1, kFloats},
    {"expm1", 1, kFloats},
    {"log", 1, kFloats},
    {"log1p", 1, kFloats},
    {"sqrt", 1, kFloats},
    {"rsqrt", 1, kFloats},
    {"sin", 1, kFloats},
    {"cos", 1, kFloats},
    {"tan", 1, kFloats},
    {"asin", 1, kFloats},
    {"acos", 1, kFloats},
    {"atan", 1, kFloats},
    {"sinh", 1, kFloats},
    {"cosh", 1, kFloats},
    {"tanh", 1, kFloats},
    {"erf", 1, kFloats},
    {"floor", 1, kFloats},
    {"ceil", 1, kFloats},
    {"round", 1, kFloats},
    {"isnan", 1, kFloats, true},
    {"isinf", 1, kFloats, true},
    {"isfinite", 1, kFloats, true},
    {"logical_not", 1, kBool, true},
    {"sigmoid", 1, kFloats},
    {"relu", 1, kFloats},
    {"relu6", 1, kFloats},
    {"elu", 1, kFloats},
    {"selu", 1, kFloats},
    {"softplus", 1, kFloats},
    {"softsign", 1, kFloats},
    {"add", 2, kNumeric},
    {"subtract", 2, kNumeric},
    {"multiply", 2, kNumeric},
    {"squared_difference", 2, kNumeric},
    {"divide", 2, kNumeric},
    {"floordiv", 2, kNumeric},
    {"floormod", 2, kNumeric},
    {"pow", 2, kNumeric},
    {"maximum", 2, kNumeric},
    {"minimum", 2, kNumeric},
    {"sigmoid_grad", 2, kFloats},
    {"leaky_relu", 1, kFloats, false, 0},
    {"gelu", 1, kFloats, false, 0},
    {"select", 3, kNumeric | kBool, false, -1, 1},

    {"equal", 2, kNumeric | kBool, true},
    {"not_equal", 2, kNumeric | kBool, true},
    {"less", 2, kNumeric, true},
    {"less_equal", 2, kNumeric, true},
    {"greater", 2, kNumeric, true},
    {"greater_equal", 2, kNumeric, true},
    {"logical_and", 2, kBool, true},
    {"logical_or", 2, kBool, true},
    {"logical_xor", 2, kBool, true},
};

constexpr std::string_view kReducers[] = {"sum", "prod", "max", "min", "any", "all"};

// Device code files, embedded by CMake (generated/cuda_device_code.cpp).
}  // namespace
std::string_view device_prelude_text();
std::string_view device_functors_text();
namespace {

// IN<i> -> the element of input i at linear index i of the iteration.
std::string with_inputs(std::string call, int arity) {
  for (int i = 0; i < arity; ++i) {
    const std::string from = "IN" + std::to_string(i);
    const std::string to =
        "in" + std::to_string(i) + "[ef_offset(i, rank, sizes, s" + std::to_string(i) + ")]";
    for (size_t at = call.find(from); at != std::string::npos; at = call.find(from, at + to.size()))
      call.replace(at, from.size(), to);
  }
  return call;
}

}  // namespace

std::span<const DeviceHeader> device_headers() {
  static const DeviceHeader headers[] = {{"prelude.cuh", device_prelude_text()},
                                         {"functors.cuh", device_functors_text()}};
  return headers;
}

uint32_t device_dtypes() { return kNumeric | kBool; }

std::string_view device_type(DType dtype, std::string_view op) {
  switch (dtype) {
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    case DType::Int32:
      return "int";
    case DType::Int64:
      return "long long";
    case DType::Bool:
      return "bool";
    default:
      break;
  }
  fail<UnimplementedError>(op, ": dtype ", dtype,
                           " is not computed on CUDA devices yet (float32, float64, int32, ",
                           "int64 and bool are); cast the tensor first");
}

const ElementwiseFunctor* find_elementwise_functor(std::string_view op) {
  for (const ElementwiseFunctor& f : kFunctors)
    if (f.op == op) return &f;
  return nullptr;
}

std::string functor_call(std::string_view op_name, int arity, bool param) {
  std::string args = "IN0";
  for (int i = 1; i < arity; ++i) args += ", IN" + std::to_string(i);
  if (param) args += ", param";
  return "ef_op_" + std::string(op_name) + "()(" + args + ")";
}

std::string convert_call(DType output, std::string_view op) {
  return "ef_convert<" + std::string(device_type(output, op)) + ">(IN0)";
}

namespace {

std::string map_source(std::string_view call, std::span<const std::string_view> inputs,
                       std::string_view output) {
  std::string src =
      "#include \"functors.cuh\"\nEF_KERNEL void ef_kernel(" + std::string(output) + "* __restrict__ out";
  for (size_t i = 0; i < inputs.size(); ++i)
    src += ", const " + std::string(inputs[i]) + "* __restrict__ in" + std::to_string(i);
  src += ", long long n, int rank, EfDims sizes, EfDims so";
  for (size_t i = 0; i < inputs.size(); ++i) src += ", EfDims s" + std::to_string(i);
  src +=
      ", double param) {\n"
      "  const long long step = ef_block_count() * ef_block_size();\n"
      "  for (long long i = ef_block_index() * ef_block_size() + ef_thread_in_block(); i < n; i += step)\n"
      "    out[ef_offset(i, rank, sizes, so)] = " +
      with_inputs(std::string(call), static_cast<int>(inputs.size())) + ";\n}\n";
  return src;
}

}  // namespace

std::string cast_call(DType target, DType output, std::string_view op) {
  if (!is_small_integer(target)) return convert_call(output, op);
  return "ef_convert<" + std::string(device_type(output, op)) + ">(ef_convert<" +
         std::string(storage_type(target)) + ">(IN0))";
}

std::string_view storage_type(DType t) {
  switch (t) {
    case DType::Float16:
      return "ef_float16";
    case DType::BFloat16:
      return "ef_bfloat16";
    case DType::Int8:
      return "signed char";
    case DType::UInt8:
      return "unsigned char";
    case DType::Int16:
      return "short";
    case DType::UInt16:
      return "unsigned short";
    case DType::UInt32:
      return "unsigned";
    default:
      return device_type(t, "cast");
  }
}

std::string convert_source(DType from, DType to) {
  const std::string_view in = storage_type(from), out = storage_type(to);
  return map_source("ef_convert<" + std::string(out) + ">(IN0)", std::span<const std::string_view>(&in, 1),
                    out);
}

std::string elementwise_source(std::string_view call, std::span<const DType> inputs, DType output,
                               std::string_view op) {
  std::vector<std::string_view> types;
  for (DType t : inputs) types.push_back(device_type(t, op));
  return map_source(call, types, device_type(output, op));
}

std::string copy_source(size_t element_size) {
  std::string_view word = element_size == 1   ? "unsigned char"
                          : element_size == 2 ? "unsigned short"
                          : element_size == 4 ? "unsigned"
                                              : "unsigned long long";
  return map_source("IN0", std::span<const std::string_view>(&word, 1), word);
}

std::string fill_source(DType dtype, std::string_view op) {
  const std::string t(device_type(dtype, op));
  return "#include \"functors.cuh\"\nEF_KERNEL void ef_kernel(" + t + "* __restrict__ out, long long n, " +
         t +
         " value) {\n"
         "  const long long step = ef_block_count() * ef_block_size();\n"
         "  for (long long i = ef_block_index() * ef_block_size() + ef_thread_in_block(); i < n; i += step)\n"
         "    out[i] = value;\n}\n";
}

std::string reduce_source(std::string_view reducer, DType dtype, std::string_view op) {
  const std::string t(device_type(dtype, op));
  const std::string r = "ef_reduce_" + std::string(reducer) + "()";
  // Block b reduces part (b % chunks) of output (b / chunks): the elements k with
  // k / block_size % chunks == part, written to out[b]. With chunks == 1 each block
  // reduces a whole output; with more, a second launch reduces the parts.
  return "#include \"functors.cuh\"\n"
         "EF_KERNEL void ef_kernel(" +
         t + "* __restrict__ out, const " + t + "* __restrict__ in, " + t +
         " identity, long long outputs, long long count, int out_rank, EfDims out_sizes, EfDims out_strides, "
         "int red_rank, EfDims red_sizes, EfDims red_strides, long long chunks) {\n"
         "  EF_SHARED " +
         t + " partial[" + std::to_string(kReduceBlock) +
         "];\n"
         "  const int t = ef_thread_in_block();\n"
         "  for (long long b = ef_block_index(); b < outputs * chunks; b += ef_block_count()) {\n"
         "    const long long o = b / chunks, part = b % chunks;\n"
         "    const long long base = ef_offset(o, out_rank, out_sizes, out_strides);\n"
         "    " +
         t +
         " acc = identity;\n"
         "    for (long long k = part * ef_block_size() + t; k < count; k += chunks * ef_block_size())\n"
         "      acc = " +
         r +
         "(acc, in[base + ef_offset(k, red_rank, red_sizes, red_strides)]);\n"
         "    partial[t] = acc;\n"
         "    ef_sync_block();\n"
         "    for (int half = ef_block_size() / 2; half > 0; half /= 2) {\n"
         "      if (t < half) partial[t] = " +
         r +
         "(partial[t], partial[t + half]);\n"
         "      ef_sync_block();\n"
         "    }\n"
         "    if (t == 0) out[b] = partial[0];\n"
         "    ef_sync_block();\n"
         "  }\n}\n";
}

std::vector<std::pair<std::string, std::string>> all_kernel_sources() {
  std::vector<std::pair<std::string, std::string>> out;
  const DType types[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool};
  for (const ElementwiseFunctor& f : kFunctors)
    for (DType t : types) {
      if (!(f.dtypes & bit(t))) continue;
      std::vector<DType> ins(static_cast<size_t>(f.arity), t);
      if (f.op == "select") ins[0] = DType::Bool;
      out.emplace_back(std::string(f.op) + "_" + std::string(ef::name(t)),
                       elementwise_source(functor_call(f.op, f.arity, f.param_attr >= 0), ins,
                                          f.bool_output ? DType::Bool : t, f.op));
    }
  for (DType from : types)
    for (DType to : types)
      out.emplace_back(
          "cast_" + std::string(ef::name(from)) + "_" + std::string(ef::name(to)),
          elementwise_source(convert_call(to, "cast"), std::span<const DType>(&from, 1), to, "cast"));
  for (DType storage : kAllDTypes) {
    if (!is_storage_only(storage)) continue;
    const std::string n(ef::name(storage));
    out.emplace_back("widen_" + n, convert_source(storage, compute_dtype(storage)));
    out.emplace_back("narrow_" + n, convert_source(compute_dtype(storage), storage));
  }
  for (DType t : types) {
    out.emplace_back("fill_" + std::string(ef::name(t)), fill_source(t, "fill"));
    for (std::string_view r : kReducers) {
      const bool logical = r == "any" || r == "all";
      if (logical != (t == DType::Bool)) continue;
      out.emplace_back("reduce_" + std::string(r) + "_" + std::string(ef::name(t)),
                       reduce_source(r, t, "reduce"));
    }
  }
  for (size_t size : {1, 2, 4, 8}) out.emplace_back("copy_" + std::to_string(size), copy_source(size));
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    const std::string n(ef::name(t));
    out.emplace_back("argmax_" + n, arg_reduce_source(t, DType::Int64, true, "argmax"));
    out.emplace_back("argmin_" + n, arg_reduce_source(t, DType::Int32, false, "argmin"));
    out.emplace_back("cumsum_" + n, scan_source(t, "sum", false, false, "cumsum"));
    out.emplace_back("cumprod_" + n, scan_source(t, "prod", true, true, "cumprod"));
  }
  for (size_t size : {1, 2, 4, 8})
    out.emplace_back("gather_rows_" + std::to_string(size), gather_rows_source(size));
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64})
    for (bool descending : {false, true})
      out.emplace_back("sort_" + std::string(ef::name(t)) + (descending ? "_desc" : "_asc"),
                       sort_rank_source(t, descending, true, true, "sort"));
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool})
    out.emplace_back("scatter_add_" + std::string(ef::name(t)), scatter_add_source(t, "scatter_nd"));
  for (DType t : {DType::Float32, DType::Float64})
    for (int k = 0; k <= static_cast<int>(WindowKernel::MaxPoolGradGrad); ++k)
      out.emplace_back("window" + std::to_string(k) + "_" + std::string(ef::name(t)),
                       window_source(static_cast<WindowKernel>(k), t, "window"));
  return out;
}

}  // namespace ef::cuda
