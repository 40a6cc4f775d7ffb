"""ef.function: trace a Python function into a graph once per input signature.

    @ef.function
    def step(x, y):
        return ef.tanh(x * y + 1.0)

    step(a, b)                      # first call with these dtypes/shapes: traces
    step.experimental_get_tracing_count()

Tensor arguments (ef.Tensor, NumPy arrays) are traced as symbolic tensors; the values
of other arguments (numbers, strings, tuples of them) and the identity of Variables
are part of the signature, so a different value traces again. With
`input_signature=[ef.TensorSpec(shape=(None, 2), dtype=ef.float32)]` every compatible
call shares one trace. Variables used inside are read and assigned on every call;
Python side effects (print) happen only while tracing. A recording GradientTape
differentiates through a call. See Note [function tracing] in the C++ header
eagerflow/graph/function.h.
"""
import functools
import weakref

import numpy as np

from eagerflow import _core


class TensorSpec:
    """Describes a tensor argument of a traced function: its shape and dtype.

    Used in ef.function's input_signature (every compatible call then shares one
    trace) and by get_concrete_function.

    >>> ef.TensorSpec(shape=(None, 2), dtype=ef.float32)
    TensorSpec(shape=(None, 2), dtype=ef.float32, name=None)

    Args:
      shape: A tuple or list of ints, None for an unknown dimension (None: a scalar).
      dtype: A dtype or anything ef.as_dtype accepts (default float32).
      name: None, or the argument's name.
    """

    def __init__(self, shape, dtype=_core.float32, name=None):
        self.shape = tuple(shape) if shape is not None else ()
        self.dtype = _core.as_dtype(dtype)
        self.name = name

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, str(self.dtype), self.name))


# Arguments whose repr is their value: their key needs no object kept alive.
_VALUE_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), slice, range, np.generic,
                _core.DType)


def _split(value, tensors, key, pin):
    """Replaces tensors in a nested argument by their index in `tensors`; describes the
    rest in `key` (part of the signature).

    A key that names an object by its address (a Variable's id, the default repr of a
    function or any other object) stays valid only while that object lives: a new object
    at the same address would get an old trace, made for the old object. So `pin(piece,
    value)` keeps every such argument, by its key, for as long as the Function keeps its
    traces."""
    if isinstance(value, (_core.Tensor, np.ndarray)):
        tensors.append(value if isinstance(value, _core.Tensor) else _core.constant(value))
        key.append("T")
        return _Slot(len(tensors) - 1)
    if isinstance(value, _core.Variable):
        piece = f"V{id(value)}"
        key.append(piece)
        pin(piece, value)
        return value
    if isinstance(value, (list, tuple)):
        key.append(f"{type(value).__name__}{len(value)}(")
        items = []
        for v in value:  # tensors inline: a list of hundreds of them is common (L-BFGS history)
            if type(v) is _core.Tensor:
                tensors.append(v)
                key.append("T")
                items.append(_Slot(len(tensors) - 1))
            else:
                items.append(_split(v, tensors, key, pin))
        key.append(")")
        return items if type(value) is list else type(value)(items)
    if isinstance(value, dict):
        key.append("dict(")
        out = {}
        for k in sorted(value, key=repr):
            key.append(repr(k) + ":")
            out[k] = _split(value[k], tensors, key, pin)
        key.append(")")
        return out
    piece = f"{type(value).__name__}:{value!r}"
    key.append(piece)
    if not isinstance(value, _VALUE_TYPES):
        pin(piece, value)
    return value


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _fill(value, tensors):
    if isinstance(value, _Slot):
        return tensors[value.index]
    if isinstance(value, (list, tuple)):
        return type(value)(_fill(v, tensors) for v in value)
    if isinstance(value, dict):
        return {k: _fill(v, tensors) for k, v in value.items()}
    return value


def _flatten_outputs(result, leaves):
    if result is None:
        return None
    if isinstance(result, (list, tuple)):
        return type(result)(_flatten_outputs(r, leaves) for r in result)
    if isinstance(result, dict):
        return {k: _flatten_outputs(v, leaves) for k, v in result.items()}
    if isinstance(result, _core.Variable):
        result = result.value()
    if not isinstance(result, _core.Tensor):
        result = _core.convert_to_tensor(result)
    leaves.append(result)
    return _Slot(len(leaves) - 1)


