// filter: the elements a predicate keeps.
#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

bool kept(const Tensor& verdict) {
  if (!verdict.defined()) fail("filter: the predicate returned an undefined tensor");
  if (verdict.dtype() != DType::Bool || verdict.rank() != 0)
    fail("filter: the predicate must return a scalar bool tensor, got shape ", verdict.shape(), " and dtype ",
         verdict.dtype());
  return verdict.item<bool>();
}

class FilterIterator final : public IteratorImpl {
 public:
  FilterIterator(std::unique_ptr<IteratorImpl> input, PredicateFn predicate)
      : input_(std::move(input)), predicate_(std::move(predicate)) {}

  bool next(Element& out) override {
    Element e;
    while (input_->next(e))
      if (kept(predicate_(e))) {
        out = std::move(e);
        return true;
      }
    return false;
  }

 private:
  std::unique_ptr<IteratorImpl> input_;
  PredicateFn predicate_;
};

class FilterNode final : public DatasetNode {
 public:
  FilterNode(NodePtr input, PredicateFn predicate)
      : input_(std::move(input)), predicate_(std::move(predicate)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<FilterIterator>(input_->make_iterator(), predicate_);
  }
  // Unknown, as in tf.data: even an infinite input may yield nothing at all.
  int64_t cardinality() const override { return kUnknownCardinality; }

 private:
  NodePtr input_;
  PredicateFn predicate_;
};

}  // namespace

NodePtr make_filter_node(NodePtr input, PredicateFn predicate) {
  return std::make_shared<FilterNode>(std::move(input), std::move(predicate));
}

}  // namespace ef::data::detail
