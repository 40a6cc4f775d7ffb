"""ef.math: elementwise math, comparisons, reductions and scans."""
from eagerflow._core import (  # noqa: F401
    abs, acos, add, argmax, argmin, asin, atan, ceil, cos, cosh, cumprod, cumsum, divide, equal,
    erf, exp, expm1, floor, floordiv, floormod, greater, greater_equal, is_finite, is_inf, is_nan,
    less, less_equal, log, log1p, logical_and, logical_not, logical_or, logical_xor, maximum,
    minimum, multiply, negative, not_equal, pow, reciprocal, reduce_all, reduce_any,
    reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_std, reduce_sum,
    reduce_variance, round, rsqrt, sigmoid, sigmoid_grad, sign, sin, sinh, softplus, sqrt, square,
    squared_difference, subtract, tan, tanh, top_k,
    # complex numbers
    angle, conj, imag, real,
    # special functions
    acosh, asinh, atan2, atanh, bessel_i0e, bessel_i1e, cumulative_logsumexp, digamma, erfc, erfinv, lgamma,
    log_sigmoid, nan_to_num, polygamma, truncatediv, truncatemod, xdivy, xlog1py, xlogy,
    # segment reductions, bincount
    bincount,
    segment_max, segment_mean, segment_min, segment_sum, unsorted_segment_max, unsorted_segment_mean,
    unsorted_segment_min, unsorted_segment_sum,
)

truediv = divide
mod = floormod
