// FuzzInput: turns the fuzzer's bytes into the values op calls take — dtypes, shapes,
// axes, numbers — biased toward small valid values with a share of hostile ones
// (negative sizes, 2^31, 2^62, NaN, huge numbers) that the API must reject cleanly.
// Once the bytes run out every read returns zeros, so any input is a complete program.
#pragma once

#include <eagerflow/eagerflow.h>

#include <cstdint>
#include <cstring>
#include <limits>

namespace ef_fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t u16() { return static_cast<uint16_t>(byte() | (byte() << 8)); }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(byte()) << (8 * i);
    return v;
  }
  bool flag() { return byte() & 1; }
  // A value in [0, n).
  size_t pick(size_t n) { return n ? byte() % n : 0; }

  // The real dtypes, the first twelve of kAllDTypes, so that the saved regression inputs
  // keep decoding to the dtypes they were found with (complex tensors are not fuzzed yet).
  ef::DType dtype() { return ef::kAllDTypes[pick(kFuzzedDTypes)]; }
  static constexpr size_t kFuzzedDTypes = 12;

  // A dimension: usually 0-10, sometimes one the API must reject or that overflows.
  int64_t dim() {
    uint8_t b = byte();
    if (b < 240) return b % 11;
    return hostile_int(b);
  }
  // A shape of rank 0-5 (rarely more, up to beyond kMaxRank).
  ef::Shape shape() {
    uint8_t r = byte();
    int rank = r < 250 ? r % 6 : 6 + r % 5;
    ef::Dims dims;
    for (int i = 0; i < rank; ++i) dims.push_back(dim());
    return ef::Shape(dims);
  }
  // A shape with every dimension small and valid (for tensors the fuzzer builds itself).
  ef::Shape small_shape() {
    int rank = static_cast<int>(pick(6));
    ef::Dims dims;
    for (int i = 0; i < rank; ++i) dims.push_back(static_cast<int64_t>(pick(5)));
    return ef::Shape(dims);
  }
  // An axis for a tensor of `rank`: mostly in [-rank-1, rank], sometimes hostile.
  int64_t axis(int rank) {
    uint8_t b = byte();
    if (b < 240) return static_cast<int64_t>(b % (2 * rank + 3)) - rank - 1;
    return hostile_int(b);
  }
  // 0-3 axes; an empty list means "all" for reductions.
  std::vector<int64_t> axes(int rank) {
    std::vector<int64_t> out(pick(4));
    for (int64_t& a : out) a = axis(rank);
    return out;
  }
  // A count or index attribute: small, negative, or hostile.
  int64_t integer() {
    uint8_t b = byte();
    if (b < 200) return static_cast<int64_t>(b % 24) - 4;
    return hostile_int(b);
  }
  // A floating-point number: ordinary, special or extreme.
  double number() {
    static constexpr double kInf = std::numeric_limits<double>::infinity();
    static const double kTable[] = {0.0,    -0.0,  1.0,     -1.0,    0.5,     2.5,    -3.75, 7.0,
                                    100.0,  1e-3,  1e30,    -1e30,   1e308,   -1e308, 5e-324,
                                    2147483648.0,  -2147483649.0, 9.3e18, -9.3e18, 4294967296.0,
                                    kInf,   -kInf, std::numeric_limits<double>::quiet_NaN()};
    uint8_t b = byte();
    if (b < 200) return kTable[b % std::size(kTable)];
    uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

 private:
  static int64_t hostile_int(uint8_t b) {
    static constexpr int64_t kHostile[] = {-1,
                                           -2,
                                           int64_t{1} << 31,
                                           (int64_t{1} << 31) - 1,
                                           int64_t{1} << 32,
                                           int64_t{1} << 62,
                                           std::numeric_limits<int64_t>::max(),
                                           std::numeric_limits<int64_t>::min(),
                                           std::numeric_limits<int32_t>::min(),
                                           -(int64_t{1} << 62)};
    return kHostile[b % std::size(kHostile)];
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace ef_fuzz
