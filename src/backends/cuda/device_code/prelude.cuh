// The prelude of every generated CUDA kernel (src/backends/cuda/codegen.cpp). It is
// compiled three ways: by NVRTC on a GPU machine at run time; by clang in CUDA mode
// without the toolkit (-nocudainc -nocudalib) as a test on machines without one, which
// catches errors in device code before it meets a GPU; and as host C++ that the
// emulation test runs. Only what differs between them lives under #if: thread indices,
// barriers, atomics and math functions.
#pragma once

#if defined(__CUDACC_RTC__)
// NVRTC: thread indices and the CUDA math functions are built in.
#define EF_DEVICE __device__ __forceinline__
#define EF_KERNEL extern "C" __global__
#define EF_SHARED __shared__
EF_DEVICE long long ef_block_index() { return blockIdx.x; }
EF_DEVICE long long ef_block_count() { return gridDim.x; }
EF_DEVICE int ef_thread_in_block() { return threadIdx.x; }
EF_DEVICE int ef_block_size() { return blockDim.x; }
EF_DEVICE void ef_sync_block() { __syncthreads(); }
EF_DEVICE void ef_atomic_add(float* p, float v) { atomicAdd(p, v); }
EF_DEVICE void ef_atomic_add(double* p, double v) { atomicAdd(p, v); }
EF_DEVICE void ef_atomic_add(int* p, int v) { atomicAdd(p, v); }
EF_DEVICE void ef_atomic_add(long long* p, long long v) {  // two's complement: wraps as the CPU's
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
EF_DEVICE float ef_bits_to_float(unsigned u) { return __uint_as_float(u); }
EF_DEVICE unsigned ef_float_to_bits(float f) { return __float_as_uint(f); }
#elif defined(EF_HOST_EMULATION)
// Host C++, for tests on machines without a GPU (tests/cpp/cuda/cuda_emulation_test.cpp):
// a kernel without block barriers runs as a loop over the grid that the test drives
// through these variables; math functions are the C library's.
#include <math.h>
#define __restrict__ __restrict
#define EF_DEVICE inline
#define EF_KERNEL extern "C"
#define EF_SHARED static
extern "C" {
long long ef_emu_block = 0, ef_emu_blocks = 1;
int ef_emu_thread = 0, ef_emu_threads = 1;
}
EF_DEVICE long long ef_block_index() { return ef_emu_block; }
EF_DEVICE long long ef_block_count() { return ef_emu_blocks; }
EF_DEVICE int ef_thread_in_block() { return ef_emu_thread; }
EF_DEVICE int ef_block_size() { return ef_emu_threads; }
EF_DEVICE void ef_sync_block() { __builtin_trap(); }  // kernels with barriers are not emulated
// One emulated thread runs at a time: a plain add is atomic (integers wrap as on GPUs).
EF_DEVICE void ef_atomic_add(float* p, float v) { *p += v; }
EF_DEVICE void ef_atomic_add(double* p, double v) { *p += v; }
EF_DEVICE void ef_atomic_add(int* p, int v) {
  *p = static_cast<int>(static_cast<unsigned>(*p) + static_cast<unsigned>(v));
}
EF_DEVICE void ef_atomic_add(long long* p, long long v) {
  *p = static_cast<long long>(static_cast<unsigned long long>(*p) + static_cast<unsigned long long>(v));
}
EF_DEVICE float ef_bits_to_float(unsigned u) { return __builtin_bit_cast(float, u); }
EF_DEVICE unsigned ef_float_to_bits(float f) { return __builtin_bit_cast(unsigned, f); }
#else
// clang without the toolkit: CUDA's keywords as attributes, indices from PTX special
// registers, math functions declared as libdevice's (NVRTC links libdevice on a GPU).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define EF_DEVICE __device__ inline __attribute__((always_inline))
#define EF_KERNEL extern "C" __global__
#define EF_SHARED __shared__
EF_DEVICE long long ef_block_index() { return __nvvm_read_ptx_sreg_ctaid_x(); }
EF_DEVICE long long ef_block_count() { return __nvvm_read_ptx_sreg_nctaid_x(); }
EF_DEVICE int ef_thread_in_block() { return __nvvm_read_ptx_sreg_tid_x(); }
EF_DEVICE int ef_block_size() { return __nvvm_read_ptx_sreg_ntid_x(); }
EF_DEVICE void ef_sync_block() { __syncthreads(); }
EF_DEVICE void ef_atomic_add(float* p, float v) { __nvvm_atom_add_gen_f(p, v); }
EF_DEVICE void ef_atomic_add(double* p, double v) { __nvvm_atom_add_gen_d(p, v); }
EF_DEVICE void ef_atomic_add(int* p, int v) { __nvvm_atom_add_gen_i(p, v); }
EF_DEVICE void ef_atomic_add(long long* p, long long v) { __nvvm_atom_add_gen_ll(p, v); }
EF_DEVICE float ef_bits_to_float(unsigned u) { return __builtin_bit_cast(float, u); }
EF_DEVICE unsigned ef_float_to_bits(float f) { return __builtin_bit_cast(unsigned, f); }
#define EF_MATH(name, f32, f64)                                \
  extern "C" __device__ float __nv_##f32(float);               \
  extern "C" __device__ double __nv_##f64(double);             \
  EF_DEVICE float ef_##name(float x) { return __nv_##f32(x); } \
  EF_DEVICE double ef_##name(double x) { return __nv_##f64(x); }
#define EF_MATH2(name, f32, f64)                                           \
  extern "C" __device__ float __nv_##f32(float, float);                    \
  extern "C" __device__ double __nv_##f64(double, double);                 \
  EF_DEVICE float ef_##name(float x, float y) { return __nv_##f32(x, y); } \
  EF_DEVICE double ef_##name(double x, double y) { return __nv_##f64(x, y); }
#endif

#ifndef EF_MATH  // NVRTC and host emulation: the math functions by their C names
#define EF_MATH(name, f32, f64)                         \
  EF_DEVICE float ef_##name(float x) { return f32(x); } \
  EF_DEVICE double ef_##name(double x) { return f64(x); }
#define EF_MATH2(name, f32, f64)                                    \
  EF_DEVICE float ef_##name(float x, float y) { return f32(x, y); } \
  EF_DEVICE double ef_##name(double x, double y) { return f64(x, y); }
#endif

EF_MATH(exp, expf, exp)
EF_MATH(expm1, expm1f, expm1)
EF_MATH(log, logf, log)
EF_MATH(log1p, log1pf, log1p)
EF_MATH(sqrt, sqrtf, sqrt)
EF_MATH(sin, sinf, sin)
EF_MATH(cos, cosf, cos)
EF_MATH(tan, tanf, tan)
EF_MATH(asin, asinf, asin)
EF_MATH(acos, acosf, acos)
EF_MATH(atan, atanf, atan)
EF_MATH(sinh, sinhf, sinh)
EF_MATH(cosh, coshf, cosh)
EF_MATH(tanh, tanhf, tanh)
EF_MATH(erf, erff, erf)
EF_MATH(floor, floorf, floor)
EF_MATH(ceil, ceilf, ceil)
EF_MATH(rint, rintf, rint)  // half to even, as the CPU's nearbyint
EF_MATH(fabs, fabsf, fabs)
EF_MATH2(pow, powf, pow)
EF_MATH2(fmod, fmodf, fmod)

// Type traits of the dtypes kernels take (no standard library in device code here).
template <class T>
struct ef_is_integer {
  static constexpr bool value = false;
};
template <>
struct ef_is_integer<int> {
  static constexpr bool value = true;
};
template <>
struct ef_is_integer<long long> {
  static constexpr bool value = true;
};
template <class T>
struct ef_unsigned {
  using type = T;
};
template <>
struct ef_unsigned<int> {
  using type = unsigned;
};
template <>
struct ef_unsigned<long long> {
  using type = unsigned long long;
};
// The small integer dtypes, which only the dispatcher's widening and narrowing and
// cast's saturation see (Note [small integer dtypes]): their range.
template <class T>
struct ef_small_integer {
  static constexpr bool value = false;
};
#define EF_SMALL_INTEGER(T, LO, HI)      \
  template <>                            \
  struct ef_small_integer<T> {           \
    static constexpr bool value = true;  \
    static constexpr T lo = LO, hi = HI; \
  };
EF_SMALL_INTEGER(signed char, -128, 127)
EF_SMALL_INTEGER(unsigned char, 0, 255)
EF_SMALL_INTEGER(short, -32768, 32767)
EF_SMALL_INTEGER(unsigned short, 0, 65535)
EF_SMALL_INTEGER(unsigned, 0, 4294967295u)
#undef EF_SMALL_INTEGER

// NaN test that stays quiet for integer types (always false there).
template <class T>
EF_DEVICE bool ef_isnan(T v) {
  return v != v;
}

// Sizes and strides (in elements) of up to 8 dimensions, passed to kernels by value.
struct EfDims {
  long long v[8];
};

// The element offset of linear index `i` of a row-major iteration over `sizes`, in
// an operand with `strides`.
EF_DEVICE long long ef_offset(long long i, int rank, const EfDims& sizes, const EfDims& strides) {
  if (rank == 1) return i * strides.v[0];  // contiguous operands merge to one dimension: no division
  long long offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const long long k = i % sizes.v[d];
    i /= sizes.v[d];
    offset += k * strides.v[d];
  }
  return offset;
}

