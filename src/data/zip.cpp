// zip and enumerate: elements side by side (enumerate zips a counter with its input).
#include <algorithm>
#include <limits>

#include "data/dataset_node.h"
#include "eagerflow/ops/creation.h"

namespace ef::data::detail {

namespace {

class ZipIterator final : public IteratorImpl {
 public:
  explicit ZipIterator(std::vector<std::unique_ptr<IteratorImpl>> inputs) : inputs_(std::move(inputs)) {}

  // As tf.data: every input is advanced even after one fails, so they stay in step;
  // the first input to end ends the zip (later inputs are not pulled for that element).
  bool next(Element& out) override {
    if (inputs_.empty()) return false;
    Element result, part;
    std::exception_ptr error;
    bool end = false;
    for (auto& input : inputs_) {
      try {
        if (!input->next(part)) {
          end = true;
          break;
        }
      } catch (...) {
        if (!error) error = std::current_exception();
        continue;
      }
      result.insert(result.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    if (end) inputs_.clear();
    if (error) std::rethrow_exception(error);
    if (end) return false;
    out = std::move(result);
    return true;
  }

 private:
  std::vector<std::unique_ptr<IteratorImpl>> inputs_;  // empty once ended
};

class ZipNode final : public DatasetNode {
 public:
  explicit ZipNode(std::vector<NodePtr> inputs) : inputs_(std::move(inputs)) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    std::vector<std::unique_ptr<IteratorImpl>> passes;
    for (const NodePtr& input : inputs_) passes.push_back(input->make_iterator());
    return std::make_unique<ZipIterator>(std::move(passes));
  }
  // tf.data's rule: unknown if any input is; else the smallest finite count; infinite
  // only if every input is.
  int64_t cardinality() const override {
    int64_t result = kInfiniteCardinality;
    for (const NodePtr& input : inputs_) {
      const int64_t n = input->cardinality();
      if (n == kUnknownCardinality) return kUnknownCardinality;
      if (n != kInfiniteCardinality && (result == kInfiniteCardinality || n < result)) result = n;
    }
    return result;
  }

 private:
  std::vector<NodePtr> inputs_;
};

// tf.data's enumerate is zip(range(start, int64 max), input). The counter ends at the
// int64 maximum as that range does; cardinality is the input's (tf.data would report
// an infinite input as int64 max - start elements, the range's count).
class EnumerateIterator final : public IteratorImpl {
 public:
  EnumerateIterator(std::unique_ptr<IteratorImpl> input, int64_t start)
      : input_(std::move(input)), next_(start) {}

  bool next(Element& out) override {
    if (next_ == std::numeric_limits<int64_t>::max()) return false;
    Element e;
    if (!input_->next(e)) return false;
    out.clear();
    out.reserve(e.size() + 1);
    out.push_back(constant(next_++));
    out.insert(out.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));
    return true;
  }

 private:
  std::unique_ptr<IteratorImpl> input_;
  int64_t next_;
};

class EnumerateNode final : public DatasetNode {
 public:
  EnumerateNode(NodePtr input, int64_t start) : input_(std::move(input)), start_(start) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<EnumerateIterator>(input_->make_iterator(), start_);
  }
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (n < 0 || start_ <= 0) return n;
    return std::min(n, std::numeric_limits<int64_t>::max() - start_);
  }

 private:
  NodePtr input_;
  int64_t start_;
};

}  // namespace

NodePtr make_zip_node(std::vector<NodePtr> inputs) { return std::make_shared<ZipNode>(std::move(inputs)); }

NodePtr make_enumerate_node(NodePtr input, int64_t start) {
  return std::make_shared<EnumerateNode>(std::move(input), start);
}

}  // namespace ef::data::detail
