// Shape: the dimensions of a tensor (rank 0 to 8), overflow-checked element counts,
// NumPy broadcasting, and axis normalization.
//
// Note [unknown dimensions]: in graph mode a dimension may be unknown, stored as
// kUnknownDim (-1). Eager tensors always have fully defined shapes. Shape inference
// functions must accept unknown dimensions and only reject definite mismatches.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "eagerflow/core/small_vec.h"

namespace ef {

inline constexpr int kMaxRank = 8;
inline constexpr int64_t kUnknownDim = -1;

// A short list of integers (dimensions, strides, axes) stored inline.
using Dims = SmallVec<int64_t, kMaxRank>;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(Dims dims) : dims_(std::move(dims)) {}
  explicit Shape(std::span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {}
  explicit Shape(const std::vector<int64_t>& dims) : dims_(dims.begin(), dims.end()) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t operator[](int axis) const { return dims_[axis]; }
  int64_t& operator[](int axis) { return dims_[axis]; }
  // Dimension `axis`, counting from the end when negative.
  int64_t dim(int axis) const { return dims_[axis < 0 ? axis + rank() : axis]; }
  const Dims& dims() const { return dims_; }
  Dims& dims() { return dims_; }
  const int64_t* begin() const { return dims_.begin(); }
  const int64_t* end() const { return dims_.end(); }
  std::vector<int64_t> to_vector() const { return {dims_.begin(), dims_.end()}; }

  bool is_scalar() const { return dims_.empty(); }
  bool is_fully_defined() const;
  // Product of the dimensions; kUnknownDim if any is unknown. Overflow was ruled
  // out when the shape was validated (validate_shape), so this cannot overflow.
  int64_t num_elements() const;

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
  // "[2, 3]"; unknown dimensions print as "?".
  std::string to_string() const;

 private:
  Dims dims_;
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);

// Row-major strides, in elements, of a contiguous tensor of this shape.
Dims contiguous_strides(const Shape& shape);

// Checks rank <= kMaxRank, no negative dimension (other than kUnknownDim when
// allowed) and that the element count times `element_size` fits in int64.
// Throws InvalidArgumentError / ResourceExhaustedError naming `op` and `arg`.
void validate_shape(const Shape& shape, std::string_view op, std::string_view arg,
                    size_t element_size = 1, bool allow_unknown = false);

// a * b, throwing ResourceExhaustedError naming `what` if it overflows int64.
int64_t checked_mul(int64_t a, int64_t b, std::string_view what);

// The NumPy broadcast of two shapes. Throws InvalidArgumentError naming `op`
// and both shapes when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);

// Maps a possibly negative `axis` into [0, rank); throws InvalidArgumentError naming
// op and rank if it is out of range. `rank` of a scalar reduction may be 0.
int normalize_axis(int64_t axis, int rank, std::string_view op, std::string_view arg = "axis");

// Normalizes a list of axes; an empty list means "all axes" when `empty_means_all`.
// Duplicates are an error.
Dims normalize_axes(std::span<const int64_t> axes, int rank, std::string_view op,
                    bool empty_means_all);

}  // namespace ef
