// Strong-Wolfe line search, step for step as torch.optim.lbfgs._strong_wolfe (itself a
// port of torch7's lswolfe.lua), so that LBFGS' iterates match PyTorch's. The control
// flow, including its quirks (the `ls_iter > 1` test while bracketing), is kept as is.
#include "strong_wolfe.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/reduction.h"

namespace ef::optim::detail {

double dot(const Tensor& a, const Tensor& b) {
  // A 1×n by n×1 product: one pass through BLAS, where reduce_sum(a * b) makes two.
  const int64_t n = a.num_elements();
  return matmul(reshape(a, {1, n}), reshape(b, {n, 1})).item<double>();
}

double max_abs(const Tensor& x) { return reduce_max(abs(x)).item<double>(); }

namespace {

// Minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped
// to [lo, hi] (default: between x1 and x2); the midpoint when the cubic has no minimum.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         const double* bounds = nullptr) {
  double lo, hi;
  if (bounds) {
    lo = bounds[0];
    hi = bounds[1];
  } else {
    lo = x1 <= x2 ? x1 : x2;
    hi = x1 <= x2 ? x2 : x1;
  }
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, lo), hi);
  }
  return (lo + hi) / 2.;
}

// One end of the bracket: step, loss, gradient, directional derivative.
struct Point {
  double t, f;
  Tensor g;
  double gtd;
};

}  // namespace

LineSearchResult strong_wolfe(const DirectionalEvaluate& evaluate, double t, const Tensor& d, double f,
                              const Tensor& g, double gtd, double c1, double c2, double tolerance_change,
                              int max_ls) {
  const double d_norm = max_abs(d);
  DirectionalValue next = evaluate(t);
  int64_t evaluations = 1;
  double gtd_new = dot(next.flat_grad, d);

  // Bracket an interval containing a point satisfying the Wolfe criteria.
  Point prev{0, f, g, gtd};
  std::vector<Point> bracket;
  bool done = false;
  int ls_iter = 0;
  while (ls_iter < max_ls) {
    const Point now{t, next.loss, next.flat_grad, gtd_new};
    if (next.loss > f + c1 * t * gtd || (ls_iter > 1 && next.loss >= prev.f)) {
      bracket = {prev, now};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {now};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {prev, now};
      break;
    }
    // Extrapolate by cubic interpolation within [t + 0.01 (t - t_prev), 10 t].
    const double bounds[2] = {t + 0.01 * (t - prev.t), t * 10};
    t = cubic_interpolate(prev.t, prev.f, prev.gtd, t, next.loss, gtd_new, bounds);
    prev = now;
    next = evaluate(t);
    ++evaluations;
    gtd_new = dot(next.flat_grad, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) bracket = {Point{0, f, g, gtd}, Point{t, next.loss, next.flat_grad, gtd_new}};

  // Zoom: shrink the bracket until a point satisfies the criteria.
  bool insufficient_progress = false;
  auto order = [&] { return bracket.front().f <= bracket.back().f ? std::pair{0, 1} : std::pair{1, 0}; };
  auto [low, high] = order();
  while (!done && ls_iter < max_ls) {
    if (std::abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change) break;  // bracket too small
    t = cubic_interpolate(bracket[0].t, bracket[0].f, bracket[0].gtd, bracket[1].t, bracket[1].f,
                          bracket[1].gtd);

    // Too close to an end of the bracket (twice in a row, or at or outside it): move
    // to 0.1 of the bracket's length away from the nearest end.
    const double b_max = std::max(bracket[0].t, bracket[1].t), b_min = std::min(bracket[0].t, bracket[1].t);
    const double eps = 0.1 * (b_max - b_min);
    if (std::min(b_max - t, t - b_min) < eps) {
      if (insufficient_progress || t >= b_max || t <= b_min) {
        t = std::abs(t - b_max) < std::abs(t - b_min) ? b_max - eps : b_min + eps;
        insufficient_progress = false;
      } else {
        insufficient_progress = true;
      }
    } else {
      insufficient_progress = false;
    }

    next = evaluate(t);
    ++evaluations;
    gtd_new = dot(next.flat_grad, d);
    ++ls_iter;
    const Point now{t, next.loss, next.flat_grad, gtd_new};

    if (next.loss > f + c1 * t * gtd || next.loss >= bracket[low].f) {
      // Armijo condition fails, or no lower than the lowest point: new high end.
      bracket[high] = now;
      std::tie(low, high) = order();
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;  // Wolfe conditions hold
      } else if (gtd_new * (bracket[high].t - bracket[low].t) >= 0) {
        bracket[high] = bracket[low];  // the old low end becomes the high end
      }
      bracket[low] = now;
    }
  }
  const Point& best = bracket[low];
  return {best.f, best.g, best.t, evaluations};
}

}  // namespace ef::optim::detail
