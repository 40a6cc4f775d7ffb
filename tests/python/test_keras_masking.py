"""Recurrent layers' states (return_state, initial_state, stateful) and Keras masks
(Masking, Embedding(mask_zero=True), masked RNNs and GlobalAveragePooling1D), checked
against PyTorch's LSTM (packed sequences for the masks) and against NumPy."""
import numpy as np
import pytest

import eagerflow as ef
from eagerflow import keras

torch = pytest.importorskip("torch")


def _torch_lstm(layer, features, bidirectional=False):
    """A float64 torch LSTM holding the weights of our LSTM (or Bidirectional) layer."""
    units = 4
    t = torch.nn.LSTM(features, units, batch_first=True, bidirectional=bidirectional, dtype=torch.float64)
    pairs = [("", layer)] if not bidirectional else [("", layer.forward_layer), ("_reverse", layer.backward_layer)]
    with torch.no_grad():
        for suffix, rnn in pairs:
            kernel, recurrent, bias = (v.numpy() for v in rnn.variables)
            # Keras gates i, f, c, o are torch's i, f, g, o.
            getattr(t, f"weight_ih_l0{suffix}").copy_(torch.tensor(kernel.T))
            getattr(t, f"weight_hh_l0{suffix}").copy_(torch.tensor(recurrent.T))
            getattr(t, f"bias_ih_l0{suffix}").copy_(torch.tensor(bias))
            getattr(t, f"bias_hh_l0{suffix}").zero_()
    return t


def _padded(rng, lengths, steps, features):
    """Right-padded float64 sequences (zeros after each length) and their bool mask."""
    x = rng.standard_normal((len(lengths), steps, features))
    mask = np.arange(steps)[None, :] < np.array(lengths)[:, None]
    return x * mask[..., None], mask


def test_return_state_and_initial_state_match_pytorch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6, 5))
    h0, c0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    lstm = keras.layers.LSTM(4, return_sequences=True, return_state=True)
    out, h, c = lstm(x, initial_state=[h0, c0])
    t_out, (t_h, t_c) = _torch_lstm(lstm, 5)(torch.tensor(x), (torch.tensor(h0)[None], torch.tensor(c0)[None]))
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), t_h[0].detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c.numpy(), t_c[0].detach().numpy(), rtol=1e-10, atol=1e-12)
    # GRU and SimpleRNN carry one state: [output, h].
    for make in (keras.layers.GRU, keras.layers.SimpleRNN):
        rnn = make(4, return_state=True)
        outputs = rnn(x, initial_state=h0)
        assert len(outputs) == 2
        np.testing.assert_array_equal(outputs[0].numpy(), outputs[1].numpy())
        # Starting from the states after the first half equals running the whole.
        first = make(4, return_state=True)
        first(x[:, :3])
        first.set_weights(rnn.get_weights())
        _, h_half = first(x[:, :3], initial_state=h0)
        np.testing.assert_allclose(first(x[:, 3:], initial_state=h_half)[1].numpy(), outputs[1].numpy(),
                                   rtol=1e-12)


def test_initial_state_gradients_match_pytorch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3))
    h0, c0 = ef.Variable(rng.standard_normal((2, 4))), ef.Variable(rng.standard_normal((2, 4)))
    lstm = keras.layers.LSTM(4, return_state=True)
    with ef.GradientTape() as tape:
        out, h, c = lstm(x, initial_state=[h0, c0])
        loss = ef.reduce_sum(out * out) + ef.reduce_sum(c)
    grads = tape.gradient(loss, [h0, c0])
    th0 = torch.tensor(h0.numpy()[None], requires_grad=True)
    tc0 = torch.tensor(c0.numpy()[None], requires_grad=True)
    t_out, (t_h, t_c) = _torch_lstm(lstm, 3)(torch.tensor(x), (th0, tc0))
    ((t_h[0] ** 2).sum() + t_c.sum()).backward()
    np.testing.assert_allclose(grads[0].numpy(), th0.grad[0].numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grads[1].numpy(), tc0.grad[0].numpy(), rtol=1e-9, atol=1e-12)


