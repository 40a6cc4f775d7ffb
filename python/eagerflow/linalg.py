"""ef.linalg: matrix products and norms."""
from eagerflow._core import einsum, eye, matmul, norm, tensordot  # noqa: F401
