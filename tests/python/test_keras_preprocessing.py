"""keras.layers.Rescaling, Resizing and CenterCrop against NumPy and ef.image.resize
(Keras' crop arithmetic written out), in Sequential and functional models, saved and
loaded without custom_objects."""
import numpy as np
import pytest

import eagerflow as ef
from eagerflow import keras


def test_rescaling_makes_floats():
    x = np.array([[0, 128, 255]], np.uint8)
    y = keras.layers.Rescaling(1 / 255)(x)
    assert y.dtype == ef.float32
    np.testing.assert_allclose(y.numpy(), x / 255, rtol=1e-6)
    y64 = keras.layers.Rescaling(2.0, offset=-1.0)(np.array([0.25, 0.5]))
    assert y64.dtype == ef.float64
    np.testing.assert_array_equal(y64.numpy(), [-0.5, 0.0])


@pytest.mark.parametrize("shape,target", [((2, 9, 6, 3), (4, 4)), ((1, 5, 12, 1), (3, 2)), ((7, 7, 2), (7, 3))])
def test_resizing_and_its_aspect_ratio_crop(shape, target):
    x = np.random.default_rng(0).random(shape).astype(np.float32)
    np.testing.assert_allclose(keras.layers.Resizing(*target)(x).numpy(), ef.image.resize(x, target).numpy())
    # Keras' smart_resize: the largest centred crop of the target's aspect ratio.
    height, width = shape[-3], shape[-2]
    crop_h = min(height, int(width * target[0] / target[1]))
    crop_w = min(width, int(height * target[1] / target[0]))
    top, left = (height - crop_h) // 2, (width - crop_w) // 2
    cropped = x[..., top:top + crop_h, left:left + crop_w, :]
    got = keras.layers.Resizing(*target, interpolation="bicubic", crop_to_aspect_ratio=True)(x)
    np.testing.assert_allclose(got.numpy(), ef.image.resize(cropped, target, method="bicubic").numpy(), rtol=1e-6)


def test_center_crop_and_its_resize_when_too_small():
    x = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6, 1)
    np.testing.assert_array_equal(keras.layers.CenterCrop(3, 2)(x).numpy(), x[:, 1:4, 2:4])
    small = keras.layers.CenterCrop(8, 8)(x)
    assert small.shape == (2, 8, 8, 1)
    with pytest.raises(ValueError, match="rank 3 or 4"):
        keras.layers.CenterCrop(2, 2)(np.ones((4, 4), np.float32))


def test_in_models_saved_and_loaded(tmp_path):
    inputs = keras.Input(shape=(10, 8, 3))
    x = keras.layers.Rescaling(1 / 255)(inputs)
    x = keras.layers.Resizing(6, 6, crop_to_aspect_ratio=True)(x)
    x = keras.layers.CenterCrop(4, 4)(x)
    outputs = keras.layers.Dense(2)(keras.layers.Flatten()(x))
    model = keras.Model(inputs, outputs)
    images = np.random.default_rng(1).integers(0, 256, (3, 10, 8, 3)).astype(np.float32)
    model.save(tmp_path / "model.safetensors")
    loaded = keras.load_model(tmp_path / "model.safetensors")
    np.testing.assert_allclose(loaded.predict(images), model.predict(images), rtol=1e-6)
    assert loaded.layers[2].get_config()["crop_to_aspect_ratio"] is True
    sequential = keras.Sequential([keras.layers.Rescaling(0.5), keras.layers.Resizing(2, 2, interpolation="nearest")])
    assert sequential(np.full((1, 4, 4, 1), 6, np.uint8)).numpy().ravel().tolist() == [3.0] * 4


def test_normalization_adapts_inverts_and_saves(tmp_path):
    rng = np.random.default_rng(2)
    data = rng.normal([1.0, -3.0, 10.0], [0.5, 2.0, 4.0], (200, 3)).astype(np.float32)
    norm = keras.layers.Normalization()
    norm.adapt(ef.data.Dataset.from_tensor_slices(data).batch(32))  # a Dataset of batches
    np.testing.assert_allclose(norm.mean.numpy().ravel(), data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(norm.variance.numpy().ravel(), data.var(0), rtol=1e-4)
    out = norm(data).numpy()
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(out.std(0), 1, rtol=1e-4)
    back = keras.layers.Normalization(mean=data.mean(0), variance=data.var(0), invert=True)(out)
    np.testing.assert_allclose(back.numpy(), data, rtol=1e-4, atol=1e-4)
    # Per channel of images (axis -1), and one statistic for everything (axis None).
    images = rng.random((4, 5, 5, 3)).astype(np.float32)
    per_channel = keras.layers.Normalization(axis=-1)
    per_channel.adapt(images)
    np.testing.assert_allclose(per_channel.mean.numpy().ravel(), images.mean((0, 1, 2)), rtol=1e-5)
    whole = keras.layers.Normalization(axis=None)
    whole.adapt(images)
    np.testing.assert_allclose(whole(images).numpy(), (images - images.mean()) / images.std(), rtol=1e-4,
                               atol=1e-5)
    # In a model: the statistics are (non-trainable) weights, saved with it.
    model = keras.Sequential([norm, keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(data, data[:, :1], epochs=1, verbose=0)
    np.testing.assert_allclose(norm.mean.numpy().ravel(), data.mean(0), rtol=1e-5)  # not trained
    model.save(tmp_path / "normalized.safetensors")
    loaded = keras.load_model(tmp_path / "normalized.safetensors")
    np.testing.assert_allclose(loaded.predict(data), model.predict(data), rtol=1e-6)
    # Given statistics are in the config: a layer made from it alone normalizes the same
    # (it used to drop them and normalize with mean 0 and variance 1).
    given = keras.layers.Normalization(mean=data.mean(0), variance=data.var(0), invert=True)
    again = keras.layers.Normalization.from_config(given.get_config())
    np.testing.assert_allclose(again(out).numpy(), given(out).numpy(), rtol=1e-6)
    scalar = keras.layers.Normalization(mean=2.0, variance=4.0).get_config()
    assert (scalar["mean"], scalar["variance"]) == (2.0, 4.0)
    assert "mean" not in norm.get_config()  # adapt's statistics are weights
    with pytest.raises(ValueError, match="both mean and variance"):
        keras.layers.Normalization(mean=1.0)
    with pytest.raises(ValueError, match="axis"):
        keras.layers.Normalization(axis=3)(np.ones((2, 3), np.float32))
