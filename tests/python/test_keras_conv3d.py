"""keras.layers.Conv3D against torch.nn.functional.conv3d with the same weights, trained
in a Sequential model, saved and loaded, and its argument errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import eagerflow as ef
from eagerflow import keras


@pytest.mark.parametrize("padding,strides,dilation", [("valid", 1, 1), ("same", (1, 2, 2), 1), ("valid", 1, (2, 1, 1))])
def test_conv3d_matches_torch(padding, strides, dilation):
    x = np.random.default_rng(0).standard_normal((2, 6, 7, 8, 3)).astype(np.float32)
    layer = keras.layers.Conv3D(5, (3, 2, 3), strides=strides, padding=padding, dilation_rate=dilation,
                                activation="relu", bias_initializer="ones")
    y = layer(x).numpy()
    nc = torch.tensor(x).permute(0, 4, 1, 2, 3)
    s = (strides,) * 3 if isinstance(strides, int) else strides
    d = (dilation,) * 3 if isinstance(dilation, int) else dilation
    if padding == "same":  # TensorFlow's split, the smaller half first
        pads = []
        for size, stride, dil, k in reversed(list(zip(x.shape[1:4], s, d, (3, 2, 3)))):
            total = max((-(-size // stride) - 1) * stride + (k - 1) * dil + 1 - size, 0)
            pads += [total // 2, total - total // 2]
        nc = F.pad(nc, pads)
    kernel = torch.tensor(layer.kernel.numpy()).permute(4, 3, 0, 1, 2)
    expected = F.relu(F.conv3d(nc, kernel, torch.ones(5), stride=s, dilation=d)).permute(0, 2, 3, 4, 1)
    np.testing.assert_allclose(y, expected.numpy(), rtol=1e-5, atol=1e-5)


def test_conv3d_trains_saves_and_loads(tmp_path):
    ef.random.set_seed(3)
    model = keras.Sequential([keras.layers.Conv3D(4, 3, activation="relu"), keras.layers.Flatten(),
                              keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(1).standard_normal((8, 4, 5, 5, 2)).astype(np.float32)
    y = x.mean(axis=(1, 2, 3, 4))[:, None]
    history = model.fit(x, y, epochs=5, batch_size=4, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    model.save(tmp_path / "volumes.safetensors")
    loaded = keras.load_model(tmp_path / "volumes.safetensors")
    np.testing.assert_allclose(loaded.predict(x), model.predict(x), rtol=1e-6)


def test_conv3d_bad_arguments():
    with pytest.raises(ValueError, match="kernel_size"):
        keras.layers.Conv3D(2, (3, 3))
    with pytest.raises(ValueError, match="padding"):
        keras.layers.Conv3D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="Conv3D"):
        keras.layers.Conv3D(2, 3)(np.ones((2, 4, 4, 3), np.float32))
