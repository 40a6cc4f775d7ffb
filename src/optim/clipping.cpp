#include "eagerflow/optim/clipping.h"

#include <optional>

#include "eagerflow/eagerflow.h"

namespace ef {
namespace {

void check_clip_norm(double clip_norm, const char* op) {
  if (!(clip_norm >= 0)) fail(op, ": clip_norm must be >= 0, got ", clip_norm);
}

// The float dtype that holds both a and b (float16 and bfloat16 together: float32).
DType wider_float(DType a, DType b) {
  if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
  if (a == b) return a;
  return DType::Float32;
}

}  // namespace

Tensor clip_by_norm(const Tensor& t, double clip_norm, CallSite where) {
  try {
    check_clip_norm(clip_norm, "clip_by_norm");
    if (!is_floating(t.dtype())) fail("clip_by_norm: expected a float tensor, got dtype ", t.dtype());
    Tensor norm = sqrt(reduce_sum(square(t)));
    return t * clip_norm / maximum(norm, clip_norm);
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::pair<std::vector<Tensor>, Tensor> clip_by_global_norm(const std::vector<Tensor>& tensors, double clip_norm,
                                                           CallSite where) {
  try {
    check_clip_norm(clip_norm, "clip_by_global_norm");
    Tensor sum_of_squares;
    std::optional<DType> norm_dtype;
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!tensors[i].defined()) continue;
      const DType dtype = tensors[i].dtype();
      if (!is_floating(dtype))
        fail("clip_by_global_norm: tensor ", i, " has dtype ", dtype, "; expected float tensors");
      norm_dtype = norm_dtype ? wider_float(*norm_dtype, dtype) : dtype;
      Tensor s = cast(reduce_sum(square(tensors[i])), DType::Float64);
      sum_of_squares = sum_of_squares.defined() ? sum_of_squares + s : s;
    }
    if (!sum_of_squares.defined()) return {tensors, constant(0.f)};
    // The scale comes from the float64 norm; only the returned norm is rounded.
    Tensor global_norm = sqrt(sum_of_squares);
    Tensor scale = clip_norm / maximum(global_norm, clip_norm);
    std::vector<Tensor> clipped;
    for (const Tensor& t : tensors) clipped.push_back(t.defined() ? t * cast(scale, t.dtype()) : Tensor());
    return {clipped, cast(global_norm, *norm_dtype)};
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
