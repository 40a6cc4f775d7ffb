// all_reduce_many: a composite over public ops (concat, all_reduce, split), so tapes,
// graphs and forward mode handle it without rules of its own.
#include <map>

#include "eagerflow/distribute/distribute.h"
#include "eagerflow/ops/array.h"

namespace ef::distribute {

std::vector<Tensor> all_reduce_many(const std::vector<Tensor>& xs, Reduction reduction, CallSite where) {
  // The positions of the defined tensors, by dtype (std::map: the same order on every rank).
  std::map<DType, std::vector<size_t>> by_dtype;
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i].defined()) by_dtype[xs[i].dtype()].push_back(i);
  std::vector<Tensor> out(xs.size());
  for (const auto& [dtype, positions] : by_dtype) {
    std::vector<Tensor> flat;
    std::vector<int64_t> sizes;
    for (size_t i : positions) {
      flat.push_back(reshape(xs[i], Shape{-1}, where));
      sizes.push_back(flat.back().shape()[0]);
    }
    const Tensor reduced = all_reduce(flat.size() == 1 ? flat[0] : concat(flat, 0, where), reduction, where);
    const std::vector<Tensor> pieces =
        flat.size() == 1 ? std::vector<Tensor>{reduced} : split(reduced, sizes, 0, where);
    for (size_t k = 0; k < positions.size(); ++k)
      out[positions[k]] = reshape(pieces[k], xs[positions[k]].shape(), where);
  }
  return out;
}

}  // namespace ef::distribute
