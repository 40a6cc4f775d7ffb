"""ef.print: printing as an op (TensorFlow's tf.print).

Eagerly it prints at once. Inside @ef.function, an ef.cond branch or an ef.while_loop
body it becomes a node that prints every time it runs, where Python's print() runs
only once, while tracing:

    @ef.function
    def step(x):
        ef.print("x is", x)          # on every call, with the call's values
        return x * 2
"""
import builtins
import sys

import numpy as np

from eagerflow import _core, errors


def _stream_number(output_stream):
    if output_stream is None:
        return 2
    if output_stream is sys.stdout or output_stream == "stdout":
        return 1
    if output_stream is sys.stderr or output_stream == "stderr":
        return 2
    raise errors.InvalidArgumentError(
        f"print: output_stream must be sys.stdout or sys.stderr, got {output_stream!r}")


def print(*inputs, output_stream=None, sep=" ", end="\n", name=None):  # noqa: A001
    """Prints `inputs` separated by `sep` and followed by `end` to `output_stream`
    (sys.stderr when None, or sys.stdout): tensors (and NumPy arrays) by their values,
    anything else as str() gives it. Returns None."""
    del name
    stream = _stream_number(output_stream)
    escape = lambda text: text.replace("{", "{{").replace("}", "}}")  # noqa: E731
    parts, tensors = [], []
    for value in inputs:
        if isinstance(value, _core.Variable):
            value = value.value()
        if isinstance(value, (_core.Tensor, np.ndarray)):
            parts.append("{}")
            tensors.append(value)
        else:
            parts.append(escape(builtins.str(value)))
    # Python's own buffer first, so eager prints keep their order with print().
    (sys.stdout if stream == 1 else sys.stderr).flush()
    _core._print_format(escape(sep).join(parts) + escape(end), tensors, stream)
