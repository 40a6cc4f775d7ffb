// The reduction driver shared by reduce_sum, reduce_max, ... An op supplies a Reducer:
//
//   struct R {
//     using Acc = ...;                                  // accumulator (wider than T for float sums)
//     static Acc identity();
//     static Acc row(const T* p, int64_t n, int64_t s); // reduce n elements p[0], p[s], ... (vectorized)
//     static Acc merge(Acc a, Acc b);                   // combine partial results, in order
//     static void columns(Acc* acc, const T* p, int64_t n);  // acc[j] = merge(acc[j], p[j]), vectorized
//     static T finish(Acc a);
//   };
//
// and the driver handles strides, dimension merging, the fast paths and threads.
//
// Note [deterministic reductions]: results never depend on the thread count. Each
// output element is reduced by one thread, and a long reduction is cut into blocks of
// kReduceBlock elements whose partial results are merged in block order — the block
// boundaries depend only on the shape. Blocking also bounds float rounding error
// (each block is summed in a wide accumulator, then blocks are added), like pairwise
// summation does.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "backends/cpu/elementwise.h"

namespace ef::cpu {

inline constexpr int64_t kReduceBlock = 16384;

// Largest (IsMax) or smallest of n contiguous values starting from `init`, vectorized:
// a plain max/min reduction plus a separate flag that is set when any value is NaN
// (the comparison alone would skip NaNs). Used by reduce_max/min and argmax/argmin.
template <bool IsMax, class T>
T extreme_contiguous(const T* p, int64_t n, T init, bool& saw_nan) {
  T m = init;
  int nan = 0;
  if constexpr (IsMax) {
#pragma omp simd reduction(max : m) reduction(| : nan)
    for (int64_t i = 0; i < n; ++i) {
      m = p[i] > m ? p[i] : m;
      nan |= p[i] != p[i];
    }
  } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
    for (int64_t i = 0; i < n; ++i) {
      m = p[i] < m ? p[i] : m;
      nan |= p[i] != p[i];
    }
  }
  saw_nan = nan != 0;
  return m;
}

inline constexpr double kReduceElementNs = 0.3;

// The input seen as kept dimensions (one per output dimension, in output order, with
// the input's strides) and reduced dimensions (a StridedLayout<1> walked row by row).
// Size-1 dimensions are dropped and adjacent mergeable dimensions are merged.
struct ReduceLayout {
  int kept_rank = 0;
  int64_t kept_sizes[kMaxRank] = {};
  int64_t kept_strides[kMaxRank] = {};
  StridedLayout<1> reduced;
  int64_t outputs = 1;  // elements of the output
  int64_t count = 1;    // elements reduced into each output

  // Input offset (relative to the tensor's offset) of the first element reduced into
  // output element `o` (row-major over the kept dimensions).
  int64_t kept_offset(int64_t o) const {
    int64_t off = 0;
    for (int i = kept_rank - 1; i >= 0; --i) {
      off += (o % kept_sizes[i]) * kept_strides[i];
      o /= kept_sizes[i];
    }
    return off;
  }
};

// `axes` are sorted, distinct and in range (inference checked them).
inline ReduceLayout make_reduce_layout(const TensorImpl& in, const Dims& axes) {
  ReduceLayout l;
  bool reduced[kMaxRank] = {};
  for (int64_t a : axes) reduced[a] = true;
  struct Dim { int64_t size, stride; };
  Dim red[kMaxRank];
  int nred = 0;
  for (int i = 0; i < in.shape.rank(); ++i) {
    int64_t size = in.shape[i], stride = in.strides[i];
    if (reduced[i]) {
      l.count *= size;
      if (size != 1) red[nred++] = {size, stride};
      continue;
    }
    l.outputs *= size;
    if (size == 1) continue;
    int r = l.kept_rank;
    if (r > 0 && l.kept_strides[r - 1] == stride * size) {  // merge into the previous kept dim
      l.kept_sizes[r - 1] *= size;
      l.kept_strides[r - 1] = stride;
    } else {
      l.kept_sizes[r] = size;
      l.kept_strides[r] = stride;
      ++l.kept_rank;
    }
  }
  // Any order of the reduced elements is a valid reduction: walk the smallest stride
  // innermost (a transposed input still gets unit-stride rows), then merge.
  std::stable_sort(red, red + nred, [](const Dim& a, const Dim& b) {
    return std::abs(a.stride) > std::abs(b.stride);
  });
  StridedLayout<1>& rl = l.reduced;
  for (int i = 0; i < nred; ++i) {
    int r = rl.rank;
    if (r > 0 && rl.strides[0][r - 1] == red[i].stride * red[i].size) {
      rl.sizes[r - 1] *= red[i].size;
      rl.strides[0][r - 1] = red[i].stride;
    } else {
      rl.sizes[r] = red[i].size;
      rl.strides[0][r] = red[i].stride;
      ++rl.rank;
    }
  }
  if (rl.rank == 0) {
    rl.rank = 1;
    rl.sizes[0] = 1;
    rl.strides[0][0] = 0;
  }
  rl.total = l.count;
  return l;
}

