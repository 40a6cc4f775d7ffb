"""Keras' training API: compile / fit / evaluate / predict, callbacks, custom steps,
summary, bad input. The loop itself is C++'s (tests/cpp/nn/model_test.cpp)."""
import numpy as np
import pytest

import eagerflow as ef
from eagerflow import keras


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 1.0], np.float32) > 0).astype(np.int64)
    return x, y


def _classifier(run_eagerly=False, seed=1):
    ef.random.set_seed(seed)
    model = ef.keras.Sequential([ef.keras.layers.Dense(16, activation="relu"), ef.keras.layers.Dense(2)])
    model(ef.zeros([1, 4]))  # built now, from this seed
    model.compile(optimizer=ef.optimizers.Adam(0.01),
                  loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], run_eagerly=run_eagerly)
    return model


def test_fit_learns_and_reports_like_keras():
    x, y = _data()
    model = _classifier()
    history = model.fit(x, y, batch_size=32, epochs=15, validation_split=0.2, verbose=0, seed=3)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.epoch == list(range(15))
    assert history.history["accuracy"][-1] > 0.9 and history.history["val_accuracy"][-1] > 0.85
    loss, accuracy = model.evaluate(x, y)
    assert accuracy > 0.9
    assert model.evaluate(x, y, return_dict=True) == {"loss": loss, "accuracy": accuracy}
    probabilities = ef.nn.softmax(model.predict(x, batch_size=50)).numpy()
    assert probabilities.shape == (200, 2)
    assert (probabilities.argmax(1) == y).mean() == pytest.approx(accuracy)


def test_validation_split_holds_out_what_keras_holds_out():
    # Keras trains on the first floor(n * (1 - split)) examples: 71 of 100 for 0.29, where
    # n - floor(n * split) would give 72 (100 * 0.29 is 28.999...).
    x, y = _data(100)
    steps = []
    counter = ef.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: steps.append(batch))
    _classifier().fit(x, y, batch_size=1, epochs=1, validation_split=0.29, verbose=0, callbacks=[counter])
    assert len(steps) == 71


def test_a_traced_fit_matches_an_eager_fit():
    x, y = _data(64)
    traced, eager = _classifier(False), _classifier(True)
    h1 = traced.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    h2 = eager.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(h1.history["loss"], h2.history["loss"], rtol=1e-5)
    for a, b in zip(traced.variables, eager.variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert int(traced.optimizer.iterations) == 12


def test_datasets_weights_and_single_batches():
    x, y = _data(96)
    model = _classifier()
    ds = ef.data.Dataset.from_tensor_slices((x, y)).batch(32)
    history = model.fit(ds, epochs=2, validation_data=ds, verbose=0)
    assert len(history.history["val_loss"]) == 2
    # Weights of zero for one class: its examples stop counting in the loss.
    only_ones = model.evaluate(x[y == 1], y[y == 1], return_dict=True)["loss"]
    weighted = model.test_on_batch(x, y, sample_weight=(y == 1).astype(np.float32), return_dict=True)["loss"]
    assert weighted == pytest.approx(only_ones * (y == 1).mean(), rel=1e-5)
    model.fit(x, y, epochs=1, class_weight={0: 0.5, 1: 2.0}, verbose=0)
    before = model.test_on_batch(x, y)[0]
    for _ in range(5):
        model.train_on_batch(x, y)
    assert model.test_on_batch(x, y)[0] < before


def test_only_weighted_metrics_see_sample_and_class_weights(tmp_path):
    # Keras: `metrics` ignore sample_weight and class_weight; `weighted_metrics` use them,
    # named "weighted_<name>" where a metric has the name.
    x, y = _data(64)
    model = _classifier()
    model.compile(optimizer=ef.optimizers.SGD(0.0),  # fit leaves the model as it is
                  loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], weighted_metrics=["accuracy", "sparse_top_k_categorical_accuracy"])
    assert model.metrics_names == ["loss", "accuracy", "weighted_accuracy", "sparse_top_k_categorical_accuracy"]
    correct = (model.predict(x).numpy().argmax(axis=1) == y).astype(np.float64)
    weights = np.where(y == 1, 3.0, 0.5).astype(np.float32)
    logs = model.evaluate(x, y, sample_weight=weights, return_dict=True, verbose=0)
    assert logs["accuracy"] == pytest.approx(correct.mean(), rel=1e-6)
    assert logs["weighted_accuracy"] == pytest.approx((correct * weights).sum() / weights.sum(), rel=1e-6)
    assert logs["sparse_top_k_categorical_accuracy"] == pytest.approx(1.0)  # top 5 of 2 classes
    # class_weight reaches the weighted metrics only.
    history = model.fit(x, y, batch_size=64, class_weight={0: 0.5, 1: 3.0}, shuffle=False, verbose=0).history
    assert history["accuracy"][0] == pytest.approx(correct.mean(), rel=1e-6)
    assert history["weighted_accuracy"][0] == pytest.approx((correct * weights).sum() / weights.sum(), rel=1e-6)
    # Saved and loaded, the weighted metrics stay weighted.
    model.save(tmp_path / "weighted.keras")
    loaded = ef.keras.models.load_model(tmp_path / "weighted.keras")
    assert loaded.metrics_names == model.metrics_names
    again = loaded.evaluate(x, y, sample_weight=weights, return_dict=True, verbose=0)
    assert again == pytest.approx(logs, rel=1e-6)


