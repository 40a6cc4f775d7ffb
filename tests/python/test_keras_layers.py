"""The layers without weights against PyTorch (outputs and input gradients), their
configs, and their bad-input errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import eagerflow as ef
from eagerflow import keras

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 5, 6, 3)).astype(np.float64)   # NHWC
X3 = RNG.standard_normal((2, 7, 4)).astype(np.float64)      # batch, steps, channels
X2 = RNG.standard_normal((3, 4)).astype(np.float64)


def nchw(t):
    return t.permute(0, 3, 1, 2)


def nhwc(t):
    return t.permute(0, 2, 3, 1)


CASES = [
    ("relu_capped", lambda: keras.layers.ReLU(max_value=0.5, negative_slope=0.1, threshold=-0.2), X2,
     lambda t: torch.clamp(torch.where(t >= -0.2, t, 0.1 * (t + 0.2)), max=0.5)),
    ("leaky_relu", lambda: keras.layers.LeakyReLU(0.2), X2, lambda t: F.leaky_relu(t, 0.2)),
    ("elu", lambda: keras.layers.ELU(0.7), X2, lambda t: F.elu(t, 0.7)),
    ("softmax", lambda: keras.layers.Softmax(axis=1), X3, lambda t: torch.softmax(t, 1)),
    ("activation", lambda: keras.layers.Activation("tanh"), X2, torch.tanh),
    ("reshape", lambda: keras.layers.Reshape((4, -1)), X3, lambda t: t.reshape(2, 4, -1)),
    ("permute", lambda: keras.layers.Permute((2, 1)), X3, lambda t: t.permute(0, 2, 1)),
    ("repeat_vector", lambda: keras.layers.RepeatVector(3), X2, lambda t: t.unsqueeze(1).expand(3, 3, 4)),
    ("global_avg_1d", lambda: keras.layers.GlobalAveragePooling1D(), X3, lambda t: t.mean(1)),
    ("global_max_1d", lambda: keras.layers.GlobalMaxPooling1D(keepdims=True), X3, lambda t: t.amax(1, keepdim=True)),
    ("global_avg_2d", lambda: keras.layers.GlobalAveragePooling2D(), X4, lambda t: t.mean((1, 2))),
    ("global_max_2d", lambda: keras.layers.GlobalMaxPooling2D(), X4, lambda t: t.amax((1, 2))),
    ("zero_padding", lambda: keras.layers.ZeroPadding2D(((1, 2), (0, 3))), X4,
     lambda t: nhwc(F.pad(nchw(t), (0, 3, 1, 2)))),
    ("cropping", lambda: keras.layers.Cropping2D(((1, 0), (2, 1))), X4, lambda t: t[:, 1:, 2:-1, :]),
    ("upsampling", lambda: keras.layers.UpSampling2D((2, 3)), X4,
     lambda t: nhwc(F.interpolate(nchw(t), scale_factor=(2, 3), mode="nearest"))),
]


@pytest.mark.parametrize("name,make,x,reference", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch_forward_and_backward(name, make, x, reference):
    layer = make()
    xe = ef.constant(x)
    with ef.GradientTape() as tape:
        tape.watch(xe)
        y = layer(xe)
        weights = ef.constant(RNG.standard_normal(tuple(y.shape)))
        loss = ef.reduce_sum(y * weights)
    xt = torch.tensor(x, requires_grad=True)
    yt = reference(xt)
    (yt * torch.tensor(weights.numpy())).sum().backward()
    np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tape.gradient(loss, xe).numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    # The config makes the same layer again.
    again = ef._core.keras._layer_from_config(layer._class_name, layer.get_config())
    assert again.get_config() == layer.get_config()
    np.testing.assert_array_equal(again(xe).numpy(), y.numpy())


def test_gaussian_noise_only_while_training():
    layer = keras.layers.GaussianNoise(0.5, seed=3)
    x = ef.zeros([2000])
    assert np.all(layer(x).numpy() == 0)
    noise = layer(x, training=True).numpy()
    assert abs(noise.std() - 0.5) < 0.03 and abs(noise.mean()) < 0.03
    assert not np.array_equal(noise, layer(x, training=True).numpy())  # a new draw each call


def test_the_new_layers_train_and_save(tmp_path):
    model = keras.Sequential([keras.layers.ZeroPadding2D(1), keras.layers.Conv2D(4, 3), keras.layers.LeakyReLU(),
                              keras.layers.UpSampling2D(), keras.layers.Cropping2D(1),
                              keras.layers.GlobalAveragePooling2D(), keras.layers.RepeatVector(2),
                              keras.layers.Reshape((8,)), keras.layers.Dense(3), keras.layers.Softmax()])
    model.compile(optimizer="adam", loss="mse")
    x = RNG.standard_normal((4, 6, 6, 1)).astype(np.float32)
    model.fit(x, np.full((4, 3), 1 / 3, np.float32), epochs=2, verbose=0)
    model.save(tmp_path / "m.safetensors")
    np.testing.assert_array_equal(keras.load_model(tmp_path / "m.safetensors").predict(x), model.predict(x))


def test_bad_arguments_and_inputs():
    with pytest.raises(ef.errors.InvalidArgumentError, match="at most one dimension"):
        keras.layers.Reshape((-1, -1))
    with pytest.raises(ef.errors.InvalidArgumentError, match="permutation of 1..2"):
        keras.layers.Permute((0, 1))
    with pytest.raises(ef.errors.InvalidArgumentError, match="rank 4"):
        keras.layers.GlobalAveragePooling2D()(ef.zeros([2, 3]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="leaves nothing"):
        keras.layers.Cropping2D(3)(ef.zeros([1, 4, 4, 1]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="reshape"):
        keras.layers.Reshape((5,))(ef.zeros([2, 4]))


# ---- Recurrent layers against torch.nn.RNN / LSTM / GRU (Keras' weight layout) ----

def _torch_gates(keras_matrix, order, units):
    """Keras' [.., k * units] columns regrouped in PyTorch's gate order, as [k * units, ..]."""
    blocks = [keras_matrix[..., g * units:(g + 1) * units] for g in order]
    return torch.tensor(np.concatenate(blocks, axis=-1).T.copy())


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("backwards", [False, True])
def test_recurrent_layers_match_pytorch(kind, backwards):
    units = 3
    x = RNG.standard_normal((2, 5, 4))
    layer64 = getattr(keras.layers, kind)(units, return_sequences=True, go_backwards=backwards,
                                          bias_initializer=keras.initializers.RandomNormal(stddev=0.5, seed=1))
    xe = ef.constant(x)
    layer64(xe)  # built in float64, the input's dtype
    kernel, recurrent, bias = (v.numpy() for v in layer64.variables)
    with ef.GradientTape() as tape:
        tape.watch(xe)
        y = layer64(xe)
        loss = ef.reduce_sum(y * ef.constant(np.arange(y.numpy().size).reshape(y.shape) % 3 - 1.0))
    grads = tape.gradient(loss, [xe, layer64.variables[0]])

    order = {"SimpleRNN": [0], "LSTM": [0, 1, 2, 3], "GRU": [1, 0, 2]}[kind]
    module = {"SimpleRNN": torch.nn.RNN, "LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}[kind](
        4, units, batch_first=True).double()
    with torch.no_grad():
        module.weight_ih_l0.copy_(_torch_gates(kernel, order, units))
        module.weight_hh_l0.copy_(_torch_gates(recurrent, order, units))
        input_bias, recurrent_bias = (bias[0], bias[1]) if kind == "GRU" else (bias, np.zeros_like(bias))
        module.bias_ih_l0.copy_(_torch_gates(input_bias, order, units))
        module.bias_hh_l0.copy_(_torch_gates(recurrent_bias, order, units))
    xt = torch.tensor(x[:, ::-1].copy() if backwards else x, requires_grad=True)
    yt, _ = module(xt)
    weights = torch.tensor(np.arange(yt.numel()).reshape(yt.shape) % 3 - 1.0)
    (yt * weights).sum().backward()
    np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    x_grad = xt.grad.numpy()[:, ::-1] if backwards else xt.grad.numpy()
    np.testing.assert_allclose(grads[0].numpy(), x_grad, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads[1].numpy(), module.weight_ih_l0.grad.numpy().T[:, np.concatenate(
        [np.arange(g * units, (g + 1) * units) for g in np.argsort(order)])], rtol=1e-10, atol=1e-12)


def test_lstm_defaults_and_config():
    layer = keras.layers.LSTM(4)
    out = layer(ef.ones([2, 3, 5]))
    assert tuple(out.shape) == (2, 4)
    kernel, recurrent, bias = layer.variables
    np.testing.assert_array_equal(bias.numpy(), [0] * 4 + [1] * 4 + [0] * 8)  # unit_forget_bias
    r = recurrent.numpy().reshape(4, 16)
    np.testing.assert_allclose(r @ r.T, np.eye(4), atol=1e-5)  # orthogonal rows
    again = ef._core.keras._layer_from_config("LSTM", layer.get_config())
    assert again.get_config() == layer.get_config()
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"\[batch, steps, features\]"):
        keras.layers.GRU(2)(ef.ones([2, 3]))
    assert tuple(keras.layers.GRU(2, reset_after=False)(ef.ones([2, 3, 5])).shape) == (2, 2)


def test_activation_arguments_take_functions_as_dense_does():
    """Keras: every activation argument takes a name, None (linear) or a function of a tensor."""
    x = ef.constant(X3)
    for relu in (ef.nn.relu, lambda t: ef.maximum(t, 0.)):
        np.testing.assert_array_equal(keras.layers.Activation(relu)(x).numpy(), np.maximum(X3, 0))
    np.testing.assert_array_equal(keras.layers.Activation(None)(x).numpy(), X3)
    seed = keras.initializers.GlorotUniform(seed=3)
    by_name = keras.layers.Conv1D(4, 3, activation="relu", kernel_initializer=seed)
    by_function = keras.layers.Conv1D(4, 3, activation=ef.nn.relu, kernel_initializer=seed)
    np.testing.assert_array_equal(by_function(x).numpy(), by_name(x).numpy())
    assert by_function.get_config()["activation"] == "relu"
    for kind in ("SimpleRNN", "LSTM", "GRU"):
        make = getattr(keras.layers, kind)
        by_name = make(3, activation="relu", recurrent_activation="tanh", kernel_initializer=seed,
                       recurrent_initializer=seed)
        by_function = make(3, activation=ef.nn.relu, recurrent_activation=lambda t: ef.tanh(t),
                           kernel_initializer=seed, recurrent_initializer=seed)
        np.testing.assert_array_equal(by_function(x).numpy(), by_name(x).numpy(), err_msg=kind)
    # Anything else is a TypeError naming the layer and the argument.
    for make, match in [(lambda: keras.layers.Conv1D(4, 3, activation=3), "Conv1D: activation must be"),
                        (lambda: keras.layers.Activation(3), "Activation: activation must be"),
                        (lambda: keras.layers.LSTM(3, recurrent_activation=[1]),
                         "LSTM: recurrent_activation must be")]:
        with pytest.raises(TypeError, match=match + r" None, a name such as \"relu\", or a function"):
            make()


# ---- The newer losses against PyTorch (or NumPy where PyTorch has none) ----

def _loss_cases():
    t = RNG.uniform(0.05, 1.0, (4, 6))
    p = RNG.uniform(0.05, 1.0, (4, 6))
    tt, pt = torch.tensor(t), torch.tensor(p)
    x = p - t
    return [
        ("huber", keras.losses.Huber(delta=0.3), t, p,
         F.huber_loss(pt, tt, reduction="none", delta=0.3).mean(-1).mean().item()),
        ("kl_divergence", keras.losses.KLDivergence(), t, p,
         F.kl_div(torch.log(pt), tt, reduction="none").sum(-1).mean().item()),
        ("poisson", keras.losses.Poisson(), t, p,
         F.poisson_nll_loss(pt, tt, log_input=False, eps=1e-7, reduction="none").mean(-1).mean().item()),
        ("log_cosh", keras.losses.LogCosh(), t, p, np.log(np.cosh(x)).mean()),
        ("cosine_similarity", keras.losses.CosineSimilarity(), t, p,
         -F.cosine_similarity(pt, tt, dim=-1).mean().item()),
    ]


@pytest.mark.parametrize("case", _loss_cases(), ids=lambda c: c[0])
def test_losses_match_the_reference(case):
    name, loss, t, p, expected = case
    assert float(loss(ef.constant(t), ef.constant(p))) == pytest.approx(expected, rel=1e-10)
    # Gradients through the loss agree with float64 finite differences.
    pe = ef.constant(p)
    with ef.GradientTape() as tape:
        tape.watch(pe)
        value = loss(ef.constant(t), pe)
    grad = tape.gradient(value, pe).numpy()
    h = 1e-6
    for index in [(0, 0), (2, 3), (3, 5)]:
        bumped = p.copy()
        bumped[index] += h
        numeric = (float(loss(ef.constant(t), ef.constant(bumped))) - float(value)) / h
        assert grad[index] == pytest.approx(numeric, rel=1e-4, abs=1e-8)


def test_losses_compile_by_name():
    model = keras.Sequential([keras.layers.Dense(2)])
    for name in ("huber", "kld", "poisson", "log_cosh", "cosine_similarity"):
        model.compile(optimizer="sgd", loss=name)
    with pytest.raises(ef.errors.InvalidArgumentError, match="delta must be > 0"):
        keras.losses.Huber(delta=0)


# ---- Conv1D and 1D pooling against PyTorch ----

@pytest.mark.parametrize("padding", ["valid", "same", "causal"])
def test_conv1d_matches_pytorch(padding):
    x = RNG.standard_normal((2, 9, 3))
    layer = keras.layers.Conv1D(4, 3, dilation_rate=2, padding=padding, activation="tanh",
                                bias_initializer=keras.initializers.RandomNormal(seed=2))
    xe = ef.constant(x)
    with ef.GradientTape() as tape:
        tape.watch(xe)
        y = layer(xe)
        loss = ef.reduce_sum(y * y)
    kernel, bias = (v.numpy() for v in layer.variables)
    assert kernel.shape == (3, 3, 4)  # Keras' [kernel_size, channels, filters]
    xt = torch.tensor(x, requires_grad=True)
    inputs = xt.permute(0, 2, 1)
    if padding == "causal":
        inputs = F.pad(inputs, (4, 0))
    yt = torch.tanh(F.conv1d(inputs, torch.tensor(kernel).permute(2, 1, 0), torch.tensor(bias), dilation=2,
                             padding="same" if padding == "same" else 0)).permute(0, 2, 1)
    (yt * yt).sum().backward()
    np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tape.gradient(loss, xe).numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    again = ef._core.keras._layer_from_config("Conv1D", layer.get_config())
    assert again.get_config() == layer.get_config()


@pytest.mark.parametrize("kind", ["max", "average"])
def test_pooling1d_matches_pytorch(kind):
    x = RNG.standard_normal((2, 10, 3))
    layer = (keras.layers.MaxPooling1D if kind == "max" else keras.layers.AveragePooling1D)(3, strides=2)
    reference = F.max_pool1d if kind == "max" else F.avg_pool1d
    y = layer(ef.constant(x)).numpy()
    yt = reference(torch.tensor(x).permute(0, 2, 1), 3, 2).permute(0, 2, 1).numpy()
    np.testing.assert_allclose(y, yt, rtol=1e-12)
    assert ef._core.keras._layer_from_config(layer._class_name, layer.get_config()).get_config() == layer.get_config()
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"\[batch, steps, channels\]"):
        layer(ef.zeros([2, 3]))