class Function:
    """A Python function traced into graphs, as ef.function returns it (tf.function).

    The first call with new input dtypes and shapes (or new non-tensor argument
    values) traces the function into a graph, which later calls run. Python side
    effects such as print happen only while tracing (ef.print runs every call).

    >>> @ef.function
    ... def step(x):
    ...     return x * 2. + 1.
    >>> step(ef.constant([1., 2.])).numpy()
    array([3., 5.], dtype=float32)
    >>> step.experimental_get_tracing_count()
    1

    Args:
      python_function: The function to trace.
      input_signature: None, or a list of TensorSpec: one trace for every
        compatible call.
      name: None, or the function's name.
      autograph: Whether `if` and `while` on tensors become ef.cond and
        ef.while_loop (default True).
      jit_compile: Whether fused elementwise chains run as compiled kernels.
    """

    def __init__(self, python_function, input_signature=None, name=None, autograph=True, jit_compile=False):
        self.python_function = python_function
        self._autograph = autograph
        self._converted = None
        self.input_signature = list(input_signature) if input_signature is not None else None
        self.__name__ = name or getattr(python_function, "__name__", "function")
        self._jit_compile = jit_compile
        self._core = _core._Function(self.__name__, self.input_signature, jit_compile)
        self._structures = {}  # output structure per trace key
        self._pinned = {}  # key piece -> the argument it names (see _split)
        self._instance = None  # for a method's per-instance Function: a weak reference to it
        self._per_instance = {}  # id(instance) -> (weak reference, Function) for methods
        functools.update_wrapper(self, python_function)

    def _body(self, template, key):
        def body(symbolic):
            args, kwargs = _fill(template, symbolic)
            leaves = []
            if self._converted is None:
                from eagerflow import autograph as ag
                self._converted = ag.convert(self.python_function) if self._autograph else self.python_function
            self._structures[key] = _flatten_outputs(self._converted(*args, **kwargs), leaves)
            return leaves
        return body

    def _pin(self, piece, value):
        # A method's instance is not kept: this Function goes when it goes (__get__).
        if self._instance is None or value is not self._instance():
            self._pinned[piece] = value

    def _trace_key(self, key, tensors):
        return key + "|" + _core._signature_key(tensors) if self.input_signature is None else key + "|sig"

    def __call__(self, *args, **kwargs):
        tensors, key = [], []
        template = _split((args, kwargs), tensors, key, self._pin)
        key = "".join(key)
        trace_key = self._trace_key(key, tensors)
        flat = self._core.call(tensors, key, self._body(template, trace_key))
        structure = self._structures.get(trace_key)
        if structure is None and not flat:
            return None
        return _fill(structure, flat) if structure is not None else flat

    def get_concrete_function(self, *args, **kwargs):
        """Returns the ConcreteFunction (one trace) for these arguments, tracing if new.

        >>> f = ef.function(lambda x: x + 1.)
        >>> concrete = f.get_concrete_function(ef.TensorSpec([2], ef.float32))
        >>> concrete(ef.constant([1., 2.])).numpy()
        array([2., 3.], dtype=float32)

        Args:
          *args: TensorSpecs or tensors standing for the tensor arguments (with no
            arguments, the input_signature's), and the values of the others.
          **kwargs: Keyword arguments, likewise.

        Returns:
          A ConcreteFunction.
        """
        tensors, key = [], []
        specs = []

        def as_placeholder_spec(value):
            if isinstance(value, TensorSpec):
                specs.append(value)
                return np.zeros([d or 0 for d in value.shape], dtype=np.float32)  # stands in for a slot
            return value

        if not args and not kwargs and self.input_signature is not None:
            args = tuple(self.input_signature)
        args = tuple(as_placeholder_spec(a) for a in args)
        template = _split((args, kwargs), tensors, key, self._pin)
        key = "".join(key)
        if not specs:
            specs = [TensorSpec(tuple(t.shape), t.dtype) for t in tensors]
        trace_key = key + "|" + _core._spec_signature_key(specs) if self.input_signature is None else key + "|sig"
        concrete = self._core.trace(specs, key, self._body(template, trace_key))
        return ConcreteFunction(concrete, self._structures.get(trace_key))

    def experimental_get_tracing_count(self):
        """Returns how many times the Python function has been traced.

        A new trace happens for each new input signature (dtypes, shapes and
        non-tensor argument values); an int.
        """
        return self._core.trace_count

    @property
    def trace_count(self):
        """How many times the Python function has been traced."""
        return self._core.trace_count

    def __get__(self, instance, owner):
        # Decorating a method: each instance gets a Function of its own, as in TensorFlow,
        # so each creates its variables on its own first trace (Note [variables created by
        # functions] in graph/function.h); `self` is a non-tensor argument (by identity).
        if instance is None:
            return self
        entry = self._per_instance.get(id(instance))
        if entry is None or entry[0]() is not instance:
            try:
                reference = weakref.ref(instance, lambda _, key=id(instance): self._per_instance.pop(key, None))
            except TypeError:  # not weak-referenceable: one Function for all instances
                return functools.partial(self.__call__, instance)
            bound = Function(self.python_function, self.input_signature, self.__name__, self._autograph,
                             self._jit_compile)
            bound._instance = reference
            entry = self._per_instance[id(instance)] = (reference, bound)
        return functools.partial(entry[1].__call__, instance)


