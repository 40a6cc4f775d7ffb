"""Every public docstring's >>> examples run and print what they show (doctest), and
every public function and class has a docstring beyond pybind11's signature line."""
import doctest
import types

import numpy as np
import pytest

import eagerflow as ef

MODULES = ["ef", "ef.math", "ef.nn", "ef.linalg", "ef.random", "ef.keras", "ef.keras.layers", "ef.keras.losses",
           "ef.keras.metrics", "ef.keras.optimizers", "ef.keras.initializers", "ef.keras.callbacks", "ef.keras.utils",
           "ef.keras.mixed_precision", "ef.keras.models", "ef.data", "ef.train", "ef.optimizers", "ef.io",
           "ef.config", "ef.summary", "ef.profiler", "ef.errors", "ef.datasets", "ef.saved_model", "ef.onnx", "ef.image", "ef.autodiff",
           "ef.signal"]


def _public():
    """(qualified name, object) of every public callable, and of its classes' methods."""
    seen, items = set(), []
    for module_name in MODULES:
        module = eval(module_name, {"ef": ef})
        for name in dir(module):
            value = getattr(module, name)
            if name.startswith("_") or isinstance(value, types.ModuleType) or not callable(value):
                continue
            if id(value) in seen:
                continue
            seen.add(id(value))
            items.append((f"{module_name}.{name}", value))
            TOP_LEVEL.add(f"{module_name}.{name}")
            if isinstance(value, type):
                for attr, member in vars(value).items():
                    if (attr.startswith("_") and attr not in ("__init__", "__call__")) or id(member) in seen:
                        continue
                    seen.add(id(member))
                    items.append((f"{module_name}.{name}.{attr}", member))
    return items


TOP_LEVEL = set()
ITEMS = _public()


def test_every_public_function_and_class_has_a_docstring():
    missing = []
    for name, value in ITEMS:
        if name not in TOP_LEVEL:
            continue  # methods: their examples run below when they have any
        lines = [line for line in (value.__doc__ or "").strip().splitlines() if line.strip()]
        if not lines or (len(lines) <= 1 and "(" in lines[0]):
            missing.append(name)
    assert not missing, missing


@pytest.mark.parametrize("name,value", [(n, v) for n, v in ITEMS if ">>>" in (v.__doc__ or "")],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_docstring_examples(name, value):
    ef.random.set_seed(None)
    test = doctest.DocTestParser().get_doctest(value.__doc__, {"ef": ef, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=lambda text: pytest.fail(text, pytrace=False))
    assert runner.failures == 0
