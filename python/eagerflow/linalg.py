"""ef.linalg: matrix products and norms."""
from eagerflow._core import eye, matmul, norm, tensordot  # noqa: F401
