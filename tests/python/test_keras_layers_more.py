"""Conv2DTranspose, DepthwiseConv2D, SeparableConv2D, GroupNormalization, PReLU,
SpatialDropout2D, GRU(reset_after=False) and RootMeanSquaredError against PyTorch or
hand-written references: the same weights in, the same outputs and input and weight
gradients out (float64); their configs, saving, and bad-input errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import eagerflow as ef
from eagerflow import keras

RNG = np.random.default_rng(7)
TOL = dict(rtol=1e-10, atol=1e-12)


def nchw(t):
    return t.permute(0, 3, 1, 2)


def nhwc(t):
    return t.permute(0, 2, 3, 1)


def k_eff(k, d):
    return (k - 1) * d + 1


def tf_pads(size, k, stride, dilation, padding):
    """TensorFlow's (before, after) zero padding of one spatial axis of a convolution."""
    if padding == "valid":
        return 0, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + k_eff(k, dilation) - size, 0)
    return total // 2, total - total // 2


def run_layer(layer, x, training=False):
    """Output, d(loss)/dx and d(loss)/d(each variable) for loss = sum(y * w), w random."""
    xe = ef.constant(x)
    with ef.GradientTape() as tape:
        tape.watch(xe)
        y = layer(xe, training=training)
        w = RNG.standard_normal(tuple(y.shape))
        loss = ef.reduce_sum(y * ef.constant(w))
    grads = tape.gradient(loss, [xe] + list(layer.trainable_variables))
    return y.numpy(), w, [g.numpy() for g in grads]


def torch_grads(yt, w, leaves):
    (yt * torch.tensor(w)).sum().backward()
    return [leaf.grad.numpy() for leaf in leaves]


def leaf(array):
    return torch.tensor(np.asarray(array), dtype=torch.float64, requires_grad=True)


def assert_close(ours, theirs, tol=TOL):
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, **tol)
    return max(float(np.max(np.abs(a - b))) if a.size else 0.0 for a, b in zip(ours, theirs))


# ---- Conv2DTranspose ----

TRANSPOSE_CASES = [  # filters, kernel_size, strides, padding, output_padding, dilation_rate
    (4, 3, 1, "valid", None, 1),
    (4, 3, 2, "same", None, 1),
    (2, (2, 3), (2, 1), "valid", None, 1),
    (3, 1, 3, "valid", None, 1),  # kernel smaller than the stride: zero rows at the end
    (3, 4, 2, "same", None, 1),  # even kernel: uneven padding
    (2, 3, 2, "same", 1, 1),
    (2, 3, 3, "valid", (2, 1), 1),
    (3, 3, 1, "same", None, 2),
    (2, 2, 2, "valid", None, 2),
]


