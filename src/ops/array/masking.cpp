// Composite indexing ops, written with public ops (no kernel, no gradient of their own):
// repeat, boolean_mask, dynamic_partition, dynamic_stitch and meshgrid.
#include <string>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "ops/op_helpers.h"

namespace ef {

Tensor repeat(const Tensor& input, const std::vector<int64_t>& repeats, std::optional<int64_t> axis,
              CallSite where) {
  return detail::with_call_site(where, [&] {
    if (!input.defined()) fail("repeat: argument 'input' is an undefined tensor");
    const Tensor x = axis ? input : reshape(input, Shape{-1});
    if (x.rank() == 0)
      fail("repeat: argument 'input' is a scalar; give no axis to repeat it as a 1-D tensor");
    const int a = normalize_axis(axis.value_or(0), x.rank(), "repeat");
    const int64_t n = x.shape()[a];
    if (n == kUnknownDim)
      fail("repeat: axis ", a, " of input (shape ", x.shape(), ") must have a known size");
    if (repeats.size() != 1 && static_cast<int64_t>(repeats.size()) != n)
      fail("repeat: argument 'repeats' has ", repeats.size(), " entries; it needs 1 or ", n,
           " (the size of axis ", a, " of input shape ", x.shape(), ")");
    std::vector<int64_t> index;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = repeats[repeats.size() == 1 ? 0 : static_cast<size_t>(i)];
      if (r < 0) fail("repeat: argument 'repeats' must be non-negative, got ", r);
      index.insert(index.end(), static_cast<size_t>(r), i);
    }
    return gather(x, constant(index, Shape{static_cast<int64_t>(index.size())}).to(x.device()), a);
  });
}

Tensor boolean_mask(const Tensor& tensor, const Tensor& mask, int64_t axis, CallSite where) {
  return detail::with_call_site(where, [&] {
    if (!tensor.defined() || !mask.defined()) fail("boolean_mask: an argument is an undefined tensor");
    if (mask.dtype() != DType::Bool)
      fail("boolean_mask: argument 'mask' must be bool, got ", name(mask.dtype()));
    const Shape &ts = tensor.shape(), &ms = mask.shape();
    const int k = ms.rank();
    if (k == 0) fail("boolean_mask: argument 'mask' must have at least one axis, got a scalar");
    if (axis < 0) axis += ts.rank();
    if (axis < 0 || axis + k > ts.rank())
      fail("boolean_mask: a mask of shape ", ms, " at axis ", axis, " does not fit a tensor of shape ", ts);
    const int a = static_cast<int>(axis);
    for (int i = 0; i < k; ++i)
      if (ms[i] != ts[a + i] && ms[i] != kUnknownDim && ts[a + i] != kUnknownDim)
        fail("boolean_mask: argument 'mask' (shape ", ms, ") must match axes [", a, ", ", a + k,
             ") of tensor (shape ", ts, ")");
    Tensor flat = tensor;
    if (k > 1) {  // the masked axes merged into one
      Dims dims(ts.begin(), ts.begin() + a);
      dims.push_back(-1);
      for (int i = a + k; i < ts.rank(); ++i) dims.push_back(ts[i]);
      flat = reshape(tensor, Shape(dims));
    }
    const Tensor positions = reshape(ef::where(k > 1 ? reshape(mask, Shape{-1}) : mask), Shape{-1});
    return gather(flat, positions, a);
  });
}

std::vector<Tensor> dynamic_partition(const Tensor& data, const Tensor& partitions, int64_t num_partitions,
                                      CallSite where) {
  std::vector<Tensor> out;
  detail::with_call_site(where, [&] {
    if (!data.defined() || !partitions.defined())
      fail("dynamic_partition: an argument is an undefined tensor");
    if (partitions.dtype() != DType::Int32 && partitions.dtype() != DType::Int64)
      fail("dynamic_partition: argument 'partitions' must be int32 or int64, got ", name(partitions.dtype()));
    if (num_partitions < 0)
      fail("dynamic_partition: argument 'num_partitions' must be non-negative, got ", num_partitions);
    if (partitions.rank() == 0) fail("dynamic_partition: argument 'partitions' must have at least one axis");
    // Values are checked when known (eagerly), as TensorFlow's kernel does.
    if (!partitions.is_symbolic())
      for (int64_t p : partitions.to_vector<int64_t>())
        if (p < 0 || p >= num_partitions)
          fail("dynamic_partition: partitions holds ", p, ", not in [0, num_partitions = ", num_partitions,
               ")");
    for (int64_t p = 0; p < num_partitions; ++p)
      out.push_back(boolean_mask(data, equal(partitions, cast(constant(p), partitions.dtype()))));
    return Tensor();
  });
  return out;
}