// out (contiguous, the kept shape) = reduction of `in` over `axes` by R.
template <class R, class T>
void reduce(const Tensor& in, const Dims& axes, Tensor& out) {
  using Acc = typename R::Acc;
  const ReduceLayout l = make_reduce_layout(*in.impl(), axes);
  const T* src = static_cast<const T*>(in.impl()->storage->data()) + in.impl()->offset;
  T* dst = typed_output<T>(out);
  if (l.outputs == 0) return;
  if (l.count == 0) {  // an empty reduction gives the identity
    const T v = R::finish(R::identity());
    std::fill(dst, dst + l.outputs, v);
    return;
  }
  const StridedLayout<1>& rl = l.reduced;
  auto reduce_range = [&](int64_t base, int64_t begin, int64_t end) {
    Acc acc = R::identity();
    for_each_row<1>(rl, begin, end, [&](int64_t n, const int64_t* off, const int64_t* st) {
      acc = R::merge(acc, R::row(src + base + off[0], n, st[0]));
    });
    return acc;
  };

  // Column path: the output's innermost dimension is contiguous in the input and every
  // reduced dimension is outside it (column sums): accumulate whole input rows into a
  // row of accumulators, vectorized along the output.
  const int kr = l.kept_rank;
  if (kr > 0 && l.kept_strides[kr - 1] == 1 && l.kept_sizes[kr - 1] >= 8 && rl.strides[0][rl.rank - 1] != 1) {
    constexpr int64_t kWidth = 256;
    const int64_t m = l.kept_sizes[kr - 1], outer = l.outputs / m, blocks = (m + kWidth - 1) / kWidth;
    const int64_t units = outer * blocks;
    // Accumulates reduced elements [r0, r1) of output columns [j0, j0 + w) of row o.
    auto accumulate = [&](Acc* acc, int64_t u, int64_t r0, int64_t r1) {
      const int64_t o = u / blocks, j0 = (u % blocks) * kWidth, w = std::min(kWidth, m - j0);
      const int64_t base = l.kept_offset(o * m) + j0;
      std::fill(acc, acc + w, R::identity());
      for_each_row<1>(rl, r0, r1, [&](int64_t n, const int64_t* off, const int64_t* st) {
        for (int64_t r = 0; r < n; ++r) R::columns(acc, src + base + off[0] + r * st[0], w);
      });
      return w;
    };
    auto store = [&](const Acc* acc, int64_t u, int64_t w) {
      T* o_row = dst + (u / blocks) * m + (u % blocks) * kWidth;
      for (int64_t j = 0; j < w; ++j) o_row[j] = R::finish(acc[j]);
    };
    // Few column blocks over many rows (a [batch, features] tensor reduced over the
    // batch): also split the rows into pieces, merged in order. The split depends only
    // on the shape (Note [deterministic reductions]).
    const int64_t pieces = units < 8 && l.count >= 4096 ? std::min<int64_t>(64, l.count / 1024) : 1;
    if (pieces == 1) {
      parallel_for(units, static_cast<double>(l.count * kWidth) * kReduceElementNs, [&](int64_t b, int64_t e) {
        Acc acc[kWidth];
        for (int64_t u = b; u < e; ++u) store(acc, u, accumulate(acc, u, 0, l.count));
      });
      return;
    }
    std::unique_ptr<Acc[]> part(new Acc[static_cast<size_t>(units * pieces * kWidth)]);
    parallel_for(units * pieces, static_cast<double>(l.count / pieces * kWidth) * kReduceElementNs,
                 [&](int64_t b, int64_t e) {
                   for (int64_t t = b; t < e; ++t) {
                     const int64_t p = t % pieces;
                     accumulate(part.get() + t * kWidth, t / pieces, l.count * p / pieces, l.count * (p + 1) / pieces);
                   }
                 });
    for (int64_t u = 0; u < units; ++u) {
      Acc* acc = part.get() + u * pieces * kWidth;
      const int64_t w = std::min(kWidth, m - (u % blocks) * kWidth);
      for (int64_t p = 1; p < pieces; ++p)
        for (int64_t j = 0; j < w; ++j) acc[j] = R::merge(acc[j], acc[p * kWidth + j]);
      store(acc, u, w);
    }
    return;
  }

  // Row path: each output reduces `count` elements; long reductions are cut into
  // fixed blocks (Note [deterministic reductions]).
  const int64_t blocks = (l.count + kReduceBlock - 1) / kReduceBlock;
  if (blocks == 1 && rl.rank == 1 && kr <= 1) {
    // One reduced and at most one kept dimension (the common [rows, cols] cases): no
    // multi-index bookkeeping per output, which dominates when rows are short.
    const int64_t n = rl.sizes[0], s = rl.strides[0][0], ks = kr == 1 ? l.kept_strides[0] : 0;
    parallel_for(l.outputs, static_cast<double>(l.count) * kReduceElementNs + 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) dst[o] = R::finish(R::row(src + o * ks, n, s));
    });
    return;
  }
  if (blocks == 1) {
    parallel_for(l.outputs, static_cast<double>(l.count) * kReduceElementNs + 5, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) dst[o] = R::finish(reduce_range(l.kept_offset(o), 0, l.count));
    });
    return;
  }
  // Not std::vector: vector<bool> packs bits, and threads write neighbouring entries.
  std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(l.outputs * blocks)]);
  parallel_for(l.outputs * blocks, static_cast<double>(kReduceBlock) * kReduceElementNs, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t o = u / blocks, k = u % blocks;
      partial[u] = reduce_range(l.kept_offset(o), k * kReduceBlock, std::min(l.count, (k + 1) * kReduceBlock));
    }
  });
  for (int64_t o = 0; o < l.outputs; ++o) {
    Acc acc = partial[o * blocks];
    for (int64_t k = 1; k < blocks; ++k) acc = R::merge(acc, partial[o * blocks + k]);
    dst[o] = R::finish(acc);
  }
}

}  // namespace ef::cpu