class ConcreteFunction:
    """One trace of an ef.function: call it with tensors of its signature.

    ``graph`` is the traced graph and ``optimized_graph`` the one plain calls run.

    >>> concrete = ef.function(lambda x: x * x).get_concrete_function(ef.TensorSpec([], ef.float32))
    >>> concrete(3.).numpy()
    array(9., dtype=float32)
    """

    def __init__(self, concrete, structure):
        self._concrete = concrete
        self._structure = structure

    @property
    def graph(self):
        """The traced graph (the nodes as traced, before optimization)."""
        return self._concrete.graph

    @property
    def optimized_graph(self):
        """The graph plain calls run: `graph` after the optimization passes
        (ef.set_graph_optimizer_options), optimized when first needed."""
        return self._concrete.optimized_graph

    @property
    def inputs(self):
        """The TensorSpecs of the tensor arguments, in order."""
        return [TensorSpec(shape, dtype, name or None) for dtype, shape, name in self._concrete._input_signature]

    @property
    def structured_outputs(self):
        """The TensorSpecs of the outputs, in flattened order."""
        return [TensorSpec(shape, dtype) for dtype, shape, _ in self._concrete._output_signature]

    def __call__(self, *args):
        flat = self._concrete([a if isinstance(a, _core.Tensor) else _core.convert_to_tensor(a) for a in args])
        return _fill(self._structure, flat) if self._structure is not None else flat

    def pretty_printed_graph(self):
        """The traced graph as text, one node per line."""
        return self._concrete.graph.to_string()


def init_scope():
    """Returns a context manager lifting code out of every function being traced (tf.init_scope).

    The code inside runs as it would outside the traces (eagerly when the trace
    began eagerly), and no tape records it. For state a function creates on its
    first trace:

        @ef.function
        def step(x):
            if counter[0] is None:
                with ef.init_scope():
                    counter[0] = ef.Variable(ef.zeros([]))
            counter[0].assign_add(1.0)
    """
    return _core._InitScope()


def function(func=None, input_signature=None, name=None, autograph=True, jit_compile=False):
    """Compiles a Python function into a traced graph function (tf.function); also a decorator.

    With ``autograph`` (the default), ``if`` and ``while`` statements on tensors
    become ef.cond and ef.while_loop. With ``jit_compile`` (as in TensorFlow), its
    fused elementwise chains run as kernels compiled for them at their first call
    (ef.set_compile_fused_kernels does that for every fused op).

    >>> @ef.function(input_signature=[ef.TensorSpec((None,), ef.float32)])
    ... def relu_sum(x):
    ...     return ef.reduce_sum(ef.nn.relu(x))
    >>> relu_sum(ef.constant([-1., 2., 3.])).numpy()
    array(5., dtype=float32)

    Args:
      func: The function; None to use ``function(...)`` as a decorator with arguments.
      input_signature: None, or a list of TensorSpec for the tensor arguments.
      name: None, or the function's name.
      autograph: Whether to convert tensor-dependent ``if`` and ``while`` (default True).
      jit_compile: Whether fused elementwise chains run as compiled kernels.

    Returns:
      An ef.Function (or, without func, a decorator making one).
    """
    options = dict(input_signature=input_signature, name=name, autograph=autograph, jit_compile=jit_compile)
    if func is None:
        return lambda f: Function(f, **options)
    return Function(func, **options)
