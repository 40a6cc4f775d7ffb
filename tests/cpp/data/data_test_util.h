// Helpers for the data tests: small datasets of numbers and their elements as values.
#pragma once

#include <algorithm>
#include <vector>

#include "test_util.h"

namespace ef::testing {

// A dataset of the scalars 0, 1, ..., n-1 (int64).
inline data::Dataset numbers(int64_t n) {
  return data::Dataset::from_tensor_slices({range(0, n, 1, DType::Int64)});
}

// Component 0 of every element of one pass, flattened in order.
inline std::vector<int64_t> values(const data::Dataset& ds) {
  std::vector<int64_t> out;
  for (const data::Element& e : ds)
    for (int64_t v : e.at(0).to_vector<int64_t>()) out.push_back(v);
  return out;
}

inline std::vector<int64_t> iota_vector(int64_t n, int64_t start = 0) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + i;
  return v;
}

inline std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace ef::testing
