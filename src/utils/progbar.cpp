// Progbar (eagerflow/utils/progbar.h).
#include "eagerflow/utils/progbar.h"

#include <unistd.h>

#include <cmath>
#include <sstream>

#include "eagerflow/core/error.h"

namespace ef::utils {

namespace {

// "7s", "2:05" or "1:02:05", as Keras shows its ETA.
std::string format_duration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char buffer[32];
  if (s >= 3600)
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
                  (long long)(s % 60));
  else if (s >= 60)
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  else
    std::snprintf(buffer, sizeof buffer, "%llds", (long long)s);
  return buffer;
}

}  // namespace

Progbar::Progbar(int64_t target, int width, double interval, std::FILE* out, int interactive)
    : target_(target),
      width_(width),
      interval_(interval),
      out_(out ? out : stdout),
      interactive_(interactive < 0 ? ::isatty(::fileno(out ? out : stdout)) != 0 : interactive != 0),
      start_(std::chrono::steady_clock::now()) {
  if (target <= 0) fail("Progbar: argument 'target' must be positive, got ", target);
  if (width < 1) fail("Progbar: argument 'width' must be positive, got ", width);
}

std::string Progbar::render(int64_t step, const std::vector<std::pair<std::string, double>>& values,
                            double elapsed) const {
  std::ostringstream line;
  const int digits = static_cast<int>(std::to_string(target_).size());
  char counter[64];
  std::snprintf(counter, sizeof counter, "%*lld/%lld", digits, (long long)step, (long long)target_);
  line << counter << " [";
  const int done = static_cast<int>(width_ * std::min<int64_t>(step, target_) / target_);
  for (int i = 0; i < width_; ++i) line << (i < done ? '=' : (i == done && step < target_ ? '>' : '.'));
  line << "]";
  if (step < target_) {
    line << " - ETA: " << format_duration(elapsed / double(step) * double(target_ - step));
  } else {
    const double per_step = elapsed / double(target_);
    line << " - " << format_duration(elapsed) << " "
         << (per_step >= 1 ? std::to_string(int64_t(per_step)) + "s" : std::to_string(int64_t(per_step * 1e3)) + "ms")
         << "/step";
  }
  for (const auto& [name, value] : values) {
    char number[32];
    std::snprintf(number, sizeof number, std::fabs(value) >= 1e-3 || value == 0 ? "%.4f" : "%.4e", value);
    line << " - " << name << ": " << number;
  }
  return line.str();
}

void Progbar::update(int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  if (finished_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool last = step >= target_;
  if (!last && (!interactive_ || std::chrono::duration<double>(now - last_draw_).count() < interval_)) return;
  last_draw_ = now;
  const std::string line = render(std::min(step, target_), values, std::chrono::duration<double>(now - start_).count());
  if (interactive_) {
    // \r returns to the line start; \033[K clears what a longer previous line left.
    std::fprintf(out_, "\r%s\033[K%s", line.c_str(), last ? "\n" : "");
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
  finished_ = last;
}

}  // namespace ef::utils
