#!/usr/bin/env python3
"""Writes type stubs for the compiled extension eagerflow._core, so that editors and
type checkers complete `ef.` names with their arguments: <package>/_core.pyi for the
module, its classes, and its submodules (as nested namespaces), and the py.typed marker. Run by the build after the extension is linked:

    scripts/make_stubs.py <build>/python

Signatures come from pybind11's docstrings ("name(a: TensorLike, ...) -> Tensor");
argument types it cannot name become Any. Every stub is checked to parse.
"""
import ast
import inspect
import keyword
import os
import re
import sys
import types

ALIASES = {
    "TensorLike": "Any", "Axes": "Any", "handle": "Any", "object": "Any", "numpy.ndarray": "Any",
    "function": "Callable[..., Any]", "args": "Any", "kwargs": "Any", "buffer": "Any",
}
INTERNAL_DUNDERS = {"__new__", "__init_subclass__", "__subclasshook__", "__dir__", "__format__", "__reduce__",
                    "__reduce_ex__", "__sizeof__", "__getattribute__", "__setattr__", "__delattr__", "__class__",
                    "__doc__", "__module__", "__dict__", "__weakref__", "__getstate__", "__setstate__", "__hash__",
                    "__firstlineno__", "__static_attributes__", "__qualname__", "__annotations__"}
TYPING = ["Any", "Callable", "Dict", "Iterator", "List", "Optional", "Sequence", "Tuple", "Union", "overload"]
SIGNATURE = re.compile(r"^(?:\d+\. )?(\w+)\((.*)\)(?: -> (.+))?$")


def clean_type(text, module_name):
    text = text.replace(module_name + ".", "")
    text = re.sub(r"\beagerflow\._core\.", "", text)
    for name, alias in ALIASES.items():
        text = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w.])", alias, text)
    if "::" in text or "<" in text or "[" in text and text.count("[") != text.count("]"):
        return "Any"
    return text


def split_arguments(text):
    """Top-level commas only (types such as Dict[str, int] hold commas)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def stub_arguments(text, module_name, is_method):
    out = []
    for i, part in enumerate(split_arguments(text)):
        if part.startswith("*"):
            out.append(part.split(":")[0].strip() + ": Any")
            continue
        name, _, rest = part.partition(":")
        name = name.strip()
        annotation, _, default = rest.partition("=")
        if is_method and i == 0:
            out.append("self")
            continue
        if not name.isidentifier() or keyword.iskeyword(name):
            name = f"arg{i}"
        annotation = clean_type(annotation.strip(), module_name) or "Any"
        out.append(f"{name}: {annotation}" + (" = ..." if default.strip() else ""))
    return out


def signatures(obj, name, module_name, is_method):
    """The def lines for a pybind11 function (one per overload)."""
    doc = getattr(obj, "__doc__", None) or ""
    lines = []
    for line in doc.splitlines():
        m = SIGNATURE.match(line.strip())
        if m and m.group(1) == name:
            args = stub_arguments(m.group(2), module_name, is_method)
            ret = clean_type(m.group(3) or "Any", module_name)
            lines.append(f"def {name}({', '.join(args)}) -> {ret}: ...")
    if not lines:
        lines = [f"def {name}({'self, ' if is_method else ''}*args: Any, **kwargs: Any) -> Any: ..."]
    if len(lines) > 1:
        lines = ["@overload\n" + line for line in lines]
    return [valid(line, name, is_method) for line in lines]


def valid(line, name, is_method):
    try:
        ast.parse(line)
        return line
    except SyntaxError:
        return f"def {name}({'self, ' if is_method else ''}*args: Any, **kwargs: Any) -> Any: ..."


def indent(lines, by="    "):
    return [by + l.replace("\n", "\n" + by) for l in lines]


def class_stub(cls, module_name):
    bases = [b.__name__ for b in cls.__bases__ if b.__name__ not in ("object", "pybind11_object")]
    body = []
    for attr, value in sorted(vars(cls).items()):
        if attr in INTERNAL_DUNDERS:
            continue
        if attr.startswith("_") and not attr.startswith("__"):
            continue
        if isinstance(value, property):
            body.append(f"@property\ndef {attr}(self) -> Any: ...")
        elif isinstance(value, (staticmethod,)) or type(value).__name__ == "staticmethod":
            body += ["@staticmethod\n" + s for s in signatures(value.__func__, attr, module_name, False)]
        elif callable(value) and type(value).__name__ in ("instancemethod", "builtin_function_or_method",
                                                           "function", "method_descriptor"):
            body += signatures(value, attr, module_name, True)
        elif type(value).__name__ == "pybind11_static_property" or not callable(value):
            body.append(f"{attr}: Any")
    return [f"class {cls.__name__}({', '.join(bases)}):" if bases else f"class {cls.__name__}:"] + \
        indent(body or ["..."])


def module_stub(module, module_name):
    out = []
    for name, value in sorted(vars(module).items()):
        if name.startswith("__"):
            continue
        if isinstance(value, types.ModuleType):
            out.append(f"class {name}:  # submodule {value.__name__}")
            out += indent(module_stub(value, value.__name__) or ["..."])
        elif inspect.isclass(value):
            out += class_stub(value, module_name)
        elif callable(value):
            out += signatures(value, name, module_name, False)
        else:
            out.append(f"{name}: Any")
    return out


def main():
    build_python = sys.argv[1] if len(sys.argv) > 1 else "build/python"
    sys.path.insert(0, build_python)
    import eagerflow._core as core
    body = "\n".join(module_stub(core, "eagerflow._core")) + "\n"
    # Names pybind11 printed that no stub defines (C++-side aliases such as DTypeLike): Any.
    tree = ast.parse(body)
    defined = set(TYPING) | {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    aliases = [f"{name} = Any" for name in sorted(used - defined - set(dir(__builtins__)))]
    text = "\n".join(["# Generated by scripts/make_stubs.py from the compiled extension; do not edit.",
                      f"from typing import {', '.join(TYPING)}", ""] + aliases + [""]) + body
    ast.parse(text)
    path = os.path.join(build_python, "eagerflow", "_core.pyi")
    with open(path, "w") as f:
        f.write(text)
    open(os.path.join(build_python, "eagerflow", "py.typed"), "w").close()
    print(f"make_stubs: {path} ({text.count('def ')} functions and methods)")


if __name__ == "__main__":
    main()
