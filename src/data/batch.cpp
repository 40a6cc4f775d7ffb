// batch: stacks consecutive elements, component by component.
#include "data/dataset_node.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/creation.h"

namespace ef::data::detail {

namespace {

class BatchIterator final : public IteratorImpl {
 public:
  BatchIterator(std::unique_ptr<IteratorImpl> input, int64_t batch_size, bool drop_remainder)
      : input_(std::move(input)), batch_size_(batch_size), drop_remainder_(drop_remainder) {}

  bool next(Element& out) override {
    if (const SliceSource* source = input_->rows()) return gather_rows(*source, out);
    return stack_elements(out);
  }

 private:
  bool full_enough(size_t count) const {
    return count > 0 && (!drop_remainder_ || static_cast<int64_t>(count) == batch_size_);
  }

  // Note [row fast path]: one gather per component copies the rows into the batch.
  bool gather_rows(const SliceSource& source, Element& out) {
    rows_.clear();
    int64_t row;
    while (static_cast<int64_t>(rows_.size()) < batch_size_ && input_->next_row(row)) rows_.push_back(row);
    if (!full_enough(rows_.size())) return false;
    const Tensor indices = constant(rows_, Shape{static_cast<int64_t>(rows_.size())});
    out.clear();
    for (const Tensor& t : source.tensors) out.push_back(gather(t, indices.to(t.device())));
    return true;
  }

  bool stack_elements(Element& out) {
    std::vector<Element> elements;
    Element e;
    while (static_cast<int64_t>(elements.size()) < batch_size_ && input_->next(e))
      elements.push_back(std::move(e));
    if (!full_enough(elements.size())) return false;
    check_uniform(elements);
    out.clear();
    std::vector<Tensor> parts(elements.size());
    for (size_t c = 0; c < elements[0].size(); ++c) {
      for (size_t i = 0; i < elements.size(); ++i) parts[i] = elements[i][c];
      out.push_back(stack(parts));
    }
    return true;
  }

  // Stacking needs every element to have the same structure, shapes and dtypes.
  static void check_uniform(const std::vector<Element>& elements) {
    const Element& first = elements[0];
    for (size_t i = 1; i < elements.size(); ++i) {
      const Element& e = elements[i];
      if (e.size() != first.size())
        fail("batch: element ", i, " of a batch has ", e.size(), " components but element 0 has ",
             first.size());
      for (size_t c = 0; c < e.size(); ++c) {
        if (!e[c].defined() || !first[c].defined())
          fail("batch: component ", c, " of an element is undefined");
        if (e[c].shape() != first[c].shape() || e[c].dtype() != first[c].dtype())
          fail("batch: component ", c, " of element ", i, " of a batch has shape ", e[c].shape(),
               " and dtype ", e[c].dtype(), " but element 0 has shape ", first[c].shape(), " and dtype ",
               first[c].dtype(), "; batching needs equal shapes and dtypes");
      }
    }
  }

  std::unique_ptr<IteratorImpl> input_;
  int64_t batch_size_;
  bool drop_remainder_;
  std::vector<int64_t> rows_;
};

class BatchNode final : public DatasetNode {
 public:
  BatchNode(NodePtr input, int64_t batch_size, bool drop_remainder)
      : input_(std::move(input)), batch_size_(batch_size), drop_remainder_(drop_remainder) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<BatchIterator>(input_->make_iterator(), batch_size_, drop_remainder_);
  }
  int64_t cardinality() const override {
    return batched_cardinality(input_->cardinality(), batch_size_, drop_remainder_);
  }

 private:
  NodePtr input_;
  int64_t batch_size_;
  bool drop_remainder_;
};

}  // namespace

NodePtr make_batch_node(NodePtr input, int64_t batch_size, bool drop_remainder) {
  return std::make_shared<BatchNode>(std::move(input), batch_size, drop_remainder);
}

}  // namespace ef::data::detail
