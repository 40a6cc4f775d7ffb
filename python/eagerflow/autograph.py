"""AutoGraph: Python `if` and `while` on tensors become ef.cond and ef.while_loop.

ef.function converts the Python function it wraps before tracing it (as TensorFlow's
AutoGraph does), so that

    @ef.function
    def collatz(n):
        steps = 0
        while n > 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps += 1
        return steps

traces one graph whose loop runs when it is called. The conversion is decided when
the code runs, statement by statement: a condition that is a symbolic tensor builds
ef.cond / ef.while_loop; any other condition (a Python bool, an eager tensor) runs the
plain Python statement, so converted code behaves as before outside graphs.

What is converted: `if`/`elif`/`else` and `while` statements without `return`,
`break` or `continue` inside, and `and`/`or`/`not` in their conditions. The variables
a statement assigns are its outputs (loop variables for `while`); inside a graph they
must be tensors (Python numbers are converted), defined before a loop, and defined in
both branches of an `if` when they are used afterwards. Statements with `return`,
`break` or `continue` stay Python statements: a symbolic condition there raises the
error that names ef.cond. Python side effects such as print run while tracing.
Functions whose source is unavailable (lambdas, the interactive prompt) are traced
unconverted.
"""
import ast
import functools
import inspect
import sys
import textwrap
import types

from eagerflow import _core, errors

_PREFIX = "_ef_ag_"


class _Undefined:
    """The value of a variable not defined before a converted statement."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"


def _is_symbolic(value):
    return isinstance(value, _core.Tensor) and value.is_symbolic


def _as_tensors(values, names, what, undefined_reason):
    """The state values as tensors for cond / while_loop; `undefined_reason` says why an
    undefined one is an error."""
    out = []
    for name, v in zip(names, values):
        if isinstance(v, _Undefined):
            raise errors.InvalidArgumentError(f"{what}: '{name}' {undefined_reason}")
        if isinstance(v, _core.Variable):
            v = v.value()
        if not isinstance(v, _core.Tensor):
            try:
                v = _core.convert_to_tensor(v)
            except Exception:
                raise errors.InvalidArgumentError(
                    f"{what}: '{name}' holds {type(v).__name__}, which is not a tensor; inside a graph "
                    f"(ef.function) a statement with a tensor condition can only change tensors") from None
        out.append(v)
    return out


# ---- runtime helpers called by converted code ----

def if_stmt(test, true_fn, false_fn, get_state, names):
    """`if test:` — ef.cond when `test` is symbolic, else Python's if. Returns the
    values of `names` after the statement."""
    initial = get_state()
    if not _is_symbolic(test):
        return true_fn(*initial) if test else false_fn(*initial)
    from eagerflow.control_flow import cond

    def branch(fn, which):
        def run():
            return _as_tensors(fn(*initial), names, "if",
                               f"is assigned in one branch only (undefined in the {which} branch), but the "
                               f"condition is a tensor inside a graph (ef.function): assign it in both "
                               f"branches or before")
        return run

    return tuple(cond(test, branch(true_fn, "true"), branch(false_fn, "false")))


def while_stmt(test_fn, body_fn, get_state, names):
    """`while test:` — ef.while_loop when the first test is symbolic, else Python's while."""
    initial = get_state()
    test = test_fn(*initial)
    if not _is_symbolic(test):
        state = initial
        while test:
            state = body_fn(*state)
            test = test_fn(*state)
        return state
    from eagerflow.control_flow import while_loop
    undefined = "must be defined before the statement, since its condition is a tensor inside a graph (ef.function)"
    loop_vars = _as_tensors(initial, names, "while", undefined)
    result = while_loop(test_fn, lambda *vs: tuple(_as_tensors(body_fn(*vs), names, "while", undefined)),
                        tuple(loop_vars))
    return tuple(result)


def and_(left, right_fn):
    """`left and right` — logical_and for a symbolic left, else Python's `and`."""
    if _is_symbolic(left):
        return _core.logical_and(left, right_fn())
    return left and right_fn()


