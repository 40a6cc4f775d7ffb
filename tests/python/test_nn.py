"""ef.Module, ef.keras layers, losses and metrics: tracking of Python subclasses,
values and gradients against PyTorch's equivalents, errors.

Tolerances: float64 comparisons use 1e-12 relative (the same expressions, rounding
only); float32 ones 1e-5.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import eagerflow as ef
from eagerflow import keras

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# ---- tracking ----

class Block(keras.Model):
    def __init__(self):
        super().__init__(name="block")
        self.first = keras.layers.Dense(4, activation="relu")
        self.second = keras.layers.Dense(2)

    def call(self, x, training=False):
        return self.second(self.first(x))


class Net(keras.Model):
    def __init__(self):
        super().__init__(name="net")
        self.scale = ef.Variable(2.0)
        self.steps = ef.Variable(0.0, trainable=False)
        self.block = Block()
        self.heads = [keras.layers.Dense(3), keras.layers.Dense(1)]

    def call(self, x, training=False):
        h = self.block(x, training=training) * self.scale
        return ef.concat([head(h) for head in self.heads], axis=-1)


def test_python_subclasses_track_attributes_by_path():
    net = Net()
    assert net(np.ones((5, 6), np.float32)).shape == (5, 4)
    assert [path for path, _ in net.named_variables()] == [
        "scale", "steps", "block/first/kernel", "block/first/bias", "block/second/kernel",
        "block/second/bias", "heads/0/kernel", "heads/0/bias", "heads/1/kernel", "heads/1/bias"]
    assert len(net.trainable_variables) == 9
    assert len(net.non_trainable_variables) == 1
    # Reassigning an attribute replaces what it tracked.
    net.block = keras.layers.Dense(2)
    assert [p for p, _ in net.named_variables()][2] == "heads/0/kernel"


def test_call_must_return_one_tensor():
    class TwoOutputs(keras.layers.Layer):
        def call(self, x, training=False):
            return [x, x]

    with pytest.raises(TypeError, match="must return one tensor, got list"):
        TwoOutputs()(np.ones((1, 1)))


def test_custom_layer_builds_from_the_input_shape():
    class Scale(keras.layers.Layer):
        def build(self, input_shape):
            self.factor = self.add_weight("factor", [input_shape[-1]], "ones")

        def call(self, x, training=False):
            return x * self.factor

    model = keras.Sequential([keras.layers.Flatten(), Scale(name="scale"), keras.layers.Dense(2)])
    assert not model.built
    y = model(np.ones((3, 2, 2), np.float32))
    assert y.shape == (3, 2)
    assert [p for p, _ in model.named_variables()] == ["scale/factor", "dense/kernel", "dense/bias"]
    assert isinstance(model.layers[1], Scale)  # the Python object comes back
    with pytest.raises(ef.errors.FailedPreconditionError, match="after the model was built"):
        model.add(keras.layers.Dense(1))


def test_gradient_through_a_subclassed_model_trains():
    ef.random.set_seed(0)
    model = keras.Sequential([keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(1)])
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(64, 1)
    y = np.sin(3 * x)
    opt = ef.optimizers.Adam(0.05)
    loss_fn = keras.losses.MeanSquaredError()
    first = None
    for _ in range(200):
        with ef.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        first = first if first is not None else float(loss)
    ef.random.set_seed(None)
    assert float(loss) < 0.05 * first


# ---- layers against torch ----

def test_dense_matches_torch_linear_values_and_gradients():
    x = rand(4, 5)
    dense = keras.layers.Dense(3, activation="tanh")
    y = dense(x)
    kernel, bias = dense.kernel.numpy(), dense.bias.numpy()
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.tanh(F.linear(tx, torch.tensor(kernel.T), torch.tensor(bias)))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-12)
    xv = ef.constant(x)
    with ef.GradientTape() as tape:
        tape.watch(xv)
        s = ef.reduce_sum(dense(xv) ** 2)
    ty_sum = (ty ** 2).sum()
    ty_sum.backward()
    np.testing.assert_allclose(tape.gradient(s, xv).numpy(), tx.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_layer_normalization_matches_torch(dtype, rtol):
    x = rand(3, 4, 6, dtype=dtype)
    layer = keras.layers.LayerNormalization(epsilon=1e-5, gamma_initializer=keras.initializers.RandomNormal(seed=1),
                                            beta_initializer=keras.initializers.RandomNormal(seed=2))
    y = layer(x)
    gamma, beta = [v.numpy() for v in layer.variables]
    expected = F.layer_norm(torch.tensor(x), (6,), torch.tensor(gamma), torch.tensor(beta), eps=1e-5)
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=rtol, atol=rtol)


def test_embedding_and_dropout():
    emb = keras.layers.Embedding(10, 3)
    out = emb(np.array([[1, 2], [9, 0]], np.int64))
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy()[1, 0], emb.embeddings.numpy()[9])
    with pytest.raises(ef.errors.InvalidArgumentError):
        emb(np.array([10], np.int64))
    drop = keras.layers.Dropout(0.5, seed=1)
    x = np.ones((100,), np.float32)
    np.testing.assert_array_equal(drop(x).numpy(), x)
    assert set(np.unique(drop(x, training=True).numpy())) <= {0.0, 2.0}


def test_initializers():
    g = keras.initializers.GlorotUniform(seed=3)((300, 500), ef.float64).numpy()
    assert np.abs(g).max() <= np.sqrt(6 / 800)
    np.testing.assert_array_equal(g, keras.initializers.GlorotUniform(seed=3)((300, 500), ef.float64).numpy())
    assert abs(g.var() - 2 / 800) < 5e-5
    dense = keras.layers.Dense(2, kernel_initializer=lambda shape, dtype: np.full(shape, 0.5))
    np.testing.assert_allclose(dense(np.ones((1, 3), np.float32)).numpy(), [[1.5, 1.5]])
    with pytest.raises(ef.errors.InvalidArgumentError, match="unknown initializer"):
        keras.layers.Dense(2, kernel_initializer="glorot")


# ---- losses against torch ----

def test_losses_match_torch():
    logits = rand(6, 5)
    labels = RNG.integers(0, 5, size=6)
    onehot = np.eye(5)[labels]
    t_logits = torch.tensor(logits)
    cases = [
        (keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits),
         F.cross_entropy(t_logits, torch.tensor(labels))),
        (keras.losses.CategoricalCrossentropy(from_logits=True)(onehot, logits),
         F.cross_entropy(t_logits, torch.tensor(onehot))),
        (keras.losses.MeanSquaredError()(onehot, logits), F.mse_loss(t_logits, torch.tensor(onehot))),
        (keras.losses.MeanAbsoluteError()(onehot, logits), F.l1_loss(t_logits, torch.tensor(onehot))),
        (keras.losses.BinaryCrossentropy(from_logits=True)(onehot, logits),
         F.binary_cross_entropy_with_logits(t_logits, torch.tensor(onehot))),
        (keras.losses.SparseCategoricalCrossentropy(reduction="sum", from_logits=True)(labels, logits),
         F.cross_entropy(t_logits, torch.tensor(labels), reduction="sum")),
    ]
    for ours, theirs in cases:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    # Probabilities: away from the 1e-7 clipping, the same as torch's log-based losses.
    probs = torch.softmax(t_logits, -1).numpy()
    np.testing.assert_allclose(keras.losses.sparse_categorical_crossentropy(labels, probs).numpy(),
                               F.cross_entropy(t_logits, torch.tensor(labels), reduction="none").numpy(),
                               rtol=1e-6)
    p = 1 / (1 + np.exp(-logits))
    np.testing.assert_allclose(keras.losses.binary_crossentropy(onehot, p).numpy(),
                               F.binary_cross_entropy(torch.tensor(p), torch.tensor(onehot), reduction="none")
                               .mean(-1).numpy(), rtol=1e-5)


def test_loss_gradients_match_torch():
    logits = rand(4, 3)
    labels = np.array([0, 2, 1, 2])
    x = ef.constant(logits)
    with ef.GradientTape() as tape:
        tape.watch(x)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, x, sample_weight=[1., 2., 0., 1.])
    tx = torch.tensor(logits, requires_grad=True)
    tl = (F.cross_entropy(tx, torch.tensor(labels), reduction="none") * torch.tensor([1., 2., 0., 1.],
                                                                                    dtype=torch.float64)).mean()
    tl.backward()
    np.testing.assert_allclose(loss.numpy(), tl.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), tx.grad.numpy(), rtol=1e-12)


def test_loss_errors():
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"mean_squared_error.*\[2, 3\].*\[2, 2\]"):
        keras.losses.mean_squared_error(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ef.errors.InvalidArgumentError, match="reduction"):
        keras.losses.MeanSquaredError(reduction="mean")


# ---- metrics ----

def test_metrics_accumulate():
    acc = keras.metrics.SparseCategoricalAccuracy()
    acc.update_state([0, 1, 1], [[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]])
    assert acc.result().numpy() == pytest.approx(2 / 3)
    acc.reset_state()
    assert float(acc.result()) == 0.0
    mean = keras.metrics.Mean()
    mean.update_state([1.0, 2.0, 3.0])
    mean.update_state(10.0, sample_weight=3.0)
    assert float(mean.result()) == pytest.approx(6.0)
    assert [p for p, _ in mean.named_variables()] == ["total", "count"]
    binary = keras.metrics.BinaryAccuracy(threshold=0.5)
    binary.update_state([[1.0, 0.0]], [[0.7, 0.6]])
    assert float(binary.result()) == pytest.approx(0.5)


# ---- convolution layers against torch ----

@pytest.mark.parametrize("padding,strides", [("valid", 1), ("same", 1), ("valid", 2)])
def test_conv2d_layer_matches_torch(padding, strides):
    x = rand(2, 7, 7, 3)
    conv = keras.layers.Conv2D(4, 3, strides=strides, padding=padding, activation="relu")
    y = conv(x)
    kernel, bias = conv.kernel.numpy(), conv.bias.numpy()
    tx = torch.tensor(x).permute(0, 3, 1, 2)
    pad = 1 if padding == "same" else 0
    ty = F.relu(F.conv2d(tx, torch.tensor(kernel).permute(3, 2, 0, 1), torch.tensor(bias), stride=strides,
                         padding=pad)).permute(0, 2, 3, 1)
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-12)


def test_pooling_layers_match_torch():
    x = rand(2, 6, 6, 3)
    tx = torch.tensor(x).permute(0, 3, 1, 2)
    np.testing.assert_allclose(keras.layers.MaxPooling2D()(x).numpy(),
                               F.max_pool2d(tx, 2).permute(0, 2, 3, 1).numpy())
    np.testing.assert_allclose(keras.layers.AveragePooling2D(pool_size=3, strides=1)(x).numpy(),
                               F.avg_pool2d(tx, 3, stride=1).permute(0, 2, 3, 1).numpy(), rtol=1e-12)


def test_batch_normalization_matches_torch_in_training_and_inference():
    x = rand(8, 4, 4, 3)
    bn = keras.layers.BatchNormalization(momentum=0.9, epsilon=1e-5)
    y = bn(x, training=True)
    tx = torch.tensor(x).permute(0, 3, 1, 2)
    running_mean, running_var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    ty = F.batch_norm(tx, running_mean, running_var, training=True, momentum=0.1, eps=1e-5)
    np.testing.assert_allclose(y.numpy(), ty.permute(0, 2, 3, 1).numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bn.moving_mean.numpy(), running_mean.numpy(), rtol=1e-12)
    # Keras moves the variance toward the population variance, PyTorch toward the
    # unbiased one (n / (n - 1) larger).
    n = 8 * 4 * 4
    batch_var = x.reshape(-1, 3).var(axis=0)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * batch_var, rtol=1e-12)
    np.testing.assert_allclose(running_var.numpy(), 0.9 + 0.1 * batch_var * n / (n - 1), rtol=1e-12)
    inference = bn(x)
    expected = (x - bn.moving_mean.numpy()) / np.sqrt(bn.moving_variance.numpy() + 1e-5)
    np.testing.assert_allclose(inference.numpy(), expected, rtol=1e-10)
