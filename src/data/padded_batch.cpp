// padded_batch: batch, padding each component to a common shape first.
#include <algorithm>

#include "data/dataset_node.h"
#include "eagerflow/ops/array.h"

namespace ef::data::detail {

namespace {

class PaddedBatchIterator final : public IteratorImpl {
 public:
  PaddedBatchIterator(std::unique_ptr<IteratorImpl> input, int64_t batch_size,
                      std::vector<Shape> padded_shapes, std::vector<TensorOrScalar> padding_values,
                      bool drop_remainder)
      : input_(std::move(input)),
        batch_size_(batch_size),
        padded_shapes_(std::move(padded_shapes)),
        padding_values_(std::move(padding_values)),
        drop_remainder_(drop_remainder) {}

  bool next(Element& out) override {
    std::vector<Element> elements;
    Element e;
    while (static_cast<int64_t>(elements.size()) < batch_size_ && input_->next(e))
      elements.push_back(std::move(e));
    if (elements.empty() || (drop_remainder_ && static_cast<int64_t>(elements.size()) < batch_size_))
      return false;
    const size_t components = elements[0].size();
    if (!padded_shapes_.empty() && padded_shapes_.size() != components)
      fail("padded_batch: padded_shapes has ", padded_shapes_.size(), " entries but the elements have ",
           components, " components");
    if (padding_values_.size() > 1 && padding_values_.size() != components)
      fail("padded_batch: padding_values has ", padding_values_.size(), " entries but the elements have ",
           components, " components");
    for (size_t i = 1; i < elements.size(); ++i)
      if (elements[i].size() != components)
        fail("padded_batch: element ", i, " of a batch has ", elements[i].size(),
             " components but element 0 has ", components);
    out.clear();
    std::vector<Tensor> parts(elements.size());
    for (size_t c = 0; c < components; ++c) {
      for (size_t i = 0; i < elements.size(); ++i) parts[i] = elements[i][c];
      out.push_back(pad_and_stack(c, parts));
    }
    return true;
  }

 private:
  Tensor pad_and_stack(size_t c, const std::vector<Tensor>& parts) const {
    const Tensor& first = parts[0];
    const Shape padded = padded_shapes_.empty() ? Shape(Dims(static_cast<size_t>(first.rank()), kUnknownDim))
                                                : padded_shapes_[c];
    // The batch's shape for this component: fixed dimensions as given, -1 the longest.
    Shape target = padded;
    for (int d = 0; d < target.rank(); ++d)
      if (target[d] == kUnknownDim) target[d] = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const Tensor& t = parts[i];
      if (t.dtype() != first.dtype())
        fail("padded_batch: component ", c, " of element ", i, " of a batch has dtype ", t.dtype(),
             " but element 0 has dtype ", first.dtype());
      if (t.rank() != padded.rank()) {
        if (padded_shapes_.empty())
          fail("padded_batch: component ", c, " of element ", i, " of a batch has shape ", t.shape(),
               " but element 0 has shape ", first.shape(), "; padding needs equal ranks");
        fail("padded_batch: component ", c, " of element ", i, " of a batch has shape ", t.shape(),
             " but padded_shapes[", c, "] = ", padded, " has rank ", padded.rank());
      }
      for (int d = 0; d < t.rank(); ++d) {
        if (padded[d] == kUnknownDim)
          target[d] = std::max(target[d], t.shape()[d]);
        else if (t.shape()[d] > padded[d])
          fail("padded_batch: component ", c, " of element ", i, " of a batch has shape ", t.shape(),
               ", larger than padded_shapes[", c, "] = ", padded, " (padding cannot shrink it)");
      }
    }
    const Tensor value = padding_value(c, first.dtype());
    std::vector<Tensor> padded_parts;
    padded_parts.reserve(parts.size());
    for (const Tensor& t : parts) {
      if (t.shape() == target) {
        padded_parts.push_back(t);
        continue;
      }
      std::vector<std::pair<int64_t, int64_t>> paddings;
      for (int d = 0; d < t.rank(); ++d) paddings.emplace_back(0, target[d] - t.shape()[d]);
      padded_parts.push_back(pad(t, paddings, "CONSTANT", value));
    }
    return stack(padded_parts);
  }

  // Component c's padding value as a scalar of `dtype` (Dataset checked tensors are scalars).
  Tensor padding_value(size_t c, DType dtype) const {
    if (padding_values_.empty()) return scalar_tensor(0, dtype, "padded_batch");
    const TensorOrScalar& v = padding_values_[padding_values_.size() == 1 ? 0 : c];
    if (v.is_tensor() && v.tensor().dtype() != dtype)
      fail("padded_batch: padding value for component ", c, " has dtype ", v.tensor().dtype(),
           " but the component has dtype ", dtype);
    return scalar_tensor(v, dtype, "padded_batch");
  }

  std::unique_ptr<IteratorImpl> input_;
  int64_t batch_size_;
  std::vector<Shape> padded_shapes_;            // empty: every dimension to the longest
  std::vector<TensorOrScalar> padding_values_;  // empty: zeros; one: for every component
  bool drop_remainder_;
};

class PaddedBatchNode final : public DatasetNode {
 public:
  PaddedBatchNode(NodePtr input, int64_t batch_size, std::vector<Shape> padded_shapes,
                  std::vector<TensorOrScalar> padding_values, bool drop_remainder)
      : input_(std::move(input)),
        batch_size_(batch_size),
        padded_shapes_(std::move(padded_shapes)),
        padding_values_(std::move(padding_values)),
        drop_remainder_(drop_remainder) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<PaddedBatchIterator>(input_->make_iterator(), batch_size_, padded_shapes_,
                                                 padding_values_, drop_remainder_);
  }
  int64_t cardinality() const override {
    return batched_cardinality(input_->cardinality(), batch_size_, drop_remainder_);
  }

 private:
  NodePtr input_;
  int64_t batch_size_;
  std::vector<Shape> padded_shapes_;
  std::vector<TensorOrScalar> padding_values_;
  bool drop_remainder_;
};

}  // namespace

NodePtr make_padded_batch_node(NodePtr input, int64_t batch_size, std::vector<Shape> padded_shapes,
                               std::vector<TensorOrScalar> padding_values, bool drop_remainder) {
  return std::make_shared<PaddedBatchNode>(std::move(input), batch_size, std::move(padded_shapes),
                                           std::move(padding_values), drop_remainder);
}

}  // namespace ef::data::detail
