// Printing tensors as an op (TensorFlow's tf.print): eagerly it prints at once; traced
// into a function, a cond branch or a while_loop body it prints every time that runs,
// where a plain std::cout or Python print() runs only once, while tracing.
//
//   ef::print("step", step, "loss", loss);            // "step 3 loss 0.25" on stderr
//   ef::print_format("x = {}, y = {}\n", {x, y});     // one "{}" per tensor
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef {

enum class PrintStream { kStdout = 1, kStderr = 2 };

// Writes `format` with each "{}" replaced by the next input's values (NumPy style, as
// Tensor printing shows them; large tensors summarized with "...") and "{{" / "}}" by
// single braces, to `stream`, in one write. Throws InvalidArgumentError when the number
// of "{}" differs from the number of inputs or a brace is unmatched. Not
// differentiable; it has no outputs. In a graph it is a stateful node: functions and
// control-flow sub-graphs run it on every call, in program order.
void print_format(std::string format, const std::vector<Tensor>& inputs, PrintStream stream = PrintStream::kStderr,
                  CallSite where = CallSite::current());

// Prints its arguments separated by spaces and ended by a newline, to stderr:
// tensors by their values, anything else as an ostream writes it.
template <class... Args>
void print(const Args&... args) {
  std::string format;
  std::vector<Tensor> inputs;
  auto add = [&](const auto& arg) {
    if (!format.empty()) format += ' ';
    if constexpr (std::is_same_v<std::decay_t<decltype(arg)>, Tensor>) {
      format += "{}";
      inputs.push_back(arg);
    } else {
      std::ostringstream os;
      os << arg;
      for (char c : os.str()) format += (c == '{' || c == '}') ? std::string(2, c) : std::string(1, c);
    }
  };
  (add(args), ...);
  print_format(format + "\n", inputs);
}

}  // namespace ef
