"""Automatic differentiation: GradientTape, ForwardAccumulator, the function transforms, custom_gradient.

The work happens in C++; this module adds what is Python by nature: ``with`` blocks,
decorators, and gradients shaped like the (nested) sources they were asked for.
"""
import contextlib
import functools
import inspect

from eagerflow import _core


def _flatten(structure):
    """The leaves of nested lists, tuples and dicts, in order."""
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _flatten(item)]
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in _flatten(structure[key])]
    return [structure]


def _pack_like(structure, leaves):
    """`leaves` arranged as `structure` (the inverse of _flatten)."""
    return _pack(structure, iter(leaves))


def _pack(structure, leaves):
    # A module-level function, not a closure calling itself: such a closure is a reference
    # cycle that kept every gradient alive until the garbage collector's next full pass
    # (a training loop's memory grew by ~100 MB before it came).
    if isinstance(structure, (list, tuple)):
        packed = [_pack(item, leaves) for item in structure]
        return type(structure)(packed) if not hasattr(structure, "_fields") else type(structure)(*packed)
    if isinstance(structure, dict):
        return {key: _pack(structure[key], leaves) for key in sorted(structure)}
    return next(leaves)


def _unconnected(value):
    return getattr(value, "value", value).lower() if value is not None else "none"


class UnconnectedGradients:
    """What ``gradient`` returns for a source the target does not depend on.

    ``NONE`` ("none", the default) gives None; ``ZERO`` ("zero") gives zeros of the
    source's shape. The strings are accepted too.

    >>> x, y = ef.constant(1.), ef.constant(2.)
    >>> with ef.GradientTape() as tape:
    ...     tape.watch([x, y])
    ...     z = x * 3.
    >>> tape.gradient(z, [x, y], unconnected_gradients=ef.UnconnectedGradients.ZERO)[1].numpy()
    array(0., dtype=float32)
    """
    NONE = "none"
    ZERO = "zero"


