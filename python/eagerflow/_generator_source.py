"""Dataset.from_generator's source (ef.data): the output signature read, and each
yielded value converted to it."""
import numpy as np

from eagerflow import _core
from eagerflow import _data_structure as _nest


def parse(generator, output_types, output_shapes, args, output_signature):
    """(start, spec): start() begins a pass, returning a function that gives the next
    element's flat tensors or None at the end; spec is the elements' nesting."""
    if not callable(generator):
        raise TypeError("from_generator: `generator` must be a Python callable")
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("from_generator: give output_signature, or output_types and output_shapes, "
                            "not both")
        tensor_specs = []
        spec = _nest.flatten(output_signature, tensor_specs)
        for s in tensor_specs:
            if not hasattr(s, "shape") or not hasattr(s, "dtype"):
                raise TypeError(f"from_generator: output_signature must hold ef.TensorSpec, got {s!r}")
        signature = [(tuple(s.shape) if s.shape is not None else None, _core.as_dtype(s.dtype))
                     for s in tensor_specs]
    elif output_types is not None:
        types_ = []
        spec = _nest.flatten(output_types, types_)
        if output_shapes is None:
            shapes = [None] * len(types_)
        else:
            shapes = _nest.flatten_up_to(spec, output_shapes,
                                    "from_generator: output_shapes does not match output_types")
        signature = [(None if s is None else tuple(s), _core.as_dtype(t)) for s, t in zip(shapes, types_)]
    else:
        raise TypeError("from_generator: output_signature (or output_types) must be given")
    arguments = tuple(a.numpy() if isinstance(a, _core.Tensor) else np.asarray(a) for a in (args or ()))

    def convert(value, shape, dtype):
        try:
            if dtype == _core.bfloat16:  # NumPy has no bfloat16: through float32
                array = np.asarray(value.numpy() if isinstance(value, _core.Tensor) else value, np.float32)
                tensor = _core.cast(_core.constant(array), dtype)
            else:
                array = np.asarray(value.numpy() if isinstance(value, _core.Tensor) else value,
                                   dtype=dtype.as_numpy_dtype)
                tensor = _core.constant(array)
        except (TypeError, ValueError) as e:
            raise TypeError(f"from_generator: the generator yielded {value!r}, which does not convert to "
                            f"{dtype.name}") from e
        if shape is not None and (len(shape) != len(array.shape) or
                                  any(d is not None and d != n for d, n in zip(shape, array.shape))):
            raise TypeError(f"from_generator: the generator yielded an element of shape {array.shape} where "
                            f"an element of shape {shape} was expected")
        return tensor

    def start():
        iterator = iter(generator(*arguments))

        def next_element():
            try:
                value = next(iterator)
            except StopIteration:
                return None
            leaves = _nest.flatten_up_to(spec, value, "from_generator: the generator yielded an element that "
                                                 "does not match output_signature's structure")
            return [convert(v, shape, dtype) for v, (shape, dtype) in zip(leaves, signature)]

        return next_element

    return start, spec