def test_masked_lstm_matches_pytorch_packed_sequences():
    rng = np.random.default_rng(2)
    lengths = [6, 2, 4, 1]
    x, mask = _padded(rng, lengths, 6, 5)
    lstm = keras.layers.LSTM(4, return_state=True)
    out, h, c = lstm(x, mask=mask)
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths, batch_first=True,
                                                     enforce_sorted=False)
    _, (t_h, t_c) = _torch_lstm(lstm, 5)(packed)
    np.testing.assert_allclose(h.numpy(), t_h[0].detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c.numpy(), t_c[0].detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(out.numpy(), h.numpy())


def test_masking_layer_in_sequential_and_functional_models():
    rng = np.random.default_rng(3)
    lengths = [5, 3, 1]
    x, mask = _padded(rng, lengths, 5, 2)
    masking = keras.layers.Masking()
    np.testing.assert_array_equal(masking.compute_mask(x).numpy(), mask)
    model = keras.Sequential([keras.layers.Masking(), keras.layers.GRU(4), keras.layers.Dense(1)])
    got = model(x).numpy()
    gru, dense = model.layers[1], model.layers[2]
    # Each sequence alone, without its padding, through the same layers.
    for i, n in enumerate(lengths):
        alone = dense(gru(x[i:i + 1, :n])).numpy()
        np.testing.assert_allclose(got[i:i + 1], alone, rtol=1e-6, atol=1e-7)
    inputs = keras.Input(shape=(5, 2), dtype=ef.float64)
    masked = keras.layers.Masking()(inputs)
    seq = keras.layers.LSTM(4, return_sequences=True)(masked)
    pooled = keras.layers.GlobalAveragePooling1D()(seq)
    functional = keras.Model(inputs, pooled)
    lstm = functional.layers[2]
    got = functional(x).numpy()
    for i, n in enumerate(lengths):
        np.testing.assert_allclose(got[i], lstm(x[i:i + 1, :n]).numpy()[0].mean(axis=0), rtol=1e-10)


def test_masked_steps_repeat_or_zero_the_output():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 4, 3))
    mask = np.array([[True, False, True, False]])
    for zero in (False, True):
        rnn = keras.layers.SimpleRNN(2, return_sequences=True, zero_output_for_mask=zero)
        out = rnn(x, mask=mask).numpy()[0]
        first = rnn(x[:, :1]).numpy()[0, 0]
        np.testing.assert_allclose(out[0], first, rtol=1e-12)
        np.testing.assert_allclose(out[1], 0 * first if zero else first, rtol=1e-12)
        np.testing.assert_allclose(out[3], 0 * first if zero else out[2], rtol=1e-12)
        # The mask passes on with return_sequences, and ends without.
        np.testing.assert_array_equal(rnn.compute_mask(x, mask).numpy(), mask)
    assert keras.layers.SimpleRNN(2).compute_mask(x, mask) is None


def test_softmax_layer_applies_its_mask():
    # Keras' Softmax(inputs, mask): masked entries get a -1e9 score (probability ~0); the
    # mask used to be ignored, giving softmax([1, 2, 3, 4]) for mask [1, 1, 0, 1].
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    mask = rng.random((2, 3, 5)) < 0.6
    mask[:, :, 0] = mask[:, 0, :] = True  # no row masked everywhere
    for axis, m in ((-1, mask), (1, mask), (-1, mask[:1])):
        got = keras.layers.Softmax(axis=axis)(x, mask=m).numpy()
        want = torch.softmax(torch.tensor(np.where(np.broadcast_to(m, x.shape), x, x - 1e9)), axis).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
        assert np.all(got[~np.broadcast_to(m, x.shape)] < 1e-6)
    # A [batch, steps] mask of a sequence's steps passes through, as in Dense(...) -> Softmax.
    steps = np.array([[True, True, False], [True, False, False]])
    np.testing.assert_allclose(keras.layers.Softmax()(x, mask=steps).numpy(),
                               torch.softmax(torch.tensor(x), -1).numpy(), rtol=1e-6)
    with pytest.raises(ef.errors.InvalidArgumentError, match="does not broadcast"):
        keras.layers.Softmax()(x, mask=np.ones((2, 4, 5), bool))


