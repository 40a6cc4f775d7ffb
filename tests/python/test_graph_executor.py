"""The graph executor from Python: in-place buffer reuse and parallel execution of
independent nodes are switchable and change no bits; feeds are never overwritten and an
error in a parallel branch reaches the caller typed."""
import numpy as np
import pytest

import eagerflow as ef


def branches(x, ws):
    total = ef.reduce_sum(x)
    for w in ws:
        total = total + ef.reduce_sum(ef.tanh(ef.matmul(x, w) * 0.1 + 1.0))
    return total


def test_options_round_trip():
    o = ef.GraphOptimizerOptions(in_place_reuse=False, parallel_execution=False)
    assert not o.in_place_reuse and not o.parallel_execution
    d = ef.GraphOptimizerOptions()
    assert d.in_place_reuse and d.parallel_execution
    n = ef.GraphOptimizerOptions.none()
    assert not n.in_place_reuse and not n.parallel_execution


def test_reuse_and_parallel_change_no_bits(restore_options):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((40, 40))
    x = ef.constant(x_np)
    ws = [ef.constant(rng.standard_normal((40, 40))) for _ in range(8)]
    results = []
    for reuse in (False, True):
        for parallel in (False, True):
            for fusion in (False, True):
                ef.set_graph_optimizer_options(ef.GraphOptimizerOptions(
                    elementwise_fusion=fusion, in_place_reuse=reuse, parallel_execution=parallel))
                f = ef.function(branches)
                results.append(f(x, ws).numpy())
                results.append(f(x, ws).numpy())
    for r in results[1:]:
        assert r.tobytes() == results[0].tobytes()
    assert results[0].tobytes() == branches(x, ws).numpy().tobytes()
    np.testing.assert_array_equal(x.numpy(), x_np)  # the argument is untouched


def test_feeds_are_never_overwritten():
    g = ef.Graph()
    with g.as_default():
        p = ef.placeholder(ef.float64, [None])
        y = ef.exp(ef.tanh(p * 2.0) + 1.0) * 3.0
    x_np = np.linspace(-1, 1, 1000)
    x = ef.constant(x_np)
    out = ef.Session(g).run(y, {p: x})
    np.testing.assert_array_equal(x.numpy(), x_np)
    np.testing.assert_allclose(out, np.exp(np.tanh(x_np * 2.0) + 1.0) * 3.0, rtol=1e-12)


def test_error_in_a_parallel_branch_reaches_the_caller():
    g = ef.Graph()
    with g.as_default():
        ps = [ef.placeholder(ef.float64, [None, None]) for _ in range(8)]
        total = ef.constant(0.0, dtype=ef.float64)
        for i in range(0, 8, 2):
            total = total + ef.reduce_sum(ef.matmul(ps[i], ps[i + 1]))
    sess = ef.Session(g)
    rng = np.random.default_rng(1)
    good = {p: ef.constant(rng.standard_normal((20, 20))) for p in ps}
    bad = dict(good)
    bad[ps[4]] = ef.constant(rng.standard_normal((20, 19)))
    expected = sess.run(total, good)
    with pytest.raises(ef.errors.InvalidArgumentError, match="matmul"):
        sess.run(total, bad)
    assert sess.run(total, good) == expected  # the pool still works
