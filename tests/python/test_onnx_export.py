"""ef.onnx.export, checked with a real runtime: every exported model passes ONNX's checker
with full shape inference (python3-onnx), and ONNX Runtime (the npm package
onnxruntime-node, run by onnxruntime_run.js) gives eagerflow's outputs to 1e-5.
"""
import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import eagerflow as ef
from eagerflow import keras

onnx = pytest.importorskip("onnx", reason="python3-onnx is not installed")
pytest.importorskip("eagerflow._onnx", reason="this eagerflow was built without ONNX export (libonnx-dev)")

HERE = Path(__file__).resolve().parent
ORT_DIR = Path(os.environ.get("EF_ONNXRUNTIME_NODE", HERE.parents[1] / ".node" / "node_modules" / "onnxruntime-node"))


@functools.lru_cache(maxsize=None)
def _ort_missing():
    if shutil.which("node") is None:
        return "node is not installed (scripts/setup.sh installs it)"
    if not (ORT_DIR / "package.json").exists():
        return f"onnxruntime-node is not installed in {ORT_DIR} (scripts/setup.sh installs it)"
    probe = subprocess.run(["node", "-e", f"require({json.dumps(str(ORT_DIR))})"], capture_output=True, text=True,
                           timeout=60)
    if probe.returncode != 0:
        version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        return f"onnxruntime-node does not load in node {version}: {probe.stderr.strip().splitlines()[-1:]}"
    return None


def check_model(data):
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model, full_check=True)
    return model


def run_onnxruntime(tmp_path, data, inputs):
    """ONNX Runtime's outputs of the model `data` on {name: array}."""
    missing = _ort_missing()
    if missing:
        pytest.skip(missing)
    (tmp_path / "model.onnx").write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    feeds = []
    for name, array in inputs.items():
        file = tmp_path / f"input_{len(feeds)}.bin"
        file.write_bytes(np.ascontiguousarray(array).tobytes())
        feeds.append({"name": name, "type": str(array.dtype), "dims": list(array.shape), "file": str(file)})
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([{"model": str(tmp_path / "model.onnx"), "inputs": feeds, "out": str(out)}]))
    result = subprocess.run(["node", str(HERE / "onnxruntime_run.js"), str(ORT_DIR), str(jobs)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    types = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64, "bool": np.bool_}
    outputs = []
    for i, meta in enumerate(json.loads((out / "outputs.json").read_text())):
        array = np.frombuffer((out / f"{i}.bin").read_bytes(), dtype=types[meta["type"]])
        outputs.append(array.reshape(meta["dims"]))
    return outputs


def expect_same_outputs(tmp_path, exported, expected, inputs, atol=1e-5):
    """Checks the model, runs it on ONNX Runtime and compares with eagerflow's outputs."""
    check_model(exported)
    actual = run_onnxruntime(tmp_path, exported, inputs)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        e = np.asarray(e)
        assert a.shape == e.shape
        if e.dtype.kind in "biu":
            assert a.dtype.kind == e.dtype.kind and a.dtype.itemsize == e.dtype.itemsize
            np.testing.assert_array_equal(a, e)
        else:
            assert a.dtype == e.dtype
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=atol)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- the three models of the issue: MLP, CNN, autoencoder ----

def test_keras_mlp_gives_onnxruntime_the_same_probabilities(tmp_path):
    model = keras.Sequential([keras.Input((784,), name="pixels"), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(10, activation="softmax")])
    x = np.random.default_rng(1).random((16, 784), dtype=np.float32)
    data = ef.onnx.export(model)
    graph = check_model(data).graph
    assert [i.name for i in graph.input] == ["pixels"]
    assert graph.input[0].type.tensor_type.shape.dim[0].dim_param  # the batch size varies
    expect_same_outputs(tmp_path, data, [model(ef.constant(x)).numpy()], {"pixels": x})


def test_keras_cnn_with_batch_norm_and_both_poolings_matches(tmp_path):
    model = keras.Sequential([
        keras.Input((28, 28, 1), name="image"),
        keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(6, 3, padding="same", strides=2),
        keras.layers.BatchNormalization(),
        keras.layers.AveragePooling2D(2, padding="same"),
        keras.layers.Flatten(),
        keras.layers.Dropout(0.5),
        keras.layers.Dense(10),
    ])
    model(ef.zeros((1, 28, 28, 1)))
    gamma, beta, mean, variance = model.layers[3].variables
    mean.assign(ef.constant(randn(6, seed=2)))
    variance.assign(ef.constant(np.abs(randn(6, seed=3)) + 0.5))
    gamma.assign(ef.constant(randn(6, seed=4)))
    beta.assign(ef.constant(randn(6, seed=10)))
    x = np.random.default_rng(5).random((4, 28, 28, 1), dtype=np.float32)
    path = tmp_path / "cnn.onnx"
    assert ef.onnx.export(model, path=path) is None
    expect_same_outputs(tmp_path, path.read_bytes(), [model(ef.constant(x), training=False).numpy()], {"image": x})


