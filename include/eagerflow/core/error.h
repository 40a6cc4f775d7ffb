// Typed errors. Every failure eagerflow reports is one of these; the message names
// the op, the offending argument and the shapes/dtypes involved, and — when the
// error comes from a public op function — the caller's file:line.
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ef {

// Where a public op function was called from. Every public op takes
// `CallSite where = CallSite::current()` last, so its errors name the user's own line.
// Same interface as std::source_location, which clang 14 cannot compile against
// libstdc++ (it lacks __builtin_source_location); the fuzz build uses clang 14.
class CallSite {
 public:
  // The caller's location when used as a default argument, like source_location::current().
  static constexpr CallSite current(const char* file = __builtin_FILE(), const char* function = __builtin_FUNCTION(),
                                    uint_least32_t line = __builtin_LINE()) noexcept {
    return CallSite(file, function, line);
  }
  constexpr CallSite() noexcept = default;
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr uint_least32_t line() const noexcept { return line_; }

 private:
  constexpr CallSite(const char* file, const char* function, uint_least32_t line) noexcept
      : file_(file), function_(function), line_(line) {}
  const char* file_ = "";
  const char* function_ = "";
  uint_least32_t line_ = 0;
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message), message_(message), what_(message) {}
  // The message and, once known, the user's call site.
  const char* what() const noexcept override { return what_.c_str(); }
  // The message without the call site (what the Python package reports).
  const std::string& message() const { return message_; }
  // Appends " (called from file:line)" once; later calls are ignored so the
  // innermost public call the user made is the one reported.
  void add_call_site(const CallSite& where);
  bool has_call_site() const { return has_call_site_; }

 private:
  std::string message_;
  std::string what_;
  bool has_call_site_ = false;
};

// The arguments were wrong: bad shapes, dtypes, axes, values.
class InvalidArgumentError : public Error { using Error::Error; };
// The system is not in a state where this can be done (e.g. a released tape).
class FailedPreconditionError : public Error { using Error::Error; };
// An index or a value fell outside its valid range.
class OutOfRangeError : public Error { using Error::Error; };
// The operation exists but not for this device or dtype.
class UnimplementedError : public Error { using Error::Error; };
// Memory or another resource ran out, or a size overflowed what can be allocated.
class ResourceExhaustedError : public Error { using Error::Error; };
// Something that was looked up (an op name, a file) does not exist.
class NotFoundError : public Error { using Error::Error; };
// Stored data is unreadable: a truncated, malformed or corrupted file.
class DataLossError : public Error { using Error::Error; };
// A broken invariant inside eagerflow: always a bug to report.
class InternalError : public Error { using Error::Error; };

namespace detail {
// Streams every argument into one string: str("axis ", 3, " out of range").
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

// Throws ErrorType with the streamed arguments as message.
template <class ErrorType = InvalidArgumentError, class... Args>
[[noreturn]] void fail(const Args&... args) {
  throw ErrorType(detail::str(args...));
}

// Throws InvalidArgumentError(message...) unless `condition` holds. Never compiled out.
#define EF_CHECK(condition, ...)                            \
  do {                                                      \
    if (!(condition)) [[unlikely]] ::ef::fail(__VA_ARGS__); \
  } while (0)

}  // namespace ef
