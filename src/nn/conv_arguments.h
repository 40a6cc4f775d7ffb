// The arguments the convolution and pooling layers share (conv_layers.cpp,
// conv_variant_layers.cpp): padding and window sizes, validated with the layer's name.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "eagerflow/core/error.h"

namespace ef::nn::detail {

// Keras writes padding in lower case, the ops in upper case; both are accepted.
inline std::string op_padding(const std::string& layer, const std::string& padding) {
  std::string upper = padding;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  if (upper != "SAME" && upper != "VALID")
    fail(layer, ": argument 'padding' must be \"valid\" or \"same\", got \"", padding, "\"");
  return upper;
}

// A window size, stride or dilation: one value means the same for height and width.
inline std::vector<int64_t> two(const std::string& layer, const char* what, std::vector<int64_t> window) {
  if (window.size() == 1) window.push_back(window[0]);
  if (window.size() != 2 || window[0] <= 0 || window[1] <= 0) {
    std::string values;
    for (int64_t v : window) values += (values.empty() ? "" : ", ") + std::to_string(v);
    fail(layer, ": argument '", what, "' must be one or two positive values, got [", values, "]");
  }
  return window;
}

}  // namespace ef::nn::detail
