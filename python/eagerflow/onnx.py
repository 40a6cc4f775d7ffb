"""ef.onnx: traced functions and Keras models as ONNX files, for ONNX Runtime, TensorRT,
OpenVINO and the other runtimes that read ONNX (as torch.onnx.export and tf2onnx).

    model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(10, activation="softmax")])
    ef.onnx.export(model, path="classifier.onnx")

    @ef.function
    def scale(x):
        return x * 2.0
    ef.onnx.export(scale, [ef.TensorSpec([None, 3], ef.float32, name="x")], "scale.onnx")

The graph is written as traced; variables become initializers holding their current
values. What ONNX cannot express (ops without an ONNX counterpart, variable
assignments) is refused with UnimplementedError naming the op, and every file written
has passed ONNX's checker with full shape inference. See Note [ONNX export] in
eagerflow/onnx/onnx_export.h.
"""
from eagerflow.function import ConcreteFunction, Function, TensorSpec

__all__ = ["export"]

MAX_OPSET = 17


def _module():
    # The exporter's extension links libonnx: loaded on first export only.
    try:
        from eagerflow import _onnx
    except ImportError as e:  # built without libonnx-dev
        raise ImportError("ef.onnx: this eagerflow was built without ONNX export (install libonnx-dev "
                          "and rebuild)") from e
    return _onnx


def _concrete(fn_or_model, input_signature):
    """The ConcreteFunction (Python wrapper) to export, its argument names and output names."""
    from eagerflow import keras, saved_model
    if isinstance(fn_or_model, keras.Model):
        if input_signature is None:
            export = saved_model._keras_exports(fn_or_model)[0]  # "serving_default"
            return export.function, list(export.input_names), list(export.output_names)
        model = fn_or_model
        specs = list(input_signature)
        fn = Function(lambda *xs: model(xs[0] if len(xs) == 1 else list(xs), training=False),
                      input_signature=specs, name=model.name)
        concrete = fn.get_concrete_function()
    elif isinstance(fn_or_model, ConcreteFunction):
        if input_signature is not None:
            raise ValueError("ef.onnx.export: a ConcreteFunction has its signature already; "
                             "pass input_signature=None")
        concrete = fn_or_model
    else:
        fn = fn_or_model
        if not isinstance(fn, Function):
            if not callable(fn):
                raise TypeError(f"ef.onnx.export: cannot export a {type(fn).__name__}; pass a keras.Model, "
                                "an ef.function, a ConcreteFunction or a Python function")
            fn = Function(fn, input_signature=input_signature)
        if input_signature is not None:
            concrete = fn.get_concrete_function(*input_signature)
        elif fn.input_signature is not None:
            concrete = fn.get_concrete_function()
        else:
            raise ValueError("ef.onnx.export: the function has no input_signature; pass "
                             "input_signature=[ef.TensorSpec(shape, dtype, name=...)]")
    params = []
    python_function = getattr(fn_or_model, "python_function", None)
    if python_function is not None:
        import inspect
        params = list(inspect.signature(python_function).parameters)
    return (concrete._concrete, saved_model._input_names(concrete, params),
            saved_model._output_names(concrete._structure, len(concrete.structured_outputs)))


def export(fn_or_model, input_signature=None, path=None, opset=MAX_OPSET, input_names=None,
           output_names=None):
    """Exports a traced function or a Keras model as an ONNX model.

    Args:
      fn_or_model: A keras.Model (its call with training=False; its keras.Input shapes
        unless input_signature is given), an ef.function, a ConcreteFunction, or a
        Python function (traced with input_signature).
      input_signature: A list of ef.TensorSpec, one per argument; None where the model
        or function has its own. Use None for sizes that vary (the batch size).
      path: The file to write (atomically). None: return the model's bytes instead.
      opset: The ONNX opset, 13 to 17.
      input_names, output_names: The graph's input and output names; default: the
        specs' names (Keras: its inputs' names) and output_<i> (or a dict's keys).

    Returns:
      The serialized onnx.ModelProto when `path` is None, else None.

    Raises:
      UnimplementedError: the function uses what ONNX cannot express (the message names
        the op), e.g. linear algebra, random numbers, or assigning a variable.
      ValueError: a function without an input signature.
    """
    if input_signature is not None:
        input_signature = [s if isinstance(s, TensorSpec) else TensorSpec(*s) for s in input_signature]
    concrete, default_inputs, default_outputs = _concrete(fn_or_model, input_signature)
    data = _module()._export(concrete, list(input_names or default_inputs), list(output_names or default_outputs),
                             int(opset), None if path is None else str(path))
    return data if path is None else None
