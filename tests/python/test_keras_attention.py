"""MultiHeadAttention and Attention against PyTorch (same weights in, same outputs and
gradients out), masks, configs, and their use in functional models."""
import numpy as np
import pytest

import eagerflow as ef
from eagerflow import keras

torch = pytest.importorskip("torch")

HEADS, KEY_DIM, FEATURES = 2, 3, 6  # torch needs features == heads * key_dim


def _torch_mha(mha):
    """torch.nn.MultiheadAttention holding `mha`'s weights."""
    t = torch.nn.MultiheadAttention(FEATURES, HEADS, batch_first=True, dtype=torch.float64)
    w = {v.name.split("/", 1)[1]: v.numpy().astype(np.float64) for v in mha.variables}
    in_w = np.concatenate([w[f"{p}_kernel"].reshape(FEATURES, -1).T for p in ("query", "key", "value")])
    in_b = np.concatenate([w[f"{p}_bias"].reshape(-1) for p in ("query", "key", "value")])
    with torch.no_grad():
        t.in_proj_weight.copy_(torch.tensor(in_w))
        t.in_proj_bias.copy_(torch.tensor(in_b))
        t.out_proj.weight.copy_(torch.tensor(w["output_kernel"].reshape(-1, FEATURES).T))
        t.out_proj.bias.copy_(torch.tensor(w["output_bias"]))
    return t


@pytest.mark.parametrize("masked", [False, True])
def test_multi_head_attention_matches_pytorch(masked):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 4, FEATURES))
    v = rng.standard_normal((2, 5, FEATURES))
    mask = rng.random((2, 4, 5)) > 0.3 if masked else None
    if masked:
        mask[:, :, 0] = True  # every query attends to something
    mha = keras.layers.MultiHeadAttention(HEADS, KEY_DIM, bias_initializer="random_normal")
    ef_q, ef_v = ef.Variable(q), ef.Variable(v)
    with ef.GradientTape() as tape:
        out, scores = mha(ef_q, ef_v, attention_mask=None if mask is None else ef.constant(mask),
                          return_attention_scores=True)
        loss = ef.reduce_sum(out * out)
    grads = tape.gradient(loss, [ef_q, ef_v, mha.variables[0]])

    t = _torch_mha(mha)
    tq, tv = torch.tensor(q, requires_grad=True), torch.tensor(v, requires_grad=True)
    t_mask = None if mask is None else torch.tensor(~mask).repeat_interleave(HEADS, 0)
    t_out, t_scores = t(tq, tv, tv, attn_mask=t_mask, average_attn_weights=False)
    (t_out * t_out).sum().backward()
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scores.numpy(), t_scores.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads[0].numpy(), tq.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grads[1].numpy(), tv.grad.numpy(), rtol=1e-9, atol=1e-12)
    q_kernel_grad = t.in_proj_weight.grad[:FEATURES].numpy().T.reshape(FEATURES, HEADS, KEY_DIM)
    np.testing.assert_allclose(grads[2].numpy(), q_kernel_grad, rtol=1e-9, atol=1e-12)


def test_causal_mask_matches_pytorch_and_works_symbolically():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, FEATURES)).astype(np.float32)
    mha = keras.layers.MultiHeadAttention(HEADS, KEY_DIM)
    out = mha(x, x, use_causal_mask=True)
    t = _torch_mha(mha).float()
    causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    t_out, _ = t(torch.tensor(x), torch.tensor(x), torch.tensor(x), attn_mask=causal)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    # The first step sees only itself: changing later steps leaves it alone.
    changed = x.copy()
    changed[:, 1:] += 1
    np.testing.assert_allclose(mha(changed, changed, use_causal_mask=True).numpy()[:, 0], out.numpy()[:, 0],
                               rtol=1e-6)

    inputs = keras.Input(shape=(4, FEATURES))
    model = keras.Model(inputs, mha(inputs, inputs, use_causal_mask=True))
    np.testing.assert_allclose(model(x).numpy(), out.numpy(), rtol=1e-6)


def test_attention_matches_a_reference():
    rng = np.random.default_rng(2)
    q, v, k = (rng.standard_normal((2, n, 4)) for n in (3, 5, 5))
    out = keras.layers.Attention()([q, v, k]).numpy()
    scores = torch.tensor(q) @ torch.tensor(k).transpose(1, 2)
    np.testing.assert_allclose(out, (torch.softmax(scores, -1) @ torch.tensor(v)).numpy(), rtol=1e-12)
    concat = keras.layers.Attention(score_mode="concat")([q, v, k]).numpy()
    s = np.tanh(q[:, :, None, :] + k[:, None, :, :]).sum(-1)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(concat, (p / p.sum(-1, keepdims=True)) @ v, rtol=1e-12)