def test_autoencoder_matches(tmp_path):
    model = keras.Sequential([
        keras.Input((64,), name="x"),
        keras.layers.Dense(25, activation="sigmoid"),
        keras.layers.Dense(64, activation="sigmoid"),
    ])
    x = np.random.default_rng(6).random((32, 64), dtype=np.float32)
    expect_same_outputs(tmp_path, ef.onnx.export(model, opset=13), [model(ef.constant(x)).numpy()], {"x": x})


LAYERS = {
    "layer_norm": lambda: [keras.Input((8,), name="x"), keras.layers.LayerNormalization()],
    "embedding": lambda: [keras.Input((5,), dtype=ef.int32, name="x"), keras.layers.Embedding(10, 4),
                          keras.layers.Flatten()],
    "global_pooling": lambda: [keras.Input((6, 6, 2), name="x"), keras.layers.Conv2D(3, 3, dilation_rate=2),
                               keras.layers.GlobalAveragePooling2D()],
    "depthwise": lambda: [keras.Input((6, 6, 2), name="x"), keras.layers.DepthwiseConv2D(3, padding="same")],
    "conv1d": lambda: [keras.Input((10, 3), name="x"), keras.layers.Conv1D(4, 3)],
    "lstm": lambda: [keras.Input((5, 3), name="x"), keras.layers.LSTM(4)],
    "gru": lambda: [keras.Input((5, 3), name="x"), keras.layers.GRU(4, return_sequences=True)],
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_common_keras_layers_match(tmp_path, name):
    model = keras.Sequential(LAYERS[name]())
    model._build_from_input()
    spec = model._symbolic_input
    shape = (3,) + tuple(spec.shape)[1:]
    if spec.dtype == ef.int32:
        x = np.random.default_rng(11).integers(0, 10, size=shape).astype(np.int32)
    else:
        x = randn(*shape, seed=11)
    expect_same_outputs(tmp_path, ef.onnx.export(model), [model(ef.constant(x)).numpy()], {"x": x})


# ---- ops: each exported op gives ONNX Runtime the op's own numbers ----

def test_elementwise_activations_and_reductions_match(tmp_path):
    def f(x, y):
        return [
            ef.nn.gelu(x), ef.nn.gelu(x, approximate=True), ef.nn.elu(x), ef.nn.selu(x), ef.nn.relu6(x * 4.0),
            ef.nn.leaky_relu(x, 0.3), ef.nn.softsign(x), ef.math.softplus(x), ef.nn.log_softmax(x, axis=0),
            ef.math.rsqrt(ef.abs(x) + 1.0), ef.squared_difference(x, y), ef.round(x * 3.0), ef.sign(x),
            ef.math.floormod(x * 5.0, y), ef.math.floordiv(x * 5.0, y), ef.maximum(x, y), ef.tanh(x) ** 2.0,
            ef.reduce_sum(x, axis=1), ef.reduce_max(x, axis=0, keepdims=True), ef.reduce_prod(x, axis=[0, 1]),
            ef.reduce_min(x, axis=-1), ef.math.reduce_mean(x, axis=1), ef.argmax(x, axis=1), ef.cumsum(x, axis=1),
            ef.cumsum(x, axis=0, exclusive=True, reverse=True), ef.cast(x > y, ef.float32),
            ef.reduce_any(x > 1.0, axis=1), ef.reduce_all(x > -3.0, axis=0), ef.not_equal(x, y),
            ef.math.logical_xor(x > 0.0, y > 0.0), ef.where(x > y, x, y),
        ]

    x, y = randn(3, 5, seed=7), randn(3, 5, seed=8)
    spec = ef.TensorSpec([None, 5], ef.float32)
    fn = ef.function(f, input_signature=[spec, spec])
    expected = [t.numpy() for t in fn(ef.constant(x), ef.constant(y))]
    expect_same_outputs(tmp_path, ef.onnx.export(fn), expected, {"x": x, "y": y})


def test_integer_division_and_remainder_follow_the_floor(tmp_path):
    def f(a, b):
        return [ef.math.floordiv(a, b), ef.math.floormod(a, b), ef.truncatediv(a, b), ef.truncatemod(a, b), a // b]

    a = np.array([7, -7, 7, -7, 0, 9], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, -4], dtype=np.int32)
    spec = ef.TensorSpec([6], ef.int32)
    fn = ef.function(f, input_signature=[spec, spec])
    expected = [t.numpy() for t in fn(ef.constant(a), ef.constant(b))]
    assert expected[1].tolist() == [1, 1, -1, -1, 0, -3]
    expect_same_outputs(tmp_path, ef.onnx.export(fn), expected, {"a": a, "b": b})


def test_float_floormod_takes_the_divisors_sign(tmp_path):
    fn = ef.function(lambda a, b: ef.math.floormod(a, b),
                     input_signature=[ef.TensorSpec([5], ef.float32)] * 2)
    a = np.array([5.5, -5.5, 5.5, -5.5, 3.0], dtype=np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 1.5], dtype=np.float32)
    expect_same_outputs(tmp_path, ef.onnx.export(fn), [fn(ef.constant(a), ef.constant(b)).numpy()],
                        {"a": a, "b": b})


