"""ef.nn: activations, softmax, losses and regularization."""
from eagerflow._core import (  # noqa: F401
    bias_add, dropout, elu, gelu, l2_normalize, leaky_relu, log_softmax, relu, relu6, selu,
    sigmoid, sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softplus, softsign, sparse_softmax_cross_entropy_with_logits, tanh,
)
