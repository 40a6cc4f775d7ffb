"""The functional API: keras.Input, layers on KerasTensors, keras.Model(inputs, outputs),
merge layers, Lambda and operators, saving, and the same numbers as PyTorch."""
import numpy as np
import pytest

import eagerflow as ef
from eagerflow import keras

torch = pytest.importorskip("torch")


def test_symbolic_calls_give_shapes_and_build_the_layers():
    x = keras.Input(shape=(5, 3), name="points")
    assert x.shape == ef.TensorShape([None, 5, 3]) and x.dtype == ef.float32 and x.name == "points"
    dense = keras.layers.Dense(4)
    h = dense(keras.layers.Flatten()(x))
    assert h.shape == ef.TensorShape([None, 4])
    assert dense.built and dense.kernel.shape == ef.TensorShape([15, 4])
    assert "KerasTensor" in repr(h)
    assert keras.Input(shape=(None, 8)).shape == ef.TensorShape([None, None, 8])


def test_two_inputs_two_outputs_shared_layer_match_pytorch():
    ef.random.set_seed(1)
    a, b = keras.Input(shape=(3,), name="a"), keras.Input(shape=(3,), name="b")
    shared = keras.layers.Dense(4, activation="tanh")
    ha, hb = shared(a), shared(b)
    merged = keras.layers.Concatenate()([ha, hb, keras.layers.Subtract()([ha, hb])])
    head = keras.layers.Dense(2)
    model = keras.Model(inputs=[a, b], outputs=[head(merged), keras.layers.Average()([ha, hb])])
    assert isinstance(model, keras.Model)
    assert len(model.trainable_variables) == 4  # the shared Dense once

    rng = np.random.default_rng(0)
    xa, xb = (rng.standard_normal((5, 3)).astype(np.float32) for _ in range(2))
    out, avg = model([xa, xb])

    w1, b1 = (torch.tensor(v.numpy(), requires_grad=True) for v in (shared.kernel, shared.bias))
    w2, b2 = (torch.tensor(v.numpy(), requires_grad=True) for v in (head.kernel, head.bias))
    ta, tb = torch.tanh(torch.tensor(xa) @ w1 + b1), torch.tanh(torch.tensor(xb) @ w1 + b1)
    t_out = torch.cat([ta, tb, ta - tb], dim=1) @ w2 + b2
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(avg.numpy(), ((ta + tb) / 2).detach().numpy(), rtol=1e-5, atol=1e-6)

    # Gradients through the graph, shared layer included.
    with ef.GradientTape() as tape:
        o, v = model([xa, xb])
        loss = ef.reduce_sum(o * o) + ef.reduce_sum(v)
    grads = tape.gradient(loss, [shared.kernel, head.kernel])
    ((t_out * t_out).sum() + ((ta + tb) / 2).sum()).backward()
    np.testing.assert_allclose(grads[0].numpy(), w1.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads[1].numpy(), w2.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_operators_and_lambda_become_layers():
    x = keras.Input(shape=(3,))
    y = keras.layers.Dense(3, kernel_initializer="ones")(x)
    z = (y * 2 + x)[:, :2] - 1.0
    w = keras.layers.Lambda(lambda t: ef.reduce_sum(t, axis=1, keepdims=True))(z)
    model = keras.Model(x, [z, -w])
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    got_z, got_w = model(data)
    expected_z = (data.sum(1, keepdims=True) * 2 + data)[:, :2] - 1
    np.testing.assert_allclose(got_z.numpy(), expected_z)
    np.testing.assert_allclose(got_w.numpy(), -expected_z.sum(1, keepdims=True))
    with pytest.raises(TypeError, match="KerasTensor is symbolic"):
        ef.exp(x)


def test_errors_name_the_problem():
    a, b = keras.Input(shape=(2,), name="listed"), keras.Input(shape=(2,), name="unlisted")
    total = keras.layers.Add()([a, b])
    with pytest.raises(ef.errors.InvalidArgumentError, match="unlisted.*not among the model's inputs"):
        keras.Model(a, total)
    model = keras.Model([a, b], total)
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"listed.*\[\?, 2\].*\[3, 5\]"):
        model([np.zeros((3, 5), np.float32), np.zeros((3, 2), np.float32)])
    with pytest.raises(ef.errors.InvalidArgumentError, match="takes 2 inputs"):
        model(np.zeros((3, 2), np.float32))
    with pytest.raises(ef.errors.InvalidArgumentError, match="exactly two"):
        keras.layers.Subtract()([a, a, b])
    with pytest.raises(TypeError, match="must be a KerasTensor"):
        keras.Model(a, np.zeros(2))


