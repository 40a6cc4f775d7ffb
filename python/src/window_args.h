// Arguments of the convolution and pooling bindings, as TensorFlow takes them.
#pragma once

#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"

namespace efpy {

// A window attribute (strides, ksize, dilations): an int or a sequence of ints; None
// is `if_none` where one is given.
inline std::vector<int64_t> window_ints(py::handle obj, const char* what, std::vector<int64_t> if_none = {}) {
  if (obj.is_none() && !if_none.empty()) return if_none;
  if (PyLong_Check(obj.ptr())) return {int64_of(obj, what)};
  return to_ints(obj, what);
}

// The ops take one layout each ("NHWC", "NWC", "NDHWC"); None means it.
inline void check_data_format(py::handle data_format, const char* layout, const char* op) {
  if (!data_format.is_none() && data_format.cast<std::string>() != layout)
    throw ef::UnimplementedError(std::string(op) + ": only data_format \"" + layout +
                                 "\" is supported, got \"" + data_format.cast<std::string>() + "\"");
}

}  // namespace efpy
