"""Graph optimization passes from Python: the options, and optimized traces giving the
same values as unoptimized ones and as eager code."""
import shutil

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


def test_reduction_fusion_sums_without_the_product(restore_options):
    rng = np.random.default_rng(0)
    a, b = (ef.constant(rng.standard_normal(50000).astype(np.float32)) for _ in range(2))
    dot = ef.function(lambda u, v: ef.reduce_sum(u * v))
    assert "fused_reduce_sum" in dot.get_concrete_function(a, b).optimized_graph.to_string()
    assert dot(a, b).numpy() == ef.reduce_sum(a * b).numpy()  # bit for bit
    np.testing.assert_allclose(dot(a, b).numpy(), np.dot(a.numpy().astype(np.float64), b.numpy()), rtol=1e-6)
    ef.set_graph_optimizer_options(ef.GraphOptimizerOptions(reduction_fusion=False))
    assert not ef.graph_optimizer_options().reduction_fusion
    unfused = ef.function(lambda u, v: ef.reduce_sum(u * v))
    assert "fused_reduce_sum" not in unfused.get_concrete_function(a, b).optimized_graph.to_string()
    assert unfused(a, b).numpy() == dot(a, b).numpy()


def test_compiled_fused_kernels_give_the_same_bits(tmp_path, monkeypatch):
    """Note [compiled fused kernels]: the chain compiled gives the interpreter's bits; the
    kernel lands in EF_KERNEL_CACHE_DIR."""
    if not shutil.which("c++") and not shutil.which("g++"):
        pytest.skip("no C++ compiler on this machine")
    monkeypatch.setenv("EF_KERNEL_CACHE_DIR", str(tmp_path))
    f = ef.function(lambda x: (x * 1.5 + 0.5) * ef.tanh(x) - ef.square(x) / (x * x + 1.0))
    x = ef.constant(np.random.default_rng(1).uniform(-3, 3, 10007).astype(np.float32))
    assert not ef.compile_fused_kernels()
    interpreted = f(x).numpy()
    ef.set_compile_fused_kernels(True)
    try:
        compiled = f(x).numpy()
    finally:
        ef.set_compile_fused_kernels(False)
    np.testing.assert_array_equal(compiled, interpreted)
    assert list(tmp_path.glob("fused-*.so")), "no kernel was compiled"
    # Per function, as TensorFlow's jit_compile: its fused nodes are marked.
    jit = ef.function(lambda x: ef.tanh(x * 2.0) + x * x, jit_compile=True)
    assert "compiled=true" in jit.get_concrete_function(x).optimized_graph.to_string()
    np.testing.assert_array_equal(jit(x).numpy(), ef.function(lambda x: ef.tanh(x * 2.0) + x * x)(x).numpy())


def test_structured_outputs_after_get_concrete_function_with_a_signature():
    spec = [ef.TensorSpec(shape=(None,), dtype=ef.float32)]
    f = ef.function(lambda x: {"double": x * 2.0, "pair": (x, x + 1.0)}, input_signature=spec)
    f.get_concrete_function()
    out = f(ef.constant([1.0, 2.0]))
    np.testing.assert_array_equal(out["pair"][1].numpy(), [2, 3])
    assert f.experimental_get_tracing_count() == 1


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
