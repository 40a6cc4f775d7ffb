"""Vectorization: ``vectorized_map`` (TensorFlow's), ``vmap`` (JAX's) and ``hessians``.

A function written for one example runs on a whole batch at once: it is traced once on
one element, and each op of the trace runs once on the batch through its batching rule
(an op without one runs once per element, and is reported once on stderr). Tapes around
the call differentiate the batch; tapes inside the function give per-example gradients.
See Note [vectorization] in include/eagerflow/graph/vectorized_map.h.
"""

from eagerflow import _core
from eagerflow.autodiff import GradientTape, _flatten, _output_leaves, _pack_like

__all__ = ["vectorized_map", "vmap", "hessians"]


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """Stacks ``fn(element)`` over the elements of ``elems`` along their first axis.

    >>> xs = ef.constant([[1., 2.], [3., 4.], [5., 6.]])
    >>> ef.vectorized_map(lambda x: ef.reduce_sum(x * x), xs).numpy()
    array([ 5., 25., 61.], dtype=float32)

    Args:
      fn: A function of one element (the structure of ``elems`` with each tensor's
        first axis removed), returning a tensor or a nested structure of them.
      elems: A tensor or a nested structure (list, tuple, dict) of tensors that share
        their first dimension, the batch.
      fallback_to_while_loop: run ops without a batching rule once per element; False
        raises UnimplementedError naming the op instead.
      warn: accepted for TensorFlow compatibility; ops that run in a loop are reported
        once per process either way.

    Returns:
      ``fn``'s result structure, each tensor with the batch as its first axis.
    """
    flat = [_core.convert_to_tensor(e) for e in _flatten(elems)]
    structure = []

    def body(*element):
        out = fn(_pack_like(elems, element))
        if not structure:
            structure.append(out)
        return _output_leaves(out)

    results = _core._vectorized_map(body, flat, bool(fallback_to_while_loop))
    return _pack_like(structure[0], results)


def _move_axis(t, source, destination):
    rank = len(t.shape)
    source, destination = source % rank, destination % rank
    if source == destination:
        return t
    perm = [i for i in range(rank) if i != source]
    perm.insert(destination, source)
    return _core.transpose(t, perm)


def vmap(fn, in_axes=0, out_axes=0):
    """JAX's vmap: ``fn`` of one example, mapped over a batch axis of its arguments.

    >>> w = ef.constant([[1.], [2.]])
    >>> batched = ef.vmap(lambda x: ef.matmul(x[None], w)[0], in_axes=0)
    >>> batched(ef.constant([[1., 1.], [2., 0.]])).numpy()
    array([[3.],
           [2.]], dtype=float32)

    Args:
      fn: A function of positional arguments (tensors or nested structures of them).
      in_axes: An int (the batch axis of every argument), or one entry per argument:
        an int, or None for an argument passed whole to every element.
      out_axes: An int, or one per leaf of the result: where the result's batch goes.

    Returns:
      The batched function.
    """

    def batched(*args):
        axes = in_axes if isinstance(in_axes, (list, tuple)) else [in_axes] * len(args)
        if len(axes) != len(args):
            raise ValueError("vmap: in_axes has %d entries for %d arguments" % (len(axes), len(args)))
        mapped, shared = [], []
        for arg, axis in zip(args, axes):
            leaves = [_core.convert_to_tensor(x) for x in _flatten(arg)]
            if axis is None:
                shared.append(leaves)
                mapped.append(None)
            else:
                mapped.append([_move_axis(x, axis, 0) for x in leaves])
                shared.append(None)
        if all(m is None for m in mapped):
            raise ValueError("vmap: in_axes maps over none of the %d arguments" % len(args))
        flat = [x for m in mapped if m is not None for x in m]

        def per_element(elements):
            it = iter(elements)
            call_args = []
            for arg, m, s in zip(args, mapped, shared):
                leaves = [next(it) for _ in m] if m is not None else s
                call_args.append(_pack_like(arg, leaves))
            return fn(*call_args)

        out = vectorized_map(per_element, flat)
        leaves = _flatten(out)
        axes_out = out_axes if isinstance(out_axes, (list, tuple)) else [out_axes] * len(leaves)
        if len(axes_out) != len(leaves):
            raise ValueError("vmap: out_axes has %d entries for %d outputs" % (len(axes_out), len(leaves)))
        return _pack_like(out, [_move_axis(t, 0, a) for t, a in zip(leaves, axes_out)])

    return batched


def hessians(f, xs):
    """The Hessian of ``sum(f(*xs))`` with respect to each x, shaped ``x.shape + x.shape``.

    The gradient's Jacobian, computed as one vectorized backward pass (``jacobian`` with
    ``experimental_use_pfor``) instead of one pass per element. TensorFlow's
    ``tf.hessians(ys, xs)`` takes tensors of a graph; here ``f`` computes ys from xs, as
    ``jax.hessian`` does.

    >>> h = ef.hessians(lambda x: ef.reduce_sum(x ** 3), [ef.constant([1., 2.])])
    >>> h[0].numpy()
    array([[ 6.,  0.],
           [ 0., 12.]], dtype=float32)
    """
    xs = [_core.convert_to_tensor(x) for x in (xs if isinstance(xs, (list, tuple)) else [xs])]
    with GradientTape(persistent=True) as outer:
        outer.watch(xs)
        with GradientTape() as inner:
            inner.watch(xs)
            y = _core.reduce_sum(f(*xs))
        grads = inner.gradient(y, xs, unconnected_gradients="zero")
    return [outer.jacobian(g, x, unconnected_gradients="zero") for g, x in zip(grads, xs)]