@pytest.mark.parametrize("filters,kernel_size,strides,padding,output_padding,dilation", TRANSPOSE_CASES)
def test_conv2d_transpose_matches_torch(filters, kernel_size, strides, padding, output_padding, dilation):
    x = RNG.standard_normal((2, 4, 5, 3))
    layer = keras.layers.Conv2DTranspose(filters, kernel_size, strides=strides, padding=padding,
                                         output_padding=output_padding, dilation_rate=dilation,
                                         bias_initializer=keras.initializers.RandomNormal(seed=1))
    y, w, (gx, gk, gb) = run_layer(layer, x)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    assert kernel.shape[2:] == (filters, 3)
    kh, kw = kernel.shape[:2]
    s = (strides, strides) if isinstance(strides, int) else strides
    full = [(x.shape[1 + i] - 1) * s[i] + k_eff((kh, kw)[i], dilation) for i in range(2)]
    # Keras' deconv_output_length, and where TensorFlow's "same" output starts in the full one.
    out, top = [], []
    for i, (size, k) in enumerate(zip(x.shape[1:3], (kh, kw))):
        ke = k_eff(k, dilation)
        if output_padding is None:
            length = size * s[i] if padding == "same" else size * s[i] + max(ke - s[i], 0)
        else:
            op = output_padding if isinstance(output_padding, int) else output_padding[i]
            length = (size - 1) * s[i] + (ke % 2 if padding == "same" else ke) + op
        out.append(length)
        top.append(max((size - 1) * s[i] + ke - length, 0) // 2)
    assert y.shape == (2, out[0], out[1], filters)
    extra = tuple(max(0, top[i] + out[i] - full[i]) for i in range(2))
    module = torch.nn.ConvTranspose2d(3, filters, (kh, kw), stride=s, dilation=dilation, output_padding=extra,
                                      bias=False).double()
    module.weight.data = torch.tensor(kernel).permute(3, 2, 0, 1).contiguous()
    xt, bt = leaf(x), leaf(bias)
    yt = nhwc(module(nchw(xt)))[:, top[0]:top[0] + out[0], top[1]:top[1] + out[1], :] + bt
    theirs = torch_grads(yt, w, [xt, bt]) + [module.weight.grad.permute(2, 3, 1, 0).numpy()]
    assert_close([y, gx, gb, gk], [yt.detach().numpy()] + theirs)


def test_conv2d_transpose_errors_name_the_layer_and_argument():
    with pytest.raises(ef.errors.InvalidArgumentError, match="output_padding"):
        keras.layers.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ef.errors.InvalidArgumentError, match="'padding'"):
        keras.layers.Conv2DTranspose(2, 3, padding="full")
    layer = keras.layers.Conv2DTranspose(2, 4, strides=2, padding="same", output_padding=0, name="up")
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"layer 'up'.*does not convolve back"):
        layer(ef.ones([1, 3, 3, 2]))
    layer = keras.layers.Conv2DTranspose(2, 3, name="up")
    layer(ef.ones([1, 3, 3, 2]))
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"built for 2 input channels.*\[1, 3, 3, 5\]"):
        layer(ef.ones([1, 3, 3, 5]))
    with pytest.raises(ef.errors.UnimplementedError, match="channels_last"):
        keras.layers.Conv2DTranspose(2, 3, data_format="channels_first")


# ---- DepthwiseConv2D and SeparableConv2D ----

