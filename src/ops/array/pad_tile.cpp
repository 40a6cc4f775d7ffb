// pad (CONSTANT, REFLECT, SYMMETRIC) and tile: copying kernels that build a bigger
// tensor from x.
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"
#include "ops/array/copy.h"
#include "ops/batch_helpers.h"
#include "ops/jvp_helpers.h"
#include "ops/op_helpers.h"

namespace ef {
namespace {

// ---- pad(x, paddings, mode, constant_values) ----
enum PadAttr { kPaddings, kMode, kValue };
enum class PadMode { Constant, Reflect, Symmetric };

PadMode pad_mode(const OpCall& call) {
  const std::string& mode = call.attrs.get<std::string>(kMode);
  if (mode == "CONSTANT" || mode == "constant") return PadMode::Constant;
  if (mode == "REFLECT" || mode == "reflect") return PadMode::Reflect;
  if (mode == "SYMMETRIC" || mode == "symmetric") return PadMode::Symmetric;
  fail(call.op.name, ": argument 'mode' = \"", mode, "\" is not one of \"CONSTANT\", \"REFLECT\", \"SYMMETRIC\"");
}

void infer_pad(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  const Dims& pads = call.attrs.get_ints(kPaddings);
  PadMode mode = pad_mode(call);
  if (static_cast<int>(pads.size()) != 2 * x.rank())
    fail(call.op.name, ": argument 'paddings' has ", pads.size() / 2, " {before, after} pairs but the input of shape ",
         x.shape(), " has rank ", x.rank());
  Shape shape = x.shape();
  for (int i = 0; i < x.rank(); ++i) {
    int64_t before = pads[2 * i], after = pads[2 * i + 1], dim = shape[i];
    if (before < 0 || after < 0)
      fail(call.op.name, ": argument 'paddings' has a negative entry {", before, ", ", after, "} for axis ", i);
    if (dim != kUnknownDim && mode != PadMode::Constant) {
      int64_t limit = mode == PadMode::Reflect ? dim - 1 : dim;
      if (before > limit || after > limit)
        fail(call.op.name, ": paddings {", before, ", ", after, "} on axis ", i, " of size ", dim, " must be at most ",
             limit, " in ", mode == PadMode::Reflect ? "REFLECT" : "SYMMETRIC", " mode (input shape ", x.shape(), ")");
    }
    if (dim != kUnknownDim)
      shape[i] = detail::checked_add(detail::checked_add(dim, before, call.op.name), after, call.op.name);
  }
  validate_shape(shape, call.op.name, "output", size_of(x.dtype()), /*allow_unknown=*/true);
  out.add(x.dtype(), shape);
}

template <class T>
T attr_as(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<T>(*i);
  return static_cast<T>(std::get<double>(v));
}

// For each output position along one axis, the input position it copies (-1: the
// constant). Mirrors at the edges for REFLECT (edge excluded) and SYMMETRIC (included).
std::vector<int64_t> source_positions(int64_t dim, int64_t before, int64_t out_dim, PadMode mode) {
  std::vector<int64_t> src(static_cast<size_t>(out_dim));
  for (int64_t o = 0; o < out_dim; ++o) {
    int64_t i = o - before;
    if (i < 0) {
      if (mode == PadMode::Constant) i = -1;
      else i = mode == PadMode::Reflect ? -i : -i - 1;
    } else if (i >= dim) {
      if (mode == PadMode::Constant) i = -1;
      else i = mode == PadMode::Reflect ? 2 * dim - 2 - i : 2 * dim - 1 - i;
    }
    src[static_cast<size_t>(o)] = i;
  }
  return src;
}

void pad_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Tensor& out = outputs[0];
  const Dims& pads = call.attrs.get_ints(kPaddings);
  PadMode mode = pad_mode(call);
  const int rank = x.rank();
  const int64_t n = out.num_elements();
  if (n == 0) return;
  std::vector<std::vector<int64_t>> src(rank);
  for (int i = 0; i < rank; ++i) src[i] = source_positions(x.shape()[i], pads[2 * i], out.shape()[i], mode);
  const TensorImpl& in = *x.impl();
  // Trailing axes that are not padded and that x holds contiguously are copied as one
  // block per position of the axis before them (the row axis): an image with one
  // channel padded in height and width copies rows of pixels, not single pixels.
  int row_axis = rank - 1;
  int64_t block = 1;
  while (row_axis > 0 && pads[2 * row_axis] == 0 && pads[2 * row_axis + 1] == 0 &&
         (x.shape()[row_axis] == 1 || in.strides[row_axis] == block)) {
    block *= x.shape()[row_axis];
    --row_axis;
  }
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T fill = attr_as<T>(call.attrs[kValue]);
    const T* base = static_cast<const T*>(in.storage->data());
    T* dst = cpu::typed_output<T>(out);
    if (rank == 0) {
      dst[0] = base[in.offset];
      return;
    }
    const int64_t row_size = out.shape()[row_axis], inner = row_size * block;
    // One task per output row: the outer positions are decoded once per row, the inner
    // loop reads through the row axis's position table.
    parallel_for(n / inner, static_cast<double>(inner) * detail::kCopyElementNs + 1, [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        T* o = dst + row * inner;
        int64_t offset = in.offset, rest = row;
        bool constant = false;
        for (int i = row_axis - 1; i >= 0; --i) {
          int64_t pos = rest % out.shape()[i];
          rest /= out.shape()[i];
          int64_t s = src[i][static_cast<size_t>(pos)];
          if (s < 0) constant = true;
          else offset += s * in.strides[i];
        }
        if (constant) {
          std::fill(o, o + inner, fill);
          continue;
        }
        const std::vector<int64_t>& positions = src[row_axis];
        const int64_t stride = in.strides[row_axis];
        if (block == 1) {
          for (int64_t j = 0; j < row_size; ++j) {
            int64_t s = positions[static_cast<size_t>(j)];
            o[j] = s < 0 ? fill : base[offset + s * stride];
          }
          continue;
        }
        for (int64_t j = 0; j < row_size; ++j) {
          int64_t s = positions[static_cast<size_t>(j)];
          if (s < 0)
            std::fill(o + j * block, o + (j + 1) * block, fill);
          else
            std::copy_n(base + offset + s * stride, block, o + j * block);
        }
      }
    });
  });
}

