// Summaries: training curves, histograms, images, text and graphs written as
// TensorBoard event files (TensorFlow's tf.summary).
//
//   auto writer = ef::summary::create_file_writer("logs/run1");
//   ef::summary::WriterScope scope(writer);            // writer.as_default()
//   for (int64_t step = 0; step < 100; ++step) {
//     ...
//     ef::summary::scalar("loss", loss, step);
//     ef::summary::histogram("weights", w.value(), step);
//   }
//   writer->flush();                                   // `tensorboard --logdir logs`
//
// Note [event files]: a file is a sequence of TFRecords (little-endian uint64 length,
// masked CRC32C of the length, the bytes, masked CRC32C of the bytes), each holding one
// serialized `Event` protocol buffer (src/io/proto/tensorboard.proto). The first event
// names the format version ("brain.Event:2"). Summaries are written as TensorFlow 2
// writes them: a tensor with the plugin's metadata (scalars: a float32 scalar;
// histograms: float64 [buckets, 3] of left edge, right edge, count; images: a string
// vector of width, height and one PNG per image; text: a string tensor).
//
// Writing never blocks the step: ops serialize the event and queue it; the writer's
// thread appends queued events to the file when `max_queue` are waiting, every
// `flush_millis`, on flush() and on close(). Each batch is one write() of whole records,
// so a crash leaves every record written before it readable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef {
class Graph;
}

namespace ef::summary {

struct FileWriterOptions {
  int max_queue = 10;              // events held before the writer thread writes them
  int64_t flush_millis = 120'000;  // and at least this often
  std::string filename_suffix = ".v2";
};

class SummaryWriter {
 public:
  // Creates `logdir` (and its parents) and a new event file in it named
  // events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>, as TensorFlow names them.
  SummaryWriter(std::string logdir, FileWriterOptions options = {});
  ~SummaryWriter();  // close()
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // Queues one serialized Event protocol buffer (the summary ops call this).
  void write_event(std::string serialized_event);
  // Returns when every event queued so far is in the file. An I/O error of the writer
  // thread (a full disk) is raised here and by later writes.
  void flush();
  // Flushes and closes the file; later writes raise FailedPreconditionError.
  void close();
  bool closed() const;

  const std::string& logdir() const;
  const std::string& path() const;  // the event file

 private:
  struct State;
  std::unique_ptr<State> state_;
};

using Writer = std::shared_ptr<SummaryWriter>;

// tf.summary.create_file_writer.
Writer create_file_writer(const std::string& logdir, FileWriterOptions options = {});

// writer.as_default(step=...): while alive, the summary ops of this thread write to
// `writer`, and `step` (when given) is the default step. Scopes nest.
class WriterScope {
 public:
  explicit WriterScope(Writer writer, std::optional<int64_t> step = std::nullopt);
  ~WriterScope();
  WriterScope(const WriterScope&) = delete;
  WriterScope& operator=(const WriterScope&) = delete;

 private:
  Writer previous_writer_;
  std::optional<int64_t> previous_step_;
  bool sets_step_;
};

// The writer the summary ops of this thread write to; null when none.
Writer default_writer();
// tf.summary.experimental.set_step / get_step: the step summary ops use when called
// without one (per thread).
void set_step(std::optional<int64_t> step);
std::optional<int64_t> get_step();

// The summary ops. Each returns false, writing nothing, when this thread has no default
// writer (as TensorFlow's do), and raises InvalidArgumentError when neither `step` nor a
// default step is set. Tensors may live on any device; their values are read once.
//
// A real scalar (rank 0, any real or bool dtype; written as float32).
bool scalar(std::string_view name, const Tensor& data, std::optional<int64_t> step = std::nullopt,
            std::string_view description = {});
bool scalar(std::string_view name, double data, std::optional<int64_t> step = std::nullopt,
            std::string_view description = {});
// The values of `data` (any shape, real dtype, finite) in `buckets` equal-width buckets
// between their minimum and maximum (TensorFlow 2's rule; one value: all in the last).
bool histogram(std::string_view name, const Tensor& data, std::optional<int64_t> step = std::nullopt,
               int buckets = 30, std::string_view description = {});
// Images [k, height, width, channels] (channels 1, 3 or 4): floats in [0, 1], int8 to uint32
// over their whole range (scaled as convert_image_dtype does), int32 and int64 in 0..255;
// the first `max_outputs` are written as PNG.
bool image(std::string_view name, const Tensor& data, std::optional<int64_t> step = std::nullopt,
           int max_outputs = 3, std::string_view description = {});
// Text (Markdown in TensorBoard's text tab): one string, or several ([n]).
bool text(std::string_view name, std::string_view data, std::optional<int64_t> step = std::nullopt,
          std::string_view description = {});
bool text(std::string_view name, const std::vector<std::string>& data,
          std::optional<int64_t> step = std::nullopt, std::string_view description = {});
// The graph's nodes, their inputs, dtypes and shapes as a GraphDef (TensorBoard's graph
// tab); tf.summary.graph.
bool graph(const Graph& graph, std::optional<int64_t> step = std::nullopt);

// tf.summary.trace_on / trace_export / trace_off: while tracing is on, the graph of
// every function this thread calls (ef::function) is kept; trace_export writes them to
// the default writer as one GraphDef (each function's nodes under its name, as a name
// scope) and stops tracing. `name` says which trace it was in errors.
void trace_on();
bool trace_export(std::string_view name, std::optional<int64_t> step = std::nullopt);
void trace_off();
bool tracing();

// ---- reading event files back (tests, tools) ----

struct Value {
  std::string tag;
  std::string plugin_name;  // "scalars", "histograms", "images", "text"
  std::string description;
  int data_class = 0;  // SummaryMetadata.DataClass: 1 scalar, 2 tensor, 3 blob sequence
  Tensor tensor;       // numeric tensors (float32, float64, int32, int64, bool)
  Shape string_shape;  // string tensors: their shape and elements, row-major
  std::vector<std::string> strings;
};

struct GraphNodeDef {
  std::string name, op;
  std::vector<std::string> inputs;
};

struct Event {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;  // the first event's
  bool has_graph = false;    // a graph event: its GraphDef's nodes
  std::vector<GraphNodeDef> graph_nodes;
  std::vector<Value> values;
};

// Reads every record of an event file, checking both CRCs of each, and parses it.
// A damaged or truncated record is a DataLossError naming the file and the byte offset.
std::vector<Event> read_event_file(const std::string& path);
// The same for the bytes of an event file held in memory; `name` is used in errors.
std::vector<Event> parse_event_file(std::string_view content, const std::string& name);

}  // namespace ef::summary
