// shuffle: TensorFlow's buffer algorithm. Fill a buffer with the first buffer_size
// elements; then repeatedly emit a uniformly chosen buffer entry and put the next
// input element in its slot. A buffer as large as the dataset gives a uniform
// permutation; a smaller one only mixes nearby elements.
#include <algorithm>
#include <atomic>

#include "data/dataset_node.h"

namespace ef::data::detail {

namespace {

// splitmix64: tiny, fast, and its output is fully specified (unlike std::
// distributions), so an order depends on the seed alone, on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by Lemire's multiply-shift (bias below 2^-40 for our sizes).
  size_t below(size_t n) { return static_cast<size_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }

 private:
  uint64_t state_;
};

class ShuffleIterator final : public IteratorImpl {
 public:
  ShuffleIterator(std::unique_ptr<IteratorImpl> input, int64_t buffer_size, uint64_t seed)
      : input_(std::move(input)), buffer_size_(static_cast<size_t>(buffer_size)), rng_(seed) {}

  bool next(Element& out) override {
    if (const SliceSource* source = input_->rows()) {
      int64_t row;
      if (!next_row(row)) return false;
      out = source->row(row);
      return true;
    }
    return draw(
        elements_, [&](Element& e) { return input_->next(e); }, out);
  }
  const SliceSource* rows() const override { return input_->rows(); }
  bool next_row(int64_t& row) override {
    return draw(
        rows_, [&](int64_t& r) { return input_->next_row(r); }, row);
  }

 private:
  template <class Item, class Pull>
  bool draw(std::vector<Item>& buffer, const Pull& pull, Item& out) {
    if (!filled_) {
      filled_ = true;
      buffer.reserve(std::min<size_t>(buffer_size_, size_t{1} << 16));
      while (buffer.size() < buffer_size_) {
        Item item;
        if (!pull(item)) {
          input_done_ = true;
          break;
        }
        buffer.push_back(std::move(item));
      }
    }
    if (buffer.empty()) return false;
    const size_t i = rng_.below(buffer.size());
    out = std::move(buffer[i]);
    Item item;
    if (!input_done_ && pull(item)) {
      buffer[i] = std::move(item);
    } else {
      input_done_ = true;
      if (i + 1 != buffer.size()) buffer[i] = std::move(buffer.back());
      buffer.pop_back();
    }
    return true;
  }

  std::unique_ptr<IteratorImpl> input_;
  size_t buffer_size_;
  Rng rng_;
  bool filled_ = false;
  bool input_done_ = false;
  std::vector<int64_t> rows_;      // the buffer on the row fast path (Note [row fast path])
  std::vector<Element> elements_;  // the buffer otherwise
};

class ShuffleNode final : public DatasetNode {
 public:
  ShuffleNode(NodePtr input, int64_t buffer_size, int64_t seed, bool reshuffle)
      : input_(std::move(input)), buffer_size_(buffer_size), seed_(seed), reshuffle_(reshuffle) {}

  // Pass k of this dataset (counted over every copy of it, as tf.data's seed
  // generator is shared) shuffles with a seed derived from (seed, k), so passes
  // differ from each other yet repeat exactly for the same seed.
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    const uint64_t pass = reshuffle_ ? passes_.fetch_add(1) : 0;
    Rng mix(static_cast<uint64_t>(seed_) ^ (pass * 0xD1B54A32D192ED03ull));
    return std::make_unique<ShuffleIterator>(input_->make_iterator(), buffer_size_, mix.next());
  }
  int64_t cardinality() const override { return input_->cardinality(); }

 private:
  NodePtr input_;
  int64_t buffer_size_;
  int64_t seed_;
  bool reshuffle_;
  mutable std::atomic<uint64_t> passes_{0};  // passes started so far
};

}  // namespace

NodePtr make_shuffle_node(NodePtr input, int64_t buffer_size, int64_t seed, bool reshuffle_each_iteration) {
  return std::make_shared<ShuffleNode>(std::move(input), buffer_size, seed, reshuffle_each_iteration);
}

}  // namespace ef::data::detail
