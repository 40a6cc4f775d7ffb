// The print op: one definition serves eager calls and graphs (a stateful node).
#include <cstdio>
#include <mutex>

#include "core/tensor_format.h"
#include "eagerflow/ops/logging.h"
#include "eagerflow/runtime/dispatch.h"

namespace ef {
namespace {

enum PrintAttr { kFormat, kStream };

// The literal pieces of `format` around its "{}" slots (inputs + 1 pieces), or an
// InvalidArgumentError naming the problem.
std::vector<std::string> split_format(const std::string& format, size_t inputs) {
  std::vector<std::string> pieces(1);
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    const char next = i + 1 < format.size() ? format[i + 1] : '\0';
    if (c == '{' && next == '}') {
      pieces.emplace_back();
      ++i;
    } else if ((c == '{' || c == '}') && next == c) {
      pieces.back() += c;
      ++i;
    } else if (c == '{' || c == '}') {
      fail("print: the format has an unmatched '", c, "' at position ", i, " (write \"", c, c,
           "\" for a literal brace): \"", format, "\"");
    } else {
      pieces.back() += c;
    }
  }
  if (pieces.size() - 1 != inputs)
    fail("print: the format has ", pieces.size() - 1, " \"{}\" slot(s) but ", inputs, " tensor(s) were given: \"",
         format, "\"");
  return pieces;
}

void infer_print(const OpCall& call, OutputMetas&) {
  split_format(call.attrs.get<std::string>(kFormat), call.inputs.size());
  const int64_t stream = call.attrs.get_int(kStream);
  if (stream != static_cast<int64_t>(PrintStream::kStdout) && stream != static_cast<int64_t>(PrintStream::kStderr))
    fail("print: unknown output stream ", stream, " (1: stdout, 2: stderr)");
}

void print_cpu(const OpCall& call, std::span<Tensor>) {
  const std::vector<std::string> pieces = split_format(call.attrs.get<std::string>(kFormat), call.inputs.size());
  std::string text = pieces[0];
  for (size_t i = 0; i < call.inputs.size(); ++i) text += detail::format_values(call.inputs[i]) + pieces[i + 1];
  // One write per print, so prints from several threads never interleave within a line.
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::FILE* out = call.attrs.get_int(kStream) == static_cast<int64_t>(PrintStream::kStdout) ? stdout : stderr;
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

const OpDef& kPrint = define_op({
    .name = "print",
    .attr_names = {"format", "stream"},
    .infer = infer_print,
    .kernels = {print_cpu},
    .not_differentiable = "it prints and has no outputs",
    .traits = {.stateful = true},
});

}  // namespace

void print_format(std::string format, const std::vector<Tensor>& inputs, PrintStream stream, CallSite where) {
  run_op_multi(kPrint, inputs, {std::move(format), static_cast<int64_t>(stream)}, where);
}

}  // namespace ef