def torch_depthwise(xt, kernel_t, strides, padding, dilation, size):
    """torch Conv2d(groups=channels) with TensorFlow's padding, kernel [kh, kw, C, M] as a leaf."""
    kh, kw, c, m = kernel_t.shape
    s = (strides, strides) if isinstance(strides, int) else strides
    (pt, pb), (pl, pr) = (tf_pads(size[i], (kh, kw)[i], s[i], dilation, padding) for i in range(2))
    weight = kernel_t.permute(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
    return F.conv2d(F.pad(nchw(xt), (pl, pr, pt, pb)), weight, stride=s, dilation=dilation, groups=c)


DEPTHWISE_CASES = [  # kernel_size, strides, padding, depth_multiplier, dilation_rate
    (3, 1, "valid", 1, 1),
    (3, 2, "same", 1, 1),
    ((2, 3), (2, 1), "same", 2, 1),
    (3, 1, "same", 3, 2),
    (1, 1, "valid", 2, 1),
    (4, 3, "same", 1, 1),
]


@pytest.mark.parametrize("kernel_size,strides,padding,multiplier,dilation", DEPTHWISE_CASES)
def test_depthwise_conv2d_matches_torch_grouped_conv(kernel_size, strides, padding, multiplier, dilation):
    x = RNG.standard_normal((2, 6, 7, 3))
    layer = keras.layers.DepthwiseConv2D(kernel_size, strides=strides, padding=padding, depth_multiplier=multiplier,
                                         dilation_rate=dilation, activation="tanh",
                                         bias_initializer=keras.initializers.RandomNormal(seed=2))
    y, w, (gx, gk, gb) = run_layer(layer, x)
    assert layer.kernel.shape[2:] == (3, multiplier)
    xt, kt, bt = leaf(x), leaf(layer.kernel.numpy()), leaf(layer.bias.numpy())
    yt = torch.tanh(nhwc(torch_depthwise(xt, kt, strides, padding, dilation, x.shape[1:3])) + bt)
    assert_close([y, gx, gk, gb], [yt.detach().numpy()] + torch_grads(yt, w, [xt, kt, bt]))


@pytest.mark.parametrize("strides,padding,multiplier", [(1, "same", 1), (2, "valid", 2)])
def test_separable_conv2d_is_depthwise_then_pointwise_as_torch(strides, padding, multiplier):
    x = RNG.standard_normal((2, 7, 6, 4))
    layer = keras.layers.SeparableConv2D(5, 3, strides=strides, padding=padding, depth_multiplier=multiplier,
                                         bias_initializer=keras.initializers.RandomNormal(seed=3))
    y, w, (gx, gd, gp, gb) = run_layer(layer, x)
    assert [v.name.split("/")[-1].split(":")[0] for v in layer.trainable_variables] == [
        "depthwise_kernel", "pointwise_kernel", "bias"]
    assert layer.pointwise_kernel.shape == (1, 1, 4 * multiplier, 5)
    xt, dt, bt = leaf(x), leaf(layer.depthwise_kernel.numpy()), leaf(layer.bias.numpy())
    pt = leaf(layer.pointwise_kernel.numpy())
    depthwise = torch_depthwise(xt, dt, strides, padding, 1, x.shape[1:3])
    yt = nhwc(F.conv2d(depthwise, pt.permute(3, 2, 0, 1))) + bt
    assert_close([y, gx, gd, gp, gb], [yt.detach().numpy()] + torch_grads(yt, w, [xt, dt, pt, bt]))


def test_depthwise_op_and_layer_errors():
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"depthwise_conv2d.*3 channels.*expects 2"):
        ef.nn.depthwise_conv2d(ef.ones([1, 4, 4, 3]), ef.ones([3, 3, 2, 1]), 1, "SAME")
    with pytest.raises(ef.errors.InvalidArgumentError, match="does not fit"):
        ef.nn.depthwise_conv2d(ef.ones([1, 2, 2, 3]), ef.ones([3, 3, 3, 1]), 1, "VALID")
    with pytest.raises(ef.errors.InvalidArgumentError, match="depth_multiplier"):
        keras.layers.DepthwiseConv2D(3, depth_multiplier=0)
    layer = keras.layers.SeparableConv2D(4, 3, name="sep")
    layer(ef.ones([1, 5, 5, 2]))
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"layer 'sep'.*built for 2 input channels"):
        layer(ef.ones([1, 5, 5, 3]))
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"rank 4.*\[5, 5, 2\]"):
        keras.layers.DepthwiseConv2D(3)(ef.ones([5, 5, 2]))


def test_depthwise_conv2d_op_is_float32_accurate():
    x = RNG.standard_normal((2, 9, 9, 8)).astype(np.float32)
    k = RNG.standard_normal((3, 3, 8, 2)).astype(np.float32)
    y = ef.nn.depthwise_conv2d(x, k, 2, "SAME").numpy()
    yt = nhwc(torch_depthwise(torch.tensor(x), torch.tensor(k), 2, "same", 1, (9, 9))).numpy()
    np.testing.assert_allclose(y, yt, rtol=1e-5, atol=1e-5)


# ---- PReLU ----

@pytest.mark.parametrize("shape,shared_axes", [((2, 4, 5, 3), [1, 2]), ((2, 4, 5, 3), None), ((3, 6), 1),
                                               ((2, 4, 3), [2])])
