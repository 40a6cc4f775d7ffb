// Printing tensors the way TensorFlow does (NumPy's str of the values):
//   Tensor([[1. 2.]
//    [3. 4.]], shape=(2, 2), dtype=float32)
// Floats use the fewest digits that identify each value (at most 8 after the point),
// padded to a common width; large tensors are summarized with "..." like NumPy.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "core/tensor_format.h"

namespace ef {
namespace {

constexpr int64_t kSummarizeThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;
constexpr int kMaxFractionDigits = 8;

// Whether a and b are the same value once stored in `dtype`.
bool same_value(double a, double b, DType dtype) { return rounded_to(dtype, a) == rounded_to(dtype, b); }

// Shortest "%.{p}f" (p <= 8) that reads back as the same value of the tensor's dtype.
int fraction_digits(double v, DType dtype) {
  char buf[64];
  for (int p = 0; p < kMaxFractionDigits; ++p) {
    std::snprintf(buf, sizeof buf, "%.*f", p, v);
    double back = std::strtod(buf, nullptr);
    if (same_value(back, v, dtype)) return p;
  }
  return kMaxFractionDigits;
}

// Shortest "%.{p}e" mantissa precision that reads back as the same value.
int mantissa_digits(double v, DType dtype) {
  char buf[64];
  for (int p = 0; p < kMaxFractionDigits; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, v);
    double back = std::strtod(buf, nullptr);
    if (same_value(back, v, dtype)) return p;
  }
  return kMaxFractionDigits;
}

std::string non_finite(double v) { return std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf"); }

// Formats every value of a float tensor with one shared style, as NumPy does.
std::vector<std::string> format_floats(const std::vector<double>& values, DType dtype) {
  // NumPy's rule (FloatingFormat.fillFormat), over the finite non-zero values shown:
  // scientific when the largest is >= 1e8, the smallest < 1e-4, or their ratio > 1e3.
  double max_abs = 0, min_abs = INFINITY;
  for (double v : values) {
    if (!std::isfinite(v) || v == 0) continue;
    double a = std::fabs(v);
    max_abs = std::max(max_abs, a);
    min_abs = std::min(min_abs, a);
  }
  bool scientific = max_abs > 0 && (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e3);
  std::vector<std::string> out;
  out.reserve(values.size());
  char buf[64];
  if (scientific) {
    int digits = 0;
    for (double v : values)
      if (std::isfinite(v)) digits = std::max(digits, mantissa_digits(v, dtype));
    for (double v : values) {
      if (!std::isfinite(v)) { out.push_back(non_finite(v)); continue; }
      std::snprintf(buf, sizeof buf, "%.*e", digits, v);
      std::string s = buf;
      if (digits == 0) s.insert(s.find('e'), ".");  // NumPy writes "1.e+10"
      out.push_back(s);
    }
    return out;
  }
  int digits = 0;
  for (double v : values)
    if (std::isfinite(v)) digits = std::max(digits, fraction_digits(v, dtype));
  for (double v : values) {
    if (!std::isfinite(v)) { out.push_back(non_finite(v)); continue; }
    int own = fraction_digits(v, dtype);
    std::snprintf(buf, sizeof buf, "%.*f", own, v);
    std::string s = buf;
    if (own == 0) s += ".";
    // Cut at 8 digits, a value can end in zeros: NumPy drops them ("7.3890561").
    while (own > 0 && s.back() == '0') {
      s.pop_back();
      --own;
    }
    s.append(static_cast<size_t>(digits - own), ' ');  // pad on the right, as NumPy does
    out.push_back(s);
  }
  return out;
}

// A one-element float prints like Python's repr of a float: "4.0", "0.1", "1e-05".
std::string format_float_scalar(double v, DType dtype) {
  if (!std::isfinite(v)) return non_finite(v);
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    double back = std::strtod(buf, nullptr);
    if (same_value(back, v, dtype)) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

class Printer {
 public:
  explicit Printer(const Tensor& t) : t_(t), shape_(t.shape()) {
    summarize_ = shape_.num_elements() > kSummarizeThreshold;
  }

  std::string values() {
    collect(0, 0);
    format_all();
    std::string out;
    size_t next = 0;
    emit(0, 0, next, out, 1);
    return out;
  }

 private:
  // Row-major indices of the elements that will be printed, with summarization.
  void collect(int axis, int64_t base) {
    if (axis == shape_.rank()) {
      flat_.push_back(base);
      return;
    }
    int64_t n = shape_[axis];
    for (int64_t i : shown(n)) collect(axis + 1, base * n + i);
    if (n == 0 && axis == 0) return;
  }

  std::vector<int64_t> shown(int64_t n) const {
    std::vector<int64_t> idx;
    if (summarize_ && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  void format_all() {
    DType dt = t_.dtype();
    const TensorImpl& impl = *t_.impl();
    if (is_complex(dt)) {  // NumPy's "1.5-2.j": each part formatted as a float column
      std::vector<double> re, im_abs;
      std::vector<bool> negative;
      for (int64_t i : flat_) {
        const std::complex<double> z =
            dt == DType::Complex64 ? std::complex<double>(detail::read_element<std::complex<float>>(impl, i))
                                   : detail::read_element<std::complex<double>>(impl, i);
        re.push_back(z.real());
        im_abs.push_back(std::fabs(z.imag()));
        negative.push_back(std::signbit(z.imag()) && !std::isnan(z.imag()));
      }
      const DType part = real_dtype(dt);
      const std::vector<std::string> re_text = format_floats(re, part), im_text = format_floats(im_abs, part);
      for (size_t k = 0; k < re_text.size(); ++k)
        text_.push_back(re_text[k] + (negative[k] ? "-" : "+") + im_text[k] + "j");
    } else if (is_floating(dt)) {
      std::vector<double> v;
      for (int64_t i : flat_)
        v.push_back(dispatch_storage_dtype(dt, [&](auto tag) {
          return static_cast<double>(
              detail::arithmetic_value(detail::read_element<typename decltype(tag)::type>(impl, i)));
        }));
      text_ = format_floats(v, dt);
    } else {
      for (int64_t i : flat_) {
        if (dt == DType::Bool) text_.push_back(detail::read_element<bool>(impl, i) ? "True" : "False");
        else
          text_.push_back(std::to_string(dispatch_storage_dtype(dt, [&](auto tag) {
            return static_cast<int64_t>(
                detail::arithmetic_value(detail::read_element<typename decltype(tag)::type>(impl, i)));
          })));
      }
    }
    for (auto& s : text_) width_ = std::max(width_, s.size());
    for (auto& s : text_) s.insert(0, width_ - s.size(), ' ');
  }

  void emit(int axis, int64_t, size_t& next, std::string& out, size_t indent) {
    int rank = shape_.rank();
    out += "[";
    int64_t n = shape_[axis];
    std::vector<int64_t> idx = shown(n);
    bool elided = idx.size() < static_cast<size_t>(n);
    size_t line_start = out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1;
    for (size_t k = 0; k < idx.size(); ++k) {
      if (elided && k == static_cast<size_t>(kEdgeItems)) {
        if (axis == rank - 1) {
          out += " ...";
        } else {
          out += std::string(static_cast<size_t>(rank - axis - 1), '\n') + std::string(indent, ' ') + "...";
        }
      }
      if (axis == rank - 1) {
        if (k > 0 || (elided && k == static_cast<size_t>(kEdgeItems))) {
          if (out.size() - line_start + 1 + width_ + 1 > kLineWidth) {
            while (out.back() == ' ') out.pop_back();  // NumPy strips the padding at a wrap
            out += "\n" + std::string(indent, ' ');
            line_start = out.size() - indent;
          } else {
            out += " ";
          }
        }
        out += text_[next++];
      } else {
        if (k > 0 || (elided && k == static_cast<size_t>(kEdgeItems)))
          out += std::string(static_cast<size_t>(rank - axis - 1), '\n') + std::string(indent, ' ');
        emit(axis + 1, 0, next, out, indent + 1);
      }
    }
    out += "]";
  }

  const Tensor& t_;
  const Shape& shape_;
  bool summarize_ = false;
  std::vector<int64_t> flat_;
  std::vector<std::string> text_;
  size_t width_ = 0;
};

std::string shape_tuple(const Shape& s) {
  std::string out = "(";
  for (int i = 0; i < s.rank(); ++i) {
    if (i) out += ", ";
    out += s[i] < 0 ? "None" : std::to_string(s[i]);
  }
  if (s.rank() == 1) out += ",";
  return out + ")";
}

}  // namespace

std::string detail::format_values(const Tensor& t) {
  if (t.rank() == 0) {
    const TensorImpl& impl = *t.impl();
    if (is_floating(t.dtype())) return format_float_scalar(t.item<double>(), t.dtype());
    if (t.dtype() == DType::Bool) return detail::read_element<bool>(impl, 0) ? "True" : "False";
    return std::to_string(t.item<int64_t>());
  }
  if (t.num_elements() == 0) return "[]";  // NumPy prints every empty array so, whatever its shape
  return Printer(t).values();
}

std::string Tensor::to_string() const {
  if (!defined()) return "Tensor(<undefined>)";
  std::string meta = ", shape=" + shape_tuple(shape()) + ", dtype=" + std::string(name(dtype())) + ")";
  if (is_symbolic()) return "Tensor(<symbolic>" + meta;
  std::string values = detail::format_values(device().type == DeviceType::CPU ? *this : cpu());
  if (values.find('\n') != std::string::npos) values.insert(0, "\n");
  return "Tensor(" + values + meta;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace ef
