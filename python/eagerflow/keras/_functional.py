"""keras.Input, keras.layers.Lambda, and operators on KerasTensors.

An operator or indexing on KerasTensors (``x * 2``, ``a + b``, ``x[:, 0]``) becomes a
Lambda layer call, as TensorFlow's Keras does, so the functional API reads like eager
code. Such layers run any Python function and so cannot be saved with the model's
architecture (save_weights still works).
"""
from eagerflow import _core

KerasTensor = _core.keras.KerasTensor


def Input(shape=None, batch_size=None, dtype=None, name=None):  # noqa: N802  (Keras' name)
    """A symbolic model input: batches of `shape` (a tuple without the batch
    dimension; None where any size goes) of `dtype` (float32 by default).

    >>> ef.keras.Input(shape=(28, 28), name="image")
    <KerasTensor shape=TensorShape([None, 28, 28]), dtype=float32, name=image>
    """
    if shape is None:
        raise TypeError("Input: shape is required (the shape of one example, without the batch dimension)")
    if batch_size is not None:
        raise ValueError("Input: batch_size is not supported; eagerflow's inputs take batches of any size")
    # A name ("int64") or NumPy dtype as Keras takes them.
    return _core.keras._input(shape, _core.float32 if dtype is None else _core.as_dtype(dtype), name)


class Lambda(_core.Layer):
    """Wraps a function of tensors as a layer (for the functional API).

    >>> x = ef.keras.Input(shape=(3,))
    >>> ef.keras.layers.Lambda(lambda t: t * 2)(x).shape
    TensorShape([None, 3])

    The function gets one tensor, or a list when the layer is called on a list. It
    must not create variables. A model holding a Lambda cannot be saved with its
    architecture (a function is code, not configuration); save its weights instead.
    """

    def __init__(self, function, name=None):
        super().__init__(name=name or "lambda")
        self.function = function

    def call(self, inputs):
        return self.function(inputs)

    def get_config(self):
        raise NotImplementedError(
            f"layer '{self.name}' (Lambda) wraps a Python function, which cannot be saved; write a Layer "
            "subclass with get_config, or save the model's weights with save_weights")


def _operator(fn, name):
    def apply(*args):
        positions = [i for i, a in enumerate(args) if isinstance(a, KerasTensor)]
        symbolic = [args[i] for i in positions]

        def compute(inputs):
            full = list(args)
            for i, t in zip(positions, inputs if len(positions) > 1 else [inputs]):
                full[i] = t
            return fn(*full)

        return Lambda(compute, name=name)(symbolic if len(symbolic) > 1 else symbolic[0])

    apply.__name__ = name
    return apply


def _install_operators():
    import operator
    binary = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
              "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "matmul": operator.matmul}
    for name, op in binary.items():
        setattr(KerasTensor, f"__{name}__", _operator(op, name))
        setattr(KerasTensor, f"__r{name}__", _operator(lambda a, b, op=op: op(b, a), name))
    KerasTensor.__neg__ = _operator(operator.neg, "negative")
    KerasTensor.__abs__ = _operator(operator.abs, "abs")
    KerasTensor.__getitem__ = _operator(operator.getitem, "getitem")


_install_operators()
