// from_tensor_slices: element i is row i of every tensor.
#include "data/dataset_node.h"

namespace ef::data::detail {

Element SliceSource::row(int64_t row) const {
  Element element;
  element.reserve(tensors.size());
  for (const Tensor& t : tensors) element.push_back(t[row]);
  return element;
}

namespace {

class SlicesIterator final : public IteratorImpl {
 public:
  // Shares the source, so a pass outlives the Dataset it came from.
  explicit SlicesIterator(std::shared_ptr<const SliceSource> source) : source_(std::move(source)) {}

  bool next(Element& out) override {
    int64_t row;
    if (!next_row(row)) return false;
    out = source_->row(row);
    return true;
  }
  const SliceSource* rows() const override { return source_.get(); }
  bool next_row(int64_t& row) override {
    if (next_ >= source_->rows) return false;
    row = next_++;
    return true;
  }

 private:
  std::shared_ptr<const SliceSource> source_;
  int64_t next_ = 0;
};

class SlicesNode final : public DatasetNode {
 public:
  SlicesNode(std::vector<Tensor> tensors, int64_t rows)
      : source_(std::make_shared<SliceSource>(SliceSource{std::move(tensors), rows})) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<SlicesIterator>(source_);
  }
  int64_t cardinality() const override { return source_->rows; }

 private:
  std::shared_ptr<const SliceSource> source_;
};

}  // namespace

NodePtr make_slices_node(std::vector<Tensor> tensors, int64_t rows) {
  return std::make_shared<SlicesNode>(std::move(tensors), rows);
}

}  // namespace ef::data::detail
