// GradientSync: bucketed all-reduce of gradients during the backward pass (Note
// [gradient buckets] in eagerflow/distribute/gradient_sync.h).
#include "eagerflow/distribute/gradient_sync.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "distribute/process_group.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/runtime/dispatch.h"

namespace ef::distribute {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Gradients of half dtypes travel as float32 (MPI has no 16-bit float type).
DType transport_dtype(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 ? DType::Float32 : dtype;
}

// The all-reduce of one bucket, on the communication thread (holding the group's mutex).
void reduce_in_place(detail::Group& g, const Tensor& buffer, const std::string& what, bool mean) {
  detail::check_agreement(g, "GradientSync", what);
  if (!g.uses_mpi) return;
  if (buffer.num_elements() > INT_MAX)
    fail<ResourceExhaustedError>("GradientSync: a bucket of ", buffer.num_elements(),
                                 " elements is more than one MPI call carries (lower bucket_cap_mb)");
  MPI_Request request;
  void* data = const_cast<void*>(buffer.raw_data());
  if (MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(buffer.num_elements()),
                     detail::mpi_type(buffer.dtype(), "GradientSync"), MPI_SUM, g.comm,
                     &request) != MPI_SUCCESS)
    fail<InternalError>("GradientSync: MPI_Iallreduce failed for ", what);
  detail::wait(g, request, what);
  if (mean) detail::divide_in_place(buffer, g.size);
}

// Note [buckets in functions]: traced into a function (no tape recording it), a
// bucket's all-reduce is two stateful ops. gradient_bucket_start copies the buffer and
// starts its all-reduce on the communication thread; gradient_bucket_wait, created
// after the rest of the backward pass, waits for it and gives the reduced values.
// Graphs run stateful nodes in creation order, so the backward ops created between the
// two run while the bucket travels, as they do eagerly.
enum BucketAttr { kWhat, kMean };

std::mutex started_mutex;
std::unordered_map<const void*, std::shared_future<void>> started_buckets;  // by staging buffer

void infer_bucket(const OpCall& call, OutputMetas& out) {
  detail::group(call.op.name);
  if (call.inputs.size() != 1 || call.inputs[0].rank() != 1)
    fail<InternalError>(call.op.name, ": takes one flat bucket");
  detail::mpi_type(call.inputs[0].dtype(), call.op.name);
  out.add(call.inputs[0].dtype(), call.inputs[0].shape());
}

size_t bytes_of(const Tensor& t) { return static_cast<size_t>(t.num_elements()) * size_of(t.dtype()); }

void bucket_start_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor staging = outputs[0];  // the all-reduce writes here, in place
  const Tensor x = call.inputs[0].contiguous();
  if (staging.raw_data() != x.raw_data())  // a graph may hand the input's buffer on
    std::memcpy(const_cast<void*>(staging.raw_data()), x.raw_data(), bytes_of(x));
  detail::Group& g = detail::group(call.op.name);
  const bool mean = call.attrs.get_int(kMean) != 0;
  std::future<void> done =
      detail::start_in_order(g, [&g, staging, mean, what = call.attrs.get<std::string>(kWhat)] {
        reduce_in_place(g, staging, what, mean);
      });
  std::lock_guard lock(started_mutex);
  started_buckets[staging.raw_data()] = done.share();
}

void bucket_wait_cpu(const OpCall& call, std::span<Tensor> outputs) {
  const Tensor& staging = call.inputs[0];
  std::shared_future<void> done;
  {
    std::lock_guard lock(started_mutex);
    auto found = started_buckets.find(staging.raw_data());
    if (found == started_buckets.end())
      fail<InternalError>(call.op.name, ": no all-reduce was started for this bucket");
    done = found->second;
    started_buckets.erase(found);
  }
  done.get();  // rethrows the all-reduce's error
  if (outputs[0].raw_data() != staging.raw_data())
    std::memcpy(const_cast<void*>(outputs[0].raw_data()), staging.raw_data(), bytes_of(staging));
}

