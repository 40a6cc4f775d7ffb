"""ef.saved_model: traced functions and their variables in a directory that loads and
runs without the code that wrote it (tf.saved_model).

    class Scaler(ef.Module):
        def __init__(self):
            super().__init__()
            self.w = ef.Variable(2.0)

        @ef.function(input_signature=[ef.TensorSpec([None], ef.float32)])
        def __call__(self, x):
            return x * self.w

    ef.saved_model.save(Scaler(), "scaler")
    loaded = ef.saved_model.load("scaler")
    loaded(ef.constant([1.0, 2.0]))                      # [2., 4.]
    loaded.signatures["serving_default"](x=...)          # {"output_0": ...}

A Keras model exports its call as "serving_default" (inputs named after its
keras.Input layers, outputs after its output layers) and "__call__". The directory
holds the graphs (saved_model.pb) and the variables (variables/variables.safetensors);
the C++ library and the eagerflow-run program load it as well. See Note [saved model
directories] in eagerflow/saved_model/saved_model.h and docs/saved_model_format.md.
"""
import inspect
import json

from eagerflow import _core
from eagerflow.function import ConcreteFunction, Function, TensorSpec, _fill, _Slot

__all__ = ["save", "load"]


# ---- output structures, as JSON ----

def _encode(structure):
    if structure is None:
        return None
    if isinstance(structure, _Slot):
        return structure.index
    if isinstance(structure, dict):
        return {"dict": [[k, _encode(v)] for k, v in structure.items()]}
    if isinstance(structure, (list, tuple)):
        return {type(structure).__name__ if type(structure) in (list, tuple) else "tuple": [_encode(v) for v in structure]}
    raise TypeError(f"saved_model: cannot record an output structure holding {type(structure).__name__}")


def _decode(encoded, flat):
    if encoded is None:
        return None
    if isinstance(encoded, int):
        return flat[encoded]
    if "dict" in encoded:
        return {k: _decode(v, flat) for k, v in encoded["dict"]}
    if "list" in encoded:
        return [_decode(v, flat) for v in encoded["list"]]
    return tuple(_decode(v, flat) for v in encoded["tuple"])


def _output_names(structure, count):
    """A flat dict of outputs keeps its keys as names; anything else is output_<i>."""
    if isinstance(structure, dict) and all(isinstance(v, _Slot) for v in structure.values()) and all(
            isinstance(k, str) for k in structure):
        names = [None] * count
        for key, slot in structure.items():
            names[slot.index] = key
        if None not in names:
            return names
    return [f"output_{i}" for i in range(count)]


# ---- what to export ----

def _traced(fn, name, instance=None):
    """The ConcreteFunction (Python wrapper) to export for `fn`, and its argument names."""
    if isinstance(fn, ConcreteFunction):
        return fn, []
    if isinstance(fn, Function):
        if fn.input_signature is None:
            raise ValueError(
                f"saved_model.save: function '{name}' has no input_signature; give it one "
                "(ef.function(input_signature=[ef.TensorSpec(...)])) or pass "
                "f.get_concrete_function(ef.TensorSpec(...)) instead")
        params = list(inspect.signature(fn.python_function).parameters)
        if instance is not None:
            params = params[1:]
            concrete = fn.get_concrete_function(instance, *fn.input_signature)
        else:
            concrete = fn.get_concrete_function()
        return concrete, params
    raise TypeError(f"saved_model.save: '{name}' is a {type(fn).__name__}, not an ef.function or ConcreteFunction")


def _input_names(concrete, params):
    names = []
    for i, spec in enumerate(concrete.inputs):
        names.append(spec.name or (params[i] if i < len(params) else f"input_{i}"))
    return names if len(set(names)) == len(names) else [f"input_{i}" for i in range(len(names))]


