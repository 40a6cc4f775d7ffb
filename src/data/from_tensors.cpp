// from_tensors: a dataset of one element, the tensors themselves.
#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

class TensorsIterator final : public IteratorImpl {
 public:
  explicit TensorsIterator(const Element& element) : element_(element) {}

  bool next(Element& out) override {
    if (done_) return false;
    done_ = true;
    out = element_;
    return true;
  }

 private:
  Element element_;  // shares the tensors' storage, no copy
  bool done_ = false;
};

class TensorsNode final : public DatasetNode {
 public:
  explicit TensorsNode(Element element) : element_(std::move(element)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<TensorsIterator>(element_);
  }
  int64_t cardinality() const override { return 1; }

 private:
  Element element_;
};

}  // namespace

NodePtr make_tensors_node(Element element) { return std::make_shared<TensorsNode>(std::move(element)); }

}  // namespace ef::data::detail
