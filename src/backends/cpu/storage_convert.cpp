#include "backends/cpu/storage_convert.h"

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

template <class In, class Out>
void convert_integers(const Tensor& in, Tensor& out) {
  convert<In, Out>(
      in, out,
      [](const In* src, Out* dst, size_t n) {
        for (size_t i = 0; i < n; ++i) dst[i] = static_cast<Out>(src[i]);
      },
      [](In v) { return static_cast<Out>(v); });
}

void widen_half(const Tensor& half, Tensor& out) {
  if (half.dtype() == DType::Float16)
    convert<uint16_t, float>(
        half, out, [](auto... a) { float16_to_float(a...); }, [](uint16_t h) { return float16_to_float(h); });
  else
    convert<uint16_t, float>(
        half, out, [](auto... a) { bfloat16_to_float(a...); },
        [](uint16_t h) { return bfloat16_to_float(h); });
}

void narrow_to_half(const Tensor& wide, Tensor& out) {
  if (out.dtype() == DType::Float16)
    convert<float, uint16_t>(
        wide, out, [](auto... a) { float_to_float16(a...); }, [](float v) { return float_to_float16(v); });
  else
    convert<float, uint16_t>(
        wide, out, [](auto... a) { float_to_bfloat16(a...); }, [](float v) { return float_to_bfloat16(v); });
}

}  // namespace

Tensor storage_converted(const Tensor& src, DType to, std::string_view op) {
  const DType from = src.dtype();
  const DType storage = is_storage_only(from) ? from : to;
  if (compute_dtype(storage) != (storage == from ? to : from))
    fail<InternalError>(op, ": cannot convert ", from, " to ", to, " by widening or narrowing");
  Tensor out = detail::empty_tensor(to, src.shape(), src.device(), op);
  if (is_half(storage)) {
    if (storage == from)
      widen_half(src, out);
    else
      narrow_to_half(src, out);
    return out;
  }
  // Small integers: the compute dtype holds every value exactly, and static_cast to the
  // narrow type keeps the low bits (modular since C++20).
  dispatch_storage_dtype(from, [&](auto from_tag) {
    using In = typename decltype(from_tag)::type;
    dispatch_storage_dtype(to, [&](auto to_tag) {
      using Out = typename decltype(to_tag)::type;
      if constexpr (std::is_integral_v<In> && std::is_integral_v<Out> && !std::is_same_v<In, bool> &&
                    !std::is_same_v<Out, bool>)
        convert_integers<In, Out>(src, out);
      else
        fail<InternalError>(op, ": ", from, " to ", to, " is not an integer widening");
    });
  });
  return out;
}

}  // namespace ef::cpu