// Differentiating through them raises (a pass that a tape records uses all_reduce,
// whose gradient exists); it never quietly gives no gradient.
std::vector<Tensor> refuse_gradient(const GradCall& call) {
  fail<UnimplementedError>("gradient: op '", call.forward.op.name,
                           "' (a gradient bucket traced into a function) has no gradient; differentiate the "
                           "synchronized gradients under a tape that records their computation instead");
}

const OpDef& kBucketStart = define_op({
    .name = "gradient_bucket_start",
    .attr_names = {"what", "mean"},
    .infer = infer_bucket,
    .kernels = {bucket_start_cpu},
    .gradient = refuse_gradient,
    .traits = {.stateful = true},
});

const OpDef& kBucketWait = define_op({
    .name = "gradient_bucket_wait",
    .infer = infer_bucket,
    .kernels = {bucket_wait_cpu},
    .gradient = refuse_gradient,
    .traits = {.stateful = true},
});

// What an eager bucket's work on the communication thread gives back.
struct Background {
  Tensor reduced;
  double seconds = 0;  // flattening and all-reducing, end to end
};

// How a bucket is reduced.
enum class Reduced {
  kByAllReduce,   // recorded by a tape: an all_reduce op (sum), divided after for kMean
  kByBucketOps,   // traced: gradient_bucket_start/wait (Note [buckets in functions])
  kInBackground,  // eager: on the communication thread
};

// One bucket: gradients of one transport dtype, flattened into one buffer followed by
// one flag per variable (1 where this rank has a gradient), reduced with a sum (and
// divided by size() for kMean).
struct Bucket {
  DType dtype = DType::Float32;
  std::vector<size_t> variables;  // indices into the call's variables
  std::vector<Tensor> pieces;     // flattened gradients in transport dtype, once ready
  std::vector<double> flags;
  size_t missing = 0;  // variables whose gradient is not final yet
  int64_t bytes = 0;
  Reduced how = Reduced::kByAllReduce;
  // The reduced buffer; for kByBucketOps, gradient_bucket_start's output until finish().
  Tensor reduced;
  std::future<void> done;  // kInBackground: the work, which fills `background`
  std::shared_ptr<Background> background;
};

}  // namespace

class GradientSync::Hook : public GradientHook {
 public:
  explicit Hook(GradientSyncOptions options) : options_(options) {}

  std::unique_ptr<GradientHookCall> begin(std::span<const Variable> variables, bool recorded) override;

  GradientSyncStats last_stats() const {
    std::lock_guard lock(stats_mutex_);
    return stats_;
  }
  void set_stats(const GradientSyncStats& stats) {
    std::lock_guard lock(stats_mutex_);
    stats_ = stats;
  }

  const GradientSyncOptions options_;

 private:
  mutable std::mutex stats_mutex_;
  GradientSyncStats stats_;
};

namespace {

class SyncCall : public GradientHookCall {
 public:
  SyncCall(GradientSync::Hook& hook, std::span<const Variable> variables, bool recorded)
      : hook_(hook),
        group_(detail::group("GradientSync")),
        variables_(variables.begin(), variables.end()),
        recorded_(recorded),
        place_(variables.size(), {SIZE_MAX, 0}) {
    plan_buckets();
  }

  ~SyncCall() override {
    // Abandoned (the backward pass threw): the started all-reduces own their buffers and
    // finish on their own; waiting keeps this rank's later collectives in order.
    for (Bucket& b : buckets_)
      if (b.done.valid()) b.done.wait();
  }

  void ready(size_t index, const Tensor& gradient) override {
    const auto [bucket_index, slot] = place_[index];
    if (bucket_index == SIZE_MAX) return;  // not a float variable: no gradient, no slot
    Bucket& b = buckets_[bucket_index];
    const Variable& v = variables_[index];
    Tensor flat =
        gradient.defined() ? reshape(gradient, Shape{-1}) : zeros(Shape{v.shape().num_elements()}, b.dtype);
    b.pieces[slot] = flat.dtype() == b.dtype ? flat : cast(flat, b.dtype);
    b.flags[slot] = gradient.defined() ? 1.0 : 0.0;
    if (--b.missing == 0) send_complete_buckets();
  }

