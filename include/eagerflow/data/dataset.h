// Dataset: input pipelines with tf.data's semantics.
//
//   auto [train, test] = ef::data::datasets::fashion_mnist();
//   ef::data::Dataset ds = ef::data::Dataset::from_tensor_slices({train.images, train.labels})
//                              .shuffle(10000, /*seed=*/42)
//                              .batch(32)
//                              .prefetch(2);
//   for (int epoch = 0; epoch < 5; ++epoch)
//     for (const ef::data::Element& batch : ds) {   // batch[0]: [32,28,28], batch[1]: [32]
//       ...
//     }
//
// A Dataset is an immutable description of a pipeline: transformations return new
// Datasets sharing the old one, so copies are cheap. Iterating (range-for, or
// make_iterator()) starts a fresh pass over the data each time; with shuffle's
// reshuffle_each_iteration, each pass sees another order.
//
// Elements are tuples of tensors (`Element`, a std::vector<Tensor>): from_tensor_slices
// of {images, labels} yields {image, label} pairs. Batching rows that come straight
// from from_tensor_slices (optionally through shuffle, take, repeat) gathers them into
// the batch with one copy per component, without making per-row tensors.
//
// Threads: map(fn, n > 1) calls fn on worker threads, prefetch runs its input on a
// background thread. Each of those threads has its own (eager, tape-free) context
// (Note [thread-local context] in runtime/context.h); errors thrown there reach the
// consumer when it asks for the element that failed.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "eagerflow/core/error.h"
#include "eagerflow/core/tensor.h"

namespace ef::data {

// One element of a dataset: a tuple of tensors.
using Element = std::vector<Tensor>;
// A map function: one element in, one element out.
using MapFn = std::function<Element(const Element&)>;

// cardinality() values that are not counts (TensorFlow's constants).
inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;
// For map's num_parallel_calls and prefetch's buffer_size: let eagerflow choose
// (the thread count, resp. a small buffer).
inline constexpr int64_t kAutotune = -1;

namespace detail {
class DatasetNode;
class IteratorImpl;
}  // namespace detail

// One pass over a Dataset. Move-only; destroying it early stops its background
// threads (prefetch, parallel map) cleanly.
class Iterator {
 public:
  Iterator();
  explicit Iterator(std::unique_ptr<detail::IteratorImpl> impl);
  Iterator(Iterator&&) noexcept;
  Iterator& operator=(Iterator&&) noexcept;
  ~Iterator();

  // The next element, or std::nullopt at the end. Rethrows any error the pipeline
  // raised for this element (a map function's, a prefetch thread's).
  std::optional<Element> get_next();
  // Like get_next, into `out`; false at the end.
  bool next(Element& out);

  // Range-for support: a single-pass input iterator.
  using value_type = Element;
  using difference_type = std::ptrdiff_t;
  const Element& operator*() const { return current_; }
  const Element* operator->() const { return &current_; }
  Iterator& operator++();
  void operator++(int) { ++*this; }
  bool operator==(std::default_sentinel_t) const { return done_; }

 private:
  friend class Dataset;
  void release() noexcept;
  std::unique_ptr<detail::IteratorImpl> impl_;
  Element current_;
  bool done_ = true;
};

class Dataset {
 public:
  // The rows of `tensors` along their first axis: element i is {tensors[0][i], ...}.
  // Throws InvalidArgumentError for no tensors, a scalar, a symbolic tensor, or first
  // dimensions that differ (naming every shape).
  static Dataset from_tensor_slices(const std::vector<Tensor>& tensors, CallSite where = CallSite::current());

  // Randomly shuffles elements with a buffer of `buffer_size` (TensorFlow's algorithm:
  // fill the buffer, then emit a random buffer entry and refill its slot). The order
  // depends only on `seed`; without one, a seed is drawn from ef::random (reproducible
  // after ef::random::set_seed). With reshuffle_each_iteration, every pass over the
  // dataset uses a new order (pass k of a dataset always the same for a given seed).
  // buffer_size < 1 throws InvalidArgumentError.
  Dataset shuffle(int64_t buffer_size, std::optional<int64_t> seed = std::nullopt,
                  bool reshuffle_each_iteration = true, CallSite where = CallSite::current()) const;
  // Stacks `batch_size` consecutive elements into one (each component gains a leading
  // axis). The last, smaller batch is kept unless drop_remainder. Components whose
  // shapes or dtypes differ between elements throw InvalidArgumentError when reached.
  Dataset batch(int64_t batch_size, bool drop_remainder = false, CallSite where = CallSite::current()) const;
  // fn applied to every element. num_parallel_calls > 1 (or kAutotune) calls fn on that
  // many worker threads at once (so fn must be safe to call concurrently), still
  // yielding results in input order. fn's errors propagate to the consumer.
  Dataset map(MapFn fn, int64_t num_parallel_calls = 1, CallSite where = CallSite::current()) const;
  // The dataset `count` times over (count = -1: forever). count < -1 throws.
  Dataset repeat(int64_t count = -1, CallSite where = CallSite::current()) const;
  // The first `count` elements (count = -1: all). count < -1 throws.
  Dataset take(int64_t count, CallSite where = CallSite::current()) const;
  // Produces up to `buffer_size` elements ahead on a background thread (kAutotune: a
  // small buffer). buffer_size = 0 or < -1 throws InvalidArgumentError.
  Dataset prefetch(int64_t buffer_size = kAutotune, CallSite where = CallSite::current()) const;

  // Number of elements, kInfiniteCardinality, or kUnknownCardinality.
  int64_t cardinality() const;

  // A fresh pass over the dataset.
  Iterator make_iterator() const;
  Iterator begin() const;
  std::default_sentinel_t end() const { return {}; }

 private:
  explicit Dataset(std::shared_ptr<const detail::DatasetNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const detail::DatasetNode> node_;
};

}  // namespace ef::data
