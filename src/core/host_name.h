// This machine's host name, for the files tools name after it (event files, profiler
// traces). Internal to the library.
#pragma once

#include <unistd.h>

#include <string>

namespace ef::detail {

// gethostname's answer, or "localhost" when it fails.
inline std::string host_name() {
  char host[256] = "localhost";
  if (::gethostname(host, sizeof host) != 0) return "localhost";
  host[sizeof host - 1] = '\0';
  return host;
}

}  // namespace ef::detail