  std::vector<Tensor> finish() override {
    send_complete_buckets();
    if (sent_ != buckets_.size())
      fail<InternalError>("GradientSync: ", buckets_.size() - sent_, " gradient buckets never completed");
    const Clock::time_point waiting = Clock::now();
    GradientSyncStats stats;
    for (Bucket& b : buckets_) {
      if (b.done.valid()) {
        b.done.get();  // rethrows the all-reduce's error
        b.reduced = b.background->reduced;
        stats.communication_seconds += b.background->seconds;
      }
      stats.bytes += b.bytes;
    }
    stats.buckets = static_cast<int>(buckets_.size());
    stats.exposed_seconds = recorded_ ? 0 : seconds_since(waiting);
    hook_.set_stats(stats);

    std::vector<Tensor> result(variables_.size());
    for (Bucket& b : buckets_) {
      if (b.how == Reduced::kByBucketOps)  // awaited now: after every op of the backward pass
        b.reduced = run_op(kBucketWait, {b.reduced}, {}, CallSite{});
      if (b.how == Reduced::kByAllReduce && hook_.options_.reduction == Reduction::kMean && group_.size > 1)
        b.reduced = divide(b.reduced, static_cast<double>(group_.size));
      unpack(b, result);
    }
    return result;
  }

 private:
  // Each gradient of a reduced bucket is a slice of its buffer: a view eagerly, an op
  // when traced or recorded (so that it is traced or differentiated too).
  void unpack(const Bucket& b, std::vector<Tensor>& result) {
    const int64_t slots = static_cast<int64_t>(b.variables.size());
    const Tensor flags = slice(b.reduced, {b.reduced.shape()[0] - slots}, {slots});
    // How many ranks had each gradient (over size() for kMean). Traced, a rank that has
    // none sends zeros and the graph cannot tell: each is taken as defined.
    const std::vector<double> counts = flags.is_symbolic() ? std::vector<double>(b.variables.size(), 1.0)
                                                           : cast(flags, DType::Float64).to_vector<double>();
    int64_t offset = 0;
    for (size_t k = 0; k < b.variables.size(); ++k) {
      const int64_t size = b.pieces[k].shape()[0];
      const size_t i = b.variables[k];
      if (counts[k] != 0)  // a gradient that no rank has stays undefined
        result[i] =
            with_dtype(reshape(slice(b.reduced, {offset}, {size}), variables_[i].shape()), variables_[i]);
      offset += size;
    }
  }

  static Tensor with_dtype(const Tensor& g, const Variable& v) {
    return g.dtype() == v.dtype() ? g : cast(g, v.dtype());
  }

  // Note [gradient buckets]: the buckets depend only on the call's variables (last to
  // first, as the backward pass roughly finishes them), so every rank makes the same
  // ones whatever order its gradients come in; they are sent in index order.
  void plan_buckets() {
    std::map<DType, size_t> open;  // transport dtype -> index of its open bucket
    const double cap = hook_.options_.bucket_cap_mb * (1 << 20);
    // The first bucket is small (1 MB at most, as PyTorch's DDP makes it), so that the
    // first all-reduce starts early in the backward pass.
    const double first_cap = std::min(cap, double{1 << 20});
    for (size_t i = variables_.size(); i-- > 0;) {
      const Variable& v = variables_[i];
      if (!is_floating(v.dtype())) continue;
      const DType dtype = transport_dtype(v.dtype());
      auto found = open.find(dtype);
      if (found == open.end()) {
        found = open.emplace(dtype, buckets_.size()).first;
        buckets_.emplace_back().dtype = dtype;
      }
      Bucket& b = buckets_[found->second];
      place_[i] = {found->second, b.variables.size()};
      b.variables.push_back(i);
      b.bytes += v.shape().num_elements() * static_cast<int64_t>(size_of(dtype));
      ++b.missing;
      if (static_cast<double>(b.bytes) >= (found->second == 0 ? first_cap : cap)) open.erase(found);
    }
    for (Bucket& b : buckets_) {
      b.pieces.resize(b.variables.size());
      b.flags.resize(b.variables.size());
    }
  }

