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
