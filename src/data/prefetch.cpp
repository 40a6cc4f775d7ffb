// prefetch: a background thread runs the input and fills a bounded queue, so
// producing the next elements overlaps with the consumer's work on this one.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

class PrefetchIterator final : public IteratorImpl {
 public:
  PrefetchIterator(std::unique_ptr<IteratorImpl> input, int64_t buffer_size)
      : input_(std::move(input)), capacity_(static_cast<size_t>(buffer_size)) {}

  // Destroying the iterator early stops the producer: it sees `cancelled_` as soon as
  // it next waits for room, and the input is destroyed only after it has exited.
  ~PrefetchIterator() override {
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
    }
    not_full_.notify_all();
    if (producer_.joinable()) {
      WaitScope waiting;  // Note [waiting on pipeline threads]
      producer_.join();
    }
  }

  bool next(Element& out) override {
    WaitScope waiting;  // Note [waiting on pipeline threads]
    if (!producer_.joinable() && !finished_) producer_ = std::thread([this] { produce(); });
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !queue_.empty() || finished_; });
    if (!queue_.empty()) {
      out = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      not_full_.notify_one();
      return true;
    }
    // The producer's error comes after every element it produced, once.
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return false;
  }

 private:
  void produce() {
    PipelineScope scope;
    mark_pipeline_thread();
    try {
      Element e;
      while (input_->next(e)) {
        std::unique_lock lock(mu_);
        not_full_.wait(lock, [&] { return cancelled_ || queue_.size() < capacity_; });
        if (cancelled_) break;
        queue_.push_back(std::move(e));
        lock.unlock();
        not_empty_.notify_one();
        e = Element();
      }
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      finished_ = true;
    }
    not_empty_.notify_all();
  }

  std::unique_ptr<IteratorImpl> input_;  // used by the producer thread only
  size_t capacity_;

  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Element> queue_;
  std::exception_ptr error_;
  bool finished_ = false;   // the producer has exited
  bool cancelled_ = false;  // the consumer is gone
  std::thread producer_;
};

class PrefetchNode final : public DatasetNode {
 public:
  PrefetchNode(NodePtr input, int64_t buffer_size) : input_(std::move(input)), buffer_size_(buffer_size) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<PrefetchIterator>(input_->make_iterator(), buffer_size_);
  }
  int64_t cardinality() const override { return input_->cardinality(); }

 private:
  NodePtr input_;
  int64_t buffer_size_;
};

}  // namespace

NodePtr make_prefetch_node(NodePtr input, int64_t buffer_size) {
  return std::make_shared<PrefetchNode>(std::move(input), buffer_size);
}

}  // namespace ef::data::detail
