// Dataset's public methods (argument checks, then a new node) and Iterator.
#include "eagerflow/data/dataset.h"

#include <atomic>
#include <limits>
#include <sstream>
#include <system_error>
#include <thread>

#include "data/dataset_node.h"
#include "eagerflow/core/threading.h"
#include "eagerflow/ops/random.h"

namespace ef::data {

namespace {

// Runs `body`, adding the user's call site to any ef::Error it throws.
template <class F>
Dataset with_call_site(const CallSite& where, F&& body) {
  try {
    return body();
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

std::string shapes_of(const std::vector<Tensor>& tensors) {
  std::ostringstream os;
  for (size_t i = 0; i < tensors.size(); ++i) os << (i ? ", " : "") << tensors[i].shape();
  return os.str();
}

}  // namespace

namespace detail {
namespace {
thread_local bool t_pipeline_thread = false;
// Set once at startup, read by every wait (Note [waiting on pipeline threads]).
std::atomic<void* (*)()> g_before_wait{nullptr};
std::atomic<void (*)(void*)> g_after_wait{nullptr};
}  // namespace
void mark_pipeline_thread() { t_pipeline_thread = true; }
bool on_pipeline_thread() { return t_pipeline_thread; }

// `before` is loaded first: set_wait_hooks stores `after` first, so a scope that sees a
// new `before` sees its `after` too.
WaitScope::WaitScope() {
  auto before = g_before_wait.load(std::memory_order_acquire);
  after_ = g_after_wait.load(std::memory_order_acquire);
  if (before) state_ = before();
}
WaitScope::~WaitScope() {
  if (after_) after_(state_);
}
}  // namespace detail

void set_wait_hooks(WaitHooks hooks) {
  detail::g_after_wait.store(hooks.after, std::memory_order_release);
  detail::g_before_wait.store(hooks.before, std::memory_order_release);
}

Dataset Dataset::from_tensor_slices(const std::vector<Tensor>& tensors, CallSite where) {
  return with_call_site(where, [&] {
    if (tensors.empty()) fail("from_tensor_slices: expected at least one tensor, got none");
    std::vector<Tensor> contiguous;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      if (!t.defined()) fail("from_tensor_slices: tensor ", i, " is undefined");
      if (t.is_symbolic()) fail("from_tensor_slices: tensor ", i, " is symbolic (graph mode); pass a value");
      if (t.rank() == 0)
        fail("from_tensor_slices: tensor ", i, " is a scalar; slicing needs at least one dimension");
      if (t.dim(0) != tensors[0].dim(0))
        fail("from_tensor_slices: every tensor must have the same first dimension, got shapes ",
             shapes_of(tensors));
      contiguous.push_back(t.contiguous());
    }
    return Dataset(detail::make_slices_node(std::move(contiguous), tensors[0].dim(0)));
  });
}

Dataset Dataset::shuffle(int64_t buffer_size, std::optional<int64_t> seed, bool reshuffle_each_iteration,
                         CallSite where) const {
  return with_call_site(where, [&] {
    if (buffer_size < 1) fail("shuffle: buffer_size must be at least 1, got ", buffer_size);
    // No seed: draw one from ef::random, so set_seed makes the pipeline reproducible.
    const int64_t resolved =
        seed ? *seed
             : ef::random::uniform({}, 0, std::numeric_limits<int64_t>::max(), DType::Int64).item<int64_t>();
    return Dataset(detail::make_shuffle_node(node_, buffer_size, resolved, reshuffle_each_iteration));
  });
}

Dataset Dataset::batch(int64_t batch_size, bool drop_remainder, CallSite where) const {
  return with_call_site(where, [&] {
    if (batch_size < 1) fail("batch: batch_size must be at least 1, got ", batch_size);
    return Dataset(detail::make_batch_node(node_, batch_size, drop_remainder));
  });
}

Dataset Dataset::map(MapFn fn, int64_t num_parallel_calls, CallSite where) const {
  return with_call_site(where, [&] {
    if (!fn) fail("map: the function is empty");
    if (num_parallel_calls < 1 && num_parallel_calls != kAutotune)
      fail("map: num_parallel_calls must be at least 1 or kAutotune (-1), got ", num_parallel_calls);
    if (num_parallel_calls > 1024)
      fail("map: num_parallel_calls must be at most 1024, got ", num_parallel_calls);
    const int threads =
        num_parallel_calls == kAutotune ? ef::num_threads() : static_cast<int>(num_parallel_calls);
    return Dataset(detail::make_map_node(node_, std::move(fn), threads));
  });
}

Dataset Dataset::repeat(int64_t count, CallSite where) const {
  return with_call_site(where, [&] {
    if (count < -1) fail("repeat: count must be -1 (forever) or at least 0, got ", count);
    return Dataset(detail::make_repeat_node(node_, count));
  });
}

Dataset Dataset::take(int64_t count, CallSite where) const {
  return with_call_site(where, [&] {
    if (count < -1) fail("take: count must be -1 (all) or at least 0, got ", count);
    return Dataset(detail::make_take_node(node_, count));
  });
}

Dataset Dataset::prefetch(int64_t buffer_size, CallSite where) const {
  return with_call_site(where, [&] {
    if (buffer_size < 1 && buffer_size != kAutotune)
      fail("prefetch: buffer_size must be at least 1 or kAutotune (-1), got ", buffer_size);
    return Dataset(detail::make_prefetch_node(node_, buffer_size == kAutotune ? 4 : buffer_size));
  });
}

Dataset Dataset::from_tensors(const std::vector<Tensor>& tensors, CallSite where) {
  return with_call_site(where, [&] {
    if (tensors.empty()) fail("from_tensors: expected at least one tensor, got none");
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!tensors[i].defined()) fail("from_tensors: tensor ", i, " is undefined");
      if (tensors[i].is_symbolic())
        fail("from_tensors: tensor ", i, " is symbolic (graph mode); pass a value");
    }
    return Dataset(detail::make_tensors_node(tensors));
  });
}

