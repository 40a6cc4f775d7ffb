"""ef.linalg: matrix products, norms, matrix functions (solve, cholesky, det, inv, ...) and decompositions (qr,
eigh, svd) with what is built on them (lstsq, pinv)."""
from eagerflow._core import einsum, eye, matmul, norm, tensordot  # noqa: F401
from eagerflow._core import (  # noqa: F401
    band_part, cholesky, cholesky_solve, det, diag, diag_part, inv, logdet, matrix_transpose, slogdet, solve, trace,
    triangular_solve,
)
from eagerflow._core import eigh, eigvalsh, lstsq, matrix_power, pinv, qr, set_diag, svd  # noqa: F401

adjoint = matrix_transpose  # real dtypes only, so the adjoint is the transpose
