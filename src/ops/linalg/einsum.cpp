// einsum: Einstein summation as tf.einsum / np.einsum. A composite: the equation is
// parsed once, each operand loses its repeated labels (diagonals, by a strided slice)
// and the labels nobody else needs (reduce_sum), then operands are contracted pairwise
// in a greedy order, each pair as one batched matmul (or a broadcast multiply when
// nothing is contracted). The gradient comes from those ops.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"

namespace ef {
namespace {

// Labels are ints: 'A'..'Z' are 0..25 and 'a'..'z' 26..51 (so that sorting them sorts
// as the implicit output does, by character code), and the ellipsis' dimensions
// kFirstEllipsisLabel + j, right-aligned as NumPy broadcasts them.
constexpr int kFirstEllipsisLabel = 52;
constexpr int kEllipsisMarker = -1;
using Labels = std::vector<int>;

std::string label_name(int label) {
  if (label >= kFirstEllipsisLabel) return "'...' dimension " + std::to_string(label - kFirstEllipsisLabel);
  return std::string("'") + static_cast<char>(label < 26 ? 'A' + label : 'a' + label - 26) + "'";
}

std::string shapes_of(const std::vector<Tensor>& operands) {
  std::ostringstream os;
  for (size_t i = 0; i < operands.size(); ++i) os << (i ? ", " : "") << operands[i].shape();
  return os.str();
}

bool contains(const Labels& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// One term of the equation: its labels, with kEllipsisMarker where `...` stands.
Labels parse_term(const std::string& term, const std::string& equation) {
  Labels labels;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      labels.push_back(std::isupper(static_cast<unsigned char>(c)) ? c - 'A' : c - 'a' + 26);
    } else if (c == '.' && term.compare(i, 3, "...") == 0) {
      if (contains(labels, kEllipsisMarker))
        fail("einsum: argument 'equation' ('", equation, "') has more than one '...' in the term '", term,
             "'");
      labels.push_back(kEllipsisMarker);
      i += 2;
    } else {
      fail("einsum: argument 'equation' ('", equation, "') has the invalid character '", c,
           "'; subscripts are letters a-z and A-Z, '...', ',' and '->'");
    }
  }
  return labels;
}

// The equation with every term's `...` replaced by its ellipsis labels.
struct Equation {
  std::vector<Labels> inputs;
  Labels output;
  std::map<int, int64_t> sizes;  // per label; -1 where unknown (graph mode)
};

// `...` of an operand with `count` ellipsis dimensions, of `widest` in all.
Labels expand_ellipsis(const Labels& term, int count, int widest) {
  Labels labels;
  for (int label : term) {
    if (label != kEllipsisMarker) {
      labels.push_back(label);
      continue;
    }
    for (int j = widest - count; j < widest; ++j) labels.push_back(kFirstEllipsisLabel + j);
  }
  return labels;
}

// Sizes of every label; a size of 1 broadcasts against other operands (NumPy), but the
// repeated labels of one operand (a diagonal) must agree exactly.
void infer_sizes(Equation& eq, const std::vector<Tensor>& operands) {
  for (size_t i = 0; i < operands.size(); ++i) {
    std::map<int, int64_t> own;
    for (size_t axis = 0; axis < eq.inputs[i].size(); ++axis) {
      const int label = eq.inputs[i][axis];
      const int64_t size = operands[i].shape()[static_cast<int>(axis)];
      auto [it, first] = own.emplace(label, size);
      if (!first && it->second >= 0 && size >= 0 && it->second != size)
        fail("einsum: label ", label_name(label), " repeats in operand ", i, " (shape ", operands[i].shape(),
             ") with sizes ", it->second, " and ", size, "; a diagonal needs equal sizes");
      if (it->second < 0) it->second = size;
    }
    for (auto [label, size] : own) {
      auto [it, first] = eq.sizes.emplace(label, size);
      int64_t& known = it->second;
      if (first || size == known || size == 1) continue;
      if (known == 1 || known < 0) {
        known = size;
        continue;
      }
      if (size < 0) continue;
      fail("einsum: label ", label_name(label), " has size ", known, " in an earlier operand but size ", size,
           " in operand ", i, " (shapes ", shapes_of(operands), ")");
    }
  }
}

Equation parse(std::string equation, const std::vector<Tensor>& operands) {
  equation.erase(
      std::remove_if(equation.begin(), equation.end(), [](unsigned char c) { return std::isspace(c); }),
      equation.end());
  const size_t arrow = equation.find("->");
  if (arrow != std::string::npos && equation.find("->", arrow + 2) != std::string::npos)
    fail("einsum: argument 'equation' ('", equation, "') has more than one '->'");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Labels> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma - start), equation));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size())
    fail("einsum: argument 'equation' ('", equation, "') has ", terms.size(), " input terms but ",
         operands.size(), " operands were given (shapes ", shapes_of(operands), ")");

  Equation eq;
  std::vector<int> ellipsis_dims(operands.size(), 0);
  int widest = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int rank = operands[i].rank();
    const bool has_ellipsis = contains(terms[i], kEllipsisMarker);
    const int letters = static_cast<int>(terms[i].size()) - (has_ellipsis ? 1 : 0);
    if (has_ellipsis ? rank < letters : rank != letters)
      fail("einsum: the term of operand ", i, " in argument 'equation' ('", equation, "') names ", letters,
           " dimensions", has_ellipsis ? " and '...'" : "", " but the operand has shape ",
           operands[i].shape(), " (rank ", rank, ")");
    ellipsis_dims[i] = has_ellipsis ? rank - letters : 0;
    widest = std::max(widest, ellipsis_dims[i]);
  }
  std::map<int, int> counts;
  for (size_t i = 0; i < terms.size(); ++i) {
    eq.inputs.push_back(expand_ellipsis(terms[i], ellipsis_dims[i], widest));
    for (int label : terms[i]) ++counts[label];
  }
  if (arrow != std::string::npos) {
    // An ellipsis in the inputs but not the output is summed over, as in PyTorch.
    const Labels output = parse_term(equation.substr(arrow + 2), equation);
    for (size_t k = 0; k < output.size(); ++k) {
      if (std::find(output.begin(), output.begin() + static_cast<long>(k), output[k]) !=
          output.begin() + static_cast<long>(k))
        fail("einsum: the output of argument 'equation' ('", equation, "') repeats ",
             output[k] == kEllipsisMarker ? std::string("'...'") : label_name(output[k]));
      if (output[k] != kEllipsisMarker && counts.count(output[k]) == 0)
        fail("einsum: the output label ", label_name(output[k]), " of argument 'equation' ('", equation,
             "') appears in no input");
    }
    eq.output = expand_ellipsis(output, widest, widest);
  } else {  // implicit: the ellipsis, then the labels that appear once, sorted
    eq.output = expand_ellipsis({kEllipsisMarker}, widest, widest);
    for (auto [label, count] : counts)
      if (count == 1 && label != kEllipsisMarker) eq.output.push_back(label);
  }
  infer_sizes(eq, operands);
  return eq;
}