def test_embedding_mask_zero_and_masked_average():
    ids = np.array([[3, 1, 0, 0], [2, 2, 2, 5]])
    model = keras.Sequential([keras.layers.Embedding(6, 3, mask_zero=True), keras.layers.GlobalAveragePooling1D()])
    got = model(ids).numpy()
    table = model.layers[0].embeddings.numpy()
    np.testing.assert_allclose(got[0], table[[3, 1]].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(got[1], table[[2, 2, 2, 5]].mean(axis=0), rtol=1e-6)
    config = model.layers[0].get_config()
    assert config["mask_zero"] is True


def test_masked_bidirectional_matches_pytorch_packed_sequences():
    rng = np.random.default_rng(6)
    lengths = [5, 2, 3]
    x, mask = _padded(rng, lengths, 5, 3)
    layer = keras.layers.Bidirectional(keras.layers.LSTM(4, return_sequences=True))
    out = layer(x, mask=mask).numpy()
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths, batch_first=True,
                                                     enforce_sorted=False)
    t_packed, _ = _torch_lstm(layer, 3, bidirectional=True)(packed)
    t_out, _ = torch.nn.utils.rnn.pad_packed_sequence(t_packed, batch_first=True, total_length=5)
    # torch's padded steps are zeros, as Keras' Bidirectional gives (zero_output_for_mask).
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_bidirectional_return_state():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 3))
    layer = keras.layers.Bidirectional(keras.layers.LSTM(4, return_state=True))
    out, fh, fc, bh, bc = layer(x)
    np.testing.assert_allclose(out.numpy(), np.concatenate([fh.numpy(), bh.numpy()], -1))
    t_out, (t_h, t_c) = _torch_lstm(layer, 3, bidirectional=True)(torch.tensor(x))
    np.testing.assert_allclose(bc.numpy(), t_c[1].detach().numpy(), rtol=1e-10, atol=1e-12)
    states = [fh, fc, bh, bc]
    again = layer(x, initial_state=states)
    assert len(again) == 5


def test_stateful_layer_carries_states_between_calls():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 6, 3))
    whole = keras.layers.LSTM(4)
    expected = whole(x).numpy()
    stateful = keras.layers.LSTM(4, stateful=True)
    stateful(x[:, :3])
    stateful.set_weights(whole.get_weights())
    stateful.reset_states()
    stateful(x[:, :3])
    np.testing.assert_allclose(stateful(x[:, 3:]).numpy(), expected, rtol=1e-12)
    stateful.reset_states()
    np.testing.assert_allclose(stateful(x[:, :3]).numpy(), whole(x[:, :3]).numpy(), rtol=1e-12)
    assert stateful.get_config()["stateful"] is True
    with pytest.raises(ef.errors.InvalidArgumentError, match="stateful with batch size 2"):
        stateful(x[:1])
    with pytest.raises(ef.errors.FailedPreconditionError, match="not stateful"):
        whole.reset_states()


def test_bad_states_and_masks_are_clear_errors():
    x = np.ones((2, 3, 5))
    lstm = keras.layers.LSTM(4)
    with pytest.raises(ef.errors.InvalidArgumentError, match="initial state"):
        lstm(x, initial_state=[np.zeros((2, 4))])
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"initial state 1 must be \[batch, units\]"):
        lstm(x, initial_state=[np.zeros((2, 4)), np.zeros((2, 3))])
    with pytest.raises(ef.errors.InvalidArgumentError, match="mask must be a bool"):
        lstm(x, mask=np.ones((2, 4), bool))
    with pytest.raises(TypeError, match="masks pass from layer to layer"):
        lstm(keras.Input(shape=(3, 5)), mask=np.ones((2, 3), bool))
    with pytest.raises(ef.errors.InvalidArgumentError, match="Masking"):
        keras.layers.Masking()(np.ones((2, 3)))



