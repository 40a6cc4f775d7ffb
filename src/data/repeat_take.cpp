// repeat and take: both pass rows through untouched (Note [row fast path]).
#include <algorithm>
#include <limits>

#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

// Each repetition is a fresh pass over the input (so a shuffle inside reshuffles).
class RepeatIterator final : public IteratorImpl {
 public:
  RepeatIterator(NodePtr input, int64_t count) : node_(std::move(input)), count_(count) {
    if (count_ != 0) input_ = node_->make_iterator();
    if (input_) rows_ = input_->rows();
  }

  bool next(Element& out) override {
    return advance([&] { return input_->next(out); });
  }
  // Every pass is over the same node, so over the same source. The source stays the
  // answer after the last pass: a consumer that chose the row path (a shuffle holding
  // row numbers in its buffer) must stay on it (Note [row fast path]).
  const SliceSource* rows() const override { return rows_; }
  bool next_row(int64_t& row) override {
    return advance([&] { return input_->next_row(row); });
  }

 private:
  template <class Pull>
  bool advance(const Pull& pull) {
    while (input_) {
      if (pull()) {
        produced_ = true;
        return true;
      }
      ++done_;
      // An empty input would loop forever: stop after a pass that produced nothing.
      const bool finished = (count_ >= 0 && done_ >= count_) || !produced_;
      input_ = finished ? nullptr : node_->make_iterator();
      produced_ = false;
    }
    return false;
  }

  NodePtr node_;
  int64_t count_;
  const SliceSource* rows_ = nullptr;  // of the first pass, kept by node_
  int64_t done_ = 0;                   // completed passes
  bool produced_ = false;              // whether the current pass produced an element yet
  std::unique_ptr<IteratorImpl> input_;
};

class RepeatNode final : public DatasetNode {
 public:
  RepeatNode(NodePtr input, int64_t count) : input_(std::move(input)), count_(count) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<RepeatIterator>(input_, count_);
  }
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (count_ == 0 || n == 0) return 0;
    if (n == kInfiniteCardinality || count_ < 0) return kInfiniteCardinality;
    if (n == kUnknownCardinality) return kUnknownCardinality;
    return n > std::numeric_limits<int64_t>::max() / count_ ? kInfiniteCardinality : n * count_;
  }

 private:
  NodePtr input_;
  int64_t count_;
};

class TakeIterator final : public IteratorImpl {
 public:
  TakeIterator(std::unique_ptr<IteratorImpl> input, int64_t count) : input_(std::move(input)), left_(count) {}

  bool next(Element& out) override { return left_ != 0 && counted(input_->next(out)); }
  const SliceSource* rows() const override { return input_->rows(); }
  bool next_row(int64_t& row) override { return left_ != 0 && counted(input_->next_row(row)); }

 private:
  bool counted(bool got) {
    if (!got)
      left_ = 0;
    else if (left_ > 0)
      --left_;
    return got;
  }
  std::unique_ptr<IteratorImpl> input_;
  int64_t left_;  // -1: no limit
};

class TakeNode final : public DatasetNode {
 public:
  TakeNode(NodePtr input, int64_t count) : input_(std::move(input)), count_(count) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<TakeIterator>(input_->make_iterator(), count_);
  }
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (count_ < 0) return n;
    if (n == kInfiniteCardinality) return count_;
    if (n == kUnknownCardinality) return kUnknownCardinality;
    return std::min(n, count_);
  }

 private:
  NodePtr input_;
  int64_t count_;
};

}  // namespace

NodePtr make_repeat_node(NodePtr input, int64_t count) {
  return std::make_shared<RepeatNode>(std::move(input), count);
}

NodePtr make_take_node(NodePtr input, int64_t count) {
  return std::make_shared<TakeNode>(std::move(input), count);
}

}  // namespace ef::data::detail
