// The summary ops: each turns its data into one Summary.Value as TensorFlow 2 writes it
// (Note [event files] in eagerflow/io/summary.h) and queues the event on the default
// writer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>

#include "eagerflow/core/error.h"
#include "eagerflow/graph/function.h"
#include "eagerflow/graph/graph.h"
#include "eagerflow/io/summary.h"
#include "eagerflow/ops/image.h"
#include "eagerflow/ops/math.h"
#include "png.h"
#include "summary_internal.h"
#include "tensorboard.pb.h"

namespace ef::summary {
namespace {

using ef_tensorboard::DataClass;

// The writer and step an op writes with; no writer: nothing to do.
struct Target {
  Writer writer;
  int64_t step = 0;
};

std::optional<Target> target(std::string_view op, std::optional<int64_t> step) {
  Writer writer = default_writer();
  if (!writer) return std::nullopt;
  if (!step) step = get_step();
  if (!step) fail(op, ": no step: pass step, or set a default one (set_step, or as_default's step)");
  return Target{std::move(writer), *step};
}

void check_name(std::string_view op, std::string_view name) {
  if (name.empty()) fail(op, ": name is empty");
}

ef_tensorboard::Summary::Value& add_value(ef_tensorboard::Event& event, std::string_view name,
                                          std::string_view plugin, DataClass data_class,
                                          std::string_view description) {
  ef_tensorboard::Summary::Value& value = *event.mutable_summary()->add_value();
  value.set_tag(std::string(name));
  ef_tensorboard::SummaryMetadata& metadata = *value.mutable_metadata();
  metadata.mutable_plugin_data()->set_plugin_name(std::string(plugin));
  metadata.set_summary_description(std::string(description));
  metadata.set_data_class(data_class);
  return value;
}

void write(const Target& to, ef_tensorboard::Event& event) {
  event.set_wall_time(detail::now_seconds());
  event.set_step(to.step);
  to.writer->write_event(event.SerializeAsString());
}

void set_shape(ef_tensorboard::TensorProto& tensor, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) tensor.mutable_tensor_shape()->add_dim()->set_size(d);
}

// Summaries read values on the host: `data` must be an eager real tensor.
void check_data(std::string_view op, const Tensor& data) {
  if (!data.defined()) fail(op, ": data is an undefined tensor");
  if (data.is_symbolic())
    fail<UnimplementedError>(op,
                             ": data is symbolic (inside ef.function or a graph); write summaries eagerly, "
                             "from the values a function returns");
  if (!is_floating(data.dtype()) && !is_integer(data.dtype()) && data.dtype() != DType::Bool)
    fail(op, ": data must be real, got ", data.dtype());
}

// The values of `data`, as float64.
std::vector<double> host_values(std::string_view op, const Tensor& data) {
  check_data(op, data);
  return data.to_vector<double>();
}

// TensorFlow 2's histogram buckets: `count` equal-width buckets from the minimum to the
// maximum, the last closed; all values equal: every bucket [v - 0.5, v + 0.5], the
// values counted in the last. Rows of (left edge, right edge, count).
std::vector<double> histogram_buckets(const std::vector<double>& values, int count) {
  std::vector<double> rows(static_cast<size_t>(count) * 3, 0.0);
  if (values.empty()) return rows;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double min = *lo, max = *hi;
  if (min == max) {
    for (int i = 0; i < count; ++i) {
      rows[3 * i] = min - 0.5;
      rows[3 * i + 1] = min + 0.5;
    }
    rows[3 * (count - 1) + 2] = static_cast<double>(values.size());
    return rows;
  }
  // Scaled first, so that a range beyond the largest double (-1e308 to 1e308) stays finite.
  const double width = max / count - min / count;
  for (double v : values) {
    const double offset = v / width - min / width;
    const int bucket = std::clamp(static_cast<int>(std::floor(offset)), 0, count - 1);
    rows[3 * bucket + 2] += 1;
  }
  for (int i = 0; i < count; ++i) {  // linspace(min, max, count + 1), the last edge exactly max
    rows[3 * i] = min + width * i;
    rows[3 * i + 1] = i + 1 == count ? max : min + width * (i + 1);
  }
  return rows;
}

}  // namespace

namespace {

void write_scalar(const Target& to, std::string_view name, double data, std::string_view description) {
  ef_tensorboard::Event event;
  auto& value = add_value(event, name, "scalars", ef_tensorboard::DATA_CLASS_SCALAR, description);
  ef_tensorboard::TensorProto& tensor = *value.mutable_tensor();
  tensor.set_dtype(ef_tensorboard::DT_FLOAT);
  tensor.mutable_tensor_shape();  // rank 0
  tensor.add_float_val(static_cast<float>(data));
  write(to, event);
}

}  // namespace

bool scalar(std::string_view name, const Tensor& data, std::optional<int64_t> step,
            std::string_view description) {
  check_name("summary.scalar", name);
  const std::optional<Target> to = target("summary.scalar", step);
  if (!to) return false;
  check_data("summary.scalar", data);
  if (data.rank() != 0) fail("summary.scalar: data must be a scalar (rank 0), got shape ", data.shape());
  write_scalar(*to, name, host_values("summary.scalar", data)[0], description);
  return true;
}

