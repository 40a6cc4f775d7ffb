"""Graph mode, TensorFlow 1 style: ef.Graph, ef.placeholder, ef.Session, ef.gradients.

    g = ef.Graph()
    with g.as_default():
        x = ef.placeholder(ef.float32, shape=(2,))
        W = ef.Variable(ef.ones((2, 2)), name="W")
        b = ef.Variable(ef.zeros((2,)), name="b")
        y = W * x + b
    with ef.Session(graph=g) as sess:
        sess.run(ef.global_variables_initializer())
        print(sess.run(y, feed_dict={x: [1, 0]}))

Inside `with g.as_default():` op calls add nodes to g and return symbolic tensors;
Session.run computes the fetches (a tensor, an operation, or lists, tuples and dicts
of them) from the fed values, and returns NumPy arrays as TensorFlow 1 does.
"""
import contextlib
import threading

from eagerflow import _core, errors
from eagerflow._core import Operation, placeholder  # noqa: F401

_local = threading.local()


def _graph_stack():
    if not hasattr(_local, "graphs"):
        _local.graphs = []
    return _local.graphs


class Graph(_core.Graph):
    """A dataflow graph. `with g.as_default():` makes op calls build nodes in it."""

    @contextlib.contextmanager
    def as_default(self):
        self._push_scope()
        _graph_stack().append(self)
        try:
            yield self
        finally:
            _graph_stack().pop()
            _core.Graph._pop_scope()


def get_default_graph():
    """The graph entered last on this thread with `as_default()` (None in eager mode)."""
    stack = _graph_stack()
    return stack[-1] if stack else None


def _graph_or_default(graph, what):
    graph = graph if graph is not None else get_default_graph()
    if graph is None:
        raise errors.InvalidArgumentError(
            f"{what}: no default graph; call it inside `with graph.as_default():` or a Session block, "
            "or pass the graph")
    return graph


def global_variables_initializer(graph=None):
    """An operation that initializes the variables created in `graph` (default: the
    graph of the innermost `as_default()` or `Session` block)."""
    return _core._global_variables_initializer(_graph_or_default(graph, "global_variables_initializer"))


def global_variables(graph=None):
    """The variables created in `graph` (default: the innermost `as_default()` or
    Session block's graph), in creation order."""
    return _core._global_variables(_graph_or_default(graph, "global_variables"))


def gradients(ys, xs, grad_ys=None, unconnected_gradients="none"):
    """Symbolic gradients d(sum(ys * grad_ys))/d(xs) as new nodes of the graph of `ys`.
    Returns a list with one entry per x (None where y does not depend on x)."""
    single = not isinstance(xs, (list, tuple))
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs = [xs] if single else list(xs)
    grad_ys = [] if grad_ys is None else (list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys])
    zero = str(getattr(unconnected_gradients, "value", unconnected_gradients)).lower() == "zero"
    return _core._gradients(ys, xs, grad_ys, zero)


def group(*inputs, name=None):
    """An operation that runs what produces `inputs` (tensors, or lists of them) when
    Session.run runs it (TensorFlow's tf.group). Eagerly everything has already run:
    None."""
    values = []
    for item in inputs:
        values.extend(item if isinstance(item, (list, tuple)) else [item])
    return _core._group(values, name or "group")


def _flatten(structure, leaves):
    if isinstance(structure, (list, tuple)):
        return type(structure)(_flatten(s, leaves) for s in structure)
    if isinstance(structure, dict):
        return {k: _flatten(v, leaves) for k, v in structure.items()}
    leaves.append(structure)
    return len(leaves) - 1


def _rebuild(template, values):
    if isinstance(template, (list, tuple)):
        return type(template)(_rebuild(t, values) for t in template)
    if isinstance(template, dict):
        return {k: _rebuild(v, values) for k, v in template.items()}
    return values[template]


class Session:
    """Runs a graph. As a context manager it also makes its graph the default."""

    def __init__(self, graph=None):
        graph = graph if graph is not None else get_default_graph()
        if graph is None:
            raise errors.InvalidArgumentError("Session: no graph given and no default graph")
        self.graph = graph
        self._scope = None

    def __enter__(self):
        self._scope = self.graph.as_default()
        self._scope.__enter__()
        return self

    def __exit__(self, *exc):
        scope, self._scope = self._scope, None
        return scope.__exit__(*exc) if scope is not None else False

    def close(self):
        pass

    def run(self, fetches, feed_dict=None):
        """The values of `fetches` as NumPy arrays (None for operations), in the same
        structure; `feed_dict` maps placeholders (or any tensor) to values."""
        leaves = []
        template = _flatten(fetches, leaves)
        if any(isinstance(t, _core.Variable) for t in leaves):
            with self.graph.as_default():  # a variable fetches its value, as in TensorFlow 1
                leaves = [t.value() if isinstance(t, _core.Variable) else t for t in leaves]
        tensors = [t for t in leaves if not isinstance(t, Operation)]
        ops = [t for t in leaves if isinstance(t, Operation)]
        for t in tensors:
            if not isinstance(t, _core.Tensor):
                raise errors.InvalidArgumentError(
                    f"Session.run: cannot fetch {type(t).__name__}; fetch tensors, variables or operations")
        feeds = list((feed_dict or {}).items())
        values = _core._session_run(self.graph, tensors, ops, feeds)
        it = iter(values)
        results = [None if isinstance(t, Operation) else next(it).numpy() for t in leaves]
        return _rebuild(template, results)