// x's part of a gradient along one axis: elements [begin, begin + size) of `axis`.
Tensor slice_axis(const Tensor& g, int axis, int64_t begin, int64_t size) {
  std::vector<int64_t> begins(g.rank(), 0), sizes(g.rank(), -1);
  begins[axis] = begin;
  sizes[axis] = size;
  return ef::slice(g, begins, sizes);
}

// g padded with zeros on one axis.
Tensor pad_axis(const Tensor& g, int axis, int64_t before, int64_t after) {
  std::vector<std::pair<int64_t, int64_t>> pads(g.rank(), {0, 0});
  pads[axis] = {before, after};
  return ef::pad(g, pads);
}

// Gradient. CONSTANT: the part of the output gradient over x (constant_values is an
// attr, so it gets none). REFLECT / SYMMETRIC: mirror padding acts on each axis
// separately, so its adjoint is applied one axis at a time: the middle part of the
// gradient plus the two padded parts reversed and added onto the elements they copied
// (REFLECT skips the edge element, SYMMETRIC includes it).
std::vector<Tensor> pad_grad(const GradCall& call) {
  const Tensor& x = call.forward.inputs[0];
  const Dims& pads = call.forward.attrs.get_ints(kPaddings);
  PadMode mode = pad_mode(call.forward);
  Tensor g = call.output_grads[0];
  const int rank = x.rank();
  if (mode == PadMode::Constant) {
    std::vector<int64_t> begin(rank), size(rank);
    for (int i = 0; i < rank; ++i) {
      begin[i] = pads[2 * i];
      size[i] = x.shape()[i];
    }
    return {ef::slice(g, begin, size)};
  }
  const int64_t edge = mode == PadMode::Reflect ? 1 : 0;
  for (int i = 0; i < rank; ++i) {
    const int64_t before = pads[2 * i], after = pads[2 * i + 1], dim = x.shape()[i];
    if (before == 0 && after == 0) continue;
    Tensor gx = slice_axis(g, i, before, dim);
    if (before > 0) {
      // Output position before - 1 - j copies input position j + edge.
      Tensor part = ef::reverse(slice_axis(g, i, 0, before), Axes(int64_t{i}));
      gx = ef::add(gx, pad_axis(part, i, edge, dim - edge - before));
    }
    if (after > 0) {
      // Output position before + dim + j copies input position dim - 1 - edge - j.
      Tensor part = ef::reverse(slice_axis(g, i, before + dim, after), Axes(int64_t{i}));
      gx = ef::add(gx, pad_axis(part, i, dim - edge - after, edge));
    }
    g = gx;
  }
  return {g};
}

