"""The nesting of ef.data elements: tf.data's element structure without shapes and dtypes.

The C++ pipeline's elements are flat tuples of tensors; ef.data.Dataset records how
they nest (a spec) and packs them back. Also the readers of arguments that follow an
element's structure (padded_batch's padded_shapes and padding_values).
"""
import numpy as np

from eagerflow import _core

# A spec describes how an element's flat components nest: TENSOR for one tensor, a
# tuple of specs, a NamedTupleSpec, or a dict of specs (keys sorted, as tf.nest orders
# them).

TENSOR = "tensor"


class NamedTupleSpec:
    """The spec of a namedtuple: its type and its fields' specs."""

    __slots__ = ("type", "specs")

    def __init__(self, type_, specs):
        self.type, self.specs = type_, specs

    def __eq__(self, other):
        return isinstance(other, NamedTupleSpec) and (self.type, self.specs) == (other.type, other.specs)

    def __repr__(self):
        return f"{self.type.__name__}{self.specs}"


def flatten(value, leaves):
    """Appends the leaves of `value` to `leaves` in tf.nest's order and returns its spec.

    Tuples, namedtuples and dicts are structure; anything else (lists included) is a leaf."""
    if isinstance(value, tuple):
        specs = tuple(flatten(v, leaves) for v in value)
        return specs if type(value) is tuple else NamedTupleSpec(type(value), specs)
    if isinstance(value, dict):
        return {k: flatten(value[k], leaves) for k in sorted(value)}
    leaves.append(value)
    return TENSOR


def pack(spec, flat, pos):
    """The value of `spec` built from flat[pos:], and the position after it."""
    if spec is TENSOR:
        return flat[pos], pos + 1
    items = []
    for s in (spec.values() if isinstance(spec, dict) else spec.specs if isinstance(spec, NamedTupleSpec) else spec):
        item, pos = pack(s, flat, pos)
        items.append(item)
    if isinstance(spec, dict):
        return dict(zip(spec, items)), pos
    if isinstance(spec, NamedTupleSpec):
        return spec.type(*items), pos
    return tuple(items), pos


def packed(spec, flat):
    """An element from its flat components (a tuple): a tensor, or its nested structure."""
    if spec is TENSOR:
        return flat[0]
    if spec is None:  # not learned (cannot happen once an element exists): guess flat
        return flat[0] if len(flat) == 1 else flat
    if type(spec) is tuple and all(s is TENSOR for s in spec):
        return flat
    return pack(spec, flat, 0)[0]


def substitute(spec, leaf_specs):
    """spec with its leaves replaced by the next of leaf_specs (an iterator); None if one is None."""
    if spec is TENSOR:
        return next(leaf_specs)
    if isinstance(spec, dict):
        items = {k: substitute(s, leaf_specs) for k, s in spec.items()}
        return None if any(v is None for v in items.values()) else items
    items = tuple(substitute(s, leaf_specs) for s in (spec.specs if isinstance(spec, NamedTupleSpec) else spec))
    if any(v is None for v in items):
        return None
    return NamedTupleSpec(spec.type, items) if isinstance(spec, NamedTupleSpec) else items


def flatten_up_to(spec, value, what):
    """The leaves of value, which must have spec's structure down to spec's leaves (which
    may be anything in value, lists and tuples included). Raises TypeError naming `what`."""
    if spec is TENSOR:
        return [value]
    if isinstance(spec, dict):
        if not isinstance(value, dict) or sorted(value) != list(spec):
            raise TypeError(f"{what}: expected a dict with keys {list(spec)}, got {value!r}")
        return [leaf for k, s in spec.items() for leaf in flatten_up_to(s, value[k], what)]
    specs = spec.specs if isinstance(spec, NamedTupleSpec) else spec
    if not isinstance(value, tuple) or len(value) != len(specs):
        raise TypeError(f"{what}: expected a tuple of {len(specs)} items, got {value!r}")
    return [leaf for s, v in zip(specs, value) for leaf in flatten_up_to(s, v, what)]


class Structure:
    """The spec of a dataset's elements, known at once or learned later.

    A map's output is known when its function first runs (learn); zip's and
    enumerate's are derived from their inputs' when asked; flat_map's and
    interleave's follow the datasets their function returns (the first one known)."""

    __slots__ = ("_spec", "_derive", "_followed")

    def __init__(self, spec=None, derive=None):
        self._spec, self._derive, self._followed = spec, derive, []

    @property
    def spec(self):
        if self._spec is None:
            if self._derive is not None:
                self._spec = self._derive()
            else:
                self._spec = next((s.spec for s in self._followed if s.spec is not None), None)
            if self._spec is not None:
                self._derive, self._followed = None, []
        return self._spec

    def learn(self, spec):
        self._spec = spec

    def follow(self, structure):
        if self._spec is None and structure.spec is None:
            if not any(s is structure for s in self._followed):
                self._followed.append(structure)
        elif self._spec is None:
            self._spec, self._followed = structure.spec, []


def call(func, structure, args):
    """func of an element given as its flat components: a plain tuple element's members are
    separate arguments, any other element is one (tf.data's rule)."""
    value = packed(structure.spec, args)
    return func(*value) if type(value) is tuple else func(value)


def count(value, what):
    """An int argument (a Python or NumPy int, or a scalar integer tensor)."""
    if isinstance(value, _core.Tensor):
        value = value.numpy()
    try:
        return int(value.__index__())
    except AttributeError:
        raise TypeError(f"{what} must be an int, got {value!r}") from None


def is_shape(value):
    """Whether value reads as one padded shape: an int, a tensor or array, or a list or
    tuple of ints and Nones (a tuple holding anything else is structure)."""
    if isinstance(value, (int, np.integer, _core.Tensor, np.ndarray, list)):
        return True
    return isinstance(value, tuple) and all(v is None or isinstance(v, (int, np.integer)) for v in value)


def shape_leaves(padded_shapes, spec):
    """padded_shapes' shapes in component order: following the element spec when known
    (as tf.data does), else by their own form (is_shape)."""
    if spec is not None:
        leaves = flatten_up_to(spec, padded_shapes, "padded_batch: padded_shapes does not match the elements")
    else:
        leaves = []

        def walk(value):
            if isinstance(value, dict):
                for k in sorted(value):
                    walk(value[k])
            elif is_shape(value):
                leaves.append(value)
            elif isinstance(value, tuple):
                for v in value:
                    walk(v)
            else:
                leaves.append(value)

        walk(padded_shapes)
    for i, leaf in enumerate(leaves):
        if leaf is None:
            raise ValueError(f"padded_batch: padded_shapes[{i}] is None; give the shape, with None or -1 for the "
                             "dimensions padded to the longest (or padded_shapes=None for all of them)")
    return [[-1 if d is None else d for d in leaf] if isinstance(leaf, (list, tuple)) else leaf for leaf in leaves]


def padding_leaves(padding_values, spec):
    """padding_values in component order; a single value serves every component."""
    if not isinstance(padding_values, (tuple, dict)):
        return [padding_values]
    if spec is not None:
        return flatten_up_to(spec, padding_values, "padded_batch: padding_values does not match the elements")
    leaves = []
    flatten(padding_values, leaves)
    return leaves
