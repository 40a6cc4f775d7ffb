// Progbar: a training progress bar (Keras' tf.keras.utils.Progbar).
//
//   ef::utils::Progbar bar(steps_per_epoch);
//   for (int64_t step = 1; step <= steps_per_epoch; ++step) {
//     ...
//     bar.update(step, {{"loss", loss}, {"accuracy", acc}});
//   }
//
// On a terminal it redraws one line in place ("  120/1875 [=>....] - ETA: 7s - loss:
// 0.5123 - accuracy: 0.8121"), at most every `interval` seconds. Anywhere else (a log
// file, CI) it prints one plain line when the target is reached, so logs stay readable.
// Values are shown as given (pass running means to show running means).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace ef::utils {

class Progbar {
 public:
  // `target`: the number of steps (> 0). `out` defaults to stdout; `interactive`
  // defaults to whether `out` is a terminal.
  explicit Progbar(int64_t target, int width = 30, double interval = 0.05, std::FILE* out = nullptr,
                   int interactive = -1);

  // Shows progress at `step` (1-based) with named values.
  void update(int64_t step, const std::vector<std::pair<std::string, double>>& values = {});

  // The line update() would draw for `step` after `elapsed_seconds` (for tests).
  std::string render(int64_t step, const std::vector<std::pair<std::string, double>>& values,
                     double elapsed_seconds) const;

 private:
  int64_t target_;
  int width_;
  double interval_;
  std::FILE* out_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
  bool finished_ = false;
};

}  // namespace ef::utils