// CONSTANT mode on a CUDA device: the output filled with the value, then x copied
// into the interior. The mirroring modes are not computed there yet.
void pad_cuda(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Tensor& out = outputs[0];
  if (pad_mode(call) != PadMode::Constant)
    fail<UnimplementedError>(call.op.name, ": mode '", call.attrs.get<std::string>(kMode),
                             "' is not computed on CUDA devices yet (CONSTANT is)");
  cuda::fill(out, call.attrs[kValue]);
  if (x.num_elements() == 0) return;
  const Dims& pads = call.attrs.get_ints(kPaddings);
  int64_t offset = out.impl()->offset;
  for (int i = 0; i < x.rank(); ++i) offset += pads[2 * i] * out.strides()[i];
  Tensor interior = detail::make_view(out, x.shape(), out.strides(), offset);
  detail::copy_elements(*x.impl(), *interior.impl());
}

// The padding value is a constant: the tangent is padded with zeros, in every mode.
std::vector<Tensor> pad_jvp(const JvpCall& call) {
  Attrs attrs = call.forward.attrs;
  attrs.set(kValue, std::visit(
                        [](const auto& v) -> AttrValue {
                          using V = std::decay_t<decltype(v)>;
                          if constexpr (std::is_arithmetic_v<V>)
                            return V{0};
                          else
                            return v;
                        },
                        call.forward.attrs[kValue]));
  return {run_op(call.forward.op, {call.input_tangents[0]}, attrs, CallSite::current())};
}

std::vector<Tensor> batch_pad(const BatchCall& call) {
  Attrs attrs = call.attrs();
  Dims pads = attrs.get_ints(kPaddings);
  pads.insert(0, 0);
  pads.insert(0, 0);
  attrs.set(kPaddings, std::move(pads));
  return detail::run_batched(call, {call.input(0)}, attrs);
}

const OpDef& kPad = define_op({
    .name = "pad",
    .attr_names = {"paddings", "mode", "constant_values"},
    .infer = infer_pad,
    .kernels = {pad_cpu, pad_cuda},
    .gradient = pad_grad,
    .jvp = pad_jvp,
    .batch = batch_pad,
});

// ---- tile(x, multiples) ----
enum TileAttr { kMultiples };

void infer_tile(const OpCall& call, OutputMetas& out) {
  const Tensor& x = call.inputs[0];
  const Dims& m = call.attrs.get_ints(kMultiples);
  if (static_cast<int>(m.size()) != x.rank())
    fail(call.op.name, ": argument 'multiples' has ", m.size(), " entries but the input of shape ", x.shape(),
         " has rank ", x.rank());
  Shape shape = x.shape();
  for (int i = 0; i < x.rank(); ++i) {
    if (m[i] < 0) fail(call.op.name, ": argument 'multiples' has a negative entry ", m[i], " for axis ", i);
    if (shape[i] != kUnknownDim) shape[i] = checked_mul(shape[i], m[i], call.op.name);
  }
  validate_shape(shape, call.op.name, "output", size_of(x.dtype()), /*allow_unknown=*/true);
  out.add(x.dtype(), shape);
}

// Runs on any device: copy_elements copies on the tensors' device.
void tile_kernel(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& x = call.inputs[0];
  Tensor& out = outputs[0];
  if (out.num_elements() == 0) return;
  const Dims& m = call.attrs.get_ints(kMultiples);
  // The output, seen as shape [m0, d0, m1, d1, ...], equals x broadcast over the m
  // axes (stride 0): one strided copy. Rank may reach 16 here, so axes with
  // multiple 1 are left out (they add nothing) and the rest must fit kMaxRank.
  Dims shape, src_strides, dst_strides;
  const Dims out_strides = out.strides();
  for (int i = 0; i < x.rank(); ++i) {
    int64_t d = x.shape()[i];
    if (m[i] != 1) {
      shape.push_back(m[i]);
      src_strides.push_back(0);
      dst_strides.push_back(out_strides[i] * d);
    }
    shape.push_back(d);
    src_strides.push_back(x.strides()[i]);
    dst_strides.push_back(out_strides[i]);
  }
  if (static_cast<int>(shape.size()) <= kMaxRank) {
    Tensor src = detail::make_view(x, Shape(shape), src_strides, x.impl()->offset);
    Tensor dst = detail::make_view(out, Shape(shape), dst_strides, 0);
    detail::copy_elements(*src.impl(), *dst.impl());
    return;
  }
  // Too many repeated axes for one view: tile one axis at a time (each step is a
  // plain strided copy of rank <= kMaxRank).
  Tensor current = x;
  for (int i = 0; i < x.rank(); ++i) {
    if (m[i] == 1) continue;
    Shape next_shape = current.shape();
    next_shape[i] *= m[i];
    Tensor next = detail::empty_tensor(x.dtype(), next_shape, x.device(), call.op.name);
    Dims sh, ss, ds;
    const Dims ns = next.strides();
    for (int j = 0; j < x.rank(); ++j) {
      if (j == i) {
        sh.push_back(m[i]);
        ss.push_back(0);
        ds.push_back(ns[j] * current.shape()[j]);
      }
      sh.push_back(current.shape()[j]);
      ss.push_back(current.strides()[j]);
      ds.push_back(ns[j]);
    }
    Tensor src = detail::make_view(current, Shape(sh), ss, current.impl()->offset);
    Tensor dst = detail::make_view(next, Shape(sh), ds, 0);
    detail::copy_elements(*src.impl(), *dst.impl());
    current = next;
  }
  detail::copy_elements(*current.impl(), *out.impl());
}