def test_prelu_matches_torch(shape, shared_axes):
    x = RNG.standard_normal(shape)
    layer = keras.layers.PReLU(alpha_initializer=keras.initializers.RandomUniform(0.0, 0.5, seed=4),
                               shared_axes=shared_axes)
    y, w, (gx, ga) = run_layer(layer, x)
    alpha = layer.alpha.numpy()
    shared = [shared_axes] if isinstance(shared_axes, int) else (shared_axes or [])
    assert alpha.shape == tuple(1 if i + 1 in shared else d for i, d in enumerate(shape[1:]))
    xt, at = leaf(x), leaf(alpha)
    if len(shape) == 4 and shared == [1, 2]:
        # torch's PReLU has one slope per channel of NCHW images: the same layer.
        module = torch.nn.PReLU(shape[3]).double()
        module.weight.data = torch.tensor(alpha.reshape(-1))
        yt = nhwc(module(nchw(xt)))
        theirs = torch_grads(yt, w, [xt]) + [module.weight.grad.numpy().reshape(alpha.shape)]
    else:
        yt = torch.where(xt >= 0, xt, at * xt)
        theirs = torch_grads(yt, w, [xt, at])
    assert_close([y, gx, ga], [yt.detach().numpy()] + theirs)


def test_prelu_errors_and_defaults():
    layer = keras.layers.PReLU()
    np.testing.assert_array_equal(layer(ef.constant([[-1.0, 2.0]])).numpy(), [[0.0, 2.0]])  # alpha 0: ReLU
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"shared axis 3.*\[2, 3, 4\]"):
        keras.layers.PReLU(shared_axes=[3])(ef.ones([2, 3, 4]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="batch axis"):
        keras.layers.PReLU(shared_axes=[0])
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"alpha of shape \[2\].*\[1, 3\]"):
        layer(ef.ones([1, 3]))


# ---- GroupNormalization ----

@pytest.mark.parametrize("shape,groups,axis", [((2, 4, 5, 6), 3, -1), ((2, 4, 5, 6), -1, -1), ((3, 7, 4), 1, -1),
                                               ((2, 6, 3, 5), 2, 1)])
def test_group_normalization_matches_torch(shape, groups, axis):
    x = RNG.standard_normal(shape) * 3 + 1
    layer = keras.layers.GroupNormalization(groups, axis=axis, epsilon=1e-3,
                                            gamma_initializer=keras.initializers.RandomNormal(1.0, 0.3, seed=5),
                                            beta_initializer=keras.initializers.RandomNormal(seed=6))
    y, w, (gx, gg, gb) = run_layer(layer, x)
    channels = shape[axis]
    module = torch.nn.GroupNorm(channels if groups == -1 else groups, channels, eps=1e-3).double()
    module.weight.data = torch.tensor(layer.gamma.numpy())
    module.bias.data = torch.tensor(layer.beta.numpy())
    xt = leaf(x)
    # torch normalizes channels-first inputs: move the channel axis to 1 and back.
    yt = torch.movedim(module(torch.movedim(xt, axis, 1)), 1, axis)
    theirs = torch_grads(yt, w, [xt]) + [module.weight.grad.numpy(), module.bias.grad.numpy()]
    assert_close([y, gx, gg, gb], [yt.detach().numpy()] + theirs, dict(rtol=1e-9, atol=1e-11))


def test_group_normalization_errors():
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"layer 'gn'.*6 channels.*'groups' = 4"):
        keras.layers.GroupNormalization(4, name="gn")(ef.ones([2, 3, 6]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="'groups'"):
        keras.layers.GroupNormalization(0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="out of range"):
        keras.layers.GroupNormalization(1, axis=3)(ef.ones([2, 3, 6]))
    layer = keras.layers.GroupNormalization(2, name="gn")
    layer(ef.ones([2, 3, 6]))
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"built for 6 channels.*\[2, 3, 4\]"):
        layer(ef.ones([2, 3, 4]))
    assert len(keras.layers.GroupNormalization(2, center=False, scale=False).variables) == 0


# ---- SpatialDropout2D ----