  // Sends the buckets whose gradients are all final, in index order: every rank starts
  // the same collectives in the same order.
  void send_complete_buckets() {
    while (sent_ < buckets_.size() && buckets_[sent_].missing == 0) send(buckets_[sent_++]);
  }

  // Flattens a bucket into one buffer and starts its all-reduce.
  void send(Bucket& b) {
    std::vector<Tensor> pieces = b.pieces;
    pieces.push_back(cast(constant(b.flags, Shape{static_cast<int64_t>(b.flags.size())}), b.dtype));
    const bool mean = hook_.options_.reduction == Reduction::kMean;
    const bool on_cpu = std::all_of(pieces.begin(), pieces.end(),
                                    [](const Tensor& p) { return p.device().type == DeviceType::CPU; });
    if (recorded_ || !on_cpu) {
      b.reduced = all_reduce(concat(pieces, 0), Reduction::kSum);  // differentiable; refused on GPUs
      return;
    }
    if (b.pieces.front().is_symbolic()) {  // Note [buckets in functions]
      b.how = Reduced::kByBucketOps;
      b.reduced = run_op(kBucketStart, {concat(pieces, 0)}, {describe(b), int64_t{mean}}, CallSite{});
      return;
    }
    // Eager: flattened into one new buffer on the communication thread as well, so that
    // the backward pass only hands the pieces over.
    b.how = Reduced::kInBackground;
    b.background = std::make_shared<Background>();
    detail::Group& g = group_;
    b.done = detail::start_in_order(
        g, [&g, pieces = std::move(pieces), mean, what = describe(b), background = b.background] {
          const Clock::time_point start = Clock::now();
          Tensor buffer = concat(pieces, 0);  // a new tensor: the flags are appended
          reduce_in_place(g, buffer, what, mean);
          background->reduced = std::move(buffer);
          background->seconds = seconds_since(start);
        });
  }

  // "gradient bucket 0 float32: 12 [3, 4], 10 [10], ...": what the ranks must agree on.
  std::string describe(const Bucket& b) const {
    std::string text = ef::detail::str("gradient bucket ", sent_ - 1, " ", b.dtype, ":");
    for (size_t i : b.variables) text += ef::detail::str(" ", i, " ", variables_[i].shape().to_string(), ",");
    return text;
  }

  GradientSync::Hook& hook_;
  detail::Group& group_;
  std::vector<Variable> variables_;
  bool recorded_;
  std::vector<std::pair<size_t, size_t>> place_;  // per variable: bucket and slot
  std::vector<Bucket> buckets_;
  size_t sent_ = 0;  // buckets started
};

}  // namespace

std::unique_ptr<GradientHookCall> GradientSync::Hook::begin(std::span<const Variable> variables,
                                                            bool recorded) {
  return std::make_unique<SyncCall>(*this, variables, recorded);
}

GradientSync::GradientSync(GradientSyncOptions options) {
  detail::group("GradientSync");
  if (options.reduction != Reduction::kSum && options.reduction != Reduction::kMean)
    fail("GradientSync: reduction must be sum or mean, got ", name(options.reduction));
  if (!(options.bucket_cap_mb > 0))
    fail("GradientSync: bucket_cap_mb must be positive, got ", options.bucket_cap_mb);
  hook_ = std::make_shared<Hook>(options);
}

GradientSync::GradientSync(const std::vector<Variable>& variables, GradientSyncOptions options)
    : GradientSync(options) {
  registration_ = register_gradient_hook(variables, hook_);
}

GradientSync GradientSync::for_this_thread(GradientSyncOptions options) {
  GradientSync sync(options);
  sync.scope_ = std::make_unique<GradientHookScope>(sync.hook_);
  return sync;
}

GradientSyncStats GradientSync::last_stats() const { return hook_->last_stats(); }

}  // namespace ef::distribute
