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
// Beyond those: sources from_tensors, zip and from_generator; element-wise filter,
// skip, shard, enumerate, concatenate; unbatch and padded_batch; cache (in memory);
// flat_map and interleave (one dataset per element, mixed in TensorFlow's order); and
// reduce, which folds a whole pass into one element. Each follows tf.data's semantics
// and cardinality rules. Without static element shapes (a map function is opaque),
// checks that tf.data makes when a pipeline is built (matching dtypes in concatenate,
// padded shapes of the right rank) happen when the offending element is reached.
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
#include "eagerflow/ops/scalar.h"

namespace ef::data {

// One element of a dataset: a tuple of tensors.
using Element = std::vector<Tensor>;
// A map function: one element in, one element out.
using MapFn = std::function<Element(const Element&)>;
// A filter predicate: one element in, a scalar bool tensor out (true: keep it).
using PredicateFn = std::function<Tensor(const Element&)>;
class Dataset;
// flat_map's and interleave's function: one element in, a dataset out.
using DatasetFn = std::function<Dataset(const Element&)>;
// reduce's function: (state, element) in, the new state out.
using ReduceFn = std::function<Element(const Element& state, const Element& element)>;
// from_generator's source: called once per pass, it returns that pass's next-element
// function, which returns std::nullopt at the end of the pass.
using GeneratorFn = std::function<std::function<std::optional<Element>()>()>;

// cardinality() values that are not counts (TensorFlow's constants).
inline constexpr int64_t kInfiniteCardinality = -1;
inline constexpr int64_t kUnknownCardinality = -2;
// For map's num_parallel_calls and prefetch's buffer_size: let eagerflow choose
// (the thread count, resp. a small buffer).
inline constexpr int64_t kAutotune = -1;

namespace detail {
class DatasetNode;
class IteratorImpl;
struct DatasetAccess;
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
  // One element: the tensors themselves (any rank, scalars included). Throws
  // InvalidArgumentError for no tensors, an undefined or a symbolic tensor.
  static Dataset from_tensors(const std::vector<Tensor>& tensors, CallSite where = CallSite::current());
  // Element i is the components of element i of every dataset, in order (flattened:
  // zip of {a, b} and {c} gives {a, b, c}). Ends with the shortest dataset. No datasets
  // throws InvalidArgumentError.
  static Dataset zip(const std::vector<Dataset>& datasets, CallSite where = CallSite::current());
  // The elements a generator yields: each pass calls `generator` for a fresh
  // next-element function (see GeneratorFn). Cardinality unknown. Elements are used as
  // returned; an undefined component throws when reached.
  static Dataset from_generator(GeneratorFn generator, CallSite where = CallSite::current());

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

  // The elements for which `predicate` returns true. The predicate must return a
  // scalar bool tensor; anything else throws InvalidArgumentError when reached.
  Dataset filter(PredicateFn predicate, CallSite where = CallSite::current()) const;
  // All but the first `count` elements (count = -1: none). count < -1 throws.
  Dataset skip(int64_t count, CallSite where = CallSite::current()) const;
  // Every num_shards-th element, starting with element `index` (one worker's share).
  // num_shards < 1, or index outside [0, num_shards), throws InvalidArgumentError.
  Dataset shard(int64_t num_shards, int64_t index, CallSite where = CallSite::current()) const;
  // Each element preceded by its position as an int64 scalar: {start + i, components...}.
  Dataset enumerate(int64_t start = 0, CallSite where = CallSite::current()) const;
  // This dataset's elements, then `other`'s. An element of `other` whose number of
  // components or dtypes differ from this dataset's first element throws
  // InvalidArgumentError when reached (shapes may differ, as in tf.data).
  Dataset concatenate(const Dataset& other, CallSite where = CallSite::current()) const;

  // Splits every element along its first axis: an element whose components are
  // [n, ...] becomes n elements. A scalar component, or components whose first
  // dimensions differ, throw InvalidArgumentError when reached.
  Dataset unbatch(CallSite where = CallSite::current()) const;
  // Like batch, padding components to a common shape first. padded_shapes[c] gives
  // component c's padded shape, its rank that of the component; a dimension of
  // kUnknownDim (-1) pads to the longest in the batch, others to exactly that size (a
  // longer element throws). No padded_shapes: every dimension pads to the longest.
  // padding_values[c] fills component c (default 0): a number takes the component's
  // dtype (one that does not fit exactly throws), a tensor must be a scalar of the
  // component's dtype; a single value serves every component. batch_size < 1, a
  // dimension below -1 or an empty list throws at once; a count that does not match the
  // components, a rank or dtype mismatch, when the batch is made.
  Dataset padded_batch(int64_t batch_size, std::optional<std::vector<Shape>> padded_shapes = std::nullopt,
                       std::optional<std::vector<TensorOrScalar>> padding_values = std::nullopt,
                       bool drop_remainder = false, CallSite where = CallSite::current()) const;

  // Keeps the elements in memory: the first pass that reaches the end fills the cache
  // and later passes read it (so a shuffle before cache shuffles once). A pass stopped
  // before the end leaves no cache behind; passes running while none is complete read
  // the input themselves.
  Dataset cache(CallSite where = CallSite::current()) const;
  // fn maps each element to a dataset; their elements are concatenated in order.
  // Cardinality unknown.
  Dataset flat_map(DatasetFn fn, CallSite where = CallSite::current()) const;
  // fn maps each element to a dataset; cycle_length of those are open at once, and
  // block_length consecutive elements are taken from each in turn (TensorFlow's order:
  // a dataset that ends is replaced by the next input element's when the cycle comes
  // back to its place). cycle_length = kAutotune: the number of threads. cycle_length or
  // block_length < 1 throws InvalidArgumentError. Cardinality unknown.
  Dataset interleave(DatasetFn fn, int64_t cycle_length = kAutotune, int64_t block_length = 1,
                     CallSite where = CallSite::current()) const;

  // Folds one pass into a state: state = fn(state, element) for every element, starting
  // from initial_state, and returns the last state. fn runs eagerly without recording on
  // a tape (pipeline work). A state with another number of components or other dtypes
  // than initial_state throws InvalidArgumentError (shapes may change).
  Element reduce(Element initial_state, ReduceFn fn, CallSite where = CallSite::current()) const;

  // Number of elements, kInfiniteCardinality, or kUnknownCardinality.
  int64_t cardinality() const;

  // A fresh pass over the dataset.
  Iterator make_iterator() const;
  Iterator begin() const;
  std::default_sentinel_t end() const { return {}; }

 private:
  friend struct detail::DatasetAccess;
  explicit Dataset(std::shared_ptr<const detail::DatasetNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const detail::DatasetNode> node_;
};

}  // namespace ef::data
