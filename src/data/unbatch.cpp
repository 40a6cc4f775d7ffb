// unbatch: splits elements along their first axis into views of each row.
#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

class UnbatchIterator final : public IteratorImpl {
 public:
  explicit UnbatchIterator(std::unique_ptr<IteratorImpl> input) : input_(std::move(input)) {}

  bool next(Element& out) override {
    while (row_ >= rows_) {
      if (!input_->next(batch_)) return false;
      row_ = 0;
      rows_ = batch_size(batch_);
    }
    out.clear();
    out.reserve(batch_.size());
    for (const Tensor& t : batch_) out.push_back(t[row_]);  // a view (Note [views])
    ++row_;
    return true;
  }

 private:
  static int64_t batch_size(const Element& batch) {
    if (batch.empty()) fail("unbatch: an input element has no components");
    for (size_t c = 0; c < batch.size(); ++c) {
      if (batch[c].rank() == 0)
        fail("unbatch: component ", c,
             " of an input element is a scalar; every component needs a first axis");
      if (batch[c].dim(0) != batch[0].dim(0))
        fail("unbatch: every component of an element must have the same first dimension, got shapes ",
             batch[0].shape(), " (component 0) and ", batch[c].shape(), " (component ", c, ")");
    }
    return batch[0].dim(0);
  }

  std::unique_ptr<IteratorImpl> input_;
  Element batch_;  // the input element being split
  int64_t row_ = 0, rows_ = 0;
};

class UnbatchNode final : public DatasetNode {
 public:
  explicit UnbatchNode(NodePtr input) : input_(std::move(input)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<UnbatchIterator>(input_->make_iterator());
  }
  // The count depends on the batch sizes, which tf.data knows from static shapes and
  // eagerflow only when elements arrive: unknown unless the input is empty or infinite.
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    return n == 0 || n == kInfiniteCardinality ? n : kUnknownCardinality;
  }

 private:
  NodePtr input_;
};

}  // namespace

NodePtr make_unbatch_node(NodePtr input) { return std::make_shared<UnbatchNode>(std::move(input)); }

}  // namespace ef::data::detail