// An operand during the contraction: its tensor and one label per axis.
struct Operand {
  Tensor value;
  Labels labels;
};

Shape sizes_of(const Labels& labels, const Equation& eq) {
  std::vector<int64_t> dims;
  for (int label : labels) dims.push_back(eq.sizes.at(label));
  return Shape(dims);
}

// The axes of x with a repeated label become one: x[..., i, ..., i, ...] read along the
// diagonal, by moving both axes last, merging them and slicing with stride n + 1.
Operand take_diagonal(const Operand& x, size_t first, size_t second, CallSite where) {
  const int64_t n = x.value.shape()[static_cast<int>(first)];
  std::vector<int64_t> perm, rest_dims;
  Labels labels;
  for (size_t axis = 0; axis < x.labels.size(); ++axis) {
    if (axis == first || axis == second) continue;
    perm.push_back(static_cast<int64_t>(axis));
    rest_dims.push_back(x.value.shape()[static_cast<int>(axis)]);
    labels.push_back(x.labels[axis]);
  }
  if (n < 0 || std::count(rest_dims.begin(), rest_dims.end(), -1) > 1)
    fail<UnimplementedError>("einsum: the diagonal of label ", label_name(x.labels[first]),
                             " needs its size and all but one other dimension known, got shape ",
                             x.value.shape());
  perm.push_back(static_cast<int64_t>(first));
  perm.push_back(static_cast<int64_t>(second));
  rest_dims.push_back(n * n);
  Tensor merged = reshape(transpose(x.value, perm, where), Shape(rest_dims), where);
  std::vector<int64_t> begin(rest_dims.size(), 0), end(rest_dims.size(), 0), strides(rest_dims.size(), 1);
  end.back() = n * n;
  strides.back() = n + 1;
  const int64_t all_but_last = (int64_t{1} << (rest_dims.size() - 1)) - 1;
  labels.push_back(x.labels[first]);
  return {strided_slice(merged, begin, end, strides, {.begin_mask = all_but_last, .end_mask = all_but_last},
                        where),
          labels};
}