def test_fit_evaluate_predict_and_summary():
    ef.random.set_seed(3)
    inputs = keras.Input(shape=(2,))
    h = keras.layers.Dense(16, activation="tanh")(inputs)
    outputs = keras.layers.Dense(1)(keras.layers.Concatenate()([h, inputs]))
    model = keras.Model(inputs, outputs, name="regressor")
    x = np.random.default_rng(1).uniform(-1, 1, (128, 2)).astype(np.float32)
    y = (x ** 2).sum(1, keepdims=True)
    model.compile(optimizer=keras.optimizers.Adam(0.03), loss="mse")
    history = model.fit(x, y, epochs=40, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < 0.2 * history.history["loss"][0]
    assert model.evaluate(x, y) == pytest.approx(history.history["loss"][-1], rel=0.5)
    assert model.predict(x).shape == ef.TensorShape([128, 1])
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "regressor" in text and "Concatenate" in text and "[?, 18]" in text


def test_save_and_load_functional_model(tmp_path):
    ef.random.set_seed(5)
    image = keras.Input(shape=(6, 6, 1), name="image")
    c = keras.layers.Conv2D(2, 3, activation="relu")(image)
    f = keras.layers.Flatten()(c)
    skip = keras.layers.Flatten()(image)
    out = keras.layers.Dense(3)(keras.layers.Concatenate()([f, skip]))
    inner = keras.Model(image, out, name="inner")
    x2 = keras.Input(shape=(6, 6, 1))
    model = keras.Model(x2, keras.layers.Multiply()([inner(x2), inner(x2)]), name="outer")
    data = np.random.default_rng(2).standard_normal((4, 6, 6, 1)).astype(np.float32)
    path = tmp_path / "functional.safetensors"
    model.save(path)
    loaded = keras.load_model(path)
    assert isinstance(loaded, keras.Model) and loaded.name == "outer"
    np.testing.assert_array_equal(loaded(data).numpy(), model(data).numpy())
    # A Lambda is code: saving says so, and nothing is written.
    lam = keras.Model(x2, keras.layers.Lambda(lambda t: t + 1)(x2))
    with pytest.raises(NotImplementedError, match="Lambda"):
        lam.save(tmp_path / "lambda.safetensors")
    assert not (tmp_path / "lambda.safetensors").exists()


class Gate(keras.layers.Layer):
    """A Python layer of two inputs: x * sigmoid(g @ w)."""

    def build(self, input_shapes):
        self.w = self.add_weight("w", [input_shapes[1][-1], input_shapes[0][-1]], "ones")

    def call(self, inputs):
        x, g = inputs
        return x * ef.sigmoid(ef.matmul(g, self.w))

    def get_config(self):
        return super().get_config()


def test_python_layer_with_two_inputs_saved_and_loaded(tmp_path):
    x, g = keras.Input(shape=(3,)), keras.Input(shape=(2,))
    model = keras.Model([x, g], Gate(name="gate")([x, g]))
    xs, gs = np.ones((2, 3), np.float32), np.full((2, 2), 0.5, np.float32)
    expected = 1 / (1 + np.exp(-1.0))
    np.testing.assert_allclose(model([xs, gs]).numpy(), np.full((2, 3), expected), rtol=1e-6)
    path = tmp_path / "gate.safetensors"
    model.save(path)
    loaded = keras.load_model(path, custom_objects={"Gate": Gate})
    np.testing.assert_allclose(loaded([xs, gs]).numpy(), model([xs, gs]).numpy())


def _two_in_two_out(seed=0):
    ef.random.set_seed(seed)
    image = keras.Input(shape=(3,), name="image")
    meta = keras.Input(shape=(2,), name="meta")
    h = keras.layers.Dense(4, activation="tanh", name="trunk")(keras.layers.Concatenate()([image, meta]))
    label = keras.layers.Dense(3, name="label")(h)
    score = keras.layers.Dense(1, name="score")(h)
    return keras.Model([image, meta], [label, score])


def test_fit_with_several_inputs_and_outputs_matches_a_custom_loop():
    rng = np.random.default_rng(2)
    xa, xb = rng.standard_normal((16, 3)).astype(np.float32), rng.standard_normal((16, 2)).astype(np.float32)
    ya, yb = rng.integers(0, 3, 16), rng.standard_normal((16, 1)).astype(np.float32)
    model = _two_in_two_out()
    assert model.output_names == ["label", "score"]
    reference = _two_in_two_out()
    reference.set_weights(model.get_weights())
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss={"label": keras.losses.SparseCategoricalCrossentropy(from_logits=True), "score": "mse"},
                  loss_weights=[1.0, 0.5], metrics={"label": ["accuracy"]})
    history = model.fit({"image": xa, "meta": xb}, [ya, yb], batch_size=8, epochs=1, shuffle=False, verbose=0)
    assert set(history.history) == {"loss", "label_loss", "score_loss", "label_accuracy"}
    # The same two steps by hand: loss = CE(label) + 0.5 * MSE(score).
    ce, mse = keras.losses.SparseCategoricalCrossentropy(from_logits=True), keras.losses.MeanSquaredError()
    sgd = keras.optimizers.SGD(0.1)
    losses = []
    for i in (0, 8):
        with ef.GradientTape() as tape:
            label, score = reference([xa[i:i + 8], xb[i:i + 8]])
            parts = ce(ya[i:i + 8], label), mse(yb[i:i + 8], score)
            loss = parts[0] + 0.5 * parts[1]
        sgd.apply_gradients(zip(tape.gradient(loss, reference.trainable_variables), reference.trainable_variables))
        losses.append([float(loss), float(parts[0]), float(parts[1])])
    for got, want in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    means = np.mean(losses, axis=0)
    assert history.history["loss"][0] == pytest.approx(means[0], rel=1e-5)
    assert history.history["label_loss"][0] == pytest.approx(means[1], rel=1e-5)
    assert history.history["score_loss"][0] == pytest.approx(means[2], rel=1e-5)
    logs = model.evaluate([xa, xb], {"label": ya, "score": yb}, return_dict=True)
    assert model.metrics_names == ["loss", "label_loss", "score_loss", "label_accuracy"]
    label, score = model.predict([xa, xb], batch_size=5)
    assert label.shape == ef.TensorShape([16, 3]) and score.shape == ef.TensorShape([16, 1])
    np.testing.assert_allclose(logs["score_loss"], float(mse(yb, score)), rtol=1e-5)
    # validation_data in the same structure.
    history = model.fit([xa, xb], [ya, yb], validation_data=([xa, xb], [ya, yb]), epochs=1, verbose=0)
    assert "val_score_loss" in history.history


