// Each exportable op as ONNX nodes (Note [ONNX export] in eagerflow/onnx/onnx_export.h).
// A translation computes exactly what the op computes, for every input the op accepts;
// where ONNX's operator differs (negative one_hot indices, float floormod, NHWC images)
// it is wrapped so that the result is the op's, and where no exact form exists the op
// is left out (the exporter then refuses it by name) rather than approximated. The NHWC
// image ops are in image_translations.cpp.
#include <cmath>
#include <limits>
#include <unordered_map>

#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "onnx/emitter.h"

namespace ef::onnx::detail {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

void same(const OpNode& n, Emitter& e, std::string_view op_type) { e.add(op_type, n.inputs, n.outputs); }

// Ops that are one ONNX operator with the same inputs and no attributes.
const std::unordered_map<std::string_view, std::string_view>& one_to_one() {
  static const std::unordered_map<std::string_view, std::string_view> table{
      {"abs", "Abs"},
      {"acos", "Acos"},
      {"acosh", "Acosh"},
      {"asin", "Asin"},
      {"asinh", "Asinh"},
      {"atan", "Atan"},
      {"atanh", "Atanh"},
      {"ceil", "Ceil"},
      {"cos", "Cos"},
      {"cosh", "Cosh"},
      {"erf", "Erf"},
      {"exp", "Exp"},
      {"floor", "Floor"},
      {"log", "Log"},
      {"negative", "Neg"},
      {"reciprocal", "Reciprocal"},
      {"relu", "Relu"},
      {"sigmoid", "Sigmoid"},
      {"sign", "Sign"},
      {"sin", "Sin"},
      {"sinh", "Sinh"},
      {"sqrt", "Sqrt"},
      {"tan", "Tan"},
      {"tanh", "Tanh"},
      {"softsign", "Softsign"},
      {"softplus", "Softplus"},
      {"isnan", "IsNaN"},
      {"isinf", "IsInf"},
      {"round", "Round"},  // both round half to even
      {"logical_not", "Not"},
      {"logical_and", "And"},
      {"logical_or", "Or"},
      {"logical_xor", "Xor"},
      {"add", "Add"},
      {"subtract", "Sub"},
      {"multiply", "Mul"},
      {"divide", "Div"},  // integer division truncates in both
      {"pow", "Pow"},
      {"maximum", "Max"},
      {"minimum", "Min"},
      {"equal", "Equal"},
      {"greater", "Greater"},
      {"greater_equal", "GreaterOrEqual"},
      {"less", "Less"},
      {"less_equal", "LessOrEqual"},
      {"select", "Where"},
      {"identity", "Identity"},
      {"stop_gradient", "Identity"},
      {"contiguous", "Identity"},
      {"custom_gradient_in_graph", "Identity"},
  };
  return table;
}

// ---- elementwise compositions ----

void not_equal(const OpNode& n, Emitter& e) { e.add("Not", {e.op("Equal", n.inputs)}, n.outputs); }
void isfinite(const OpNode& n, Emitter& e) {
  e.add("Not", {e.op("Or", {e.op("IsNaN", n.inputs), e.op("IsInf", n.inputs)})}, n.outputs);
}
void square(const OpNode& n, Emitter& e) { e.add("Mul", {n.inputs[0], n.inputs[0]}, n.outputs); }
void rsqrt(const OpNode& n, Emitter& e) { e.add("Reciprocal", {e.op("Sqrt", n.inputs)}, n.outputs); }
void squared_difference(const OpNode& n, Emitter& e) {
  const std::string d = e.op("Sub", n.inputs);
  e.add("Mul", {d, d}, n.outputs);
}
void relu6(const OpNode& n, Emitter& e) {
  const DType t = n.input_metas[0].dtype;
  e.add("Clip", {n.inputs[0], e.scalar(0, t), e.scalar(6, t)}, n.outputs);
}
void leaky_relu(const OpNode& n, Emitter& e) {
  set_attr(e.add("LeakyRelu", n.inputs, n.outputs), "alpha", n.attr_float("alpha"));
}
void elu(const OpNode& n, Emitter& e) { set_attr(e.add("Elu", n.inputs, n.outputs), "alpha", 1.0); }
void selu(const OpNode& n, Emitter& e) {
  pb::NodeProto& node = e.add("Selu", n.inputs, n.outputs);
  set_attr(node, "alpha", 1.6732632423543772);
  set_attr(node, "gamma", 1.0507009873554805);
}
// gelu: x/2 (1 + erf(x/√2)), or the tanh form x/2 (1 + tanh(√(2/π) (x + 0.044715 x³))).
void gelu(const OpNode& n, Emitter& e) {
  const DType t = n.input_metas[0].dtype;
  const std::string& x = n.inputs[0];
  std::string inner;
  if (n.attr_bool("approximate")) {
    const std::string cube = e.op("Mul", {x, e.op("Mul", {x, x})});
    const std::string poly = e.op("Add", {x, e.op("Mul", {cube, e.scalar(0.044715, t)})});
    inner = e.op("Tanh", {e.op("Mul", {poly, e.scalar(std::sqrt(2.0 / M_PI), t)})});
  } else {
    inner = e.op("Erf", {e.op("Mul", {x, e.scalar(M_SQRT1_2, t)})});
  }
  const std::string half_x = e.op("Mul", {x, e.scalar(0.5, t)});
  e.add("Mul", {half_x, e.op("Add", {inner, e.scalar(1, t)})}, n.outputs);
}

// floormod: the remainder with the divisor's sign. ONNX's Mod with fmod=0 is that for
// integers; for floats its fmod=1 (C's fmod) is corrected as TensorFlow does:
// r = fmod(x, y); r + y where r != 0 and its sign differs from y's.
std::string floormod_of(const OpNode& n, Emitter& e) {
  const std::string &x = n.inputs[0], &y = n.inputs[1];
  const DType t = n.input_metas[0].dtype;
  if (is_integer(t)) return e.op("Mod", {x, y}, [](pb::NodeProto& m) { set_attr(m, "fmod", int64_t{0}); });
  const std::string r = e.op("Mod", {x, y}, [](pb::NodeProto& m) { set_attr(m, "fmod", int64_t{1}); });
  const std::string zero = e.scalar(0, t);
  const std::string differs = e.op("And", {e.op("Not", {e.op("Equal", {r, zero})}),
                                           e.op("Xor", {e.op("Less", {r, zero}), e.op("Less", {y, zero})})});
  return e.op("Where", {differs, e.op("Add", {r, y}), r});
}
void floormod(const OpNode& n, Emitter& e) { e.add("Identity", {floormod_of(n, e)}, n.outputs); }
// floordiv: floor(x / y) for floats; for integers (x - floormod(x, y)) / y, exact.
void floordiv(const OpNode& n, Emitter& e) {
  if (!is_integer(n.input_metas[0].dtype)) {
    e.add("Floor", {e.op("Div", n.inputs)}, n.outputs);
    return;
  }
  e.add("Div", {e.op("Sub", {n.inputs[0], floormod_of(n, e)}), n.inputs[1]}, n.outputs);
}
void truncatediv(const OpNode& n, Emitter& e) {
  if (!is_integer(n.input_metas[0].dtype)) n.unsupported("is exported for integers only");
  e.add("Div", n.inputs, n.outputs);
}
void truncatemod(const OpNode& n, Emitter& e) {
  set_attr(e.add("Mod", n.inputs, n.outputs), "fmod", int64_t{1});
}

void cast(const OpNode& n, Emitter& e) {
  set_attr(e.add("Cast", n.inputs, n.outputs), "to", static_cast<int64_t>(onnx_type(n.attr_dtype("dtype"))));
}
// An integer output ONNX computes as int64, cast to the op's dtype where that differs.
void as_dtype(const OpNode& n, Emitter& e, const std::string& int64_value, size_t output = 0) {
  const DType want = n.output_meta(output).dtype;
  if (want == DType::Int64)
    e.add("Identity", {int64_value}, {n.outputs[output]});
  else
    set_attr(e.add("Cast", {int64_value}, {n.outputs[output]}), "to", static_cast<int64_t>(onnx_type(want)));
}

// ---- softmax, matmul, reductions ----

void softmax(const OpNode& n, Emitter& e) {
  set_attr(e.add(n.op() == "softmax" ? "Softmax" : "LogSoftmax", n.inputs, n.outputs), "axis",
           n.attr_int("axis"));
}

void matmul(const OpNode& n, Emitter& e) {
  std::vector<std::string> in = n.inputs;
  const char* flags[] = {"transpose_a", "transpose_b"};
  for (size_t i = 0; i < 2; ++i) {
    if (!n.attr_bool(flags[i])) continue;
    const int r = n.rank(i);
    if (r < 2) n.unsupported("transposes an input of rank ", r);
    Dims perm;
    for (int d = 0; d < r; ++d) perm.push_back(d);
    std::swap(perm[static_cast<size_t>(r - 2)], perm[static_cast<size_t>(r - 1)]);
    in[i] = e.op("Transpose", {in[i]},
                 [&](pb::NodeProto& t) { set_attr(t, "perm", std::span<const int64_t>(perm)); });
  }
  e.add("MatMul", in, n.outputs);
}

Dims reduction_axes(const OpNode& n) {
  Dims axes = n.attr_ints("axis");
  for (int64_t& a : axes)
    if (a < 0) a += n.rank();
  return axes;
}

// reduce_*: an empty axis list reduces nothing (the public functions pass every axis
// for "all"), while ONNX reads an empty list as "all": that case is an Identity.
void reduce(const OpNode& n, Emitter& e) {
  const Dims axes = reduction_axes(n);
  if (axes.empty()) {
    e.add("Identity", n.inputs, n.outputs);
    return;
  }
  const int64_t keepdims = n.attr_bool("keepdims") ? 1 : 0;
  static const std::unordered_map<std::string_view, std::string_view> ops{
      {"reduce_sum", "ReduceSum"}, {"reduce_prod", "ReduceProd"}, {"reduce_max", "ReduceMax"},
      {"reduce_min", "ReduceMin"}, {"reduce_any", "ReduceMax"},   {"reduce_all", "ReduceMin"}};
  const std::string_view op_type = ops.at(n.op());
  const bool logical = n.op() == "reduce_any" || n.op() == "reduce_all";
  std::string x = n.inputs[0];
  // ONNX reduces no bool tensors: any/all are max/min of 0/1.
  if (logical)
    x = e.op("Cast", {x}, [](pb::NodeProto& c) { set_attr(c, "to", int64_t{pb::TensorProto::INT32}); });
  std::vector<std::string> outputs = logical ? std::vector<std::string>{e.fresh(op_type)} : n.outputs;
  pb::NodeProto* node = nullptr;
  if (op_type == "ReduceSum") {  // axes is an input from opset 13, an attribute for the others until 18
    node = &e.add(op_type, {x, e.ints(axes)}, outputs);
  } else {
    node = &e.add(op_type, {x}, outputs);
    set_attr(*node, "axes", std::span<const int64_t>(axes));
  }
  set_attr(*node, "keepdims", keepdims);
  if (logical) set_attr(e.add("Cast", outputs, n.outputs), "to", int64_t{pb::TensorProto::BOOL});
}

void arg_reduce(const OpNode& n, Emitter& e) {
  const std::string index = e.op(n.op() == "argmax" ? "ArgMax" : "ArgMin", n.inputs, [&](pb::NodeProto& a) {
    set_attr(a, "axis", n.attr_int("axis"));
    set_attr(a, "keepdims", int64_t{0});
  });
  as_dtype(n, e, index);
}

void cumsum(const OpNode& n, Emitter& e) {
  const int64_t axis = n.attr_int("axis");
  const std::string axis_value = e.model.add_initializer(
      ef::detail::tensor_from_host(DType::Int64, Shape{}, &axis, "onnx export"), "cumsum_axis");
  pb::NodeProto& node = e.add("CumSum", {n.inputs[0], axis_value}, n.outputs);
  set_attr(node, "exclusive", int64_t{n.attr_bool("exclusive")});
  set_attr(node, "reverse", int64_t{n.attr_bool("reverse")});
}

// ---- shapes and indexing ----

void reshape(const OpNode& n, Emitter& e) {
  const Dims& shape = n.attr_ints("shape");
  pb::NodeProto& node = e.add("Reshape", {n.inputs[0], e.ints(shape)}, n.outputs);
  // ONNX reads a 0 as "copy this input dimension" unless allowzero is set.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) set_attr(node, "allowzero", int64_t{1});
}
void expand_dims(const OpNode& n, Emitter& e) {
  const int64_t axis = n.attr_int("axis");
  e.add("Unsqueeze", {n.inputs[0], e.ints(std::span<const int64_t>(&axis, 1))}, n.outputs);
}
void squeeze(const OpNode& n, Emitter& e) {
  std::vector<std::string> in{n.inputs[0]};
  Dims axes;
  if (n.attr_bool("all")) {
    // The axes this call removes: those of size 1, which tracing knew.
    const Shape& s = n.input_metas[0].shape;
    for (int i = 0; i < s.rank(); ++i) {
      if (s[i] == kUnknownDim)
        n.unsupported("squeezes every size-1 axis of a tensor of partly unknown shape ", s);
      if (s[i] == 1) axes.push_back(i);
    }
  } else {
    axes = n.attr_ints("axis");
  }
  if (axes.empty()) {
    e.add("Identity", in, n.outputs);
    return;
  }
  in.push_back(e.ints(axes));
  e.add("Squeeze", in, n.outputs);
}
void transpose(const OpNode& n, Emitter& e) {
  set_attr(e.add("Transpose", n.inputs, n.outputs), "perm", std::span<const int64_t>(n.attr_ints("perm")));
}
void concat(const OpNode& n, Emitter& e) {
  set_attr(e.add("Concat", n.inputs, n.outputs), "axis", n.attr_int("axis"));
}

int64_t axis_of(const OpNode& n, int64_t axis, size_t input = 0) {
  return axis < 0 ? axis + n.rank(input) : axis;
}

void split(const OpNode& n, Emitter& e) {
  const int64_t axis = axis_of(n, n.attr_int("axis"));
  Dims sizes;
  for (size_t k = 0; k < n.outputs.size(); ++k)
    sizes.push_back(n.output_meta(k).shape[static_cast<int>(axis)]);
  std::vector<std::string> in{n.inputs[0]};
  if (std::find(sizes.begin(), sizes.end(), kUnknownDim) == sizes.end())
    in.push_back(e.ints(sizes));
  else if (!n.attr_ints("size_splits").empty())
    n.unsupported("splits an axis of unknown size into given sizes");
  set_attr(e.add("Split", in, n.outputs), "axis", axis);
}
void unstack(const OpNode& n, Emitter& e) {
  const int64_t axis = axis_of(n, n.attr_int("axis"));
  std::vector<std::string> pieces;
  for (size_t k = 0; k < n.outputs.size(); ++k) pieces.push_back(e.fresh("unstack_piece"));
  set_attr(e.add("Split", {n.inputs[0]}, pieces), "axis", axis);
  for (size_t k = 0; k < n.outputs.size(); ++k)
    e.add("Squeeze", {pieces[k], e.ints(std::span<const int64_t>(&axis, 1))}, {n.outputs[k]});
}

std::string as_int64(const OpNode& n, Emitter& e, size_t input) {
  if (n.input_metas[input].dtype == DType::Int64) return n.inputs[input];
  return e.op("Cast", {n.inputs[input]},
              [](pb::NodeProto& c) { set_attr(c, "to", int64_t{pb::TensorProto::INT64}); });
}

void gather(const OpNode& n, Emitter& e) {
  if (n.attr_int("batch_dims") != 0)
    n.unsupported("has batch_dims = ", n.attr_int("batch_dims"), " (ONNX's Gather has none)");
  set_attr(e.add("Gather", {n.inputs[0], as_int64(n, e, 1)}, n.outputs), "axis", n.attr_int("axis"));
}
void gather_nd(const OpNode& n, Emitter& e) {
  set_attr(e.add("GatherND", {n.inputs[0], as_int64(n, e, 1)}, n.outputs), "batch_dims",
           n.attr_int("batch_dims"));
}

void slice(const OpNode& n, Emitter& e) {
  const Dims& begin = n.attr_ints("begin");
  const Dims& size = n.attr_ints("size");
  Dims ends, axes;
  for (size_t i = 0; i < begin.size(); ++i) {
    ends.push_back(size[i] < 0 ? kInt64Max : begin[i] + size[i]);
    axes.push_back(static_cast<int64_t>(i));
  }
  e.add("Slice", {n.inputs[0], e.ints(begin), e.ints(ends), e.ints(axes)}, n.outputs);
}

// One input axis of a strided_slice as ONNX Slice's start, end and step.
struct AxisSlice {
  int64_t start, end, step;
};

// TensorFlow canonicalizes begin and end against the axis size (a negative index counts
// from the end, then clamps to [0, dim] going forward, [-1, dim - 1] going backward);
// ONNX's Slice clamps a backward start to [0, dim - 1] instead and reads an end of -1 as
// dim - 1. With the size known, the canonical values are passed so both agree; with it
// unknown, only the forms on which both rules agree are exported.
AxisSlice slice_axis(const OpNode& n, int64_t dim, int64_t begin, int64_t end, int64_t stride,
                     bool begin_masked, bool end_masked, bool shrink) {
  if (shrink) {
    const int64_t index = begin < 0 && dim != kUnknownDim ? begin + dim : begin;
    return {index, index == -1 ? kInt64Max : index + 1, 1};
  }
  if (dim == kUnknownDim) {
    if (!begin_masked && stride < 0 && begin < 0)
      n.unsupported("slices backward from a negative begin on an axis of unknown size");
    return {begin_masked ? (stride > 0 ? 0 : kInt64Max) : begin,
            end_masked ? (stride > 0 ? kInt64Max : kInt64Min) : end, stride};
  }
  const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
  auto canonical = [&](int64_t x, bool masked, bool is_end) {
    if (masked) return (stride > 0) == is_end ? hi : lo;
    return std::clamp(x < 0 ? dim + x : x, lo, hi);
  };
  const int64_t b = canonical(begin, begin_masked, false), e = canonical(end, end_masked, true);
  if (stride < 0 && b == -1) return {0, 0, stride};  // empty
  return {b, stride < 0 && e == -1 ? kInt64Min : e, stride};
}

// strided_slice: Slice over the input axes, then Squeeze of the shrunk axes and
// Unsqueeze of the new ones. The entries are matched to input axes as the op does: an
// ellipsis (explicit, or implicit at the end) covers the axes no other entry takes.
void strided_slice(const OpNode& n, Emitter& e) {
  const Dims &begin = n.attr_ints("begin"), &end = n.attr_ints("end"), &strides = n.attr_ints("strides");
  const auto bit = [&](const char* mask, size_t i) { return ((n.attr_int(mask) >> i) & 1) != 0; };
  const Shape& shape = n.input_metas[0].shape;
  size_t real_entries = 0;
  for (size_t i = 0; i < begin.size(); ++i)
    if (!bit("ellipsis_mask", i) && !bit("new_axis_mask", i)) ++real_entries;
  Dims starts, ends, axes, steps, squeezed, inserted;
  int64_t axis = 0, out = 0;
  for (size_t i = 0; i < begin.size(); ++i) {
    if (bit("ellipsis_mask", i)) {
      const int64_t covered = shape.rank() - static_cast<int64_t>(real_entries);
      axis += covered;
      out += covered;
    } else if (bit("new_axis_mask", i)) {
      inserted.push_back(out++);
    } else {
      const bool shrink = bit("shrink_axis_mask", i);
      const AxisSlice s = slice_axis(n, shape[static_cast<int>(axis)], begin[i], end[i], strides[i],
                                     bit("begin_mask", i), bit("end_mask", i), shrink);
      starts.push_back(s.start);
      ends.push_back(s.end);
      axes.push_back(axis);
      steps.push_back(s.step);
      if (shrink)
        squeezed.push_back(axis);
      else
        ++out;
      ++axis;
    }
  }
  std::string y = n.inputs[0];
  if (!axes.empty()) y = e.op("Slice", {y, e.ints(starts), e.ints(ends), e.ints(axes), e.ints(steps)});
  if (!squeezed.empty()) y = e.op("Squeeze", {y, e.ints(squeezed)});
  if (!inserted.empty()) y = e.op("Unsqueeze", {y, e.ints(inserted)});
  e.add("Identity", {y}, n.outputs);
}

void reverse(const OpNode& n, Emitter& e) {
  Dims axes;
  if (n.attr_bool("all")) {
    for (int i = 0; i < n.rank(); ++i) axes.push_back(i);
  } else {
    for (int64_t a : n.attr_ints("axis")) axes.push_back(axis_of(n, a));
  }
  if (axes.empty()) {
    e.add("Identity", n.inputs, n.outputs);
    return;
  }
  const Dims starts(axes.size(), -1), ends(axes.size(), kInt64Min), steps(axes.size(), -1);
  e.add("Slice", {n.inputs[0], e.ints(starts), e.ints(ends), e.ints(axes), e.ints(steps)}, n.outputs);
}

void pad(const OpNode& n, Emitter& e) {
  const std::string& mode = n.attr_string("mode");
  std::string onnx_mode;
  if (mode == "CONSTANT" || mode == "constant")
    onnx_mode = "constant";
  else if (mode == "REFLECT" || mode == "reflect")
    onnx_mode = "reflect";
  else
    n.unsupported("pads in mode \"", mode, "\" (ONNX has constant, reflect and edge)");
  const Dims& pairs = n.attr_ints("paddings");  // {before, after} per axis
  Dims pads;                                    // ONNX: every axis's before, then every axis's after
  for (size_t i = 0; i < pairs.size(); i += 2) pads.push_back(pairs[i]);
  for (size_t i = 1; i < pairs.size(); i += 2) pads.push_back(pairs[i]);
  std::vector<std::string> in{n.inputs[0], e.ints(pads)};
  if (onnx_mode == "constant")
    in.push_back(e.scalar(n.attr_float("constant_values"), n.input_metas[0].dtype));
  set_attr(e.add("Pad", in, n.outputs), "mode", onnx_mode);
}
void tile(const OpNode& n, Emitter& e) {
  e.add("Tile", {n.inputs[0], e.ints(n.attr_ints("multiples"))}, n.outputs);
}
void broadcast_to(const OpNode& n, Emitter& e) {
  const Dims& shape = n.attr_ints("shape");
  if (std::find(shape.begin(), shape.end(), kUnknownDim) != shape.end())
    n.unsupported("broadcasts to a shape with unknown sizes ", Shape(shape));
  e.add("Expand", {n.inputs[0], e.ints(shape)}, n.outputs);
}
void where_true(const OpNode& n, Emitter& e) {
  // NonZero gives [rank, count]; where gives [count, rank].
  set_attr(e.add("Transpose", {e.op("NonZero", n.inputs)}, n.outputs), "perm",
           std::span<const int64_t>(Dims{1, 0}));
}

// one_hot: ONNX's OneHot reads a negative index from the end, where one_hot gives all
// off values; such indices are moved out of range (to depth) first.
void one_hot(const OpNode& n, Emitter& e) {
  const int64_t depth = n.attr_int("depth");
  const DType t = n.output_meta().dtype;
  const std::string indices = as_int64(n, e, 0);
  const std::string zero = e.scalar(0, DType::Int64),
                    depth_value = e.scalar(static_cast<double>(depth), DType::Int64);
  const std::string moved = e.op("Where", {e.op("Less", {indices, zero}), depth_value, indices});
  const std::string values =
      e.op("Concat",
           {e.op("Unsqueeze", {e.scalar(n.attr_float("off_value"), t), e.ints(Dims{0})}),
            e.op("Unsqueeze", {e.scalar(n.attr_float("on_value"), t), e.ints(Dims{0})})},
           [](pb::NodeProto& c) { set_attr(c, "axis", int64_t{0}); });
  set_attr(e.add("OneHot", {moved, depth_value, values}, n.outputs), "axis", n.attr_int("axis"));
}

void shape(const OpNode& n, Emitter& e) { as_dtype(n, e, e.op("Shape", n.inputs)); }
void size(const OpNode& n, Emitter& e) { as_dtype(n, e, e.op("Size", n.inputs)); }

void fill_like(const OpNode& n, Emitter& e) {
  const DType t = n.output_meta().dtype;
  pb::TensorProto value;
  value.set_data_type(onnx_type(t));
  value.add_dims(1);
  const AttrValue& attr = n.attr("value");  // an int64, a double or a bool, as given
  const Tensor v = cast(std::holds_alternative<int64_t>(attr) ? constant(std::get<int64_t>(attr))
                        : std::holds_alternative<bool>(attr)  ? constant(std::get<bool>(attr))
                                                              : constant(n.attr_float("value")),
                        t);
  value.set_raw_data(static_cast<const char*>(v.raw_data()), size_of(t));
  pb::NodeProto& node = e.add("ConstantOfShape", {e.op("Shape", n.inputs)}, n.outputs);
  pb::AttributeProto& a = *node.add_attribute();
  a.set_name("value");
  a.set_type(pb::AttributeProto::TENSOR);
  *a.mutable_t() = std::move(value);
}

// top_k along the last axis; sort and argsort are top_k of the whole axis. ONNX's TopK
// puts the lower index first among equal values, as top_k and argsort do.
void top_k(const OpNode& n, Emitter& e) {
  const int64_t k = n.attr_int("k");
  const std::string indices = e.fresh("top_k_indices");
  pb::NodeProto& node =
      e.add("TopK", {n.inputs[0], e.ints(std::span<const int64_t>(&k, 1))}, {n.outputs[0], indices});
  set_attr(node, "sorted", int64_t{1});
  as_dtype(n, e, indices, 1);
}
void sort(const OpNode& n, Emitter& e) {
  const int64_t axis = axis_of(n, n.attr_int("axis"));
  const int64_t dim = n.input_metas[0].shape[static_cast<int>(axis)];
  if (dim == kUnknownDim) n.unsupported("sorts an axis of unknown size");
  const std::string values = n.op() == "sort" ? n.outputs[0] : e.fresh("sorted");
  const std::string indices = n.op() == "sort" ? e.fresh("sort_indices") : e.fresh("argsort_indices");
  pb::NodeProto& node =
      e.add("TopK", {n.inputs[0], e.ints(std::span<const int64_t>(&dim, 1))}, {values, indices});
  set_attr(node, "axis", axis);
  set_attr(node, "largest", int64_t{n.attr_string("direction") == "DESCENDING"});
  if (n.op() == "argsort") as_dtype(n, e, indices);
}

// ---- scatters and roll ----

// tensor_scatter_nd_update / _add: ScatterND (with reduction "add" from opset 16). As in
// TensorFlow, duplicate indices in an update leave the result unspecified.
void tensor_scatter_nd(const OpNode& n, Emitter& e) {
  const bool add = n.op() == "tensor_scatter_nd_add";
  if (add && e.model.opset() < 16) n.unsupported("needs opset 16 or newer (ScatterND's reduction)");
  pb::NodeProto& node = e.add("ScatterND", {n.inputs[0], as_int64(n, e, 1), n.inputs[2]}, n.outputs);
  if (add) set_attr(node, "reduction", std::string("add"));
}

// scatter_nd: the updates summed into zeros of the given shape.
void scatter_nd(const OpNode& n, Emitter& e) {
  if (e.model.opset() < 16) n.unsupported("needs opset 16 or newer (ScatterND's reduction)");
  const std::string zeros =
      e.op("Expand", {e.scalar(0, n.input_metas[1].dtype), e.ints(n.attr_ints("shape"))});
  set_attr(e.add("ScatterND", {zeros, as_int64(n, e, 0), n.inputs[1]}, n.outputs), "reduction",
           std::string("add"));
}

// roll: per axis (shifts on one axis add up), the last `shift` elements then the rest.
void roll(const OpNode& n, Emitter& e) {
  const Dims &shifts = n.attr_ints("shift"), &axes = n.attr_ints("axis");
  std::vector<int64_t> total(static_cast<size_t>(n.rank()), 0);
  for (size_t i = 0; i < shifts.size() && i < axes.size(); ++i)
    total[static_cast<size_t>(axis_of(n, axes[i]))] += shifts[i];
  std::string y = n.inputs[0];
  for (int64_t a = 0; a < n.rank(); ++a) {
    if (total[static_cast<size_t>(a)] == 0) continue;
    const int64_t dim = n.input_metas[0].shape[static_cast<int>(a)];
    if (dim == kUnknownDim) n.unsupported("rolls axis ", a, " of unknown size");
    if (dim == 0) continue;
    const int64_t s = ((total[static_cast<size_t>(a)] % dim) + dim) % dim;
    if (s == 0) continue;
    const std::string axis = e.ints(Dims{a});
    const std::string tail = e.op("Slice", {y, e.ints(Dims{dim - s}), e.ints(Dims{dim}), axis});
    const std::string head = e.op("Slice", {y, e.ints(Dims{0}), e.ints(Dims{dim - s}), axis});
    y = e.op("Concat", {tail, head}, [&](pb::NodeProto& c) { set_attr(c, "axis", a); });
  }
  e.add("Identity", {y}, n.outputs);
}

const std::unordered_map<std::string_view, Translation>& translations() {
  static const std::unordered_map<std::string_view, Translation> table{
      {"not_equal", not_equal},
      {"isfinite", isfinite},
      {"square", square},
      {"rsqrt", rsqrt},
      {"squared_difference", squared_difference},
      {"relu6", relu6},
      {"leaky_relu", leaky_relu},
      {"elu", elu},
      {"selu", selu},
      {"gelu", gelu},
      {"floormod", floormod},
      {"floordiv", floordiv},
      {"truncatediv", truncatediv},
      {"truncatemod", truncatemod},
      {"cast", cast},
      {"softmax", softmax},
      {"log_softmax", softmax},
      {"matmul", matmul},
      {"reduce_sum", reduce},
      {"reduce_prod", reduce},
      {"reduce_max", reduce},
      {"reduce_min", reduce},
      {"reduce_any", reduce},
      {"reduce_all", reduce},
      {"argmax", arg_reduce},
      {"argmin", arg_reduce},
      {"cumsum", cumsum},
      {"reshape", reshape},
      {"expand_dims", expand_dims},
      {"squeeze", squeeze},
      {"transpose", transpose},
      {"concat", concat},
      {"split", split},
      {"unstack", unstack},
      {"gather", gather},
      {"gather_nd", gather_nd},
      {"slice", slice},
      {"strided_slice", strided_slice},
      {"reverse", reverse},
      {"pad", pad},
      {"tile", tile},
      {"broadcast_to", broadcast_to},
      {"where", where_true},
      {"one_hot", one_hot},
      {"shape", shape},
      {"size", size},
      {"fill_like", fill_like},
      {"top_k", top_k},
      {"sort", sort},
      {"argsort", sort},
      {"tensor_scatter_nd_update", tensor_scatter_nd},
      {"tensor_scatter_nd_add", tensor_scatter_nd},
      {"scatter_nd", scatter_nd},
      {"roll", roll},
  };
  return table;
}

}  // namespace

Translation find_translation(std::string_view op) {
  for (const auto* table : {&translations(), &image_translations()})
    if (const auto it = table->find(op); it != table->end()) return it->second;
  const auto& simple = one_to_one();
  if (const auto it = simple.find(op); it == simple.end()) return nullptr;
  // Every one-to-one op shares one translation, which looks its ONNX type up again.
  return [](const OpNode& n, Emitter& e) { same(n, e, one_to_one().at(n.op())); };
}

}  // namespace ef::onnx::detail