def test_shapes_indexing_and_sorting_match(tmp_path):
    def f(x, i):
        return [
            ef.reshape(x, [-1, 2]), ef.transpose(x, [1, 0]), ef.expand_dims(x, -1), ef.squeeze(ef.expand_dims(x, 0)),
            ef.concat([x, x * 2.0], axis=1), *ef.split(x, [1, 3], axis=1), *ef.unstack(x, axis=0),
            ef.gather(x, i, axis=1), ef.gather_nd(x, ef.stack([i[:2] * 0 + 1, i[:2]], axis=1)),
            ef.slice(x, [1, 0], [-1, 3]), ef.reverse(x, [1]), ef.pad(x, [[1, 0], [2, 1]]),
            ef.pad(x, [[1, 1], [0, 2]], mode="REFLECT"), ef.tile(x, [2, 1]), ef.broadcast_to(x[:1], [3, 4]),
            ef.one_hot(i, 5, on_value=2.0, off_value=-1.0), ef.one_hot(i - 2, 3, axis=0),
            ef.math.top_k(x, 2)[0], ef.math.top_k(x, 2)[1], ef.sort(x, axis=0), ef.argsort(x, direction="DESCENDING"),
            ef.where(x > 0.0), ef.shape(x), ef.size(x), ef.ones_like(x) * 3.0, x[1:, ::2], x[:, -1], x[::-1, 1:3],
            x[..., None, 2], x[-1:-4:-2, :, None],
            x @ ef.eye(4) + ef.fill([3, 4], 0.5), ef.linspace(0.0, 1.0, 4) * x,
        ]

    x = randn(3, 4, seed=9)
    i = np.array([3, 0, 2, 1], dtype=np.int32)
    fn = ef.function(f, input_signature=[ef.TensorSpec([3, 4], ef.float32), ef.TensorSpec([4], ef.int32)])
    expected = [t.numpy() for t in fn(ef.constant(x), ef.constant(i))]
    expect_same_outputs(tmp_path, ef.onnx.export(fn), expected, {"x": x, "i": i})


def test_scatters_and_roll_match(tmp_path):
    def f(x, i):
        idx = ef.reshape(i[:2], [2, 1])
        return [ef.tensor_scatter_nd_update(x, idx, x[:2] * 10.0), ef.tensor_scatter_nd_add(x, idx, x[1:3]),
                ef.scatter_nd(ef.reshape(ef.stack([i[0], i[1], i[0]]), [3, 1]), x, [5, 4]),
                ef.roll(x, [1, -3, 2], [0, 1, 0])]

    x = randn(3, 4, seed=13)
    i = np.array([2, 0, 3, 1], dtype=np.int32)
    fn = ef.function(f, input_signature=[ef.TensorSpec([3, 4], ef.float32), ef.TensorSpec([4], ef.int32)])
    expected = [t.numpy() for t in fn(ef.constant(x), ef.constant(i))]
    expect_same_outputs(tmp_path, ef.onnx.export(fn), expected, {"x": x, "i": i})
    with pytest.raises(ef.errors.UnimplementedError, match="opset 16"):
        ef.onnx.export(fn, opset=15)


