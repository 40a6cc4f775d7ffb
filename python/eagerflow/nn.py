"""ef.nn: activations, softmax, losses, regularization, convolution, pooling and batch normalization."""
from eagerflow import _core
from eagerflow._core import (  # noqa: F401
    bias_add, dropout, elu, gelu, l2_normalize, leaky_relu, log_softmax, relu, relu6, selu,
    sigmoid, sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softplus, softsign, sparse_softmax_cross_entropy_with_logits, tanh,
    avg_pool2d, avg_pool2d_grad, batch_normalization, conv1d, conv2d, conv3d, conv2d_backprop_filter,
    conv2d_backprop_input, conv2d_transpose, depthwise_conv2d, max_pool2d, max_pool2d_grad, max_pool2d_grad_grad,
    moments, local_response_normalization,
)

lrn = local_response_normalization


def ctc_loss(labels, logits, label_length, logit_length, logits_time_major=True, unique=None, blank_index=None,
             name=None):
    """Connectionist temporal classification loss per sequence (tf.nn.ctc_loss).

    The negative log-probability of each label sequence, summed over every alignment of
    it to the frames (Graves et al., 2006) by the forward-backward algorithm in log
    space; torch.nn.functional.ctc_loss with reduction="none" computes the same from
    log-softmaxed logits.

    >>> logits = ef.zeros([2, 1, 3])   # 2 frames, 1 sequence, 3 classes: each path has p = 1/9
    >>> float(ef.nn.ctc_loss([[1]], logits, [1], [2])[0])   # paths "1 1", "1 _", "_ 1"
    1.09861...

    Args:
      labels: [batch, max_label_length] integer class ids (dense; a SparseTensor is not
        supported).
      logits: Unnormalized scores, [frames, batch, classes], or [batch, frames,
        classes] when logits_time_major is False.
      label_length: [batch] integers: how many labels of each row count.
      logit_length: [batch] integers: how many frames of each sequence count.
      logits_time_major: Whether frames come first in logits.
      unique: Ignored (TensorFlow's speed-up for precomputed unique labels).
      blank_index: The blank class (default 0; negative counts from the last class).
      name: Ignored (TensorFlow compatibility).

    Returns:
      The loss of each sequence, [batch], in logits' dtype; +inf where no alignment
      fits (its gradient is NaN). Differentiable once.

    Raises:
      InvalidArgumentError: bad shapes, lengths outside their tensors, or labels outside
        [0, classes) or equal to the blank.
    """
    del unique, name
    return _core._ctc_loss(labels, logits, label_length, logit_length, logits_time_major,
                           0 if blank_index is None else int(blank_index))
