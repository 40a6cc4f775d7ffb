#include "eagerflow/runtime/attrs.h"

#include <functional>
#include <sstream>

namespace ef {

bool operator==(const Attrs& a, const Attrs& b) {
  if (a.size_ != b.size_) return false;
  for (size_t i = 0; i < a.size_; ++i)
    if (!(a.values_[i] == b.values_[i])) return false;
  return true;
}

size_t Attrs::hash() const {
  size_t h = size_;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (size_t i = 0; i < size_; ++i) {
    const AttrValue& v = values_[i];
    mix(v.index());
    std::visit(
        [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, std::monostate>) {
          } else if constexpr (std::is_same_v<X, Dims>) {
            for (int64_t d : x) mix(std::hash<int64_t>{}(d));
          } else if constexpr (std::is_same_v<X, DType>) {
            mix(static_cast<size_t>(x));
          } else {
            mix(std::hash<X>{}(x));
          }
        },
        v);
  }
  return h;
}

std::string to_string(const AttrValue& value) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate>) os << "none";
        else if constexpr (std::is_same_v<X, bool>) os << (x ? "true" : "false");
        else if constexpr (std::is_same_v<X, Dims>) os << Shape(x).to_string();
        else if constexpr (std::is_same_v<X, std::string>) os << '"' << x << '"';
        else os << x;
      },
      value);
  return os.str();
}

}  // namespace ef
