"""Devices from Python: names, device scopes, ef.config, and GPU tensors (the GPU part
skips without a CUDA device; scripts/gpu_check.sh runs it on one)."""
import numpy as np
import pytest

import eagerflow as ef

HAS_GPU = ef._core.cuda_is_available()
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA device: " + ef._core.cuda_unavailable_reason())


def test_device_names_in_every_spelling():
    gpu0 = "/job:localhost/replica:0/task:0/device:GPU:0"
    for name in ("/gpu:0", "GPU:0", "gpu", "cuda", "cuda:0", "/device:GPU:0", gpu0):
        assert ef._core.parse_device(name) == gpu0
    assert ef._core.parse_device("/cpu:0") == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert ef._core.parse_device("GPU:3").endswith("GPU:3")
    for bad in ("tpu:0", "gpu:x", "gpu:-1", ""):
        with pytest.raises(ef.errors.InvalidArgumentError, match="not a device name"):
            ef.device(bad)


def test_list_physical_devices():
    cpus = ef.config.list_physical_devices("CPU")
    assert cpus == [ef.config.PhysicalDevice("/physical_device:CPU:0", "CPU")]
    gpus = ef.config.list_physical_devices("GPU")
    assert len(gpus) == ef._core.cuda_device_count()
    assert ef.config.list_physical_devices() == cpus + gpus
    assert ef.config.list_physical_devices("TPU") == []
    assert [d.name for d in ef.config.list_logical_devices("CPU")] == ["/device:CPU:0"]


def test_cpu_device_scope_and_tensor_device():
    with ef.device("/cpu:0") as scope:
        assert scope.name.endswith("CPU:0")
        x = ef.zeros([2])
    assert x.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert x.cpu() is not None and np.array_equal(x.cpu().numpy(), [0, 0])


@pytest.mark.skipif(HAS_GPU, reason="this machine has a CUDA device")
def test_without_a_gpu_moving_there_says_why():
    with pytest.raises(ef.errors.UnimplementedError, match="CUDA:0"):
        ef.ones([2]).gpu()
    with pytest.raises(ef.errors.UnimplementedError):
        ef.config.experimental.get_memory_info("GPU:0")
    with ef.device("/gpu:0"):
        with pytest.raises(ef.errors.UnimplementedError, match="CUDA:0"):
            ef.zeros([2])


@needs_gpu
def test_gpu_tensors_compute_like_cpu_ones():
    x = ef.constant(np.random.default_rng(1).standard_normal((8, 5)))
    g = x.gpu()
    assert g.device.endswith("GPU:0")
    np.testing.assert_allclose(ef.tanh(g @ ef.transpose(g)).numpy(), ef.tanh(x @ ef.transpose(x)).numpy(),
                               rtol=1e-12)
    assert float(ef.reduce_sum(g)) == pytest.approx(float(ef.reduce_sum(x)))
    with ef.device("/gpu:0"):
        z = ef.zeros([3])
    assert z.device.endswith("GPU:0")
    info = ef.config.experimental.get_memory_info("GPU:0")
    assert info["current"] > 0 and info["peak"] >= info["current"]
    with pytest.raises(ef.errors.InvalidArgumentError, match="different devices"):
        g + x


@needs_gpu
def test_gradients_on_the_gpu():
    w = ef.Variable(ef.constant([[1.0, 2.0], [3.0, 4.0]]).gpu())
    with ef.GradientTape() as tape:
        loss = ef.reduce_sum(ef.square(w @ w))
    grad = tape.gradient(loss, w)
    assert grad.device.endswith("GPU:0")
    w_cpu = ef.Variable(ef.constant([[1.0, 2.0], [3.0, 4.0]]))
    with ef.GradientTape() as tape:
        loss_cpu = ef.reduce_sum(ef.square(w_cpu @ w_cpu))
    np.testing.assert_allclose(grad.numpy(), tape.gradient(loss_cpu, w_cpu).numpy(), rtol=1e-6)


def _fit_losses(device, policy=None):
    """Three epochs of a small Keras regression, its variables made under `device`."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 6)).astype(np.float32)
    y = rng.standard_normal((64, 2)).astype(np.float32)
    if policy:
        ef.keras.mixed_precision.set_global_policy(policy)
    try:
        with ef.device(device):
            ef.random.set_seed(5)
            model = ef.keras.Sequential([ef.keras.layers.Dense(16, activation="relu"), ef.keras.layers.Dense(2)])
            model.compile(optimizer=ef.keras.optimizers.Adam(0.01), loss="mse")
            history = model.fit(ef.constant(x), ef.constant(y), batch_size=16, epochs=3, verbose=0, shuffle=False)
            expected = "GPU:0" if "gpu" in device else "CPU:0"
            assert all(v.device.endswith(expected) for v in model.variables)
    finally:
        if policy:
            ef.keras.mixed_precision.set_global_policy("float32")
    return history.history["loss"]


@needs_gpu
@pytest.mark.parametrize("policy", [None, "mixed_float16", "mixed_bfloat16"])
def test_keras_fit_on_the_gpu_matches_the_cpu(policy):
    cpu, gpu = _fit_losses("/cpu:0", policy), _fit_losses("/gpu:0", policy)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5 if policy is None else 2e-2)


@needs_gpu
def test_half_tensors_on_the_gpu():
    x = np.random.default_rng(4).standard_normal((5, 7)).astype(np.float16)
    g = ef.constant(x).gpu()
    assert g.dtype == ef.float16
    np.testing.assert_array_equal(g.numpy(), x)
    np.testing.assert_array_equal(ef.exp(g).numpy(), ef.exp(ef.constant(x)).numpy())
    b = ef.cast(g, ef.bfloat16)
    np.testing.assert_array_equal(ef.cast(b * 3.0, ef.float32).numpy(),
                                  ef.cast(ef.cast(ef.constant(x), ef.bfloat16) * 3.0, ef.float32).numpy())


def test_cpu_memory_info_counts_live_tensors():
    ef.config.experimental.reset_memory_stats("CPU:0")
    before = ef.config.experimental.get_memory_info("CPU:0")
    big = ef.zeros([1 << 20])
    during = ef.config.experimental.get_memory_info("CPU:0")
    assert during["current"] >= before["current"] + 4 * (1 << 20)
    assert during["peak"] >= during["current"]
    del big
    assert ef.config.experimental.get_memory_info("CPU:0")["current"] <= during["current"] - 4 * (1 << 20)
    ef.config.experimental.empty_cache("CPU:0")
