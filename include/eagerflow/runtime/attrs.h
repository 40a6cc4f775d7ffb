// Attrs: an op call's non-tensor arguments (axes, flags, dtypes, ...), stored inline
// by position. Each OpDef names its attributes in order (OpDef::attr_names), so graph
// printing, hashing (CSE, the function cache) and the Python bindings can treat every
// op alike, while kernels read them by index without any string look-up.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <variant>

#include "eagerflow/core/dtype.h"
#include "eagerflow/core/error.h"
#include "eagerflow/core/shape.h"

namespace ef {

using AttrValue = std::variant<std::monostate, bool, int64_t, double, DType, Dims, std::string>;

class Attrs {
 public:
  static constexpr size_t kMaxAttrs = 8;

  Attrs() = default;
  Attrs(std::initializer_list<AttrValue> values)
      : Attrs(std::span<const AttrValue>(values.begin(), values.size())) {}
  // The attributes in `values`, in order (a graph read from a file builds them so).
  explicit Attrs(std::span<const AttrValue> values) {
    if (values.size() > kMaxAttrs) fail<InternalError>("Attrs: more than ", kMaxAttrs, " attributes");
    for (const AttrValue& v : values) values_[size_++] = v;
  }

  size_t size() const { return size_; }
  // Replaces the attribute at `index` (< size()).
  void set(size_t index, AttrValue value) {
    if (index >= size_) fail<InternalError>("Attrs: no attribute ", index, " to replace");
    values_[index] = std::move(value);
  }
  const AttrValue& operator[](size_t i) const { return values_[i]; }

  // The attribute at `index`, which must hold a T (the op's own definition put it there).
  template <class T>
  const T& get(size_t index) const {
    const T* v = std::get_if<T>(&values_[index]);
    if (!v) fail<InternalError>("Attrs: attribute ", index, " does not hold the requested type");
    return *v;
  }
  bool get_bool(size_t i) const { return get<bool>(i); }
  int64_t get_int(size_t i) const { return get<int64_t>(i); }
  double get_float(size_t i) const { return get<double>(i); }
  DType get_dtype(size_t i) const { return get<DType>(i); }
  const Dims& get_ints(size_t i) const { return get<Dims>(i); }

  friend bool operator==(const Attrs& a, const Attrs& b);
  size_t hash() const;

 private:
  std::array<AttrValue, kMaxAttrs> values_{};
  size_t size_ = 0;
};

// "[1, 2]", "true", "float32", ... for printing graphs and error messages.
std::string to_string(const AttrValue& value);

}  // namespace ef
