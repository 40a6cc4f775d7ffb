"""AutoGraph: `if` and `while` on tensors inside ef.function become ef.cond and
ef.while_loop; the seeds' dynamic programs run traced."""
import numpy as np
import pytest

import eagerflow as ef


def test_collatz_traced_once_runs_the_loop_per_call():
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

    assert int(collatz(ef.constant(27))) == 111
    assert int(collatz(ef.constant(6))) == 8
    assert int(collatz(ef.constant(1))) == 0
    assert collatz.experimental_get_tracing_count() == 1


def test_fizzbuzz_counts_with_elif_and_and():
    @ef.function
    def fizzbuzz(max_num):
        fizz = buzz = fizzbuzz_count = numbers = 0
        num = ef.constant(1)
        while num <= max_num:
            if num % 3 == 0 and num % 5 == 0:
                fizzbuzz_count += 1
            elif num % 3 == 0:
                fizz += 1
            elif num % 5 == 0:
                buzz += 1
            else:
                numbers += 1
            num += 1
        return fizz, buzz, fizzbuzz_count, numbers

    assert [int(v) for v in fizzbuzz(ef.constant(15))] == [4, 2, 1, 8]
    assert [int(v) for v in fizzbuzz(ef.constant(100))] == [27, 14, 6, 53]
    assert fizzbuzz.experimental_get_tracing_count() == 1


def test_python_conditions_keep_python_semantics():
    @ef.function
    def power(x, n):
        result = ef.ones_like(x)
        while n > 0:  # n is a Python int: an ordinary loop, unrolled while tracing
            result = result * x
            n -= 1
        if n == 0:
            result = result + 0.0
        return result

    np.testing.assert_allclose(power(ef.constant([2.0, 3.0]), 3).numpy(), [8, 27])


def test_not_and_or_in_conditions_and_gradients():
    @ef.function
    def f(x):
        y = x
        if not (x > 10.0) or x < -10.0:
            y = x * x
        return y

    x = ef.constant(3.0)
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert float(y) == 9.0
    assert float(tape.gradient(y, x)) == pytest.approx(6.0)
    assert float(f(ef.constant(20.0))) == 20.0


def test_variable_defined_in_one_branch_only_is_an_error():
    @ef.function
    def f(x):
        if x > 0:
            y = x
        return y  # noqa: F821

    with pytest.raises(ef.errors.InvalidArgumentError, match="'y' is assigned in one branch only"):
        f(ef.constant(1.0))


def test_statements_with_return_stay_python():
    @ef.function
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(ef.errors.FailedPreconditionError, match="cond"):
        f(ef.constant(1.0))


def test_autograph_can_be_switched_off():
    def g(x):
        if x > 0:
            x = x * 2.0
        return x

    np.testing.assert_allclose(ef.function(g)(ef.constant(1.0)).numpy(), 2.0)
    with pytest.raises(ef.errors.FailedPreconditionError, match="cond"):
        ef.function(g, autograph=False)(ef.constant(1.0))


SCALE = 2.0
TRACES = 0


def test_converted_functions_see_the_live_globals_and_closure_variables():
    """The converted function ran against a copy of the module's globals and of its
    closure variables taken at the first trace: a retrace after SCALE changed still
    multiplied by 2, and `global` statements changed the copy (TRACES stayed 0)."""
    global SCALE

    @ef.function
    def scaled(x):
        global TRACES
        TRACES += 1
        if x[0] > 0:
            x = x * SCALE
        return x

    start = TRACES
    np.testing.assert_array_equal(scaled(ef.constant([1.0])).numpy(), [2.0])
    SCALE = 3.0
    try:
        np.testing.assert_array_equal(scaled(ef.constant([1.0, 1.0])).numpy(), [3.0, 3.0])  # a new trace
    finally:
        SCALE = 2.0
    assert TRACES == start + 2

    factor = 2.0

    @ef.function
    def closed(x):
        if x[0] > 0:
            x = x * factor
        return x

    np.testing.assert_array_equal(closed(ef.constant([1.0])).numpy(), [2.0])
    factor = 5.0
    np.testing.assert_array_equal(closed(ef.constant([1.0, 1.0])).numpy(), [5.0, 5.0])

    class Base:
        def call(self, x):
            return x + 1.0

    class Derived(Base):
        @ef.function
        def call(self, x):
            if x[0] > 0:
                x = x * 2.0
            return super().call(x)  # the __class__ cell is the original's

    np.testing.assert_array_equal(Derived().call(ef.constant([1.0])).numpy(), [3.0])
