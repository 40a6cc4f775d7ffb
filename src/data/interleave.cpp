// interleave (and flat_map, interleave with one dataset open and blocks of one): each
// input element becomes a dataset; cycle_length of them are open at once, and
// block_length elements are taken from each in turn.
//
// The order is tf.data's (sequential InterleaveDataset), which programs and tests rely
// on: the cycle visits slot 0, 1, ..., cycle_length - 1 and wraps. At an empty slot the
// next input element is mapped into it and read from at once; a dataset that ends
// frees its slot and the cycle moves on, so the slot is refilled only when the cycle
// comes back to it. The pass ends when the input has ended and no slot is open.
#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

class InterleaveIterator final : public IteratorImpl {
 public:
  InterleaveIterator(std::unique_ptr<IteratorImpl> input, DatasetFn fn, int64_t cycle_length,
                     int64_t block_length)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        slots_(static_cast<size_t>(cycle_length)),
        block_length_(block_length) {}

  bool next(Element& out) override {
    while (!input_done_ || open_ > 0) {
      std::unique_ptr<IteratorImpl>& slot = slots_[cycle_index_];
      if (slot) {
        if (slot->next(out)) {
          if (++block_index_ == block_length_) advance();
          return true;
        }
        slot.reset();
        --open_;
        advance();
      } else if (!input_done_) {
        Element e;
        if (!input_->next(e)) {
          input_done_ = true;
          continue;
        }
        const Dataset dataset = fn_(e);
        slot = DatasetAccess::node(dataset)->make_iterator();  // a pass outlives its dataset
        ++open_;
      } else {
        advance();
      }
    }
    return false;
  }

 private:
  void advance() {
    block_index_ = 0;
    cycle_index_ = (cycle_index_ + 1) % slots_.size();
  }

  std::unique_ptr<IteratorImpl> input_;
  DatasetFn fn_;
  std::vector<std::unique_ptr<IteratorImpl>> slots_;  // the open datasets' passes
  int64_t block_length_;
  size_t cycle_index_ = 0;
  int64_t block_index_ = 0;
  size_t open_ = 0;
  bool input_done_ = false;
};

class InterleaveNode final : public DatasetNode {
 public:
  InterleaveNode(NodePtr input, DatasetFn fn, int64_t cycle_length, int64_t block_length)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        cycle_length_(cycle_length),
        block_length_(block_length) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<InterleaveIterator>(input_->make_iterator(), fn_, cycle_length_, block_length_);
  }
  // Each element's dataset has its own count: unknown, as in tf.data.
  int64_t cardinality() const override { return kUnknownCardinality; }

 private:
  NodePtr input_;
  DatasetFn fn_;
  int64_t cycle_length_, block_length_;
};

}  // namespace

NodePtr make_interleave_node(NodePtr input, DatasetFn fn, int64_t cycle_length, int64_t block_length) {
  return std::make_shared<InterleaveNode>(std::move(input), std::move(fn), cycle_length, block_length);
}

}  // namespace ef::data::detail
