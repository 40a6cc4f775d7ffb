"""ef.saved_model: save and load Modules, ef.functions and Keras models; loaded models
give the same numbers, train, and come back in a fresh process without the code."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import eagerflow as ef


class Scaler(ef.Module):
    def __init__(self):
        super().__init__()
        self.w = ef.Variable([2.0, 3.0], name="w")

    @ef.function(input_signature=[ef.TensorSpec([None, 2], ef.float32, name="x")])
    def __call__(self, x):
        return {"scaled": x * self.w, "total": ef.reduce_sum(x * self.w)}

    @ef.function(input_signature=[ef.TensorSpec([], ef.int32)])
    def collatz(self, n):
        steps = ef.constant(0)
        while n > 1:
            n = ef.cond(ef.equal(n % 2, 0), lambda: n // 2, lambda: 3 * n + 1)
            steps += 1
        return steps


def test_a_module_round_trips_with_its_functions_and_signature(tmp_path):
    m = Scaler()
    ef.saved_model.save(m, tmp_path / "scaler")
    loaded = ef.saved_model.load(tmp_path / "scaler")
    x = ef.constant([[1.0, 1.0], [2.0, -1.0]])
    out = loaded(x)
    np.testing.assert_array_equal(out["scaled"].numpy(), m(x)["scaled"].numpy())
    assert out["total"].numpy() == pytest.approx(6.0)
    assert int(loaded.collatz(27).numpy()) == 111
    sig = loaded.signatures["serving_default"]
    assert sorted(sig(x=x)) == ["scaled", "total"]
    np.testing.assert_array_equal(sig(x=x)["scaled"].numpy(), out["scaled"].numpy())
    assert [v.name for v in loaded.variables] == ["w"]
    with pytest.raises(TypeError, match="missing"):
        sig(y=x)


def test_loaded_variables_train_with_a_tape(tmp_path):
    m = Scaler()
    ef.saved_model.save(m, tmp_path / "m")
    loaded = ef.saved_model.load(tmp_path / "m")
    x = ef.constant([[1.0, 2.0]])
    with ef.GradientTape() as tape:
        loss = loaded(x)["total"]
    (grad,) = tape.gradient(loss, loaded.trainable_variables)
    np.testing.assert_allclose(grad.numpy(), [1.0, 2.0])
    ef.optimizers.SGD(1.0).apply_gradients([(grad, loaded.trainable_variables[0])])
    np.testing.assert_allclose(loaded(x)["total"].numpy(), 8.0 - 5.0)
    np.testing.assert_allclose(m.w.numpy(), [2.0, 3.0])  # the original is untouched


def test_a_keras_model_exports_serving_default_named_after_its_inputs(tmp_path):
    inputs = ef.keras.Input(shape=(4,), name="features")
    hidden = ef.keras.layers.Dense(8, activation="relu")(inputs)
    outputs = ef.keras.layers.Dense(3, activation="softmax", name="probs")(hidden)
    model = ef.keras.Model(inputs, outputs)
    model.export(tmp_path / "keras")
    loaded = ef.saved_model.load(tmp_path / "keras")
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_array_equal(loaded.signatures["serving_default"](features=x)["probs"].numpy(),
                                  model(x).numpy())
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    assert len(loaded.variables) == 4


def test_a_sequential_model_exports_too(tmp_path):
    # Sequential was not a keras.Model to isinstance, so export refused it.
    model = ef.keras.Sequential([ef.keras.Input((4,), name="x"), ef.keras.layers.Dense(2)])
    assert isinstance(model, ef.keras.Model)
    model.export(tmp_path / "sequential")
    x = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_array_equal(ef.saved_model.load(tmp_path / "sequential")(x).numpy(), model(x).numpy())


def test_a_saved_model_loads_in_a_fresh_process_without_the_code(tmp_path):
    m = Scaler()
    ef.saved_model.save(m, tmp_path / "m")
    script = textwrap.dedent(f"""
        import eagerflow as ef
        loaded = ef.saved_model.load({str(tmp_path / 'm')!r})
        print(loaded(ef.constant([[1.0, 1.0]]))["total"].numpy(), int(loaded.collatz(6).numpy()))
    """)
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.split() == ["5.0", "8"]


def test_functions_without_an_input_signature_and_damaged_files_are_refused(tmp_path):
    f = ef.function(lambda x: x + 1.0)
    with pytest.raises(ValueError, match="input_signature"):
        ef.saved_model.save(f, tmp_path / "f")
    ef.saved_model.save(f.get_concrete_function(ef.TensorSpec([2], ef.float32)), tmp_path / "f")
    np.testing.assert_array_equal(ef.saved_model.load(tmp_path / "f")(ef.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    graph = tmp_path / "f" / "saved_model.pb"
    graph.write_bytes(graph.read_bytes()[:-3])
    with pytest.raises(ef.errors.DataLossError, match="saved_model.pb"):
        ef.saved_model.load(tmp_path / "f")
    with pytest.raises(ef.errors.NotFoundError):
        ef.saved_model.load(tmp_path / "missing")


def test_eagerflow_run_runs_a_saved_model_on_npy_files(tmp_path):
    import pathlib
    runner = pathlib.Path(ef.__file__).parents[2] / "eagerflow-run"
    if not runner.exists():
        pytest.skip(f"{runner} is not built")
    m = Scaler()
    ef.saved_model.save(m, tmp_path / "m")
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.save(tmp_path / "x.npy", x)
    run = subprocess.run([str(runner), str(tmp_path / "m"), "--input", f"x={tmp_path / 'x.npy'}", "--output",
                          str(tmp_path / "out.npz")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(out["scaled"], m(x)["scaled"].numpy())
    assert out["total"] == pytest.approx(26.0)
    listing = subprocess.run([str(runner), str(tmp_path / "m"), "--list"], capture_output=True, text=True).stdout
    assert "signature serving_default" in listing and "input  x: float32[?, 2]" in listing
    bad = subprocess.run([str(runner), str(tmp_path / "m"), "--input", f"y={tmp_path / 'x.npy'}"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "needs --input x=" in bad.stderr