def test_masked_model_trains_saves_and_loads(tmp_path):
    rng = np.random.default_rng(9)
    lengths = rng.integers(1, 7, size=64)
    x, mask = _padded(rng, lengths, 6, 2)
    x = x.astype(np.float32)
    y = (x.sum(axis=(1, 2)) > 0).astype(np.float32)[:, None]
    model = keras.Sequential([keras.Input(shape=(6, 2)), keras.layers.Masking(),
                              keras.layers.LSTM(8, return_sequences=True),
                              keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    path = str(tmp_path / "masked.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    # Padding changes nothing: more zero steps give the same predictions.
    longer = np.concatenate([x, np.zeros((64, 2, 2), np.float32)], axis=1)
    np.testing.assert_allclose(model(longer).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_functional_models_take_sequences_of_any_length():
    # keras.Input(shape=(None, features)): the symbolic calls probe the unknown length.
    inputs = keras.Input(shape=(None, 2))
    seq = keras.layers.LSTM(4, return_sequences=True)(keras.layers.Masking()(inputs))
    assert seq.shape == ef.TensorShape([None, None, 4])
    attended = keras.layers.MultiHeadAttention(2, 3)(seq, seq)
    stepwise = keras.layers.TimeDistributed(keras.layers.Dense(5))(attended)
    assert attended.shape == ef.TensorShape([None, None, 4]) and stepwise.shape == ef.TensorShape([None, None, 5])
    model = keras.Model(inputs, keras.layers.GlobalAveragePooling1D()(stepwise))
    for steps in (3, 7):
        assert model(np.ones((2, steps, 2), np.float32)).shape == ef.TensorShape([2, 5])
    # A layer whose weights would depend on the unknown length is still refused.
    with pytest.raises(ef.errors.InvalidArgumentError):
        keras.layers.Dense(3)(keras.layers.Flatten()(keras.Input(shape=(None, 2))))


def test_multi_head_attention_takes_the_masks_of_its_inputs():
    # Keras' automatic mask: padded query rows and padded value columns are masked,
    # as an explicit attention_mask of query_mask[:, :, None] & value_mask[:, None, :].
    ids = np.array([[4, 2, 7, 0, 0], [3, 0, 0, 0, 0]])
    inputs = keras.Input(shape=(5,), dtype=ef.int64)
    embedded = keras.layers.Embedding(9, 6, mask_zero=True)(inputs)
    mha = keras.layers.MultiHeadAttention(2, 3)
    attended = mha(embedded, embedded)
    pooled = keras.layers.GlobalAveragePooling1D()(attended)  # the query's mask passes on
    model = keras.Model(inputs, [attended, pooled])
    got, got_pooled = model(ids)
    table = model.layers[1].embeddings.numpy()
    x = table[ids]
    real = ids != 0
    want = mha(x, x, attention_mask=real[:, :, None] & real[:, None, :]).numpy()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    for b in range(2):
        np.testing.assert_allclose(got_pooled.numpy()[b], want[b][real[b]].mean(axis=0), rtol=1e-5, atol=1e-6)


def test_masks_weigh_the_loss_and_metrics_of_sequence_outputs():
    # Keras: a per-step output carrying a mask has its padded steps left out of the loss
    # (averaged over the real steps) and of every metric; sample weights multiply in.
    rng = np.random.default_rng(3)
    lengths = np.array([5, 2, 4, 1])
    tokens = rng.integers(1, 9, size=(4, 5)) * (np.arange(5)[None, :] < lengths[:, None])
    tags = rng.integers(0, 3, size=(4, 5))
    real = (tokens != 0).astype(np.float64)
    ef.random.set_seed(2)
    inputs = keras.Input(shape=(5,), dtype="int64")
    h = keras.layers.LSTM(6, return_sequences=True)(keras.layers.Embedding(9, 4, mask_zero=True)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(3)(h))
    model.compile(optimizer=keras.optimizers.SGD(0.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], weighted_metrics=["accuracy"])
    logits = model.predict(tokens).numpy().astype(np.float64)
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_p, tags[..., None], -1)[..., 0]
    correct = (logits.argmax(-1) == tags).astype(np.float64)
    w = np.array([1.0, 2.0, 0.5, 4.0])[:, None]
    logs = model.evaluate(tokens, tags, sample_weight=w[:, 0].astype(np.float32), return_dict=True)
    assert logs["loss"] == pytest.approx((nll * real * w).sum() / real.sum(), rel=1e-5)
    assert logs["accuracy"] == pytest.approx((correct * real).sum() / real.sum(), rel=1e-6)
    assert logs["weighted_accuracy"] == pytest.approx((correct * real * w).sum() / (real * w).sum(), rel=1e-6)
    # fit's step (a function) gives the same loss; a model trained on it ignores padding.
    history = model.fit(tokens, tags, batch_size=4, shuffle=False, verbose=0).history
    assert history["loss"][0] == pytest.approx((nll * real).sum() / real.sum(), rel=1e-5)
