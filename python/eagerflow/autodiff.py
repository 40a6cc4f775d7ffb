"""Automatic differentiation: GradientTape, the function transforms, custom_gradient.

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
    """What ``gradient`` returns for a source the target does not depend on."""
    NONE = "none"
    ZERO = "zero"


class GradientTape:
    """Records ops run inside its ``with`` block, to differentiate them afterwards.

    >>> x = ef.constant(3.0)
    >>> with ef.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> tape.gradient(y, x)        # 6.0

    Trainable variables read inside the block are watched automatically unless
    ``watch_accessed_variables=False``. A non-persistent tape allows one
    ``gradient``/``jacobian`` call; nested tapes give higher-order derivatives.
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
        """Records ops that use `tensor` (a tensor, variable, or nested structure of them)."""
        tape = self._recording_tape("watch")
        for t in _flatten(tensor):
            tape.watch(t if isinstance(t, (_core.Tensor, _core.Variable)) else _core.convert_to_tensor(t))

    def watched_variables(self):
        return tuple(self._tape.watched_variables()) if self._tape is not None else ()

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(target)/d(sources), shaped like `sources` (a tensor, variable, or nested structure).

        A non-scalar target is summed, or weighted by `output_gradients`; a target that
        is a list, tuple or dict of tensors is differentiated as the sum of its entries.
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

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE):
        """d target[i...] / d source[j...], shaped target.shape + source.shape (per source)."""
        tape = self._recording_tape("jacobian")
        flat = _flatten(sources)
        jacobians = [tape.jacobian(target, _core.convert_to_tensor(s), _unconnected(unconnected_gradients))
                     for s in flat]
        return _pack_like(sources, jacobians)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE):
        """Per-example jacobians: shape [batch] + target.shape[1:] + source.shape[1:]."""
        return self._recording_tape("batch_jacobian").batch_jacobian(
            target, _core.convert_to_tensor(source), _unconnected(unconnected_gradients))

    @contextlib.contextmanager
    def stop_recording(self):
        """A block in which this tape records nothing."""
        token = self._recording_tape("stop_recording")._pause()
        try:
            yield
        finally:
            del token

    def reset(self):
        """Forgets everything recorded so far; the tape keeps recording."""
        self._recording_tape("reset").reset()


def stop_gradient(input, name=None):  # noqa: A002 (TensorFlow's argument name)
    return _core.stop_gradient(input)


def _output_leaves(result):
    """The tensors of f's result (a tensor or a nested list, tuple or dict of them) that
    the transforms differentiate: the sum of all of them, as TensorFlow does. None
    entries carry no gradient."""
    return [leaf for leaf in _flatten(result) if leaf is not None]


def gradients_function(f, params=None, unconnected_gradients=UnconnectedGradients.NONE):
    """A function returning the gradients of f with respect to its arguments
    (those at the positions in `params`, or all). Apply it to itself for higher order.

    When f returns several tensors (a list, tuple or dict), the gradients are those of
    their sum. An argument f does not depend on gets None (zeros with
    ``unconnected_gradients=UnconnectedGradients.ZERO``).
    """
    return _drop_value(value_and_gradients_function(f, params, unconnected_gradients))


def value_and_gradients_function(f, params=None, unconnected_gradients=UnconnectedGradients.NONE):
    """Like gradients_function, returning (f(*args), gradients)."""
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
    """x ↦ d(sum f(x))/dx for f of one tensor; composes: grad(grad(f)) is the second derivative.

    Where f does not depend on x the result is zeros (the derivative of a constant).
    """
    gradients = gradients_function(f, unconnected_gradients=UnconnectedGradients.ZERO)

    @functools.wraps(f)
    def derivative(x):
        return gradients(x)[0]

    return derivative


def implicit_value_and_gradients(f):
    """A function returning (f(*args), [(gradient, variable), ...]) for every trainable
    variable f reads while it runs (the gradients of the sum of f's outputs when it
    returns several tensors)."""

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
    """A function returning [(gradient, variable), ...] for every trainable variable f reads."""
    return _drop_value(implicit_value_and_gradients(f))


def custom_gradient(f):
    """Decorator: f returns ``(output, grad_fn)`` and grad_fn replaces f's gradient.

    ``grad_fn(*output_gradients)`` returns one gradient per input. If f reads trainable
    variables, grad_fn must take ``variables=`` and return
    ``(input_gradients, variable_gradients)``. Differentiable ops in grad_fn give
    higher-order derivatives through it.
    """

    @functools.wraps(f)
    def with_custom_gradient(*args):
        return _core._call_with_custom_gradient(f, args, _takes_variables)

    return with_custom_gradient


def _takes_variables(grad_fn):
    try:
        params = inspect.signature(grad_fn).parameters
    except (TypeError, ValueError):
        return False
    return "variables" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())
