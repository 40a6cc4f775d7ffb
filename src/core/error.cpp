#include "eagerflow/core/error.h"

#include <string>

namespace ef {

void Error::add_call_site(const CallSite& where) {
  if (has_call_site_ || where.line() == 0) return;
  has_call_site_ = true;
  std::string file = where.file_name();
  what_ += " (called from " + file + ":" + std::to_string(where.line()) + ")";
}

}  // namespace ef