def test_attention_uses_the_query_and_value_masks():
    # As Keras': padded value steps get no attention, padded query steps give zeros, and
    # the output keeps the query's mask.
    ids_q, ids_v = np.array([[1, 2, 0], [3, 0, 0]]), np.array([[4, 5, 6, 0], [7, 8, 0, 0]])
    iq, iv = keras.Input(shape=(3,), dtype=ef.int64), keras.Input(shape=(4,), dtype=ef.int64)
    embedding = keras.layers.Embedding(10, 5, mask_zero=True)
    attended = keras.layers.Attention()([embedding(iq), embedding(iv)])
    model = keras.Model([iq, iv], attended)
    pooled = keras.Model([iq, iv], keras.layers.GlobalAveragePooling1D()(attended))
    table = embedding.variables[0].numpy().astype(np.float64)
    q, v = table[ids_q], table[ids_v]
    scores = q @ v.transpose(0, 2, 1) - 1e9 * (ids_v == 0)[:, None, :]
    p = np.exp(scores - scores.max(-1, keepdims=True))
    expected = (p / p.sum(-1, keepdims=True)) @ v * (ids_q != 0)[..., None]
    np.testing.assert_allclose(model([ids_q, ids_v]).numpy(), expected, rtol=1e-5, atol=1e-6)
    mean_of_real_steps = expected.sum(1) / (ids_q != 0).sum(1, keepdims=True)
    np.testing.assert_allclose(pooled([ids_q, ids_v]).numpy(), mean_of_real_steps, rtol=1e-5, atol=1e-6)


def test_bad_inputs_and_config_round_trip(tmp_path):
    mha = keras.layers.MultiHeadAttention(2, 4, dropout=0.1, name="attn")
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"query must be \[batch, steps, features\]"):
        mha(ef.ones([2, 3]), ef.ones([2, 3]))
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"takes \[query, value"):
        keras.layers.Attention()(ef.ones([1, 2, 3]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="num_heads"):
        keras.layers.MultiHeadAttention(0, 4)

    tokens = keras.Input(shape=(6, 8))
    attended = keras.layers.MultiHeadAttention(2, 4, name="attn")(tokens, tokens)
    normed = keras.layers.LayerNormalization()(keras.layers.Add()([tokens, attended]))
    model = keras.Model(tokens, keras.layers.Dense(3)(keras.layers.GlobalAveragePooling1D()(normed)))
    data = np.random.default_rng(3).standard_normal((2, 6, 8)).astype(np.float32)
    model.save(tmp_path / "encoder.safetensors")
    loaded = keras.load_model(tmp_path / "encoder.safetensors")
    np.testing.assert_array_equal(loaded(data).numpy(), model(data).numpy())


def test_time_distributed_applies_the_layer_per_step():
    dense = keras.layers.Dense(2)
    wrapped = keras.layers.TimeDistributed(dense)
    x = np.random.default_rng(4).standard_normal((3, 4, 5)).astype(np.float32)
    out = wrapped(x).numpy()
    assert out.shape == (3, 4, 2)
    for step in range(4):
        np.testing.assert_allclose(out[:, step], dense(x[:, step]).numpy(), rtol=1e-6)
    tokens = keras.Input(shape=(4, 5))
    assert keras.layers.TimeDistributed(keras.layers.Dense(7))(tokens).shape == ef.TensorShape([None, 4, 7])


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "ave", "mul", None])
def test_bidirectional_lstm_matches_pytorch(merge_mode, tmp_path):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 3))
    layer = keras.layers.Bidirectional(keras.layers.LSTM(4, return_sequences=True), merge_mode=merge_mode)
    out = layer(x)
    t = torch.nn.LSTM(3, 4, batch_first=True, bidirectional=True, dtype=torch.float64)
    with torch.no_grad():
        for suffix, rnn in (("", layer.forward_layer), ("_reverse", layer.backward_layer)):
            kernel, recurrent, bias = (v.numpy() for v in rnn.variables)
            # Keras gates i, f, c, o are torch's i, f, g, o.
            getattr(t, f"weight_ih_l0{suffix}").copy_(torch.tensor(kernel.T))
            getattr(t, f"weight_hh_l0{suffix}").copy_(torch.tensor(recurrent.T))
            getattr(t, f"bias_ih_l0{suffix}").copy_(torch.tensor(bias))
            getattr(t, f"bias_hh_l0{suffix}").zero_()
    t_out = t(torch.tensor(x))[0].detach().numpy()
    forward, backward = t_out[..., :4], t_out[..., 4:]
    expected = {"concat": t_out, "sum": forward + backward, "ave": (forward + backward) / 2,
                "mul": forward * backward}.get(merge_mode)
    if merge_mode is None:
        np.testing.assert_allclose(out[0].numpy(), forward, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(out[1].numpy(), backward, rtol=1e-10, atol=1e-12)
        return
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)
    model = keras.Sequential([layer])
    model(x)  # built: its input shape is saved
    model.save(tmp_path / "birnn.safetensors")
    np.testing.assert_array_equal(keras.load_model(tmp_path / "birnn.safetensors")(x).numpy(), out.numpy())
