"""Graph optimization passes from Python: the options, and optimized traces giving the
same values as unoptimized ones and as eager code."""
import numpy as np
import pytest

import eagerflow as ef


def chain(x):
    return ef.tanh(x * 1.0) * ef.sigmoid(x) - ef.exp(-ef.square(x)) + ef.constant(2.0) * 3.0


def test_optimized_graph_is_smaller_and_fused(restore_options):
    f = ef.function(chain)
    x = ef.constant(np.linspace(-2, 2, 7, dtype=np.float32))
    concrete = f.get_concrete_function(x)
    optimized = concrete.optimized_graph
    assert optimized.num_nodes < concrete.graph.num_nodes
    assert "fused_elementwise" in optimized.to_string()
    assert "fused_elementwise" not in concrete.graph.to_string()  # the trace stays as traced
    np.testing.assert_array_equal(f(x).numpy(), chain(x).numpy())


def test_switches(restore_options):
    options = ef.graph_optimizer_options()
    assert options.elementwise_fusion and options.constant_folding and options.max_folded_elements == 100000
    ef.set_graph_optimizer_options(ef.GraphOptimizerOptions(elementwise_fusion=False))
    f = ef.function(chain)
    x = ef.constant(np.linspace(-2, 2, 7, dtype=np.float32))
    listing = f.get_concrete_function(x).optimized_graph.to_string()
    assert "fused_elementwise" not in listing
    assert "multiply" in listing
    np.testing.assert_array_equal(f(x).numpy(), chain(x).numpy())

    ef.set_graph_optimizer_options(ef.GraphOptimizerOptions.none())
    g = ef.function(chain)
    concrete = g.get_concrete_function(x)
    assert concrete.optimized_graph.to_string() == concrete.graph.to_string()
    with pytest.raises(ef.errors.InvalidArgumentError, match="max_folded_elements"):
        ef.set_graph_optimizer_options(ef.GraphOptimizerOptions(max_folded_elements=-1))


def test_variables_keep_their_order(restore_options):
    v = ef.Variable(ef.constant([1.0, 2.0]))

    @ef.function
    def step():
        before = v.read_value() * 1.0
        v.assign_add(ef.constant([10.0, 10.0]))
        return before, v.read_value() * 1.0

    before, after = step()
    np.testing.assert_array_equal(before.numpy(), [1, 2])
    np.testing.assert_array_equal(after.numpy(), [11, 12])
    np.testing.assert_array_equal(v.numpy(), [11, 12])