// Sums the axes whose labels are not in `keep` (nobody else needs them).
void sum_unneeded(Operand& x, const std::set<int>& keep, CallSite where) {
  std::vector<int64_t> axes;
  Labels labels;
  for (size_t axis = 0; axis < x.labels.size(); ++axis) {
    if (keep.count(x.labels[axis]))
      labels.push_back(x.labels[axis]);
    else
      axes.push_back(static_cast<int64_t>(axis));
  }
  if (axes.empty()) return;
  x = {reduce_sum(x.value, axes, false, where), labels};
}

// The first two axes with the same label, if any.
std::optional<std::pair<size_t, size_t>> repeated_label(const Labels& labels) {
  for (size_t first = 0; first < labels.size(); ++first)
    for (size_t second = first + 1; second < labels.size(); ++second)
      if (labels[first] == labels[second]) return std::pair{first, second};
  return std::nullopt;
}

// Diagonals taken and, with known shapes, size-1 axes that broadcast against a larger
// size dropped: the label then lives on in the other operands only (broadcast_to
// restores it at the end). With unknown shapes the multiplies broadcast them instead.
Operand prepare(Tensor value, Labels labels, const Equation& eq, bool shapes_known, CallSite where) {
  Operand x{std::move(value), std::move(labels)};
  while (auto axes = repeated_label(x.labels)) x = take_diagonal(x, axes->first, axes->second, where);
  if (!shapes_known) return x;
  std::vector<int64_t> broadcast_axes;
  Labels kept;
  for (size_t axis = 0; axis < x.labels.size(); ++axis) {
    const int64_t label_size = eq.sizes.at(x.labels[axis]);
    if (x.value.shape()[static_cast<int>(axis)] == 1 && label_size >= 0 && label_size != 1)
      broadcast_axes.push_back(static_cast<int64_t>(axis));
    else
      kept.push_back(x.labels[axis]);
  }
  if (!broadcast_axes.empty()) x = {squeeze(x.value, broadcast_axes, where), kept};
  return x;
}

// x's axes rearranged to `order` (a superset of x's labels), with a size-1 axis for each
// label x lacks: ready to broadcast against another operand in the same order.
Tensor aligned(const Operand& x, const Labels& order, CallSite where) {
  std::vector<int64_t> perm;
  for (int label : order)
    if (contains(x.labels, label))
      perm.push_back(std::find(x.labels.begin(), x.labels.end(), label) - x.labels.begin());
  Tensor t = transpose(x.value, perm, where);
  for (size_t axis = 0; axis < order.size(); ++axis)
    if (!contains(x.labels, order[axis])) t = expand_dims(t, static_cast<int64_t>(axis), where);
  return t;
}

