// What the summary files of src/io share. Internal to src/io.
#pragma once

#include <chrono>

namespace ef::summary::detail {

// Event.wall_time: seconds since the Unix epoch.
inline double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace ef::summary::detail
