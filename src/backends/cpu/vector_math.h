// Note [vector math]: glibc's libmvec has AVX2/SSE versions of expf, logf, tanhf, ...
// but its headers only announce them under -ffast-math, which we cannot use (it breaks
// isnan and IEEE semantics everywhere). Declaring the functions `simd` here lets GCC
// vectorize `#pragma omp simd` loops that call std::exp & co. with those versions
// (accuracy within 4 ulp) while every other function keeps strict semantics.
// Include this before any loop that calls libm functions.
//
// float32 exp and tanh (and sigmoid, through exp) are ours instead: vm::exp and
// vm::tanh in float_math.h, straight-line code that GCC inlines and vectorizes in the
// same loops. Measured on 8-float AVX2 vectors (Zen 3, one thread, L1-resident data):
// tanh 10.0 cycles per vector against libmvec's 17.9 (1.8x), exp 8.5 against 9.2,
// sigmoid 10.4 against 10.4-10.7 (libmvec's expf is already lean; ours gains where the
// surrounding loop lets it cut work, as tanh does). Accuracy, every float32 input
// checked: tanh within 1.91 ulp, exp 1.02 ulp (libmvec: tanhf 1.02, expf 2.55 on a
// sample); tests/cpp/ops/float_math_test.cpp keeps both within 2 ulp. Being inline,
// they also give the same bits in the vector body and the scalar remainder of a loop,
// which libmvec's vector and scalar versions need not. Double precision keeps libmvec.
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
