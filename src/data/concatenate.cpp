// concatenate: one dataset's elements, then another's.
#include <limits>

#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

class ConcatenateIterator final : public IteratorImpl {
 public:
  ConcatenateIterator(std::unique_ptr<IteratorImpl> first, NodePtr second)
      : input_(std::move(first)), second_(std::move(second)) {}

  bool next(Element& out) override {
    while (input_) {
      if (input_->next(out)) {
        if (on_second_)
          check(out);
        else if (dtypes_.empty())
          for (const Tensor& t : out) dtypes_.push_back(t.dtype());
        return true;
      }
      // The second dataset's pass starts only when the first ends, as in tf.data.
      input_ = on_second_ ? nullptr : second_->make_iterator();
      on_second_ = true;
    }
    return false;
  }

 private:
  // tf.data requires equal component dtypes (shapes may differ). Without static types,
  // each element of the second dataset is compared with the first dataset's first.
  void check(const Element& e) const {
    if (dtypes_.empty()) return;  // the first dataset was empty: nothing to compare with
    if (e.size() != dtypes_.size())
      fail("concatenate: an element of the dataset to concatenate has ", e.size(),
           " components but the first dataset's have ", dtypes_.size());
    for (size_t c = 0; c < e.size(); ++c)
      if (e[c].dtype() != dtypes_[c])
        fail("concatenate: component ", c, " of an element of the dataset to concatenate has dtype ",
             e[c].dtype(), " but the first dataset's has ", dtypes_[c], "; the dtypes must match");
  }

  std::unique_ptr<IteratorImpl> input_;  // the pass in progress; null at the end
  NodePtr second_;
  bool on_second_ = false;
  std::vector<DType> dtypes_;  // of the first dataset's first element
};

class ConcatenateNode final : public DatasetNode {
 public:
  ConcatenateNode(NodePtr first, NodePtr second) : first_(std::move(first)), second_(std::move(second)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<ConcatenateIterator>(first_->make_iterator(), second_);
  }
  // tf.data's rule: infinite if either is, else unknown if either is, else the sum.
  int64_t cardinality() const override {
    const int64_t a = first_->cardinality(), b = second_->cardinality();
    if (a == kInfiniteCardinality || b == kInfiniteCardinality) return kInfiniteCardinality;
    if (a == kUnknownCardinality || b == kUnknownCardinality) return kUnknownCardinality;
    return a > std::numeric_limits<int64_t>::max() - b ? kInfiniteCardinality : a + b;
  }

 private:
  NodePtr first_, second_;
};

}  // namespace

NodePtr make_concatenate_node(NodePtr first, NodePtr second) {
  return std::make_shared<ConcatenateNode>(std::move(first), std::move(second));
}

}  // namespace ef::data::detail