def _export(name, fn, signature, instance=None, input_names=None, output_names=None):
    concrete, params = _traced(fn, name, instance)
    structure = concrete._structure
    count = len(concrete.structured_outputs)
    return _core._SavedModelExport(
        name=name, function=concrete._concrete, signature=signature,
        input_names=input_names or _input_names(concrete, params),
        output_names=output_names or _output_names(structure, count),
        structure=json.dumps(_encode(structure)))


def _bound_functions(obj):
    """The ef.functions `obj` holds: methods decorated in its class (bound to it), and
    functions stored on it. Yields (name, Function, instance or None)."""
    seen = set()
    for cls in type(obj).__mro__:
        for name, value in vars(cls).items():
            if isinstance(value, Function) and name not in seen:
                seen.add(name)
                bound = value.__get__(obj, type(obj))
                yield name, bound.func.__self__ if hasattr(bound, "func") else value, obj
    for name, value in vars(obj).items() if hasattr(obj, "__dict__") else []:
        if isinstance(value, (Function, ConcreteFunction)) and name not in seen:
            seen.add(name)
            yield name, value, None


def _keras_exports(model):
    if hasattr(model, "_build_from_input"):
        model._build_from_input()
    inputs = list(getattr(model, "_inputs", None) or [])
    symbolic = getattr(model, "_symbolic_input", None)
    if not inputs and symbolic is not None:
        inputs = [symbolic]
    if not inputs:
        raise ValueError(
            f"saved_model.save: model '{model.name}' does not know its input shape; begin it with "
            "keras.Input(shape) or pass signatures=ef.function(model.call, input_signature=[...])")
    specs = [TensorSpec((None,) + tuple(t.shape)[1:], t.dtype, t.name) for t in inputs]
    single = len(inputs) == 1

    def serve(*xs):
        return model(xs[0] if single else list(xs), training=False)

    fn = Function(serve, input_signature=specs, name=model.name)
    outputs = list(getattr(model, "_outputs", None) or [])
    names = [t.name for t in outputs]
    output_names = names if outputs and len(set(names)) == len(names) else None
    return [_export("serving_default", fn, True, output_names=output_names),
            _export("__call__", fn, False)]


def save(obj, export_dir, signatures=None):
    """Saves `obj`'s traced functions and variables to `export_dir` (tf.saved_model.save).

    The directory is created, or replaced when it holds a saved model; it appears
    complete or not at all.

    Args:
      obj: A Keras model (exports its call as "serving_default" and "__call__"; a
        model that does not begin with keras.Input needs `signatures`), an
        ef.Module or any object whose ef.functions with an input_signature become
        exports under their attribute names, or an ef.function itself.
      export_dir: The directory to write.
      signatures: None, an ef.function with an input_signature or a ConcreteFunction
        (exported as "serving_default"), or a dict of signature names to either. With
        None, an object's `__call__` function, if it has one, is "serving_default".

    Raises:
      ValueError: a function to export has no input_signature, or a Keras model does
        not know its input shape.
      FailedPreconditionError: export_dir exists and is not a saved model.
    """
    exports = []
    names = set()
    from eagerflow import keras
    if isinstance(obj, (Function, ConcreteFunction)):
        exports.append(_export("__call__", obj, False))
        if signatures is None:
            signatures = obj
    elif isinstance(obj, keras.Model):
        if signatures is None:
            exports += _keras_exports(obj)
    else:
        for name, fn, instance in _bound_functions(obj):
            if isinstance(fn, Function) and fn.input_signature is None:
                continue  # traced per call: nothing fixed to export
            exports.append(_export(name, fn, False, instance))
        if signatures is None and any(e.name == "__call__" for e in exports):
            call = next(e for e in exports if e.name == "__call__")
            exports.append(_core._SavedModelExport(
                name="serving_default", function=call.function, signature=True, input_names=call.input_names,
                output_names=call.output_names, structure=call.structure))
    if signatures is not None:
        items = signatures.items() if isinstance(signatures, dict) else [("serving_default", signatures)]
        for name, fn in items:
            exports.append(_export(name, fn, True))
        if isinstance(obj, keras.Model) and "serving_default" in dict(items):
            # A Keras model is callable when loaded, as its serving signature.
            exports.append(_export("__call__", dict(items)["serving_default"], False))
    for e in exports:
        if e.name in names:
            raise ValueError(f"saved_model.save: two exports are named '{e.name}'")
        names.add(e.name)
    if not exports:
        raise ValueError(
            f"saved_model.save: {type(obj).__name__} holds no ef.function with an input_signature; "
            "pass signatures=")
    variables = list(getattr(obj, "variables", None) or []) if not isinstance(obj, (Function, ConcreteFunction)) else []
    _core._saved_model_save(str(export_dir), exports, variables)


