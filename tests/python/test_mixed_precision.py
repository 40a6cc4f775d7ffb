"""Mixed precision from Python: policies, autocast layers, loss scaling, fit."""
import math

import numpy as np
import pytest

import eagerflow as ef

mp = ef.keras.mixed_precision


@pytest.fixture
def policy():
    """Sets a global policy for one test, and clears it after."""
    yield mp.set_global_policy
    mp.set_global_policy(None)


def test_policies():
    p = mp.Policy("mixed_float16")
    assert p.compute_dtype == ef.float16 and p.variable_dtype == ef.float32
    assert repr(p) == '<Policy "mixed_float16">'
    assert mp.global_policy() == mp.Policy("float32")
    with pytest.raises(ef.errors.InvalidArgumentError, match="unknown policy 'mixed'"):
        mp.Policy("mixed")


def test_layers_compute_in_half_with_float32_weights(policy):
    policy("mixed_bfloat16")
    dense = ef.keras.layers.Dense(3)
    x = ef.random.normal([4, 5], seed=1)
    with ef.GradientTape() as tape:
        y = dense(x)
        loss = ef.reduce_mean(ef.square(ef.cast(y, ef.float32)))
    assert y.dtype == ef.bfloat16
    assert dense.kernel.dtype == ef.float32 and dense.compute_dtype == ef.bfloat16
    grads = tape.gradient(loss, dense.trainable_variables)
    assert all(g.dtype == ef.float32 for g in grads)
    out = ef.keras.layers.Softmax()
    out.dtype_policy = "float32"
    assert out(y).dtype == ef.float32
    with pytest.raises(ef.errors.FailedPreconditionError, match="after the layer was built"):
        out.dtype_policy = "mixed_float16"


def grad_scaler_scales(steps_finite, init_scale, growth_interval):
    """PyTorch GradScaler's scale after each step (torch._amp_update_scale_'s rule)."""
    scale, tracker, out = init_scale, 0, []
    for finite in steps_finite:
        if not finite:
            scale, tracker = scale * 0.5, 0
        else:
            tracker += 1
            if tracker == growth_interval:
                scale, tracker = scale * 2, 0
        out.append(scale)
    return out


def test_loss_scale_optimizer_custom_loop_skips_and_scales():
    opt = mp.LossScaleOptimizer(ef.keras.optimizers.SGD(0.1), initial_scale=16, dynamic_growth_steps=2)
    assert opt.dynamic and opt.loss_scale == 16 and opt.inner_optimizer is opt
    w = ef.Variable([1.0, 2.0])
    grads = [[1.0, 1.0], [math.inf, 0.0], [0.5, 0.5], [1.0, 0.0], [math.nan, 1.0], [2.0, 2.0]]
    expected = grad_scaler_scales([np.isfinite(g).all() for g in grads], 16, 2)
    weights = np.array([1.0, 2.0], np.float32)
    for g, scale in zip(grads, expected):
        before = w.numpy().copy()
        opt.apply_gradients([(ef.constant(g), w)])
        assert opt.loss_scale == scale
        if np.isfinite(g).all():
            weights -= np.float32(0.1) * np.array(g, np.float32)
        else:
            np.testing.assert_array_equal(w.numpy(), before)  # skipped
    np.testing.assert_allclose(w.numpy(), weights, rtol=1e-6)
    assert int(opt.iterations.numpy()) == 4
    x = ef.Variable(3.0)
    with ef.GradientTape() as tape:
        scaled = opt.get_scaled_loss(x * x)
    (g,) = opt.get_unscaled_gradients(tape.gradient(scaled, [x]))
    assert float(g) == 6.0


def test_fit_in_mixed_bfloat16_matches_float32(policy):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 10)).astype(np.float32)
    y = (x[:, :3].sum(1) > 0).astype(np.int32)

    def accuracy(policy_name):
        policy(policy_name)
        ef.random.set_seed(3)
        model = ef.keras.Sequential([ef.keras.layers.Dense(32, activation="relu"), ef.keras.layers.Dense(2)])
        model.compile(optimizer=ef.keras.optimizers.Adam(0.01),
                      loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        history = model.fit(x, y, batch_size=64, epochs=8, verbose=0)
        return history.history["accuracy"][-1], model

    full, _ = accuracy("float32")
    mixed, model = accuracy("mixed_bfloat16")
    assert model.layers[0].kernel.dtype == ef.float32
    assert model(x[:2]).dtype == ef.bfloat16
    assert full > 0.95 and abs(mixed - full) < 0.02
    _, model16 = accuracy("mixed_float16")
    assert model16.optimizer.dynamic  # compile turned loss scaling on


def test_layers_take_keras_dtype_argument():
    x = ef.random.normal([2, 3])
    mixed = ef.keras.layers.Dense(4, dtype="mixed_bfloat16")
    assert mixed.dtype_policy.name == "mixed_bfloat16"
    y = mixed(x)
    assert y.dtype == ef.bfloat16 and mixed.kernel.dtype == ef.float32
    wide = ef.keras.layers.Dense(4, dtype=ef.float64, name="wide")
    assert wide(x).dtype == ef.float64 and wide.name == "wide"
    assert ef.keras.layers.Conv2D(2, 3, dtype="float64")(ef.random.normal([1, 5, 5, 1])).dtype == ef.float64
    again = ef.keras.layers.Dense.from_config(mixed.get_config())
    assert again.dtype_policy.name == "mixed_bfloat16"
    with pytest.raises(ef.errors.InvalidArgumentError):
        ef.keras.layers.Dense(4, dtype="float8")


def test_python_layers_pass_dtype_to_layer():
    class Scale(ef.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)

        def call(self, x):
            return x * 2.0

    layer = Scale(dtype="float64")
    assert layer.dtype_policy.name == "float64"
    assert layer(ef.ones([2])).dtype == ef.float64
    assert ef.keras.layers.Dense(2, dtype=np.float64).dtype_policy.name == "float64"