bool scalar(std::string_view name, double data, std::optional<int64_t> step, std::string_view description) {
  check_name("summary.scalar", name);
  const std::optional<Target> to = target("summary.scalar", step);
  if (!to) return false;
  write_scalar(*to, name, data, description);
  return true;
}

bool histogram(std::string_view name, const Tensor& data, std::optional<int64_t> step, int buckets,
               std::string_view description) {
  check_name("summary.histogram", name);
  if (buckets < 1) fail("summary.histogram: buckets must be at least 1, got ", buckets);
  const std::optional<Target> to = target("summary.histogram", step);
  if (!to) return false;
  const std::vector<double> values = host_values("summary.histogram", data);
  const auto bad = std::count_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
  if (bad)
    fail("summary.histogram: '", name, "' has ", bad, " non-finite values (NaN or infinity) among ",
         values.size(), " of shape ", data.shape());
  const std::vector<double> rows = histogram_buckets(values, buckets);
  ef_tensorboard::Event event;
  auto& value = add_value(event, name, "histograms", ef_tensorboard::DATA_CLASS_TENSOR, description);
  ef_tensorboard::TensorProto& tensor = *value.mutable_tensor();
  tensor.set_dtype(ef_tensorboard::DT_DOUBLE);
  set_shape(tensor, {buckets, 3});
  tensor.set_tensor_content(
      std::string(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(double)));
  write(*to, event);
  return true;
}

bool image(std::string_view name, const Tensor& data, std::optional<int64_t> step, int max_outputs,
           std::string_view description) {
  check_name("summary.image", name);
  if (max_outputs < 1) fail("summary.image: max_outputs must be at least 1, got ", max_outputs);
  const std::optional<Target> to = target("summary.image", step);
  if (!to) return false;
  check_data("summary.image", data);
  const Shape& s = data.shape();
  if (s.rank() != 4 || (s[3] != 1 && s[3] != 3 && s[3] != 4))
    fail("summary.image: data must be [k, height, width, channels] with 1, 3 or 4 channels, got shape ", s);
  if (s[1] == 0 || s[2] == 0) fail("summary.image: images of shape ", s, " have no pixels");
  const int64_t count = std::min<int64_t>(s[0], max_outputs);
  const int64_t height = s[1], width = s[2], channels = s[3], per_image = height * width * channels;
  const bool floating = is_floating(data.dtype());
  ef_tensorboard::Event event;
  auto& value = add_value(event, name, "images", ef_tensorboard::DATA_CLASS_BLOB_SEQUENCE, description);
  ef_tensorboard::TensorProto& tensor = *value.mutable_tensor();
  tensor.set_dtype(ef_tensorboard::DT_STRING);
  set_shape(tensor, {2 + count});
  tensor.add_string_val(std::to_string(width));
  tensor.add_string_val(std::to_string(height));
  std::vector<uint8_t> pixels(static_cast<size_t>(per_image));
  // The small integer dtypes span their whole range, as TensorFlow's convert_image_dtype
  // reads them (a uint16 65535 is white); int32 and int64 pixels are 0..255.
  const Tensor images = is_small_integer(data.dtype()) && data.dtype() != DType::UInt8
                            ? convert_image_dtype(data, DType::UInt8)
                            : data;
  for (int64_t k = 0; k < count; ++k) {
    const std::vector<double> values = host_values("summary.image", images[k]);
    for (int64_t i = 0; i < per_image; ++i) {
      const double v = values[static_cast<size_t>(i)];
      if (floating) {  // tf.image.convert_image_dtype(saturate=True): x * 255.5, clamped, truncated
        pixels[i] = static_cast<uint8_t>(std::isnan(v) ? 0 : std::clamp(v * 255.5, 0.0, 255.0));
      } else {
        if (v < 0 || v > 255)
          fail("summary.image: integer pixels must lie in 0..255, got ", v, " in image ", k, " of shape ", s);
        pixels[i] = static_cast<uint8_t>(v);
      }
    }
    tensor.add_string_val(io::detail::encode_png(pixels.data(), height, width, static_cast<int>(channels)));
  }
  write(*to, event);
  return true;
}

namespace {

// A string tensor for the text plugin: a scalar (one string) or a vector.
bool write_text(std::string_view name, const std::vector<std::string>& strings, bool scalar,
                std::optional<int64_t> step, std::string_view description) {
  check_name("summary.text", name);
  const std::optional<Target> to = target("summary.text", step);
  if (!to) return false;
  ef_tensorboard::Event event;
  auto& value = add_value(event, name, "text", ef_tensorboard::DATA_CLASS_TENSOR, description);
  ef_tensorboard::TensorProto& tensor = *value.mutable_tensor();
  tensor.set_dtype(ef_tensorboard::DT_STRING);
  tensor.mutable_tensor_shape();
  if (!scalar) set_shape(tensor, {static_cast<int64_t>(strings.size())});
  for (const std::string& s : strings) tensor.add_string_val(s);
  write(*to, event);
  return true;
}

}  // namespace

bool text(std::string_view name, std::string_view data, std::optional<int64_t> step,
          std::string_view description) {
  return write_text(name, {std::string(data)}, /*scalar=*/true, step, description);
}

bool text(std::string_view name, const std::vector<std::string>& data, std::optional<int64_t> step,
          std::string_view description) {
  return write_text(name, data, /*scalar=*/false, step, description);
}

}  // namespace ef::summary
