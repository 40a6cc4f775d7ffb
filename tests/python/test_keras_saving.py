"""get_config / from_config, model.save / load_model, save_weights / load_weights."""
import numpy as np
import pytest

import eagerflow as ef
from eagerflow import keras


class Scale(keras.layers.Layer):
    def __init__(self, factor=2.0, name=None):
        super().__init__(name=name)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def _model():
    ef.random.set_seed(4)
    model = keras.Sequential([keras.layers.Conv2D(3, 3, activation="relu"), keras.layers.BatchNormalization(),
                              keras.layers.MaxPooling2D(), keras.layers.Flatten(), Scale(0.5, name="half"),
                              keras.layers.Dropout(0.2), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(0).standard_normal((4, 8, 8, 1)).astype(np.float32)
    model.fit(x, np.zeros((4, 2), np.float32), epochs=2, verbose=0)  # weights and moving statistics move
    return model, x


def test_save_and_load_model_give_the_same_predictions(tmp_path):
    model, x = _model()
    path = tmp_path / "model.safetensors"
    model.save(path)
    with pytest.raises(ef.errors.NotFoundError, match='unknown layer class "Scale"'):
        keras.load_model(path)  # a custom layer needs its class
    loaded = keras.load_model(path, custom_objects={"Scale": Scale})
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    assert loaded.layers[4].factor == 0.5
    loaded.compile(optimizer="adam", loss="mse")  # and it trains on
    loaded.fit(x, np.zeros((4, 2), np.float32), verbose=0)


def test_registered_classes_load_without_custom_objects(tmp_path):
    @keras.saving.register_keras_serializable()
    class Shift(keras.layers.Layer):
        def __init__(self, by=1.0, name=None):
            super().__init__(name=name)
            self.by = by

        def call(self, x):
            return x + self.by

        def get_config(self):
            return {**super().get_config(), "by": self.by}

    model = keras.Sequential([keras.layers.Dense(2), Shift(3.0)])
    x = np.ones((1, 2), np.float32)
    y = model(x).numpy()
    model.save(tmp_path / "m.safetensors")
    np.testing.assert_array_equal(keras.load_model(tmp_path / "m.safetensors")(x).numpy(), y)


def test_configs_round_trip_for_the_built_in_layers():
    layers = [keras.layers.Dense(4, activation="tanh", use_bias=False,
                                 kernel_initializer=keras.initializers.RandomNormal(0.0, 0.1, seed=3)),
              keras.layers.Conv2D(8, (3, 2), strides=(2, 1), padding="same"),
              keras.layers.Dropout(0.3, seed=1), keras.layers.Embedding(20, 5), keras.layers.LayerNormalization(),
              keras.layers.BatchNormalization(momentum=0.9), keras.layers.MaxPooling2D(3),
              keras.layers.AveragePooling2D(2, strides=1), keras.layers.Flatten()]
    for layer in layers:
        config = layer.get_config()
        again = type(layer).from_config(config)
        assert type(again) is type(layer) and again.get_config() == config
    assert layers[0].get_config()["kernel_initializer"] == {
        "class_name": "random_normal", "config": {"mean": 0.0, "stddev": 0.1, "seed": 3}}


def test_weights_alone_for_any_model(tmp_path):
    class TwoLayers(keras.Model):
        def __init__(self):
            super().__init__()
            self.a, self.b = keras.layers.Dense(3), keras.layers.Dense(1)

        def call(self, x):
            return self.b(self.a(x))

    x = np.ones((2, 4), np.float32)
    model, other = TwoLayers(), TwoLayers()
    model(x), other(x)
    model.save_weights(tmp_path / "w.safetensors")
    other.load_weights(tmp_path / "w.safetensors")
    np.testing.assert_array_equal(other(x).numpy(), model(x).numpy())
    with pytest.raises(ef.errors.InvalidArgumentError, match="subclassed model"):
        model.save(tmp_path / "whole.safetensors")


def test_damaged_or_foreign_files_are_refused(tmp_path):
    model, _ = _model()
    path = tmp_path / "model.safetensors"
    model.save(path)
    blob = bytearray(path.read_bytes())
    at = blob.index(b"factor")  # inside the architecture, in the header's metadata
    blob[at + 1] ^= 0x01
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(bytes(blob))
    with pytest.raises(ef.errors.DataLossError, match="metadata's checksum"):
        keras.load_model(damaged, custom_objects={"Scale": Scale})
    model.save_weights(tmp_path / "weights.safetensors")
    with pytest.raises(ef.errors.InvalidArgumentError, match="not a model file"):
        keras.load_model(tmp_path / "weights.safetensors")


def test_a_function_named_like_a_builtin_activation_never_loads_as_the_builtin(tmp_path):
    def relu(x):  # the user's own "relu": not ef.nn.relu
        return x * 2.0

    x = np.array([[-1.0, 2.0]], np.float32)
    ef.random.set_seed(0)
    own = ef.keras.Sequential([ef.keras.layers.Dense(2, activation=relu, kernel_initializer="ones")])
    np.testing.assert_allclose(own(x).numpy(), [[2.0, 2.0]])  # (-1 + 2) * 2, not relu's 1
    path = str(tmp_path / "own.keras")
    own.save(path)
    with pytest.raises(Exception, match="custom_relu"):
        ef.keras.models.load_model(path)  # loudly, never as the built-in relu
    builtin = ef.keras.Sequential([ef.keras.layers.Dense(2, activation=ef.nn.relu, kernel_initializer="ones")])
    builtin(x)
    builtin.save(str(tmp_path / "builtin.keras"))
    loaded = ef.keras.models.load_model(str(tmp_path / "builtin.keras"))
    np.testing.assert_allclose(loaded(x).numpy(), builtin(x).numpy())


def test_a_compiled_model_loads_compiled_and_trains_on_exactly(tmp_path):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    ef.random.set_seed(1)
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=ef.optimizers.Adam(0.01, clipnorm=1.0), loss=keras.losses.Huber(delta=0.5),
                  metrics=["accuracy", keras.metrics.AUC(num_thresholds=50, name="auc"),
                           keras.metrics.Precision(thresholds=[0.3])])
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    model.save(tmp_path / "m.keras")
    loaded = keras.load_model(tmp_path / "m.keras")
    assert loaded.metrics_names == model.metrics_names == ["loss", "accuracy", "auc", "precision"]
    assert int(loaded.optimizer.iterations.numpy()) == 8
    assert type(loaded.optimizer) is type(model.optimizer) and loaded.optimizer is not model.optimizer
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    assert model.optimizer.get_config()["clipnorm"] == 1.0
    # compile=False: the architecture and weights only.
    bare = keras.load_model(tmp_path / "m.keras", compile=False)
    assert bare.optimizer is None
    np.testing.assert_array_equal(bare.predict(x).numpy(), loaded.predict(x).numpy())
    # Continuing gives the same numbers as the model that never left memory (Adam's
    # moments and step counts came back with it).
    again = model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0).history
    resumed = loaded.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0).history
    assert again.keys() == resumed.keys()
    for key in again:
        np.testing.assert_allclose(resumed[key], again[key], rtol=1e-6)
    for a, b in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_several_outputs_keep_their_losses_and_metrics(tmp_path):
    first = keras.Input(shape=(3,), name="first")
    h = keras.layers.Dense(4, name="h")(first)
    model = keras.Model(first, [keras.layers.Dense(2, name="a")(h), keras.layers.Dense(1, name="b")(h)])
    model.compile(optimizer="sgd", loss=["mse", "mae"], loss_weights=[0.5, 2.0], metrics={"b": ["mae"]})
    x, ya, yb = np.ones((8, 3), np.float32), np.zeros((8, 2), np.float32), np.ones((8, 1), np.float32)
    model.fit(x, [ya, yb], verbose=0)
    model.save(tmp_path / "two.keras")
    loaded = keras.load_model(tmp_path / "two.keras")
    assert loaded.metrics_names == model.metrics_names == ["loss", "a_loss", "b_loss", "b_mae"]
    assert loaded.evaluate(x, [ya, yb]) == pytest.approx(model.evaluate(x, [ya, yb]), rel=1e-6)


def test_compile_settings_that_cannot_be_made_again_leave_the_model_uncompiled(tmp_path):
    x, y = np.ones((4, 2), np.float32), np.zeros((4, 1), np.float32)
    model = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss=lambda t, p: ef.reduce_mean(ef.square(t - p), axis=-1))
    model.fit(x, y, verbose=0)
    model.save(tmp_path / "f.keras")
    loaded = keras.load_model(tmp_path / "f.keras")
    assert loaded.optimizer is None
    np.testing.assert_array_equal(loaded.predict(x).numpy(), model.predict(x).numpy())
    with pytest.raises(ef.errors.FailedPreconditionError, match="not compiled"):
        loaded.fit(x, y, verbose=0)


def test_a_sequential_begun_with_an_input_saves_before_its_first_call(tmp_path):
    model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2)])
    model.save(tmp_path / "s.keras")
    loaded = keras.load_model(tmp_path / "s.keras")
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
