"""ef.cond and ef.while_loop: control flow on tensor values, eagerly and in graphs.

    y = ef.cond(x > 0, lambda: x * 2, lambda: -x)
    i, total = ef.while_loop(lambda i, t: i < 10, lambda i, t: (i + 1, t + i), (0, 0))

Eagerly they are an `if` and a `while` (a GradientTape records what ran). Inside
ef.function or a graph they become one node whose branches (or body) are traced, so
the decision is made each time the graph runs; those nodes are differentiable too
(ef.gradients, or a tape around a function call), to any order, as long as loop
variables keep their shapes and the loop body assigns no variables. Both branches must return the same
structure, dtypes and ranks; the body returns the loop variables' structure.
"""
from eagerflow import _core, errors
from eagerflow.function import _fill, _flatten_outputs


def _structure_string(structure):
    return repr(structure).replace("<eagerflow.function._Slot object at", "<slot").split(" at 0x")[0]


def cond(pred, true_fn=None, false_fn=None, name=None):
    """Returns true_fn() if the scalar bool ``pred`` is true, else false_fn() (tf.cond).

    Eagerly this is an ``if``; inside ef.function or a graph it becomes one node
    whose branches are both traced, deciding each time the graph runs. It is
    differentiable.

    >>> x = ef.constant(-3.)
    >>> ef.cond(x > 0, lambda: x * 2., lambda: -x).numpy()
    array(3., dtype=float32)

    Args:
      pred: A scalar bool tensor-like.
      true_fn: A function of no arguments returning a tensor or a (nested) list,
        tuple or dict of tensors.
      false_fn: The same, returning the same structure, dtypes and ranks.
      name: Ignored (TensorFlow compatibility).

    Returns:
      The result of the branch taken.

    Raises:
      InvalidArgumentError: a missing branch, or branches that return different
        structures (dtypes or ranks, in a graph).
    """
    if true_fn is None or false_fn is None:
        raise errors.InvalidArgumentError("cond: both true_fn and false_fn are required")
    structures = {}

    def branch(fn, key):
        def run():
            leaves = []
            structures[key] = _flatten_outputs(fn(), leaves)
            return leaves
        return run

    flat = _core._cond(pred, branch(true_fn, True), branch(false_fn, False))
    if len(structures) == 2 and _shape_of(structures[True]) != _shape_of(structures[False]):
        raise errors.InvalidArgumentError(
            "cond: true_fn and false_fn must return the same structure of tensors")
    structure = next(iter(structures.values()))
    return _fill(structure, flat)


def _shape_of(structure):
    if isinstance(structure, (list, tuple)):
        return (type(structure).__name__, tuple(_shape_of(s) for s in structure))
    if isinstance(structure, dict):
        return ("dict", tuple((k, _shape_of(v)) for k, v in sorted(structure.items(), key=lambda kv: repr(kv[0]))))
    return None if structure is None else "tensor"


def while_loop(cond, body, loop_vars, maximum_iterations=None, name=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` holds (tf.while_loop).

    Eagerly this is a ``while``; inside ef.function or a graph it becomes one node.
    It is differentiable as long as the loop variables keep their shapes and the
    body assigns no variables.

    >>> i, total = ef.while_loop(lambda i, t: i < 5, lambda i, t: (i + 1, t + i),
    ...                          (ef.constant(0), ef.constant(0)))
    >>> total.numpy()
    array(10, dtype=int32)

    Args:
      cond: A function of the loop variables returning a scalar bool tensor.
      body: A function of the loop variables returning new values in the same
        structure (a single tensor for a single loop variable).
      loop_vars: A tensor-like, or a list or tuple of them.
      maximum_iterations: None, or the most iterations to run.
      name: Ignored (TensorFlow compatibility).

    Returns:
      The final loop variables, in the structure of loop_vars.

    Raises:
      InvalidArgumentError: the body returns another structure.
    """
    single = not isinstance(loop_vars, (list, tuple))
    leaves = []
    structure = _flatten_outputs([loop_vars] if single else loop_vars, leaves)

    def unflat(flat):
        values = _fill(structure, flat)
        return values

    def condition(flat):
        return cond(*unflat(flat))

    def step(flat):
        result = body(*unflat(flat))
        if single:
            result = [result]
        out = []
        got = _flatten_outputs(list(result) if isinstance(result, tuple) else result, out)
        if _shape_of(got) != _shape_of(list(structure) if isinstance(structure, tuple) else structure):
            raise errors.InvalidArgumentError(
                "while_loop: the body must return the loop variables' structure")
        return out

    flat = _core._while_loop(condition, step, leaves,
                             -1 if maximum_iterations is None else int(maximum_iterations))
    result = _fill(structure, flat)
    return result[0] if single else result
