"""ef.nn: activations, softmax, losses, regularization, convolution, pooling and batch normalization."""
from eagerflow._core import (  # noqa: F401
    bias_add, dropout, elu, gelu, l2_normalize, leaky_relu, log_softmax, relu, relu6, selu,
    sigmoid, sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softplus, softsign, sparse_softmax_cross_entropy_with_logits, tanh,
    avg_pool2d, avg_pool2d_grad, batch_normalization, conv2d, conv2d_backprop_filter,
    conv2d_backprop_input, conv2d_transpose, depthwise_conv2d, max_pool2d, max_pool2d_grad, max_pool2d_grad_grad,
    moments, local_response_normalization,
)

lrn = local_response_normalization
