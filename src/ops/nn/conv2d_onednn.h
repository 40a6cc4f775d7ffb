// oneDNN kernels for conv2d and its two gradient ops (float32), used by
// src/ops/nn/conv2d.cpp in place of im2col + GEMM where they measure faster
// (Note [conv2d on oneDNN] in conv2d_onednn.cpp). Each function returns false, having
// written nothing it will not overwrite, when oneDNN cannot take the case (library not
// built in, disabled, unsupported geometry, only a reference implementation); the
// caller then runs its im2col kernel. Internal to src/ops/nn.
#pragma once

#include <cstdint>

#include "ops/nn/window_geometry.h"

namespace ef::detail {

// One convolution as the kernels see it: n images of g.in_h x g.in_w x c (NHWC), an
// HWIO filter of g.k_h x g.k_w x c x o, output n x g.out_h x g.out_w x o.
struct ConvProblem {
  Window2d g;
  int64_t n = 0, c = 0, o = 0;
};

// Whether this build links oneDNN (CMake found libdnnl-dev).
bool onednn_built();

// When the kernels below run. Auto (the default when built): where they measured
// faster (Note [conv2d on oneDNN]). Always (for tests): wherever oneDNN can take the
// case. Off: never. EF_ONEDNN=0 or EF_ONEDNN=always in the environment at start-up
// selects Off or Always. Only the
// kernel choice changes, never an op's meaning. Without oneDNN the mode stays Off.
enum class OnednnMode { Off, Auto, Always };
OnednnMode onednn_mode();
void set_onednn_mode(OnednnMode mode);

// y = conv2d(x, w).
bool onednn_conv2d(const ConvProblem& p, const float* x, const float* w, float* y);
// dx = conv2d_backprop_input(w, dy).
bool onednn_conv2d_backprop_input(const ConvProblem& p, const float* w, const float* dy, float* dx);
// dw = conv2d_backprop_filter(x, dy).
bool onednn_conv2d_backprop_filter(const ConvProblem& p, const float* x, const float* dy, float* dw);

}  // namespace ef::detail
