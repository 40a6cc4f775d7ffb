"""ef.random: seeded random tensors (Philox), with TensorFlow's global/op seed rules."""
from eagerflow._core import set_seed, truncated_normal  # noqa: F401
from eagerflow._core import random_normal as normal  # noqa: F401
from eagerflow._core import random_uniform as uniform  # noqa: F401
