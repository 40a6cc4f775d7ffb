// cache: the elements of the first complete pass, kept in memory for later passes.
//
// Each pass that starts while no cache is complete reads the input and records what it
// produces; the first of them to reach the end publishes its record, and passes that
// start afterwards read that. A pass destroyed before the end drops its record, so a
// partial pass (a take(), an early break) never leaves a truncated cache behind, as in
// tf.data. A pass that saw an error does not publish either: its record lacks the
// element that failed. (Elements hold tensors, which are immutable: Note [views].)
#include <mutex>

#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

using Elements = std::vector<Element>;

struct CacheState {
  std::mutex mu;
  std::shared_ptr<const Elements> complete;  // set once, by the first pass to finish
};

class CacheReadIterator final : public IteratorImpl {
 public:
  explicit CacheReadIterator(std::shared_ptr<const Elements> elements) : elements_(std::move(elements)) {}
  bool next(Element& out) override {
    if (next_ >= elements_->size()) return false;
    out = (*elements_)[next_++];
    return true;
  }

 private:
  std::shared_ptr<const Elements> elements_;
  size_t next_ = 0;
};

class CacheWriteIterator final : public IteratorImpl {
 public:
  CacheWriteIterator(std::unique_ptr<IteratorImpl> input, std::shared_ptr<CacheState> state)
      : input_(std::move(input)), state_(std::move(state)) {}

  bool next(Element& out) override {
    if (!input_) return false;
    bool got;
    try {
      got = input_->next(out);
    } catch (...) {
      failed_ = true;
      throw;
    }
    if (got) {
      record_.push_back(out);  // shares the tensors
      return true;
    }
    input_.reset();
    if (!failed_) {
      std::lock_guard lock(state_->mu);
      if (!state_->complete) state_->complete = std::make_shared<const Elements>(std::move(record_));
    }
    record_.clear();
    return false;
  }

 private:
  std::unique_ptr<IteratorImpl> input_;  // null at the end
  std::shared_ptr<CacheState> state_;
  Elements record_;
  bool failed_ = false;
};

class CacheNode final : public DatasetNode {
 public:
  explicit CacheNode(NodePtr input) : input_(std::move(input)), state_(std::make_shared<CacheState>()) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    {
      std::lock_guard lock(state_->mu);
      if (state_->complete) return std::make_unique<CacheReadIterator>(state_->complete);
    }
    return std::make_unique<CacheWriteIterator>(input_->make_iterator(), state_);
  }
  int64_t cardinality() const override { return input_->cardinality(); }

 private:
  NodePtr input_;
  std::shared_ptr<CacheState> state_;  // shared with the passes writing it
};

}  // namespace

NodePtr make_cache_node(NodePtr input) { return std::make_shared<CacheNode>(std::move(input)); }

}  // namespace ef::data::detail