def or_(left, right_fn):
    """`left or right` as autograph converts it: logical_or for a symbolic left, else Python's `or`.

    right_fn is called only when needed (for a Python left), keeping `or`'s short circuit.
    """
    if _is_symbolic(left):
        return _core.logical_or(left, right_fn())
    return left or right_fn()


def not_(value):
    """`not value` as autograph converts it: logical_not for a symbolic value, else Python's `not`.

    Symbolic values are tensors of a graph being built (inside ef.function).
    """
    return _core.logical_not(value) if _is_symbolic(value) else not value


# ---- the source transformation ----

def _assigned_names(statements):
    """Names bound by `statements` (not inside nested functions or classes), in order."""
    names = []

    class Visitor(ast.NodeVisitor):
        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Store) and node.id not in names:
                names.append(node.id)

        def visit_FunctionDef(self, node):
            if node.name not in names:
                names.append(node.name)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_ClassDef(self, node):
            if node.name not in names:
                names.append(node.name)

        def visit_Lambda(self, node):
            pass

    for s in statements:
        Visitor().visit(s)
    return [n for n in names if not n.startswith(_PREFIX)]


def _has_escape(statements):
    """Whether `statements` hold a return, yield, global or nonlocal statement, or a
    break or continue of an enclosing loop, which moving them into a function would
    change."""
    def scan(node, in_loop):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False  # their returns are their own
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return True
        if isinstance(node, (ast.Break, ast.Continue)):
            return not in_loop
        loop = isinstance(node, (ast.For, ast.While, ast.AsyncFor))
        return any(scan(child, in_loop or loop) for child in ast.iter_child_nodes(node))

    return any(scan(s, False) for s in statements)


class _Converter(ast.NodeTransformer):
    def __init__(self):
        self.counter = 0

    def _fresh(self, kind):
        self.counter += 1
        return f"{_PREFIX}{kind}_{self.counter}"

    def _helper(self, name):
        return ast.Attribute(value=ast.Name(id=f"{_PREFIX}module", ctx=ast.Load()), attr=name, ctx=ast.Load())

    def _test(self, node):
        """and/or/not in a condition become the lazy helpers."""
        if isinstance(node, ast.BoolOp):
            fn = "and_" if isinstance(node.op, ast.And) else "or_"
            result = self._test(node.values[0])
            for value in node.values[1:]:
                right = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                      defaults=[]), body=self._test(value))
                result = ast.Call(func=self._helper(fn), args=[result, right], keywords=[])
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ast.Call(func=self._helper("not_"), args=[self._test(node.operand)], keywords=[])
        return node

    def _state_function(self, name, names):
        """def name(): return (v1 if defined else _Undefined('v1'), ...)"""
        elts = []
        for n in names:
            elts.append(ast.Call(func=ast.Name(id=f"{_PREFIX}get", ctx=ast.Load()),
                                 args=[ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                                     kw_defaults=[], defaults=[]),
                                                  body=ast.Name(id=n, ctx=ast.Load())),
                                       ast.Constant(n)], keywords=[]))
        return ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                             defaults=[]),
                               body=[ast.Return(value=ast.Tuple(elts=elts, ctx=ast.Load()))], decorator_list=[],
                               returns=None, type_comment=None)

    def _body_function(self, name, names, statements, returns):
        """def name(v1, v2): <statements>; return (v1, v2)   (the state passed in and out)"""
        args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names], kwonlyargs=[], kw_defaults=[],
                             defaults=[])
        body = list(statements) or [ast.Pass()]
        if returns is not None:
            body = body + [ast.Return(value=returns)]
        return ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None, type_comment=None)

    def _state_tuple(self, names, ctx):
        return ast.Tuple(elts=[ast.Name(id=n, ctx=ctx()) for n in names], ctx=ctx())

    def visit_If(self, node):
        self.generic_visit(node)
        if _has_escape(node.body) or _has_escape(node.orelse):
            return node
        names = _assigned_names(node.body + node.orelse)
        get, true_fn, false_fn = self._fresh("get"), self._fresh("if_true"), self._fresh("if_false")
        state = self._state_tuple(names, ast.Load)
        call = ast.Call(func=self._helper("if_stmt"),
                        args=[self._test(node.test), ast.Name(id=true_fn, ctx=ast.Load()),
                              ast.Name(id=false_fn, ctx=ast.Load()), ast.Name(id=get, ctx=ast.Load()),
                              ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())], keywords=[])
        assign = ast.Assign(targets=[self._state_tuple(names, ast.Store)], value=call) if names else ast.Expr(call)
        return [self._state_function(get, names), self._body_function(true_fn, names, node.body, state),
                self._body_function(false_fn, names, node.orelse, state), assign]

    def visit_While(self, node):
        self.generic_visit(node)
        if node.orelse or _has_escape(node.body):
            return node
        names = _assigned_names(node.body)
        get, test_fn, body_fn = self._fresh("get"), self._fresh("while_test"), self._fresh("while_body")
        state = self._state_tuple(names, ast.Load)
        test = self._body_function(test_fn, names, [], self._test(node.test))
        call = ast.Call(func=self._helper("while_stmt"),
                        args=[ast.Name(id=test_fn, ctx=ast.Load()), ast.Name(id=body_fn, ctx=ast.Load()),
                              ast.Name(id=get, ctx=ast.Load()),
                              ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())], keywords=[])
        assign = ast.Assign(targets=[self._state_tuple(names, ast.Store)], value=call) if names else ast.Expr(call)
        return [self._state_function(get, names), test, self._body_function(body_fn, names, node.body, state),
                assign]


