// map: fn over every element, sequentially or on worker threads.
//
// The parallel version keeps up to num_threads elements in flight: the consumer pulls
// input elements itself (so the input is only ever touched by one thread), queues them
// for the workers, and waits for the oldest one, so results come out in input order.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

void check_result(const Element& result) {
  for (size_t c = 0; c < result.size(); ++c)
    if (!result[c].defined()) fail("map: the function returned an undefined tensor as component ", c);
}

class SequentialMapIterator final : public IteratorImpl {
 public:
  SequentialMapIterator(std::unique_ptr<IteratorImpl> input, MapFn fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}

  bool next(Element& out) override {
    Element in;
    if (!input_->next(in)) return false;
    out = fn_(in);
    check_result(out);
    return true;
  }

 private:
  std::unique_ptr<IteratorImpl> input_;
  MapFn fn_;
};

class ParallelMapIterator final : public IteratorImpl {
 public:
  ParallelMapIterator(std::unique_ptr<IteratorImpl> input, MapFn fn, int num_threads)
      : input_(std::move(input)), fn_(std::move(fn)), num_threads_(num_threads) {}

  ~ParallelMapIterator() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      queue_.clear();
    }
    work_ready_.notify_all();
    WaitScope waiting;                         // Note [waiting on pipeline threads]
    for (std::thread& t : workers_) t.join();  // a worker finishes the call it is in
  }

  bool next(Element& out) override {
    WaitScope waiting;  // Note [waiting on pipeline threads]
    if (workers_.empty())
      for (int i = 0; i < num_threads_; ++i) workers_.emplace_back([this] { work(); });
    while (!input_done_ && static_cast<int>(in_flight_.size()) < num_threads_) {
      auto slot = std::make_shared<Slot>();
      try {
        if (!input_->next(slot->input)) {
          input_done_ = true;
          break;
        }
      } catch (...) {
        // The input's error takes its place in the order: results before it come first.
        input_done_ = true;
        slot->error = std::current_exception();
        slot->done = true;
        in_flight_.push_back(std::move(slot));
        break;
      }
      {
        std::lock_guard lock(mu_);
        queue_.push_back(slot);
      }
      work_ready_.notify_one();
      in_flight_.push_back(std::move(slot));
    }
    if (in_flight_.empty()) return false;
    std::shared_ptr<Slot> slot = std::move(in_flight_.front());
    in_flight_.pop_front();
    {
      std::unique_lock lock(mu_);
      result_ready_.wait(lock, [&] { return slot->done; });
    }
    if (slot->error) std::rethrow_exception(slot->error);
    out = std::move(slot->output);
    return true;
  }

 private:
  struct Slot {
    Element input, output;
    std::exception_ptr error;
    bool done = false;  // guarded by mu_
  };

  void work() {
    PipelineScope scope;
    mark_pipeline_thread();
    for (;;) {
      std::shared_ptr<Slot> slot;
      {
        std::unique_lock lock(mu_);
        work_ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        slot = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        slot->output = fn_(slot->input);
        check_result(slot->output);
      } catch (...) {
        slot->error = std::current_exception();
      }
      slot->input.clear();
      {
        std::lock_guard lock(mu_);
        slot->done = true;
      }
      result_ready_.notify_all();
    }
  }

  std::unique_ptr<IteratorImpl> input_;
  MapFn fn_;
  int num_threads_;
  bool input_done_ = false;
  std::deque<std::shared_ptr<Slot>> in_flight_;  // consumer thread only, in input order

  std::mutex mu_;
  std::condition_variable work_ready_, result_ready_;
  std::deque<std::shared_ptr<Slot>> queue_;  // waiting for a worker
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last member: joined in the destructor body
};

class MapNode final : public DatasetNode {
 public:
  MapNode(NodePtr input, MapFn fn, int num_threads)
      : input_(std::move(input)), fn_(std::move(fn)), threads_(num_threads) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    if (threads_ <= 1) return std::make_unique<SequentialMapIterator>(input_->make_iterator(), fn_);
    return std::make_unique<ParallelMapIterator>(input_->make_iterator(), fn_, threads_);
  }
  int64_t cardinality() const override { return input_->cardinality(); }

 private:
  NodePtr input_;
  MapFn fn_;
  int threads_;
};

}  // namespace

NodePtr make_map_node(NodePtr input, MapFn fn, int num_threads) {
  return std::make_shared<MapNode>(std::move(input), std::move(fn), num_threads);
}

}  // namespace ef::data::detail
