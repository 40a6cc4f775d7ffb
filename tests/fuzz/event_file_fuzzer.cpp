// libFuzzer target for the TensorBoard event-file reader: the input bytes are a whole
// event file, read with ef::summary::parse_event_file (what read_event_file does after
// reading the file). Every ef::Error is an accepted outcome; a finding is anything else:
// a crash, an ASan/UBSan report, another exception type, or an accepted file whose
// values break their own description (a string tensor whose strings do not fill its
// shape, a numeric tensor of the wrong size).
#include <eagerflow/io/summary.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "event_file_fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<ef::summary::Event> events;
  try {
    events = ef::summary::parse_event_file({reinterpret_cast<const char*>(data), size}, "fuzz-input");
  } catch (const ef::Error&) {
    return 0;  // rejected with a typed error: fine
  }
  for (const ef::summary::Event& e : events)
    for (const ef::summary::Value& v : e.values) {
      if (v.tensor.defined()) {
        if (v.tensor.num_elements() < 0) finding("a tensor with a negative size");
        (void)v.tensor.to_vector<double>();  // every element readable
      } else if (static_cast<int64_t>(v.strings.size()) != v.string_shape.num_elements()) {
        finding("a string tensor whose strings do not fill its shape");
      }
    }
  return 0;
}