class _LoadedFunction:
    """An export of a loaded model, called with positional tensors; gives the outputs
    nested as the saved function gave them."""

    def __init__(self, export):
        self._export = export
        self._structure = json.loads(export.structure) if export.structure else None
        self.__name__ = export.name

    @property
    def inputs(self):
        return [TensorSpec(shape, dtype, name) for (dtype, shape, _), name in
                zip(self._export.function._input_signature, self._export.input_names)]

    @property
    def structured_outputs(self):
        return [TensorSpec(shape, dtype) for dtype, shape, _ in self._export.function._output_signature]

    def _run(self, args):
        return self._export.function([a if isinstance(a, _core.Tensor) else _core.convert_to_tensor(a) for a in args])

    def __call__(self, *args):
        flat = self._run(args)
        if self._structure is None:
            return flat[0] if len(flat) == 1 else flat
        return _decode(self._structure, flat)


class _SignatureFunction(_LoadedFunction):
    """A signature: called with its named inputs (or positionally); gives a dict of its
    named outputs, as TensorFlow's signatures["serving_default"](x=...)."""

    def __call__(self, *args, **kwargs):
        names = self._export.input_names
        if args and kwargs:
            raise TypeError(f"signature '{self.__name__}': pass the inputs by name or by position, not both")
        if kwargs:
            unknown = sorted(set(kwargs) - set(names))
            missing = [n for n in names if n not in kwargs]
            if unknown or missing:
                raise TypeError(f"signature '{self.__name__}' takes inputs {names}; "
                                f"missing {missing}, unexpected {unknown}")
            args = [kwargs[n] for n in names]
        flat = self._run(args)
        return dict(zip(self._export.output_names, flat))


class LoadedModel:
    """What ef.saved_model.load gives back: its exports as methods (and `__call__`),
    its signatures in `signatures`, and its variables as ef.Variables (training a
    loaded model with a GradientTape and an optimizer works)."""

    def __init__(self, core):
        """Wraps what the C++ loader gave back (use ef.saved_model.load)."""
        self._core = core
        self.signatures = {}
        self._functions = {}
        for export in core.exports:
            if export.signature:
                self.signatures[export.name] = _SignatureFunction(export)
            else:
                self._functions[export.name] = _LoadedFunction(export)
                if export.name != "__call__" and export.name.isidentifier():
                    setattr(self, export.name, self._functions[export.name])
        self.variables = list(core.variables)
        self.trainable_variables = [v for v in self.variables if v.trainable]

    def __call__(self, *args):
        """Runs the exported `__call__` (a Module's, or a Keras model's call) on tensors."""
        call = self._functions.get("__call__")
        if call is None:
            raise TypeError(f"this saved model exports no __call__; it has {sorted(self._functions)} and "
                            f"signatures {sorted(self.signatures)}")
        return call(*args)


def load(export_dir):
    """Loads a saved model directory (tf.saved_model.load).

    Everything is validated before anything is returned: a damaged or edited directory
    raises DataLossError naming the file and the field (UnimplementedError for a newer
    format or an unknown op, NotFoundError for a missing file).

    Args:
      export_dir: A directory written by ef.saved_model.save (or the C++
        ef::saved_model::save).

    Returns:
      A LoadedModel.
    """
    return LoadedModel(_core._saved_model_load(str(export_dir)))