Dataset Dataset::zip(const std::vector<Dataset>& datasets, CallSite where) {
  return with_call_site(where, [&] {
    if (datasets.empty()) fail("zip: expected at least one dataset, got none");
    std::vector<detail::NodePtr> nodes;
    for (const Dataset& ds : datasets) nodes.push_back(ds.node_);
    return Dataset(detail::make_zip_node(std::move(nodes)));
  });
}

Dataset Dataset::from_generator(GeneratorFn generator, CallSite where) {
  return with_call_site(where, [&] {
    if (!generator) fail("from_generator: the generator is empty");
    return Dataset(detail::make_generator_node(std::move(generator)));
  });
}

Dataset Dataset::filter(PredicateFn predicate, CallSite where) const {
  return with_call_site(where, [&] {
    if (!predicate) fail("filter: the predicate is empty");
    return Dataset(detail::make_filter_node(node_, std::move(predicate)));
  });
}

Dataset Dataset::skip(int64_t count, CallSite where) const {
  return with_call_site(where, [&] {
    if (count < -1) fail("skip: count must be -1 (all) or at least 0, got ", count);
    return Dataset(detail::make_skip_node(node_, count));
  });
}

Dataset Dataset::shard(int64_t num_shards, int64_t index, CallSite where) const {
  return with_call_site(where, [&] {
    if (num_shards < 1) fail("shard: num_shards must be at least 1, got ", num_shards);
    if (index < 0 || index >= num_shards)
      fail("shard: index must be in [0, num_shards) = [0, ", num_shards, "), got ", index);
    return Dataset(detail::make_shard_node(node_, num_shards, index));
  });
}

Dataset Dataset::enumerate(int64_t start, CallSite where) const {
  return with_call_site(where, [&] { return Dataset(detail::make_enumerate_node(node_, start)); });
}

Dataset Dataset::concatenate(const Dataset& other, CallSite where) const {
  return with_call_site(where, [&] { return Dataset(detail::make_concatenate_node(node_, other.node_)); });
}

Dataset Dataset::unbatch(CallSite where) const {
  return with_call_site(where, [&] { return Dataset(detail::make_unbatch_node(node_)); });
}

Dataset Dataset::padded_batch(int64_t batch_size, std::optional<std::vector<Shape>> padded_shapes,
                              std::optional<std::vector<TensorOrScalar>> padding_values, bool drop_remainder,
                              CallSite where) const {
  return with_call_site(where, [&] {
    if (batch_size < 1) fail("padded_batch: batch_size must be at least 1, got ", batch_size);
    if (padded_shapes) {
      if (padded_shapes->empty()) fail("padded_batch: padded_shapes is empty; pass nullopt for the default");
      for (size_t c = 0; c < padded_shapes->size(); ++c)
        for (int64_t d : (*padded_shapes)[c])
          if (d < kUnknownDim)
            fail("padded_batch: padded_shapes[", c, "] = ", (*padded_shapes)[c], " has a dimension ", d,
                 " below -1 (-1 pads to the longest in the batch)");
    }
    if (padding_values) {
      if (padding_values->empty()) fail("padded_batch: padding_values is empty; pass nullopt for zeros");
      for (size_t c = 0; c < padding_values->size(); ++c) {
        const TensorOrScalar& v = (*padding_values)[c];
        if (!v.is_tensor()) continue;
        if (!v.tensor().defined()) fail("padded_batch: padding_values[", c, "] is undefined");
        if (v.tensor().is_symbolic()) fail("padded_batch: padding_values[", c, "] is symbolic; pass a value");
        if (v.tensor().rank() != 0)
          fail("padded_batch: padding_values[", c, "] must be a scalar, got shape ", v.tensor().shape());
      }
    }
    return Dataset(detail::make_padded_batch_node(
        node_, batch_size, padded_shapes.value_or(std::vector<Shape>{}),
        padding_values.value_or(std::vector<TensorOrScalar>{}), drop_remainder));
  });
}