def test_weighted_metrics_per_output():
    first = ef.keras.Input(shape=(3,), name="first")
    h = ef.keras.layers.Dense(4, name="h")(first)
    model = ef.keras.Model(first, [ef.keras.layers.Dense(2, name="a")(h), ef.keras.layers.Dense(1, name="b")(h)])
    model.compile(optimizer="sgd", loss="mse", metrics={"b": ["mae"]}, weighted_metrics=["mae"])
    assert model.metrics_names == ["loss", "a_loss", "b_loss", "b_mae", "a_mae", "b_weighted_mae"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    ya, yb = rng.standard_normal((8, 2)).astype(np.float32), rng.standard_normal((8, 1)).astype(np.float32)
    weights = np.arange(8, dtype=np.float32)
    pa, pb = (p.numpy() for p in model.predict(x))
    logs = model.evaluate(x, [ya, yb], sample_weight=weights, return_dict=True, verbose=0)
    assert logs["b_mae"] == pytest.approx(np.abs(pb - yb).mean(), rel=1e-5)
    assert logs["b_weighted_mae"] == pytest.approx((np.abs(pb - yb)[:, 0] * weights).sum() / weights.sum(),
                                                   rel=1e-5)
    assert logs["a_mae"] == pytest.approx((np.abs(pa - ya).mean(axis=1) * weights).sum() / weights.sum(),
                                          rel=1e-5)


def test_callbacks_python_and_builtin(tmp_path):
    x, y = _data(64)
    model = _classifier()
    seen = []

    class StopAtTwo(ef.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["epoch_squared"] = float(epoch * epoch)  # reaches History
            seen.append(sorted(logs))
            if epoch == 2:
                self.model.stop_training = True

    batches = []
    history = model.fit(
        x, y, epochs=10, verbose=0, validation_split=0.25,
        callbacks=[ef.keras.callbacks.LambdaCallback(on_batch_end=lambda b, logs: batches.append(logs["loss"])),
                   ef.keras.callbacks.LearningRateScheduler(lambda epoch: 0.01 / (epoch + 1)),
                   ef.keras.callbacks.CSVLogger(tmp_path / "log.csv"),
                   ef.keras.callbacks.ModelCheckpoint(tmp_path / "best.safetensors", monitor="val_loss",
                                                      save_best_only=True),
                   StopAtTwo()])
    assert history.epoch == [0, 1, 2] and history.history["epoch_squared"] == [0.0, 1.0, 4.0]
    assert len(batches) == 3 * 2  # 48 training examples in batches of 32
    assert history.history["learning_rate"] == pytest.approx([0.01, 0.005, 0.01 / 3])
    assert model.optimizer.learning_rate == pytest.approx(0.01 / 3)
    rows = (tmp_path / "log.csv").read_text().splitlines()
    assert rows[0].split(",")[0] == "epoch" and len(rows) == 4
    assert (tmp_path / "best.safetensors").exists()


def test_early_stopping_restores_the_best_weights():
    x, y = _data(64)
    model = _classifier()
    model.optimizer.learning_rate = 3.0  # diverges
    stop = ef.keras.callbacks.EarlyStopping(monitor="loss", patience=1, restore_best_weights=True)
    history = model.fit(x, y, epochs=40, batch_size=64, callbacks=[stop], verbose=0)
    losses = history.history["loss"]
    assert len(losses) < 40 and stop.stopped_epoch == len(losses) - 1
    assert losses[stop.best_epoch] == min(losses)


def test_custom_train_step_and_subclassed_models():
    class Linear(ef.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = ef.keras.layers.Dense(1)

        def call(self, inputs):
            return self.dense(inputs)

        def train_step(self, data):
            x, y = data
            with ef.GradientTape() as tape:
                loss = self.compute_loss(y, self(x, training=True))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss, "doubled": loss * 2.0}

    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-1.0], [2.0]], np.float32)
    model = Linear()
    model.compile(optimizer=ef.optimizers.SGD(0.1), loss="mse")
    history = model.fit(x, y, epochs=20, batch_size=16, verbose=0)
    assert history.history["doubled"][-1] == pytest.approx(2 * history.history["loss"][-1])
    assert history.history["loss"][-1] < 1e-3
    # A Python loss function, and a model stepped eagerly.
    model.compile(optimizer="sgd", loss=lambda y_true, y_pred: ef.reduce_mean(ef.abs(y_true - y_pred), axis=-1),
                  run_eagerly=True)
    assert model.evaluate(x, y) < 0.1