// The rows of all data, each written at its index (flattened and concatenated, so later
// pairs win, as TensorFlow's); bincount of the indices gives the length (max + 1), known
// only from the values.
Tensor dynamic_stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data, CallSite where) {
  return detail::with_call_site(where, [&] {
    if (indices.size() != data.size())
      fail("dynamic_stitch: ", indices.size(), " index tensors but ", data.size(), " data tensors");
    if (indices.empty()) fail("dynamic_stitch: needs at least one pair of indices and data");
    std::vector<Tensor> flat_indices, flat_data;
    Dims rest;
    for (size_t i = 0; i < indices.size(); ++i) {
      const Tensor &ind = indices[i], &d = data[i];
      if (!ind.defined() || !d.defined()) fail("dynamic_stitch: pair ", i, " holds an undefined tensor");
      if (ind.dtype() != DType::Int32 && ind.dtype() != DType::Int64)
        fail("dynamic_stitch: indices[", i, "] must be int32 or int64, got ", name(ind.dtype()));
      if (d.dtype() != data[0].dtype())
        fail("dynamic_stitch: data[", i, "] is ", name(d.dtype()), " but data[0] is ", name(data[0].dtype()));
      const Shape &is = ind.shape(), &ds = d.shape();
      bool fits = is.rank() <= ds.rank();
      for (int j = 0; fits && j < is.rank(); ++j)
        fits = is[j] == ds[j] || is[j] == kUnknownDim || ds[j] == kUnknownDim;
      Dims tail(ds.begin() + std::min(is.rank(), ds.rank()), ds.end());
      if (i == 0) rest = tail;
      fits = fits && Shape(tail) == Shape(rest);
      if (!fits || !Shape(tail).is_fully_defined())
        fail("dynamic_stitch: data[", i, "] (shape ", ds, ") must be indices[", i, "]'s shape (", is,
             ") followed by the same known sizes for every pair (", Shape(rest), ")");
      if (!ind.is_symbolic())
        for (int64_t v : ind.to_vector<int64_t>())
          if (v < 0) fail("dynamic_stitch: indices[", i, "] holds ", v, "; indices must be non-negative");
      flat_indices.push_back(reshape(cast(ind, DType::Int64), Shape{-1}));
      Dims rows(rest.begin(), rest.end());
      rows.insert(0, -1);
      flat_data.push_back(reshape(d, Shape(rows)));
    }
    const Tensor all_indices = concat(flat_indices, 0), all_data = concat(flat_data, 0);
    // Zeros of [max index + 1] + rest.
    Dims column(rest.size() + 1, 1);
    column[0] = -1;
    const Tensor zero_rows =
        reshape(cast(zeros_like(bincount(all_indices)), all_data.dtype()), Shape(column));
    const Tensor zero_row = zeros(Shape(rest), all_data.dtype()).to(all_data.device());
    const Tensor base =
        all_data.dtype() == DType::Bool ? logical_or(zero_rows, zero_row) : add(zero_rows, zero_row);
    return tensor_scatter_nd_update(base, expand_dims(all_indices, -1), all_data);
  });
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& args, const std::string& indexing, CallSite where) {
  std::vector<Tensor> out;
  detail::with_call_site(where, [&] {
    if (indexing != "xy" && indexing != "ij")
      fail("meshgrid: argument 'indexing' = \"", indexing, "\" must be \"xy\" or \"ij\"");
    const int n = static_cast<int>(args.size());
    if (n > kMaxRank)
      fail("meshgrid: ", n, " inputs would make outputs of more than ", kMaxRank, " dimensions");
    // Input i runs along output axis i; "xy" swaps the first two (Cartesian indexing).
    auto axis_of = [&](int i) { return indexing == "xy" && n >= 2 && i < 2 ? 1 - i : i; };
    Dims full(static_cast<size_t>(n), 1);
    std::vector<Tensor> lines;
    for (int i = 0; i < n; ++i) {
      if (!args[i].defined()) fail("meshgrid: input ", i, " is an undefined tensor");
      Tensor flat = reshape(args[i], Shape{-1});
      Dims shape(static_cast<size_t>(n), 1);
      shape[axis_of(i)] = -1;
      full[axis_of(i)] = flat.shape()[0];
      lines.push_back(reshape(flat, Shape(shape)));
    }
    const Shape target(full);
    for (int i = 0; i < n; ++i) {
      if (target.is_fully_defined()) {
        out.push_back(broadcast_to(lines[i], target));
        continue;
      }
      // Sizes known only when a graph runs: broadcast by adding zeros shaped like the others.
      if (lines[i].dtype() == DType::Bool) fail("meshgrid: bool inputs need known sizes, got shape ", target);
      Tensor r = lines[i];
      for (int j = 0; j < n; ++j)
        if (j != i) r = add(r, zeros_like(cast(lines[j], r.dtype())));
      out.push_back(r);
    }
    return Tensor();
  });
  return out;
}

}  // namespace ef
