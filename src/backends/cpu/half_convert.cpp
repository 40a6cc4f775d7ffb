#include "backends/cpu/half_convert.h"

#include "backends/cpu/elementwise.h"
#include "backends/cpu/strided_loop.h"
#include "eagerflow/core/threading.h"

namespace ef::cpu {
namespace {

// Conversions are memory-bound: about a nanosecond per element.
constexpr double kConvertElementNs = 1.0;

// Converts `in` (any strides) into the contiguous `out`, with Bulk for contiguous runs
// and Scalar for strided ones.
template <class In, class Out, class Bulk, class Scalar>
void convert(const Tensor& in, Tensor& out, Bulk bulk, Scalar scalar) {
  const In* src = typed_data<In>(in);  // offsets count elements, and In is as wide as the dtype
  Out* dst = typed_output<Out>(out);
  if (in.impl()->is_contiguous()) {
    parallel_for(out.num_elements(), kConvertElementNs,
                 [&](int64_t b, int64_t e) { bulk(src + b, dst + b, static_cast<size_t>(e - b)); });
    return;
  }
  auto layout = make_layout<2>(out.shape(), {in.impl()});
  parallel_rows(layout, kConvertElementNs, [&](int64_t n, const int64_t* off, const int64_t* st) {
    if (st[1] == 1) {
      bulk(src + off[1], dst + off[0], static_cast<size_t>(n));
      return;
    }
    for (int64_t i = 0; i < n; ++i) dst[off[0] + i] = scalar(src[off[1] + i * st[1]]);
  });
}

}  // namespace

Tensor widen_to_float32(const Tensor& half, std::string_view op) {
  Tensor out = detail::empty_tensor(DType::Float32, half.shape(), half.device(), op);
  if (half.dtype() == DType::Float16)
    convert<uint16_t, float>(
        half, out, [](auto... a) { float16_to_float(a...); }, [](uint16_t h) { return float16_to_float(h); });
  else
    convert<uint16_t, float>(
        half, out, [](auto... a) { bfloat16_to_float(a...); },
        [](uint16_t h) { return bfloat16_to_float(h); });
  return out;
}

Tensor narrow_from_float32(const Tensor& wide, DType half, std::string_view op) {
  Tensor out = detail::empty_tensor(half, wide.shape(), wide.device(), op);
  if (half == DType::Float16)
    convert<float, uint16_t>(
        wide, out, [](auto... a) { float_to_float16(a...); }, [](float v) { return float_to_float16(v); });
  else
    convert<float, uint16_t>(
        wide, out, [](auto... a) { float_to_bfloat16(a...); }, [](float v) { return float_to_bfloat16(v); });
  return out;
}

}  // namespace ef::cpu
