// libFuzzer target for the checkpoint reader: the input bytes are a whole safetensors
// file, read with ef::io::parse_safetensors (the in-memory form of load_safetensors).
//
// Every ef::Error is an accepted outcome. A finding is anything else: a crash, an
// ASan/UBSan report, another exception type, or an accepted file that does not survive
// a round trip (re-serializing what was read and reading it again must give the same
// tensors, bit for bit, and the same metadata).
#include <eagerflow/io/safetensors.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "checkpoint_fuzzer: %s\n", what);
  std::abort();
}

bool same_bytes(const ef::Tensor& a, const ef::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const size_t n = static_cast<size_t>(a.num_elements()) * ef::size_of(a.dtype());
  return n == 0 || std::memcmp(a.raw_data(), b.raw_data(), n) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ef::io::TensorFile file;
  try {
    file = ef::io::parse_safetensors({data, size}, "fuzz-input");
  } catch (const ef::Error&) {
    return 0;  // rejected with a typed error: fine
  }
  try {
    std::vector<uint8_t> again = ef::io::serialize_safetensors(file.tensors, file.metadata);
    ef::io::TensorFile reread = ef::io::parse_safetensors(again, "round-trip");
    if (reread.metadata != file.metadata || reread.tensors.size() != file.tensors.size())
      finding("round trip changed the metadata or the tensor list");
    for (const auto& [name, t] : file.tensors) {
      auto it = reread.tensors.find(name);
      if (it == reread.tensors.end() || !same_bytes(t, it->second)) finding("round trip changed a tensor");
    }
  } catch (const ef::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    finding("an accepted file failed to round-trip");
  }
  return 0;
}
