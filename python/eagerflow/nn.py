"""ef.nn: activations, softmax, losses, regularization, convolution, pooling and batch normalization."""
from eagerflow import _core, errors
from eagerflow._core import (  # noqa: F401
    bias_add, dropout, elu, gelu, l2_normalize, leaky_relu, log_softmax, relu, relu6, selu,
    sigmoid, sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softplus, softsign, sparse_softmax_cross_entropy_with_logits, tanh,
    avg_pool2d, avg_pool2d_grad, batch_normalization, conv1d, conv2d, conv3d, conv2d_backprop_filter,
    conv2d_backprop_input, conv2d_transpose, depthwise_conv2d, max_pool2d, max_pool2d_grad, max_pool2d_grad_grad,
    moments, local_response_normalization,
)

lrn = local_response_normalization


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The per-example losses summed and divided by the global batch size (tf.nn.compute_average_loss).

    Inside MultiWorkerMirroredStrategy.run, where gradients are summed over the replicas,
    this makes the step the one a single process takes on the whole global batch.

    >>> float(ef.nn.compute_average_loss([1.0, 2.0, 3.0]))   # one replica: the mean
    2.0

    Args:
      per_example_loss: The losses, [batch, ...] (summed over every element).
      sample_weight: Optional weights, broadcast against per_example_loss.
      global_batch_size: The batch size over all replicas; by default the first
        dimension of per_example_loss times the number of replicas in sync (inside
        strategy.run), else times one.
    """
    from eagerflow import distribute
    loss = _core.convert_to_tensor(per_example_loss)
    if not loss.dtype.is_floating:
        raise errors.InvalidArgumentError(f"compute_average_loss: per_example_loss must be a float tensor, got "
                                          f"{loss.dtype}")
    if sample_weight is not None:
        loss = loss * _core.cast(_core.convert_to_tensor(sample_weight), loss.dtype)
    if global_batch_size is None:
        if len(loss.shape) == 0:
            raise errors.InvalidArgumentError("compute_average_loss: per_example_loss is a scalar; give "
                                              "global_batch_size, or one loss per example")
        replicas = distribute.size() if distribute.in_replica_context() else 1
        global_batch_size = loss.shape[0] * replicas
    if global_batch_size <= 0:
        raise errors.InvalidArgumentError(f"compute_average_loss: global_batch_size must be positive, got "
                                          f"{global_batch_size}")
    return _core.reduce_sum(loss) / float(global_batch_size)


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
