// Note [vector math]: glibc's libmvec has AVX2/SSE versions of expf, logf, tanhf, ...
// but its headers only announce them under -ffast-math, which we cannot use (it breaks
// isnan and IEEE semantics everywhere). Declaring the functions `simd` here lets GCC
// vectorize `#pragma omp simd` loops that call std::exp & co. with those versions
// (accuracy within 4 ulp) while every other function keeps strict semantics.
// Include this before any loop that calls libm functions.
#pragma once

#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__FAST_MATH__) && \
    !defined(__SANITIZE_ADDRESS__)
#define EF_SIMD_DECL(name)                                                   \
  extern "C" __attribute__((simd("notinbranch"))) double name(double) noexcept; \
  extern "C" __attribute__((simd("notinbranch"))) float name##f(float) noexcept;
EF_SIMD_DECL(exp)
EF_SIMD_DECL(expm1)
EF_SIMD_DECL(log)
EF_SIMD_DECL(log1p)
EF_SIMD_DECL(sin)
EF_SIMD_DECL(cos)
EF_SIMD_DECL(tan)
EF_SIMD_DECL(asin)
EF_SIMD_DECL(acos)
EF_SIMD_DECL(atan)
EF_SIMD_DECL(sinh)
EF_SIMD_DECL(cosh)
EF_SIMD_DECL(tanh)
EF_SIMD_DECL(erf)
#undef EF_SIMD_DECL
#endif
