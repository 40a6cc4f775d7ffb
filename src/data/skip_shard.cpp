// skip and shard: drop elements by position. Both pass rows through untouched and
// discard rows without making elements (Note [row fast path]).
#include <algorithm>

#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

// Pulls and drops one element of `input`; false at its end.
bool discard(IteratorImpl& input) {
  if (input.rows()) {
    int64_t row;
    return input.next_row(row);
  }
  Element e;
  return input.next(e);
}

class SkipIterator final : public IteratorImpl {
 public:
  SkipIterator(std::unique_ptr<IteratorImpl> input, int64_t count)
      : input_(std::move(input)), to_skip_(count) {}

  bool next(Element& out) override { return skipped() && input_->next(out); }
  const SliceSource* rows() const override { return input_->rows(); }
  bool next_row(int64_t& row) override { return skipped() && input_->next_row(row); }

 private:
  // Drops the first elements on the first request; false if the input ended meanwhile.
  bool skipped() {
    while (to_skip_ != 0) {
      if (!discard(*input_)) {
        to_skip_ = 0;
        return false;  // and the input keeps returning false
      }
      if (to_skip_ > 0) --to_skip_;
    }
    return true;
  }

  std::unique_ptr<IteratorImpl> input_;
  int64_t to_skip_;  // -1: everything
};

class SkipNode final : public DatasetNode {
 public:
  SkipNode(NodePtr input, int64_t count) : input_(std::move(input)), count_(count) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<SkipIterator>(input_->make_iterator(), count_);
  }
  // tf.data's rule: an infinite or unknown input stays so, even for count = -1.
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (n < 0) return n;
    return count_ < 0 ? 0 : std::max<int64_t>(0, n - count_);
  }

 private:
  NodePtr input_;
  int64_t count_;
};

// Element k of the output is element index + k * num_shards of the input. The elements
// before each one are dropped when it is asked for, as tf.data does.
class ShardIterator final : public IteratorImpl {
 public:
  ShardIterator(std::unique_ptr<IteratorImpl> input, int64_t num_shards, int64_t index)
      : input_(std::move(input)), num_shards_(num_shards), index_(index) {}

  bool next(Element& out) override {
    return advance([&] { return input_->next(out); });
  }
  const SliceSource* rows() const override { return input_->rows(); }
  bool next_row(int64_t& row) override {
    return advance([&] { return input_->next_row(row); });
  }

 private:
  template <class Pull>
  bool advance(const Pull& pull) {
    if (ended_) return false;
    for (int64_t n = (index_ - position_ + num_shards_) % num_shards_; n > 0; --n)
      if (!discard(*input_)) return end();
    if (!pull()) return end();
    position_ = (index_ + 1) % num_shards_;
    return true;
  }
  bool end() {
    ended_ = true;
    return false;
  }

  std::unique_ptr<IteratorImpl> input_;
  int64_t num_shards_, index_;
  int64_t position_ = 0;  // the input's next element's position, modulo num_shards
  bool ended_ = false;
};

class ShardNode final : public DatasetNode {
 public:
  ShardNode(NodePtr input, int64_t num_shards, int64_t index)
      : input_(std::move(input)), num_shards_(num_shards), index_(index) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<ShardIterator>(input_->make_iterator(), num_shards_, index_);
  }
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (n < 0) return n;
    return n / num_shards_ + (index_ < n % num_shards_ ? 1 : 0);
  }

 private:
  NodePtr input_;
  int64_t num_shards_, index_;
};

}  // namespace

NodePtr make_skip_node(NodePtr input, int64_t count) {
  return std::make_shared<SkipNode>(std::move(input), count);
}

NodePtr make_shard_node(NodePtr input, int64_t num_shards, int64_t index) {
  return std::make_shared<ShardNode>(std::move(input), num_shards, index);
}

}  // namespace ef::data::detail
