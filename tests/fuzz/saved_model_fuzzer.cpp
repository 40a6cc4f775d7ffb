// libFuzzer target for the saved-model reader: the input bytes are both files of a
// saved model, the graph file's length as 4 little-endian bytes, the graph file, then
// the variables file; read with ef::saved_model::load_from_bytes (what load does after
// reading the files). Seeds in saved_model_corpus/ are real saved models.
//
// Every ef::Error is an accepted outcome. A model that loads is also run, each export
// on zeros of its input specs (unknown sizes as 2): a graph the reader accepted must
// run or fail with a typed error. Exports with a while loop are not run: a changed
// condition makes a valid loop that never ends. A finding is anything else: a crash,
// an ASan/UBSan report, another exception type.
#include <eagerflow/eagerflow.h>
#include <eagerflow/saved_model/saved_model.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "saved_model_fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const size_t graph_size =
      data[0] | (size_t{data[1]} << 8) | (size_t{data[2]} << 16) | (size_t{data[3]} << 24);
  if (graph_size > size - 4) return 0;
  const std::string graph(reinterpret_cast<const char*>(data) + 4, graph_size);
  const std::string variables(reinterpret_cast<const char*>(data) + 4 + graph_size, size - 4 - graph_size);
  try {
    const ef::saved_model::LoadedModel model =
        ef::saved_model::load_from_bytes(graph, variables, "fuzz-input");
    for (const ef::saved_model::Export& e : model.exports()) {
      bool loops = false;
      for (const ef::NodeInfo& node : e.function.graph().nodes()) loops = loops || node.op == "while";
      if (loops) continue;
      std::vector<ef::Tensor> args;
      for (const ef::TensorSpec& s : e.function.input_signature()) {
        ef::Shape shape = s.shape;
        for (int d = 0; d < shape.rank(); ++d)
          if (shape[d] == ef::kUnknownDim) shape[d] = 2;
        if (shape.num_elements() > (1 << 20)) return 0;  // a huge input: not worth allocating
        args.push_back(ef::zeros(shape, s.dtype));
      }
      try {
        e.function(args);
      } catch (const ef::Error&) {
      }
    }
  } catch (const ef::Error&) {
    return 0;  // rejected with a typed error: fine
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    finding("an exception that is not an ef::Error");
  }
  return 0;
}
