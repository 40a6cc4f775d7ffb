// from_generator: elements from a user function, one fresh generator per pass.
#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

class GeneratorIterator final : public IteratorImpl {
 public:
  explicit GeneratorIterator(GeneratorFn generator) : generator_(std::move(generator)) {}

  bool next(Element& out) override {
    if (done_) return false;
    // Started on the first request, not when the pass is made: the pass may be made on
    // one thread and pulled on another (prefetch), and the generator runs where pulled.
    if (!next_) {
      next_ = generator_();
      if (!next_) fail("from_generator: the generator returned an empty next-element function");
    }
    std::optional<Element> element = next_();
    if (!element) {
      done_ = true;
      next_ = nullptr;  // releases the pass's generator state now
      return false;
    }
    for (size_t c = 0; c < element->size(); ++c)
      if (!(*element)[c].defined())
        fail("from_generator: the generator yielded an undefined tensor as component ", c);
    out = std::move(*element);
    return true;
  }

 private:
  GeneratorFn generator_;  // a copy: a pass outlives its Dataset
  std::function<std::optional<Element>()> next_;
  bool done_ = false;
};

class GeneratorNode final : public DatasetNode {
 public:
  explicit GeneratorNode(GeneratorFn generator) : generator_(std::move(generator)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<GeneratorIterator>(generator_);
  }
  int64_t cardinality() const override { return kUnknownCardinality; }

 private:
  GeneratorFn generator_;
};

}  // namespace

NodePtr make_generator_node(GeneratorFn generator) {
  return std::make_shared<GeneratorNode>(std::move(generator));
}

}  // namespace ef::data::detail