// Gradient: the sum of the output gradient over the copies. Axis i of size m * d is
// split into [m, d] and the m axis summed; when that would exceed kMaxRank axes, one
// axis at a time.
std::vector<Tensor> tile_grad(const GradCall& call) {
  const Shape& shape = call.forward.inputs[0].shape();
  const Dims& multiples = call.forward.attrs.get_ints(kMultiples);
  Tensor g = call.output_grads[0];
  const int rank = shape.rank();
  int tiled = 0;
  for (int i = 0; i < rank; ++i) tiled += multiples[i] != 1;
  if (tiled == 0) return {g};
  if (rank + tiled <= kMaxRank) {
    Dims split;
    std::vector<int64_t> summed;
    for (int i = 0; i < rank; ++i) {
      if (multiples[i] != 1) {
        summed.push_back(static_cast<int64_t>(split.size()));
        split.push_back(multiples[i]);
      }
      split.push_back(shape[i]);
    }
    return {ef::reshape(ef::reduce_sum(ef::reshape(g, Shape(split)), Axes(summed)), shape)};
  }
  for (int i = 0; i < rank; ++i) {
    if (multiples[i] == 1) continue;
    int64_t outer = 1, inner = 1;
    for (int j = 0; j < i; ++j) outer *= shape[j];
    for (int j = i + 1; j < rank; ++j) inner *= g.shape()[j];
    Tensor summed = ef::reduce_sum(ef::reshape(g, Shape{outer, multiples[i], shape[i], inner}), Axes(int64_t{1}));
    Dims next = g.shape().dims();
    next[i] = shape[i];
    g = ef::reshape(summed, Shape(next));
  }
  return {g};
}

std::vector<Tensor> batch_tile(const BatchCall& call) {
  Attrs attrs = call.attrs();
  Dims multiples = attrs.get_ints(kMultiples);
  multiples.insert(0, 1);
  attrs.set(kMultiples, std::move(multiples));
  return detail::run_batched(call, {call.input(0)}, attrs);
}

const OpDef& kTile = define_op({
    .name = "tile",
    .attr_names = {"multiples"},
    .infer = infer_tile,
    .kernels = {tile_kernel, tile_kernel},
    .gradient = tile_grad,
    .jvp = detail::jvp_linear<>,
    .batch = batch_tile,
    .traits = {.complex = true},
});

// The number as an attr for `dtype`: int64 for integers and bool (exact), else double.
AttrValue value_attr(const TensorOrScalar& value, DType dtype, std::string_view op) {
  if (value.is_tensor()) {
    if (value.tensor().num_elements() != 1)
      fail(op, ": the fill value must be a number or a one-element tensor, got shape ", value.tensor().shape());
    if (is_floating(dtype)) return value.tensor().item<double>();
    return value.tensor().item<int64_t>();
  }
  Tensor t = scalar_tensor(value, dtype, op);  // rejects numbers the dtype cannot hold
  if (is_floating(dtype)) return t.item<double>();
  return t.item<int64_t>();
}

}  // namespace

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings, const std::string& mode,
           const TensorOrScalar& constant_values, CallSite where) {
  Dims flat;
  for (auto [before, after] : paddings) {
    flat.push_back(before);
    flat.push_back(after);
  }
  AttrValue value;
  try {
    if (!x.defined()) fail("pad: input 0 is an undefined tensor");
    value = value_attr(constant_values, x.dtype(), "pad");
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
  return run_op(kPad, {x}, {flat, mode, value}, where);
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& multiples, CallSite where) {
  return run_op(kTile, {x}, {Dims(multiples.begin(), multiples.end())}, where);
}

namespace detail {
// Shared with one_hot (where.cpp): a fill number as an attr for `dtype`.
AttrValue fill_value_for(const TensorOrScalar& value, DType dtype, std::string_view op) {
  return value_attr(value, dtype, op);
}
}  // namespace detail

}  // namespace ef