def test_spatial_dropout_drops_whole_channels_and_scales_the_rest():
    x = RNG.uniform(0.5, 1.5, (64, 3, 4, 32))
    layer = keras.layers.SpatialDropout2D(0.25, seed=3)
    ef.random.set_seed(5)
    y, w, (gx,) = run_layer(layer, x, training=True)
    ratio = y / x
    per_channel = ratio[:, :1, :1, :]
    np.testing.assert_allclose(ratio, np.broadcast_to(per_channel, ratio.shape), rtol=1e-12)  # whole channels
    assert set(np.unique(np.round(per_channel, 12))) <= {0.0, round(1 / 0.75, 12)}
    dropped = np.mean(per_channel == 0)
    assert abs(dropped - 0.25) < 0.04, dropped  # 2048 channels: sd 0.0096
    np.testing.assert_allclose(gx, w * ratio, rtol=1e-12)  # the gradient is the same mask
    np.testing.assert_array_equal(layer(ef.constant(x)).numpy(), x)  # inference: identity
    ef.random.set_seed(5)
    again = keras.layers.SpatialDropout2D(0.25, seed=3)(ef.constant(x), training=True).numpy()
    np.testing.assert_array_equal(again, y)  # the same seeds: the same channels
    with pytest.raises(ef.errors.InvalidArgumentError, match="'rate'"):
        keras.layers.SpatialDropout2D(1.0)
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"rank 4.*\[2, 3\]"):
        keras.layers.SpatialDropout2D(0.5)(ef.ones([2, 3]), training=True)


# ---- GRU(reset_after=False) ----

def keras_gru_reset_before(xt, kernel, recurrent, bias, go_backwards):
    """Keras' GRUCell with reset_after=False, step by step."""
    units = recurrent.shape[0]
    h = torch.zeros(xt.shape[0], units, dtype=torch.float64)
    u_zr, u_h = recurrent[:, :2 * units], recurrent[:, 2 * units:]
    outputs = []
    steps = range(xt.shape[1] - 1, -1, -1) if go_backwards else range(xt.shape[1])
    for t in steps:
        x = xt[:, t] @ kernel + bias
        zr = x[:, :2 * units] + h @ u_zr
        z, r = torch.sigmoid(zr[:, :units]), torch.sigmoid(zr[:, units:])
        hh = torch.tanh(x[:, 2 * units:] + (r * h) @ u_h)
        h = z * h + (1 - z) * hh
        outputs.append(h)
    return outputs


@pytest.mark.parametrize("return_sequences,go_backwards", [(False, False), (True, True)])
def test_gru_without_reset_after_matches_keras_formula(return_sequences, go_backwards):
    x = RNG.standard_normal((3, 5, 4))
    layer = keras.layers.GRU(6, reset_after=False, return_sequences=return_sequences, go_backwards=go_backwards,
                             bias_initializer=keras.initializers.RandomNormal(0.0, 0.5, seed=8))
    y, w, (gx, gk, gr, gb) = run_layer(layer, x)
    kernel, recurrent, bias = (v.numpy() for v in layer.variables)
    assert bias.shape == (18,)
    xt, kt, rt, bt = leaf(x), leaf(kernel), leaf(recurrent), leaf(bias)
    outputs = keras_gru_reset_before(xt, kt, rt, bt, go_backwards)
    yt = torch.stack(outputs, 1) if return_sequences else outputs[-1]
    assert_close([y, gx, gk, gr, gb], [yt.detach().numpy()] + torch_grads(yt, w, [xt, kt, rt, bt]))
    # reset_after=True computes something else with the same kernels.
    assert not np.allclose(keras.layers.GRU(6, kernel_initializer="ones")(ef.constant(x)).numpy(),
                           keras.layers.GRU(6, kernel_initializer="ones", reset_after=False)(ef.constant(x)).numpy())


# ---- RootMeanSquaredError ----

