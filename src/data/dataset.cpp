// Dataset's public methods (argument checks, then a new node) and Iterator.
#include "eagerflow/data/dataset.h"

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
}  // namespace
void mark_pipeline_thread() { t_pipeline_thread = true; }
bool on_pipeline_thread() { return t_pipeline_thread; }
}  // namespace detail

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