def test_several_outputs_bad_arguments_are_clear_errors():
    model = _two_in_two_out()
    x, y = [np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)], [np.zeros(4, np.int64), np.ones((4, 1))]
    with pytest.raises(ef.errors.InvalidArgumentError, match="3 losses for the 2 outputs"):
        model.compile(loss=["mse", "mse", "mse"])
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"unknown outputs \['nope'\]"):
        model.compile(loss={"nope": "mse"})
    with pytest.raises(ef.errors.InvalidArgumentError, match="cannot serve several outputs"):
        model.compile(loss="mse", metrics=[keras.metrics.MeanSquaredError()])
    model.compile(loss=[keras.losses.SparseCategoricalCrossentropy(from_logits=True), "mse"])
    with pytest.raises(ef.errors.InvalidArgumentError, match="takes 2 x tensors"):
        model.fit(x[0], y, verbose=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"x\[0\] has 4 examples .* but y\[1\] has 3"):
        model.fit(x, [y[0], np.ones((3, 1))], verbose=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="class_weight is for models of one output"):
        model.fit(x, y, class_weight={0: 2.0}, verbose=0)


def test_dense_on_symbolic_sequences():
    # [?, steps, features] and [?, ?, features] (one and two unknown dimensions) give the
    # per-step products, the same as the layer's eager call.
    dense = keras.layers.Dense(3, name="per_step")
    data = np.random.default_rng(7).standard_normal((2, 4, 5)).astype(np.float32)
    for shape in ((4, 5), (None, 5)):
        tokens = keras.Input(shape=shape)
        out = dense(tokens)
        assert out.shape == ef.TensorShape([None, *shape[:-1], 3])
        np.testing.assert_allclose(keras.Model(tokens, out)(data).numpy(), dense(data).numpy(), rtol=1e-6)