def test_summary_prints_the_table(capsys):
    model = _classifier()
    model.summary()
    out = capsys.readouterr().out
    assert "dense (Dense)" in out and "[?, 16]" in out and "Total params: 114" in out


def test_bad_input_gets_clear_errors():
    x, y = _data(20)
    model = ef.keras.Sequential([ef.keras.layers.Dense(2)])
    with pytest.raises(ef.errors.FailedPreconditionError, match="not compiled"):
        model.fit(x, y, verbose=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="unknown optimizer 'adamm'"):
        model.compile(optimizer="adamm", loss="mse")
    with pytest.raises(ef.errors.InvalidArgumentError, match="unknown loss"):
        model.compile(optimizer="adam", loss="hinge_like")
    model.compile(optimizer="adam", loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(ef.errors.InvalidArgumentError, match="20 examples.*has 10"):
        model.fit(x, y[:10], verbose=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="no 'val_loss'"):
        model.fit(x, y, verbose=0, callbacks=[ef.keras.callbacks.EarlyStopping()])
    with pytest.raises(ef.errors.InvalidArgumentError, match="class id|out of range|\\[0, 2\\)"):
        model.fit(x, y + 5, verbose=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="schedule"):
        ef.optimizers.SGD(ef.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)).learning_rate = 0.01


def _run_example(name, *flags):
    import os
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).parents[2]
    run = subprocess.run([sys.executable, str(root / "examples/python" / name), *flags], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=300)
    if run.returncode == 77:
        pytest.skip("Fashion-MNIST is not installed")
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_the_keras_example_restores_its_best_epoch(tmp_path):
    out = _run_example("fashion_mnist_keras.py", "--epochs", "2", "--train-examples", "1000",
                       "--checkpoint-dir", str(tmp_path))
    assert "(the same)" in out and "Total params: 203530" in out and "load_model" in out
    # The exported saved model classifies the test set in C++ alone, as well as in Python.
    import pathlib
    import re
    import subprocess
    python_accuracy = re.search(r"saved model .*: test accuracy ([0-9.]+)", out).group(1)
    classify = pathlib.Path(ef.__file__).parents[2] / "examples" / "classify_saved_model"
    if not classify.exists():
        pytest.skip(f"{classify} is not built")
    run = subprocess.run([str(classify), str(tmp_path / "saved_model")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.search(r"test accuracy ([0-9.]+)", run.stdout).group(1) == python_accuracy


def test_the_lstm_example_learns():
    import re
    out = _run_example("fashion_mnist_lstm.py", "--epochs", "1", "--train-examples", "2000", "--learning-rate", "0.003")
    assert float(re.search(r"test accuracy ([0-9.]+)", out).group(1)) > 0.5


def test_the_transformer_example_learns():
    import re
    out = _run_example("fashion_mnist_transformer.py", "--epochs", "1", "--train-examples", "2000",
                       "--learning-rate", "0.003")
    assert "multi_head_attention" in out and "position_embedding" in out
    assert float(re.search(r"test accuracy ([0-9.]+)", out).group(1)) > 0.5


def test_more_metrics_against_numpy():
    rng = np.random.default_rng(5)
    scores = rng.standard_normal((50, 6))
    labels = rng.integers(0, 6, 50)
    top3 = keras.metrics.SparseTopKCategoricalAccuracy(k=3)
    top3.update_state(labels, scores)
    ranks = (scores > scores[np.arange(50), labels][:, None]).sum(1)
    assert float(top3.result()) == pytest.approx((ranks < 3).mean())
    onehot = keras.metrics.TopKCategoricalAccuracy(k=1)
    onehot.update_state(np.eye(6)[labels], scores)
    assert float(onehot.result()) == pytest.approx((scores.argmax(1) == labels).mean())
    y, p = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    mse, mae = keras.metrics.MeanSquaredError(), keras.metrics.MeanAbsoluteError()
    mse.update_state(y, p)
    mae.update_state(y, p)
    assert float(mse.result()) == pytest.approx(((y - p) ** 2).mean(), rel=1e-6)
    assert float(mae.result()) == pytest.approx(np.abs(y - p).mean(), rel=1e-6)
    with pytest.raises(ef.errors.InvalidArgumentError, match="k must be positive"):
        keras.metrics.TopKCategoricalAccuracy(k=0)
    # By name in compile, reported under that name.
    x, yy = _data(64)
    model = _classifier()
    model.compile(optimizer="adam", loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["sparse_top_k_categorical_accuracy"])
    assert "sparse_top_k_categorical_accuracy" in model.fit(x, yy, verbose=0).history


def test_rmse_by_name_is_the_root_of_mse():
    x = np.random.default_rng(0).standard_normal((32, 3)).astype(np.float32)
    y = x.sum(1, keepdims=True)
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=["rmse", "mse"])
    logs = model.evaluate(x, y, batch_size=32, return_dict=True)
    assert logs["rmse"] == pytest.approx(np.sqrt(logs["mse"]), rel=1e-5)
