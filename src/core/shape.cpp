#include "eagerflow/core/shape.h"

#include <algorithm>
#include <limits>
#include <ostream>
#include <string>

#include "eagerflow/core/error.h"

namespace ef {

bool Shape::is_fully_defined() const {
  return std::none_of(begin(), end(), [](int64_t d) { return d < 0; });
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0) return kUnknownDim;
    n *= d;
  }
  return n;
}

// Without a stream: function calls format every argument's shape into their cache key.
std::string Shape::to_string() const {
  std::string s = "[";
  for (int i = 0; i < rank(); ++i) {
    if (i) s += ", ";
    if (dims_[i] == kUnknownDim) s += '?';  // other negatives are errors to report as given
    else s += std::to_string(dims_[i]);
  }
  s += ']';
  return s;
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.to_string(); }

Dims contiguous_strides(const Shape& shape) {
  Dims strides(shape.rank(), 1);
  int64_t stride = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product))
    fail<ResourceExhaustedError>(what, ": size overflows a 64-bit integer (", a, " * ", b, ")");
  return product;
}

void validate_shape(const Shape& shape, std::string_view op, std::string_view arg,
                    size_t element_size, bool allow_unknown) {
  if (shape.rank() > kMaxRank)
    fail(op, ": argument '", arg, "' has rank ", shape.rank(), " but at most ", kMaxRank,
         " dimensions are supported (shape ", shape, ")");
  int64_t bytes = static_cast<int64_t>(element_size);
  for (int i = 0; i < shape.rank(); ++i) {
    const int64_t d = shape[i];
    if (d == kUnknownDim && allow_unknown) continue;
    if (d < 0) {
      // The dimensions as given: Shape prints -1 as "?" (unknown), which it is not here.
      std::string given;
      for (int64_t g : shape) given += (given.empty() ? "" : ", ") + std::to_string(g);
      fail(op, ": argument '", arg, "' has a negative dimension: dimension ", i, " is ", d, " in [", given,
           "]");
    }
    // Zero dimensions count as 1, as in NumPy: strides (contiguous_strides) and offsets
    // of a shape like (0, 2^62, 2^62) must not overflow either.
    int64_t product;
    if (__builtin_mul_overflow(bytes, std::max<int64_t>(d, 1), &product))
      fail<ResourceExhaustedError>(op, ": argument '", arg, "' of shape ", shape,
                                   " is too large: its size in bytes overflows 64 bits");
    bytes = product;
  }
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  if (a == b) return a;
  int rank = std::max(a.rank(), b.rank());
  Dims out(rank, 1);
  for (int i = 0; i < rank; ++i) {
    int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    int64_t d;
    if (da == db) d = da;
    else if (da == 1) d = db;
    else if (db == 1) d = da;
    else if (da == kUnknownDim) d = db;  // Note [unknown dimensions]: checked at run time
    else if (db == kUnknownDim) d = da;
    else
      fail(op, ": incompatible shapes for broadcasting: ", a, " and ", b, " (dimension ", i,
           " is ", da, " vs ", db, ")");
    out[i] = d;
  }
  return Shape(std::move(out));
}

int normalize_axis(int64_t axis, int rank, std::string_view op, std::string_view arg) {
  int64_t lo = rank == 0 ? -1 : -rank, hi = rank == 0 ? 0 : rank - 1;
  if (axis < lo || axis > hi)
    fail(op, ": argument '", arg, "' = ", axis, " is out of range for a tensor of rank ", rank,
         " (expected ", lo, " <= ", arg, " <= ", hi, ")");
  return static_cast<int>(axis < 0 ? axis + std::max(rank, 1) : axis);
}

Dims normalize_axes(std::span<const int64_t> axes, int rank, std::string_view op,
                    bool empty_means_all) {
  Dims out;
  if (axes.empty() && empty_means_all) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  std::vector<bool> seen(std::max(rank, 1), false);
  for (int64_t axis : axes) {
    int a = normalize_axis(axis, rank, op, "axis");
    if (seen[a]) fail(op, ": argument 'axis' repeats axis ", axis, " (rank ", rank, ")");
    seen[a] = true;
    out.push_back(a);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ef
