"""The type stubs generated for the extension (scripts/make_stubs.py at build time):
present beside it, valid Python, and naming every public function and class."""
import ast
import os
import types

import eagerflow as ef
from eagerflow import _core


def test_stubs_cover_the_extension():
    folder = os.path.dirname(_core.__file__)
    assert os.path.exists(os.path.join(folder, "py.typed"))
    with open(os.path.join(folder, "_core.pyi")) as f:
        tree = ast.parse(f.read())
    top = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    public = {n for n, v in vars(_core).items() if not n.startswith("_") and (callable(v) or isinstance(v, types.ModuleType))}
    assert public <= top, sorted(public - top)
    matmul = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "matmul")
    assert [a.arg for a in matmul.args.args][:4] == ["a", "b", "transpose_a", "transpose_b"]
    tensor = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    methods = {n.name for n in tensor.body if isinstance(n, ast.FunctionDef)}
    assert {"numpy", "gpu", "__add__", "__getitem__"} <= methods
    assert ef.__version__ == _core.__version__
