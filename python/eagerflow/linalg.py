"""ef.linalg: matrix products, norms, and matrix functions (solve, cholesky, det, inv, ...)."""
from eagerflow._core import einsum, eye, matmul, norm, tensordot  # noqa: F401
from eagerflow._core import (  # noqa: F401
    band_part, cholesky, cholesky_solve, det, diag, diag_part, inv, logdet, matrix_transpose, slogdet, solve, trace,
    triangular_solve,
)

adjoint = matrix_transpose  # real dtypes only, so the adjoint is the transpose