def test_root_mean_squared_error_over_batches_with_weights():
    metric = keras.metrics.RootMeanSquaredError()
    t1, p1 = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    t2, p2 = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    metric.update_state(t1, p1)
    metric.update_state(t2, p2)
    squares = np.concatenate([(t1 - p1) ** 2, (t2 - p2) ** 2])
    np.testing.assert_allclose(metric.result().numpy(), np.sqrt(squares.mean()), rtol=1e-6)
    metric.reset_state()
    weights = np.array([1.0, 0.0, 2.0, 0.5])
    metric.update_state(t1, p1, sample_weight=weights)
    expected = np.sqrt(np.sum(weights * ((t1 - p1) ** 2).mean(-1)) / weights.sum())
    np.testing.assert_allclose(metric.result().numpy(), expected, rtol=1e-6)
    metric.reset_state()
    metric.update_state([1.0, 2.0], [2.0, 4.0])  # rank 1: one value per example
    np.testing.assert_allclose(metric.result().numpy(), np.sqrt(2.5), rtol=1e-6)
    assert metric.name == "root_mean_squared_error"
    with pytest.raises(ef.errors.InvalidArgumentError, match="shape"):
        metric.update_state(np.ones((2, 3)), np.ones((2, 4)))


# ---- configs and saving ----

def new_layers():
    return [keras.layers.Conv2DTranspose(3, (3, 2), strides=2, padding="same", output_padding=1, activation="relu"),
            keras.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", dilation_rate=2),
            keras.layers.SeparableConv2D(4, 3, strides=1, padding="valid", depth_multiplier=2, use_bias=False),
            keras.layers.GroupNormalization(2, epsilon=1e-4),
            keras.layers.PReLU(alpha_initializer=keras.initializers.Constant(0.2), shared_axes=[1, 2]),
            keras.layers.SpatialDropout2D(0.3, seed=4),
            keras.layers.GRU(3, reset_after=False)]


def test_configs_round_trip_and_rebuild_the_same_layers():
    x4 = ef.constant(RNG.standard_normal((2, 6, 6, 4)))
    for layer in new_layers():
        config = layer.get_config()
        recurrent = "units" in config  # GRU() makes a recurrent layer of class GRU in configs
        x = ef.constant(RNG.standard_normal((2, 5, 4))) if recurrent else x4
        again = ef._core.keras._layer_from_config("GRU", config) if recurrent else type(layer).from_config(config)
        assert again.get_config() == config
        y = layer(x)
        again(x)
        for mine, theirs in zip(again.variables, layer.variables):
            assert mine.shape == theirs.shape
            mine.assign(theirs)
        np.testing.assert_array_equal(again(x).numpy(), y.numpy())
    config = new_layers()[0].get_config()
    assert config["output_padding"] == [1, 1] and config["kernel_size"] == [3, 2]
    assert new_layers()[4].get_config()["shared_axes"] == [1, 2]


def test_a_model_of_the_new_layers_saves_and_loads(tmp_path):
    ef.random.set_seed(2)
    model = keras.Sequential([keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same"),
                              keras.layers.GroupNormalization(2), keras.layers.PReLU(shared_axes=[1, 2]),
                              keras.layers.DepthwiseConv2D(3), keras.layers.SpatialDropout2D(0.2),
                              keras.layers.SeparableConv2D(2, 3, padding="same")])
    x = RNG.standard_normal((2, 4, 4, 3)).astype(np.float32)
    model.compile(optimizer="adam", loss="mse", metrics=[keras.metrics.RootMeanSquaredError()])
    model.fit(x, np.zeros((2, 6, 6, 2), np.float32), epochs=2, verbose=0)
    model.save(tmp_path / "model.safetensors")
    loaded = keras.load_model(tmp_path / "model.safetensors")
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))


def test_more_activations_match_pytorch():
    x = np.linspace(-5, 5, 41)
    expected = {"mish": torch.nn.functional.mish, "hard_sigmoid": torch.nn.functional.hardsigmoid,
                "hard_silu": torch.nn.functional.hardswish, "hard_swish": torch.nn.functional.hardswish,
                "exponential": torch.exp}
    for name, reference in expected.items():
        got = keras.layers.Activation(name)(x).numpy()
        np.testing.assert_allclose(got, reference(torch.tensor(x)).numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