class GradientTape:
    """Records ops run inside its ``with`` block, to differentiate them afterwards.

    >>> x = ef.constant(3.0)
    >>> with ef.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> tape.gradient(y, x).numpy()
    array(6., dtype=float32)

    Trainable variables read inside the block are watched automatically unless
    ``watch_accessed_variables=False``. A non-persistent tape allows one
    ``gradient``/``jacobian`` call; nested tapes give higher-order derivatives.
    Entering the same tape again resumes recording.

    Args:
      persistent: If True, ``gradient`` and ``jacobian`` may be called several times
        (the recording is kept until the tape is dropped or ``reset``).
      watch_accessed_variables: If True (default), trainable Variables read inside
        the block are watched without ``watch``.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._tape = None

    def __enter__(self):
        if self._tape is None:
            self._tape = _core._GradientTape(self._persistent, self._watch_accessed_variables)
        else:
            self._tape.resume()
        return self

    def __exit__(self, *exc):
        self._tape.stop()
        return False

    def _recording_tape(self, what):
        if self._tape is None:
            raise ValueError("GradientTape.%s: use the tape in a `with` block first" % what)
        return self._tape

    def watch(self, tensor):
        """Makes the tape record the ops that use ``tensor``, so it can be a source.

        Args:
          tensor: A Tensor, Variable or tensor-like, or a (nested) list, tuple or
            dict of them. Non-tensors are converted first (and are then constants).

        Raises:
          ValueError: the tape has not been entered with ``with`` yet.
        """
        tape = self._recording_tape("watch")
        for t in _flatten(tensor):
            tape.watch(t if isinstance(t, (_core.Tensor, _core.Variable)) else _core.convert_to_tensor(t))

    def watched_variables(self):
        """Returns the Variables this tape watches, as a tuple.

        Those read inside the block (when watch_accessed_variables) and those given
        to ``watch``, in the order they were first seen.
        """
        return tuple(self._tape.watched_variables()) if self._tape is not None else ()

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Computes d(target)/d(sources) from what the tape recorded.

        A non-scalar target is summed, or weighted by ``output_gradients``; a target
        that is a list, tuple or dict of tensors is differentiated as the sum of its
        entries.

        >>> v = ef.Variable([1., 2.])
        >>> with ef.GradientTape() as tape:
        ...     loss = ef.reduce_sum(v * v)
        >>> tape.gradient(loss, v).numpy()
        array([2., 4.], dtype=float32)

        Args:
          target: A Tensor, or a list, tuple or dict of Tensors.
          sources: A Tensor or Variable, or a (nested) list, tuple or dict of them.
          output_gradients: None, or tensors shaped like the target(s) that weight it.
          unconnected_gradients: ``UnconnectedGradients.NONE`` (None for a source the
            target does not depend on) or ``ZERO`` (zeros).

        Returns:
          The gradients, in the structure of ``sources``; each of its source's dtype
          and shape.

        Raises:
          ValueError: the tape was never entered, or output_gradients does not match
            the targets.
          FailedPreconditionError: a non-persistent tape was already used.
        """
        tape = self._recording_tape("gradient")
        flat = _flatten(sources)
        structured = isinstance(target, (list, tuple, dict))
        targets = _flatten(target) if structured else [target]
        seeds = None
        if output_gradients is not None:
            seeds = _flatten(output_gradients) if structured else [output_gradients]
        if seeds is not None and len(seeds) != len(targets):
            raise ValueError("GradientTape.gradient: output_gradients has %d tensors but the target has %d"
                             % (len(seeds), len(targets)))
        grads = tape.gradient(targets, flat, seeds, _unconnected(unconnected_gradients))
        return _pack_like(sources, grads)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE, parallel_iterations=None,
                 experimental_use_pfor=True):
        """Computes the full Jacobian d target[i...] / d source[j...] for each source.

        >>> x = ef.constant([1., 2.])
        >>> with ef.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.jacobian(y, x).numpy()
        array([[2., 0.],
               [0., 4.]], dtype=float32)

        Args:
          target: A Tensor.
          sources: A Tensor or Variable, or a (nested) structure of them.
          unconnected_gradients: ``UnconnectedGradients.NONE`` or ``ZERO``.
          parallel_iterations: accepted for TensorFlow compatibility; unused.
          experimental_use_pfor: compute the backward passes (one per target
            element) as one vectorized pass (``ef.vectorized_map``), as TensorFlow
            does by default; False runs them one after the other.

        Returns:
          Per source, a Tensor of shape target.shape + source.shape (or None), in the
          structure of ``sources``.
        """
        tape = self._recording_tape("jacobian")
        flat = _flatten(sources)
        jacobians = [tape.jacobian(target, _core.convert_to_tensor(s), _unconnected(unconnected_gradients),
                                   experimental_use_pfor) for s in flat]
        return _pack_like(sources, jacobians)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Computes per-example Jacobians, for targets whose example b depends only on source[b].

        >>> x = ef.constant([[1., 2.], [3., 4.]])
        >>> with ef.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.batch_jacobian(y, x).shape
        TensorShape([2, 2, 2])

        Args:
          target: A Tensor of shape [batch, ...].
          source: A Tensor or Variable of shape [batch, ...].
          unconnected_gradients: ``UnconnectedGradients.NONE`` or ``ZERO``.
          parallel_iterations: accepted for TensorFlow compatibility; unused.
          experimental_use_pfor: vectorize the backward passes, as for ``jacobian``.

        Returns:
          A Tensor of shape [batch] + target.shape[1:] + source.shape[1:] (or None).
        """
        return self._recording_tape("batch_jacobian").batch_jacobian(
            target, _core.convert_to_tensor(source), _unconnected(unconnected_gradients), experimental_use_pfor)

    @contextlib.contextmanager
    def stop_recording(self):
        """A context manager: ops run inside it are not recorded by this tape.

        >>> x = ef.constant(2.)
        >>> with ef.GradientTape() as tape:
        ...     tape.watch(x)
        ...     with tape.stop_recording():
        ...         y = x * x
        >>> print(tape.gradient(y, x))
        None
        """
        token = self._recording_tape("stop_recording")._pause()
        try:
            yield
        finally:
            del token

    def reset(self):
        """Forgets everything recorded so far; the tape keeps recording."""
        self._recording_tape("reset").reset()


class ForwardAccumulator:
    """Computes Jacobian-vector products with forward-mode autodiff (TensorFlow's semantics).

    Inside its ``with`` block, ops on the watched primals (and on what was computed
    from them) also compute tangents; ``jvp`` reads them, during or after the block.

    >>> x = ef.constant([1.0, 2.0])
    >>> with ef.autodiff.ForwardAccumulator(x, ef.constant([1.0, 0.0])) as acc:
    ...     y = ef.reduce_sum(x * x)
    >>> acc.jvp(y).numpy()
    array(2., dtype=float32)

    Accumulators nest (an outer one differentiates an inner one's tangents) and compose
    with GradientTapes in either order, so ``acc.jvp(tape.gradient(...))`` and
    ``tape.gradient(acc.jvp(...), ...)`` are Hessian-vector products. An op without a
    forward-mode rule raises UnimplementedError when a tangent reaches it.

    Args:
      primals: A Tensor or Variable, or a (nested) list, tuple or dict of them.
      tangents: The same structure: each primal's tangent, of its dtype and shape.
    """

    def __init__(self, primals, tangents):
        self._accumulator = _core._ForwardAccumulator()
        self._accumulator.stop()  # active inside the `with` block only
        self.watch(primals, tangents)

    def __enter__(self):
        self._accumulator.resume()
        return self

    def __exit__(self, *exc):
        self._accumulator.stop()
        return False

    def watch(self, primals, tangents):
        """Gives ``primals`` the ``tangents`` (added to any tangent they already have).

        Raises:
          ValueError: the structures differ.
          InvalidArgumentError: a primal is not a float tensor, or a tangent's dtype or
            shape is not its primal's.
        """
        flat_primals, flat_tangents = _flatten(primals), _flatten(tangents)
        if len(flat_primals) != len(flat_tangents):
            raise ValueError("ForwardAccumulator: %d primals but %d tangents" % (len(flat_primals), len(flat_tangents)))
        for primal, tangent in zip(flat_primals, flat_tangents):
            if not isinstance(primal, (_core.Tensor, _core.Variable)):
                primal = _core.convert_to_tensor(primal)
            self._accumulator.watch(primal, tangent)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangents of ``primals`` (a tensor or nested structure of them).

        A tensor that does not depend on the watched primals gets None, or zeros with
        ``unconnected_gradients=ZERO``; integer and bool tensors always get None.
        """
        leaves = _flatten(primals)
        tangents = self._accumulator.jvp(leaves, _unconnected(unconnected_gradients))
        return _pack_like(primals, tangents)


def jvp(f, primals, tangents, unconnected_gradients=UnconnectedGradients.ZERO):
    """``(f(*primals), tangents of f's outputs)``: one forward pass under a ForwardAccumulator.

    >>> y, t = ef.jvp(lambda x: x * x, (ef.constant(3.0),), (ef.constant(1.0),))
    >>> float(y), float(t)
    (9.0, 6.0)

    Args:
      f: A function of the primals returning a tensor or a (nested) structure of them.
      primals: A tuple (or list) of the arguments.
      tangents: One tangent per primal, of its dtype and shape.
      unconnected_gradients: ZERO (default, as jax.jvp) gives zeros for an output that
        does not depend on the primals; NONE gives None.
    """
    primals, tangents = tuple(primals), tuple(tangents)
    with ForwardAccumulator(primals, tangents) as acc:
        outputs = f(*primals)
    return outputs, acc.jvp(outputs, unconnected_gradients)


def linearize(f, *primals):
    """``(f(*primals), f_jvp)``: f's value and its linearization at ``primals`` (``jax.linearize``).

    ``f_jvp(*tangents)`` gives the tangents of f's outputs, shaped like them. It runs a
    graph traced once, with the primals folded in as constants, so a call costs only the
    linear part, not f again.

    >>> y, f_jvp = ef.linearize(lambda x: x * x * x, ef.constant(2.0))
    >>> float(y), float(f_jvp(ef.constant(1.0))), float(f_jvp(ef.constant(0.5)))
    (8.0, 12.0, 6.0)

    Raises:
      InvalidArgumentError: a primal or an output is not a float tensor.
      UnimplementedError: f uses an op without a forward-mode rule, or the JVP would
        need a random op, a state change or a read of a variable f assigns (the JVP
        stays at the point: variables keep the values f read, f's assignments run once).
    """
    structure = []

    def leaves(*xs):
        out = f(*xs)
        if not structure:
            structure.append(out)
        return _output_leaves(out)

    outputs, flat_jvp = _core._linearize(leaves, *primals)
    shape = structure[0]

    def f_jvp(*tangents):
        return _pack_like(shape, flat_jvp(*tangents))

    return _pack_like(shape, outputs), f_jvp


def stop_gradient(input, name=None):  # noqa: A002 (TensorFlow's argument name)
    """Returns ``input`` unchanged, but no gradient flows back through it.

    Tapes and ef.gradients treat the result as a constant.

    >>> x = ef.constant(3.)
    >>> with ef.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * ef.stop_gradient(x)
    >>> tape.gradient(y, x).numpy()
    array(3., dtype=float32)

    Args:
      input: A tensor-like (a Variable is read).
      name: Ignored (TensorFlow compatibility).

    Returns:
      A Tensor of input's dtype and shape.
    """
    return _core.stop_gradient(input)


def _output_leaves(result):
    """The tensors of f's result (a tensor or a nested list, tuple or dict of them) that
    the transforms differentiate: the sum of all of them, as TensorFlow does. None
    entries carry no gradient."""
    return [leaf for leaf in _flatten(result) if leaf is not None]


def gradients_function(f, params=None, unconnected_gradients=UnconnectedGradients.NONE):
    """Returns a function computing the gradients of ``f`` with respect to its arguments.

    When f returns several tensors (a list, tuple or dict), the gradients are those
    of their sum. Apply it to its own result for higher orders.

    >>> df = ef.gradients_function(lambda x, y: x * y)
    >>> [g.numpy() for g in df(ef.constant(2.), ef.constant(5.))]
    [array(5., dtype=float32), array(2., dtype=float32)]

    Args:
      f: A function of tensors returning a tensor (or a list, tuple or dict of them).
      params: None (every argument), or the positions of the arguments to
        differentiate with respect to.
      unconnected_gradients: ``UnconnectedGradients.NONE`` (None for an argument f
        does not depend on) or ``ZERO`` (zeros).

    Returns:
      A function taking f's arguments and returning a list of gradients, one per
      differentiated argument.
    """
    return _drop_value(value_and_gradients_function(f, params, unconnected_gradients))


def value_and_gradients_function(f, params=None, unconnected_gradients=UnconnectedGradients.NONE):
    """Returns a function computing both ``f(*args)`` and its gradients.

    The same as gradients_function, but the returned function gives the pair
    (value, gradients).

    >>> vg = ef.value_and_gradients_function(lambda x: x * x)
    >>> value, grads = vg(ef.constant(3.))
    >>> value.numpy(), grads[0].numpy()
    (array(9., dtype=float32), array(6., dtype=float32))

    Args:
      f: A function of tensors returning a tensor (or a list, tuple or dict of them).
      params: None (every argument), or the positions of the arguments to
        differentiate with respect to.
      unconnected_gradients: ``UnconnectedGradients.NONE`` or ``ZERO``.

    Returns:
      A function returning (f's result, list of gradients).
    """
    params = list(params or [])
    unconnected = _unconnected(unconnected_gradients)

    @functools.wraps(f)
    def value_and_gradients(*args):
        results = []

        def leaves(*xs):
            results.append(f(*xs))
            return _output_leaves(results[-1])

        grads = _core._function_gradients(leaves, params, unconnected, *args)
        return results[-1], grads

    return value_and_gradients


def _drop_value(value_and_gradients):
    @functools.wraps(value_and_gradients)
    def gradients(*args, **kwargs):
        return value_and_gradients(*args, **kwargs)[1]

    return gradients


def grad(f):
    """Returns the derivative x -> d(sum f(x))/dx of a function of one tensor.

    It composes: grad(grad(f)) is the second derivative. Where f does not depend on
    x the result is zeros (the derivative of a constant).

    >>> d2 = ef.grad(ef.grad(lambda x: x * x * x))
    >>> d2(ef.constant(2.)).numpy()
    array(12., dtype=float32)

    Args:
      f: A function of one tensor returning a tensor (or several, summed).

    Returns:
      A function of one tensor returning a tensor of its shape and dtype.
    """
    gradients = gradients_function(f, unconnected_gradients=UnconnectedGradients.ZERO)

    @functools.wraps(f)
    def derivative(x):
        return gradients(x)[0]

    return derivative


def implicit_value_and_gradients(f):
    """Returns a function computing ``f(*args)`` and the gradients of the variables it reads.

    The gradients are those of the sum of f's outputs when it returns several tensors.

    >>> w = ef.Variable(2., name="w")
    >>> value, pairs = ef.implicit_value_and_gradients(lambda x: w * x)(ef.constant(3.))
    >>> value.numpy(), pairs[0][0].numpy(), pairs[0][1].name
    (array(6., dtype=float32), array(3., dtype=float32), 'w')

    Args:
      f: A function returning a tensor (or a list, tuple or dict of them).

    Returns:
      A function returning (f's result, [(gradient, variable), ...]) for every
      trainable Variable f read while it ran.
    """

    @functools.wraps(f)
    def value_and_gradients(*args, **kwargs):
        results = []

        def leaves():
            results.append(f(*args, **kwargs))
            return _output_leaves(results[-1])

        _, pairs = _core._implicit_value_and_gradients(leaves)
        return results[-1], pairs

    return value_and_gradients


def implicit_gradients(f):
    """Returns a function computing the gradients of the trainable variables ``f`` reads.

    >>> w = ef.Variable(2.)
    >>> [(g.numpy(), v.name) for g, v in ef.implicit_gradients(lambda: w * w)()]
    [(array(4., dtype=float32), 'Variable')]

    Args:
      f: A function returning a tensor (or a list, tuple or dict of them, summed).

    Returns:
      A function taking f's arguments and returning [(gradient, variable), ...],
      ready for an optimizer's apply_gradients.
    """
    return _drop_value(implicit_value_and_gradients(f))


def custom_gradient(f):
    """Decorator defining a function with a gradient of your own.

    ``f`` returns ``(output, grad_fn)``; ``grad_fn(*output_gradients)`` returns one
    gradient per input of f. If f reads trainable variables, grad_fn must take
    ``variables=`` and return ``(input_gradients, variable_gradients)``.
    Differentiable ops in grad_fn give higher-order derivatives through it.

    Forward mode (``ForwardAccumulator``, ``ef.jvp``) derives the outputs' tangents from
    grad_fn. f may instead return ``(output, grad_fn, jvp_fn)``, as JAX's ``custom_jvp``
    and PyTorch's ``autograd.Function.jvp`` allow: ``jvp_fn(*input_tangents)`` (zeros for
    a float input without a tangent, None for others) returns the output's tangent, or
    one per output. A tangent on a variable that f reads is then an error.

    >>> @ef.custom_gradient
    ... def clipped_identity(x):
    ...     return ef.identity(x), lambda dy: ef.clip_by_value(dy, -1., 1.)
    >>> x = ef.constant(2.)
    >>> with ef.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = clipped_identity(x) * 10.
    >>> tape.gradient(y, x).numpy()
    array(1., dtype=float32)

    Args:
      f: A function of tensors returning (output tensor(s), grad_fn) or
        (output tensor(s), grad_fn, jvp_fn).

    Returns:
      A function with f's outputs whose gradient is grad_fn's.
    """

    @functools.wraps(f)
    def with_custom_gradient(*args):
        return _core._call_with_custom_gradient(f, args, _takes_variables)

    return with_custom_gradient


def recompute_grad(f):
    """Decorator for gradient checkpointing: f's intermediate results are not kept for
    the gradient, which runs f again from its inputs (TensorFlow's tf.recompute_grad).

    Under a tape, the call keeps only f's inputs and outputs (and the trainable variables
    f reads); backprop reruns f and differentiates it, so the gradients are f's own at
    every order, for one extra forward pass. Random ops in f draw the same numbers again.

    >>> w = ef.Variable(ef.random.normal([4, 4], seed=1))
    >>> block = ef.recompute_grad(lambda x: ef.tanh(x @ w) * 2.0)
    >>> x = ef.ones([2, 4])
    >>> with ef.GradientTape() as tape:
    ...     loss = ef.reduce_sum(block(x))
    >>> tape.gradient(loss, w).shape
    TensorShape([4, 4])

    Args:
      f: A function of tensors (keyword arguments pass through unchanged) returning a
        tensor or a nested structure of tensors. It must run the same random ops each
        time and not assign variables (BatchNormalization in training mode does).

    Returns:
      A function with f's outputs whose gradient recomputes f.
    """

    @functools.wraps(f)
    def recomputed(*args, **kwargs):
        structure = []  # this call's output structure (f may run again in backward)

        def leaves(*xs):
            out = f(*xs, **kwargs)
            structure[:] = [out]
            return _flatten(out)

        outputs = _core._call_recomputing(leaves, *args)
        return _pack_like(structure[0], outputs)

    return recomputed


def _takes_variables(grad_fn):
    try:
        params = inspect.signature(grad_fn).parameters
    except (TypeError, ValueError):
        return False
    return "variables" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())
