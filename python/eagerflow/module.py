"""ef.Module: attribute tracking for modules and layers written in Python.

A Python subclass of ef.Module or ef.keras.layers.Layer is a C++ module underneath.
Assigning a module, a Variable, or a list/tuple of them to a public attribute tracks
it under the attribute's name, so `variables`, `trainable_variables`,
`named_variables()` and checkpoints see it (paths such as "encoder/dense/kernel", the
attribute names from the root down). Reassigning an attribute replaces what it tracked.
Lists are tracked as they are at assignment; later appends are not seen.
"""
from eagerflow import _core

Module = _core.Module


def _is_trackable(value):
    return isinstance(value, (_core.Module, _core.Variable))


def _module_setattr(self, name, value):
    if not name.startswith("_"):
        tracked = self.__dict__.setdefault("_tracked_attributes", set())
        if name in tracked:
            self._untrack(name)
            tracked.discard(name)
        if isinstance(value, _core.Module):
            self._track_module(name, value)
            tracked.add(name)
        elif isinstance(value, _core.Variable):
            self._track_variable(name, value)
            tracked.add(name)
        elif isinstance(value, (list, tuple)) and value and all(_is_trackable(v) for v in value):
            # Items tracked as "<name>/0", "<name>/1", ... through a container module.
            container = _core.Module(name)
            for i, item in enumerate(value):
                if isinstance(item, _core.Module):
                    container._track_module(str(i), item)
                else:
                    container._track_variable(str(i), item)
            self._track_module(name, container)
            object.__setattr__(self, "_container_" + name, container)
            tracked.add(name)
    object.__setattr__(self, name, value)


Module.__setattr__ = _module_setattr