def _get(read, name):
    try:
        return read()
    except NameError:  # UnboundLocalError too
        return _Undefined(name)


def convert(func):
    """The function with its tensor-dependent `if`/`while` statements converted, or
    `func` itself when its source is unavailable or it has nothing to convert."""
    target = inspect.unwrap(func)
    bound_self = getattr(func, "__self__", None)
    try:
        source = textwrap.dedent(inspect.getsource(target))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return func
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, ast.FunctionDef):
        return func  # a lambda or something else: trace unconverted
    definition.decorator_list = []
    converter = _Converter()
    converter.visit(definition)
    if converter.counter == 0:
        return func
    # The converted function runs with the original's own globals and closure cells, so
    # that it sees later changes of both (a retrace after a global changed) and its
    # `global` and `nonlocal` statements change the original's variables. It is compiled
    # inside a factory whose locals are the original's free variables and the helpers,
    # which makes them free variables of the converted code; its cells are then the
    # original's (new ones for the helpers).
    helpers = {f"{_PREFIX}module": sys.modules[__name__], f"{_PREFIX}get": _get}
    free = list(target.__code__.co_freevars)
    name = definition.name
    definition.name = f"{_PREFIX}converted"  # its own name keeps meaning what it meant
    no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    factory = ast.FunctionDef(
        name=f"{_PREFIX}factory", args=no_args,
        body=[ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=ast.Constant(None))
              for n in free + list(helpers)] + [definition],
        decorator_list=[], returns=None, type_comment=None)
    tree.body = [factory]
    ast.fix_missing_locations(tree)
    code = compile(tree, filename=f"<autograph {inspect.getsourcefile(target)}>", mode="exec")

    def nested(code, wanted):
        return next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == wanted)

    inner = nested(nested(code, factory.name), definition.name).replace(co_name=name)
    cells = dict(zip(free, target.__closure__ or ()))
    closure = tuple(cells[n] if n in cells else types.CellType(helpers[n]) for n in inner.co_freevars)
    converted = types.FunctionType(inner, target.__globals__, name, target.__defaults__, closure)
    converted.__kwdefaults__ = target.__kwdefaults__
    converted = functools.wraps(target)(converted)
    if bound_self is not None:
        converted = converted.__get__(bound_self)
    return converted
