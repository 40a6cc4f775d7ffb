"""ef.print: values and text, once per run of a traced function or loop body."""
import sys

import numpy as np
import pytest

import eagerflow as ef


def test_prints_tensors_and_text_to_stderr(capfd):
    ef.print("x:", ef.constant([1.5, -2.0]), "n =", 3, np.array([1, 2]), "{literal}")
    assert capfd.readouterr().err == "x: [ 1.5 -2. ] n = 3 [1 2] {literal}\n"


def test_sep_end_and_stdout(capfd):
    ef.print(ef.constant(1), ef.constant(2), sep=", ", end=";\n", output_stream=sys.stdout)
    assert capfd.readouterr().out == "1, 2;\n"


def test_prints_on_every_call_of_a_function_and_every_loop_iteration(capfd):
    @ef.function
    def count(n):
        i = ef.constant(0)
        while i < n:
            ef.print("i =", i)
            i += 1
        return i

    assert int(count(ef.constant(2))) == 2
    assert int(count(ef.constant(3))) == 3
    assert capfd.readouterr().err == "i = 0\ni = 1\ni = 0\ni = 1\ni = 2\n"
    assert count.experimental_get_tracing_count() == 1


def test_bad_stream():
    with pytest.raises(ef.errors.InvalidArgumentError, match="output_stream"):
        ef.print(1, output_stream=open)