def test_image_resizing_matches(tmp_path):
    def f(x):
        return [ef.image.resize(x, [7, 3]), ef.image.resize(x, [2, 9], method="nearest"),
                ef.image.resize(x, [5, 5], method="nearest"), ef.image.resize(x, [9, 7], method="bicubic")]

    x = randn(2, 4, 5, 3, seed=12)
    fn = ef.function(f, input_signature=[ef.TensorSpec([None, 4, 5, 3], ef.float32)])
    expected = [t.numpy() for t in fn(ef.constant(x))]
    expect_same_outputs(tmp_path, ef.onnx.export(fn), expected, {"x": x})
    area = ef.function(lambda x: ef.image.resize(x, [2, 2], method="area"),
                       input_signature=[ef.TensorSpec([1, 4, 4, 1], ef.float32)])
    with pytest.raises(ef.errors.UnimplementedError, match="area"):
        ef.onnx.export(area)


def test_cond_and_while_loop_become_if_and_loop(tmp_path):
    def f(x):
        def body(total, n):
            return [total + (ef.reduce_sum(ef.abs(x)) + 1.0) * ef.cast(n, ef.float32), n + 1]

        total, steps = ef.while_loop(lambda total, n: total < 100.0, body, [ef.constant(0.0), ef.constant(0)])
        y = ef.cond(ef.reduce_sum(x) > 0.0, lambda: x * 2.0, lambda: -x)
        bounded = ef.while_loop(lambda v: v < 1e9, lambda v: [v * 2.0], [ef.reduce_max(ef.abs(x))],
                                maximum_iterations=5)
        return [total, steps, y, bounded[0]]

    fn = ef.function(f, input_signature=[ef.TensorSpec([None], ef.float32)])
    data = ef.onnx.export(fn)
    ops = {n.op_type for n in check_model(data).graph.node}
    assert {"If", "Loop"} <= ops
    for x in (np.array([1.5, 2.0, 0.25], dtype=np.float32), np.array([-1.0, 0.5], dtype=np.float32)):
        expected = [t.numpy() for t in fn(ef.constant(x))]
        expect_same_outputs(tmp_path, data, expected, {"x": x})


# ---- what export refuses ----

def test_ops_without_an_onnx_counterpart_are_refused_by_name():
    fn = ef.function(lambda x: ef.math.lgamma(x), input_signature=[ef.TensorSpec([2], ef.float32)])
    with pytest.raises(ef.errors.UnimplementedError, match="op 'lgamma'"):
        ef.onnx.export(fn)


def test_small_integer_ops_are_refused_but_their_exact_casts_export():
    summed = ef.function(lambda x: ef.reduce_sum(x), input_signature=[ef.TensorSpec([2, 2], ef.uint8)])
    with pytest.raises(ef.errors.UnimplementedError, match="op 'reduce_sum'.*uint8"):
        ef.onnx.export(summed)
    widened = ef.function(lambda x: ef.reduce_sum(ef.cast(x, ef.int32)),
                          input_signature=[ef.TensorSpec([2, 2], ef.uint8)])
    check_model(ef.onnx.export(widened))
    saturating = ef.function(lambda x: ef.cast(x, ef.uint8), input_signature=[ef.TensorSpec([2], ef.float32)])
    with pytest.raises(ef.errors.UnimplementedError, match="op 'cast'"):
        ef.onnx.export(saturating)


def test_a_function_assigning_a_variable_is_refused(tmp_path):
    v = ef.Variable(0.0)

    @ef.function(input_signature=[ef.TensorSpec([2], ef.float32)])
    def count(x):
        v.assign_add(1.0)
        return x * 2.0

    with pytest.raises(ef.errors.UnimplementedError, match="assigns"):
        ef.onnx.export(count, path=tmp_path / "count.onnx")
    assert not list(tmp_path.iterdir())


def test_a_function_needs_a_signature_and_the_opset_must_be_known():
    with pytest.raises(ValueError, match="input_signature"):
        ef.onnx.export(ef.function(lambda x: x + 1.0))
    spec = [ef.TensorSpec([2], ef.float32)]
    with pytest.raises(ef.errors.InvalidArgumentError, match="opset 18"):
        ef.onnx.export(lambda x: x + 1.0, spec, opset=18)
    data = ef.onnx.export(lambda x: x + 1.0, spec, input_names=["features"], output_names=["shifted"])
    graph = check_model(data).graph
    assert [i.name for i in graph.input] == ["features"] and [o.name for o in graph.output] == ["shifted"]