template <class T>
EF_DEVICE T ef_min(T a, T b) {
  return a < b ? a : b;
}

// ---- sliding windows (conv2d and the pools, NHWC) ----
// The geometry of src/ops/nn/window_geometry.h's Window2d plus the tensor sizes:
// n images, c input channels, o output channels.
struct EfWindow {
  long long in_h, in_w, k_h, k_w, stride_h, stride_w, dilation_h, dilation_w;
  long long pad_top, pad_left, out_h, out_w, n, c, o;
};

// The input rows [begin, end) of an undilated window starting at `start` (clipped as
// the CPU's clipped_span: start + k is never formed when k may be huge).
struct EfSpan {
  long long begin, end;
};
EF_DEVICE EfSpan ef_window_span(long long start, long long k, long long in) {
  const long long end = start >= 0 && k >= in - start ? in : ef_min(start + k, in);
  return {start > 0 ? start : 0, end};
}

// The first window (of size k, step stride) that holds position pos >= 0.
EF_DEVICE long long ef_first_window(long long pos, long long k, long long stride) {
  const long long lo = pos - k + 1;
  return lo <= 0 ? 0 : (lo + stride - 1) / stride;
}

// The flat index into x of the maximum of channel c over window (oh, ow) of image n:
// the first maximum wins ties; a NaN wins over numbers and then stays (the CPU's rule).
template <class T>
EF_DEVICE long long ef_window_max(const T* x, const EfWindow& g, long long n, long long oh, long long ow,
                                  long long c) {
  const EfSpan rows = ef_window_span(oh * g.stride_h - g.pad_top, g.k_h, g.in_h);
  const EfSpan cols = ef_window_span(ow * g.stride_w - g.pad_left, g.k_w, g.in_w);
  long long best_at = -1;
  T best = T(0);
  for (long long ih = rows.begin; ih < rows.end; ++ih)
    for (long long iw = cols.begin; iw < cols.end; ++iw) {
      const long long at = ((n * g.in_h + ih) * g.in_w + iw) * g.c + c;
      const T v = x[at];
      if (best_at < 0 || v > best || (ef_isnan(v) && !ef_isnan(best))) {
        best = v;
        best_at = at;
      }
    }
  return best_at;
}