Dataset Dataset::cache(CallSite where) const {
  return with_call_site(where, [&] { return Dataset(detail::make_cache_node(node_)); });
}

Dataset Dataset::flat_map(DatasetFn fn, CallSite where) const {
  return with_call_site(where, [&] {
    if (!fn) fail("flat_map: the function is empty");
    // TensorFlow's flat_map is interleave with one dataset open, one element at a time.
    return Dataset(detail::make_interleave_node(node_, std::move(fn), 1, 1));
  });
}

Dataset Dataset::interleave(DatasetFn fn, int64_t cycle_length, int64_t block_length, CallSite where) const {
  return with_call_site(where, [&] {
    if (!fn) fail("interleave: the function is empty");
    if (cycle_length < 1 && cycle_length != kAutotune)
      fail("interleave: cycle_length must be at least 1 or kAutotune (-1), got ", cycle_length);
    if (block_length < 1) fail("interleave: block_length must be at least 1, got ", block_length);
    const int64_t cycle = cycle_length == kAutotune ? ef::num_threads() : cycle_length;
    return Dataset(detail::make_interleave_node(node_, std::move(fn), cycle, block_length));
  });
}

Element Dataset::reduce(Element initial_state, ReduceFn fn, CallSite where) const {
  try {
    if (!fn) fail("reduce: the function is empty");
    for (size_t i = 0; i < initial_state.size(); ++i) {
      if (!initial_state[i].defined()) fail("reduce: component ", i, " of initial_state is undefined");
      if (initial_state[i].is_symbolic())
        fail("reduce: component ", i, " of initial_state is symbolic (graph mode); pass a value");
    }
    detail::PipelineScope scope;
    Element state = std::move(initial_state);
    Iterator it = make_iterator();
    Element element;
    while (it.next(element)) {
      Element next = fn(state, element);
      if (next.size() != state.size())
        fail("reduce: the function returned a state of ", next.size(), " components; initial_state has ",
             state.size());
      for (size_t i = 0; i < next.size(); ++i) {
        if (!next[i].defined()) fail("reduce: the function returned an undefined tensor as component ", i);
        if (next[i].dtype() != state[i].dtype())
          fail("reduce: the function returned component ", i, " of the state with dtype ", next[i].dtype(),
               "; initial_state has ", state[i].dtype(), " (the dtypes of the state cannot change)");
      }
      state = std::move(next);
    }
    return state;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

int64_t Dataset::cardinality() const { return node_->cardinality(); }

Iterator Dataset::make_iterator() const {
  detail::PipelineScope scope;
  return Iterator(node_->make_iterator());
}

Iterator Dataset::begin() const {
  Iterator it = make_iterator();
  ++it;
  return it;
}

// ---- Iterator ----

Iterator::Iterator() = default;
Iterator::Iterator(std::unique_ptr<detail::IteratorImpl> impl) : impl_(std::move(impl)), done_(false) {}
Iterator::Iterator(Iterator&&) noexcept = default;
Iterator& Iterator::operator=(Iterator&& other) noexcept {
  if (this != &other) {
    release();
    impl_ = std::move(other.impl_);
    current_ = std::move(other.current_);
    done_ = std::exchange(other.done_, true);
  }
  return *this;
}
Iterator::~Iterator() { release(); }

// Note [iterators destroyed on pipeline threads]: destroying a pass joins its threads.
// Done on one of those threads (or on a thread whose result one of them awaits) that
// would wait for itself. It happens: Python's garbage collector runs on whichever
// thread holds the GIL, so a map function's thread can collect an abandoned iterator
// of its own pipeline. On a pipeline thread, the pass is therefore destroyed on a new
// thread of its own, which waits for the pipeline's threads to see the cancellation.
void Iterator::release() noexcept {
  if (!impl_) return;
  if (!detail::on_pipeline_thread()) {
    impl_.reset();
    return;
  }
  try {
    std::thread([impl = std::move(impl_)]() mutable { impl.reset(); }).detach();
  } catch (const std::system_error&) {
    impl_.reset();  // no thread to spare: destroy here, as a C++ caller would expect
  }
}

bool Iterator::next(Element& out) {
  if (!impl_) return false;
  detail::PipelineScope scope;
  return impl_->next(out);
}

std::optional<Element> Iterator::get_next() {
  Element e;
  if (!next(e)) return std::nullopt;
  return e;
}

Iterator& Iterator::operator++() {
  current_.clear();
  done_ = !next(current_);
  return *this;
}

}  // namespace ef::data