int64_t product(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

// a and b contracted over their shared labels not in `keep`. With known shapes (of
// every operand, so that prepare dropped the size-1 broadcasts), one batched matmul: a as [batch, free_a,
// contracted], b as [batch, contracted, free_b], each transposed (a view) only when its axes are not already
// in one of those orders. Otherwise, or with nothing to contract, a broadcast multiply and a reduce_sum.
Operand contract(Operand a, Operand b, const std::set<int>& keep, const Equation& eq, bool shapes_known,
                 CallSite where) {
  std::set<int> keep_a = keep, keep_b = keep;
  keep_a.insert(b.labels.begin(), b.labels.end());
  keep_b.insert(a.labels.begin(), a.labels.end());
  sum_unneeded(a, keep_a, where);
  sum_unneeded(b, keep_b, where);
  Labels batch, contracted, free_a, free_b;
  for (int label : a.labels) {
    if (!contains(b.labels, label))
      free_a.push_back(label);
    else if (keep.count(label))
      batch.push_back(label);
    else
      contracted.push_back(label);
  }
  for (int label : b.labels)
    if (!contains(a.labels, label)) free_b.push_back(label);

  if (!shapes_known || contracted.empty() || (free_a.empty() && free_b.empty())) {
    Labels order = a.labels;
    for (int label : free_b) order.push_back(label);
    Operand product_ab{multiply(aligned(a, order, where), aligned(b, order, where), where), order};
    sum_unneeded(product_ab, keep, where);
    return product_ab;
  }
  auto concat_labels = [](std::initializer_list<const Labels*> parts) {
    Labels all;
    for (const Labels* p : parts) all.insert(all.end(), p->begin(), p->end());
    return all;
  };
  const int64_t nb = product(sizes_of(batch, eq)), k = product(sizes_of(contracted, eq));
  const int64_t m = product(sizes_of(free_a, eq)), n = product(sizes_of(free_b, eq));
  auto matrix = [&](const Operand& x, const Labels& plain, const Labels& flipped, int64_t rows, int64_t cols,
                    bool& transposed) {
    transposed = x.labels == flipped;
    const Labels& order = transposed ? flipped : plain;
    if (transposed) std::swap(rows, cols);
    Shape shape = batch.empty() ? Shape{rows, cols} : Shape{nb, rows, cols};
    return reshape(aligned(x, order, where), shape, where);
  };
  bool transpose_a = false, transpose_b = false;
  Tensor ma = matrix(a, concat_labels({&batch, &free_a, &contracted}),
                     concat_labels({&batch, &contracted, &free_a}), m, k, transpose_a);
  Tensor mb = matrix(b, concat_labels({&batch, &contracted, &free_b}),
                     concat_labels({&batch, &free_b, &contracted}), k, n, transpose_b);
  Labels labels = concat_labels({&batch, &free_a, &free_b});
  return {reshape(matmul(ma, mb, transpose_a, transpose_b, where), sizes_of(labels, eq), where), labels};
}

// Which pair to contract next, as opt_einsum's greedy order: pairs that share a label
// before outer products, then the one whose result grows memory the least, then fewest
// flops. Unknown sizes count as 64.
std::pair<size_t, size_t> cheapest_pair(const std::vector<Operand>& operands, const Equation& eq) {
  auto size_of = [&](const Labels& labels) {
    double s = 1;
    for (int label : labels) s *= eq.sizes.at(label) < 0 ? 64.0 : static_cast<double>(eq.sizes.at(label));
    return s;
  };
  std::tuple<bool, double, double> best{true, 0, 0};
  std::pair<size_t, size_t> best_pair{0, 1};
  for (size_t i = 0; i < operands.size(); ++i)
    for (size_t j = i + 1; j < operands.size(); ++j) {
      std::set<int> keep(eq.output.begin(), eq.output.end());
      for (size_t other = 0; other < operands.size(); ++other)
        if (other != i && other != j)
          keep.insert(operands[other].labels.begin(), operands[other].labels.end());
      Labels all = operands[i].labels, result;
      bool shares = false;
      for (int label : operands[j].labels) {
        shares = shares || contains(all, label);
        if (!contains(all, label)) all.push_back(label);
      }
      for (int label : all)
        if (keep.count(label)) result.push_back(label);
      std::tuple<bool, double, double> cost{
          !shares, size_of(result) - size_of(operands[i].labels) - size_of(operands[j].labels), size_of(all)};
      if ((i == 0 && j == 1) || cost < best) {
        best = cost;
        best_pair = {i, j};
      }
    }
  return best_pair;
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands, CallSite where) {
  try {
    if (operands.empty()) fail("einsum: needs at least one operand for argument 'operands'");
    for (size_t i = 0; i < operands.size(); ++i) {
      if (!operands[i].defined()) fail("einsum: operand ", i, " is undefined");
      if (!is_numeric(operands[i].dtype()))
        fail("einsum: operand ", i, " has dtype ", operands[i].dtype(), " (shape ", operands[i].shape(),
             "); einsum takes numbers only");
      if (operands[i].dtype() != operands[0].dtype())
        fail("einsum: operand ", i, " has dtype ", operands[i].dtype(), " but operand 0 has dtype ",
             operands[0].dtype(), " (shapes ", shapes_of(operands), "); all must have the same dtype");
    }
    const Equation eq = parse(equation, operands);
    const bool shapes_known = std::all_of(operands.begin(), operands.end(),
                                          [](const Tensor& x) { return x.shape().is_fully_defined(); });
    std::vector<Operand> pending;
    for (size_t i = 0; i < operands.size(); ++i)
      pending.push_back(prepare(operands[i], eq.inputs[i], eq, shapes_known, where));
    const std::set<int> output(eq.output.begin(), eq.output.end());
    while (pending.size() > 1) {
      auto [i, j] = cheapest_pair(pending, eq);
      Operand a = pending[i], b = pending[j];
      pending.erase(pending.begin() + static_cast<long>(j));
      pending.erase(pending.begin() + static_cast<long>(i));
      std::set<int> keep = output;
      for (const Operand& other : pending) keep.insert(other.labels.begin(), other.labels.end());
      pending.push_back(contract(std::move(a), std::move(b), keep, eq, shapes_known, where));
    }
    Operand result = pending[0];
    sum_unneeded(result, output, where);
    Tensor out = aligned(result, eq.output, where);
    // Output labels dropped as size-1 broadcasts in every operand come back here.
    if (result.labels.size() != eq.output.size()) out = broadcast_to(out, sizes_of(eq.output, eq), where);
    return out;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
