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
    """A dataflow graph, TensorFlow 1 style: build it under ``as_default()``, run it with a Session.

    Inside ``with g.as_default():`` op calls add nodes to g and return symbolic
    tensors (shapes may have unknown dimensions); eager tensors used there are
    captured as constants. ``str(g)`` lists the nodes.

    >>> g = ef.Graph()
    >>> with g.as_default():
    ...     x = ef.placeholder(ef.float32, shape=(2,))
    ...     y = ef.reduce_sum(x * x)
    >>> g.num_nodes
    3
    >>> ef.Session(g).run(y, feed_dict={x: [3., 4.]})
    array(25., dtype=float32)
    """

    @contextlib.contextmanager
    def as_default(self):
        """A context manager making this the thread's default graph: op calls inside build nodes in it."""
        self._push_scope()
        _graph_stack().append(self)
        try:
            yield self
        finally:
            _graph_stack().pop()
            _core.Graph._pop_scope()


def get_default_graph():
    """Returns the graph entered last on this thread with ``as_default()``.

    >>> ef.get_default_graph() is None   # eager mode
    True

    Returns:
      The innermost ef.Graph whose ``as_default()`` (or Session) block is open, or
      None in eager mode.
    """
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
    """Returns an Operation that initializes the variables created in ``graph``.

    Variables created in graph mode have no value until this runs (Session.run).

    Args:
      graph: None (the graph of the innermost ``as_default()`` or Session block),
        or an ef.Graph.

    Returns:
      An Operation, for Session.run.

    Raises:
      InvalidArgumentError: no graph is given and none is the default.
    """
    return _core._global_variables_initializer(_graph_or_default(graph, "global_variables_initializer"))


def global_variables(graph=None):
    """Returns the Variables created in ``graph``, in creation order.

    Args:
      graph: None (the graph of the innermost ``as_default()`` or Session block),
        or an ef.Graph.

    Returns:
      A list of Variables.

    Raises:
      InvalidArgumentError: no graph is given and none is the default.
    """
    return _core._global_variables(_graph_or_default(graph, "global_variables"))


def gradients(ys, xs, grad_ys=None, unconnected_gradients="none"):
    """Builds symbolic gradients d(sum(ys * grad_ys))/d(xs) as new nodes of the graph of ``ys``.

    TensorFlow 1's tf.gradients; inside ef.function too.

    >>> g = ef.Graph()
    >>> with g.as_default():
    ...     x = ef.placeholder(ef.float32, shape=())
    ...     dx, = ef.gradients(x * x, [x])
    >>> ef.Session(g).run(dx, feed_dict={x: 3.})
    array(6., dtype=float32)

    Args:
      ys: A symbolic tensor or a list of them (summed).
      xs: A tensor or Variable, or a list of them (not mixing the two).
      grad_ys: None (ones), or tensors shaped like ys that weight them.
      unconnected_gradients: "none" (None for an x that ys do not depend on) or
        "zero" (zeros); ef.UnconnectedGradients values are accepted.

    Returns:
      A list with one symbolic Tensor (or None) per x.

    Raises:
      InvalidArgumentError: xs mixes variables and tensors.
    """
    single = not isinstance(xs, (list, tuple))
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs = [xs] if single else list(xs)
    grad_ys = [] if grad_ys is None else (list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys])
    zero = str(getattr(unconnected_gradients, "value", unconnected_gradients)).lower() == "zero"
    return _core._gradients(ys, xs, grad_ys, zero)


def group(*inputs, name=None):
    """Returns an Operation that runs what produces ``inputs`` when Session.run runs it (tf.group).

    Args:
      *inputs: Tensors, or lists or tuples of them (e.g. a step's assignments).
      name: None, or the operation's name (default "group").

    Returns:
      An Operation in graph mode; None eagerly, where everything has already run.
    """
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
    """Runs a graph, TensorFlow 1 style. As a context manager it also makes its graph the default.

    >>> g = ef.Graph()
    >>> with g.as_default():
    ...     w = ef.Variable(2., name="w")
    ...     y = w * 3.
    >>> with ef.Session(graph=g) as sess:
    ...     _ = sess.run(ef.global_variables_initializer())
    ...     sess.run(y)
    array(6., dtype=float32)

    Args:
      graph: The ef.Graph to run; None means the current default graph.

    Raises:
      InvalidArgumentError: no graph is given and none is the default.
    """

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
        """Does nothing: a Session holds no resources.

        Kept for TensorFlow 1 programs.
        """

    def run(self, fetches, feed_dict=None):
        """Runs the graph and returns the values of ``fetches``.

        Args:
          fetches: A symbolic tensor, a Variable (its value), an Operation, or a
            (nested) list, tuple or dict of them.
          feed_dict: None, or a dict mapping placeholders (or any tensor of the graph)
            to values (tensor-likes, converted to the key's dtype).

        Returns:
          NumPy arrays (None for operations), in the structure of ``fetches``.

        Raises:
          InvalidArgumentError: a fetch that is not a tensor, variable or operation,
            a missing feed, or a fed value that contradicts its placeholder's shape.
          FailedPreconditionError: a variable read before its initializer ran.
        """
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
