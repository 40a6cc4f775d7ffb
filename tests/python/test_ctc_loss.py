"""ef.nn.ctc_loss against torch.nn.functional.ctc_loss (reduction="none", applied to
log_softmax of the same logits): losses and gradients over random lengths, repeated
labels, other blanks, batch-major logits, float32, and sequences no alignment fits."""
import numpy as np
import pytest
import torch

import eagerflow as ef


def random_problem(seed, frames=12, batch=5, classes=6, max_labels=5, blank=0):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((frames, batch, classes)) * 2
    logit_length = rng.integers(max_labels * 2 + 1, frames + 1, batch)
    label_length = rng.integers(0, max_labels + 1, batch)
    others = [c for c in range(classes) if c != blank]
    labels = rng.choice(others, (batch, max_labels))
    labels[0, :2] = others[1]  # a repeated label needs a blank between its copies
    return logits, labels, label_length, logit_length


def torch_ctc(logits, labels, label_length, logit_length, blank=0):
    t = torch.tensor(logits, requires_grad=True)
    loss = torch.nn.functional.ctc_loss(t.log_softmax(2), torch.tensor(labels), torch.tensor(logit_length),
                                        torch.tensor(label_length), blank=blank, reduction="none")
    weights = torch.linspace(0.5, 1.5, len(label_length), dtype=t.dtype)
    (loss * weights).sum().backward()
    return loss.detach().numpy(), t.grad.numpy(), weights.numpy()


def ef_ctc(logits, labels, label_length, logit_length, weights, **kwargs):
    x = ef.constant(logits)
    with ef.GradientTape() as tape:
        tape.watch(x)
        loss = ef.nn.ctc_loss(labels, x, label_length, logit_length, **kwargs)
        total = ef.reduce_sum(loss * ef.constant(weights.astype(logits.dtype)))
    return loss.numpy(), tape.gradient(total, x).numpy()


@pytest.mark.parametrize("seed", range(4))
def test_losses_and_gradients_match_torch(seed):
    logits, labels, label_length, logit_length = random_problem(seed)
    expected, expected_grad, weights = torch_ctc(logits, labels, label_length, logit_length)
    loss, grad = ef_ctc(logits, labels, label_length, logit_length, weights)
    np.testing.assert_allclose(loss, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)


def test_other_blanks_batch_major_and_float32():
    logits, labels, label_length, logit_length = random_problem(7, blank=3)
    expected, expected_grad, weights = torch_ctc(logits, labels, label_length, logit_length, blank=3)
    loss, grad = ef_ctc(logits, labels, label_length, logit_length, weights, blank_index=3)
    np.testing.assert_allclose(loss, expected, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)
    # Batch-major logits; blank -3 is class 3 of 6.
    loss, grad = ef_ctc(logits.transpose(1, 0, 2), labels, label_length, logit_length, weights,
                        logits_time_major=False, blank_index=-3)
    np.testing.assert_allclose(loss, expected, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad.transpose(1, 0, 2), rtol=1e-10, atol=1e-12)
    loss, grad = ef_ctc(logits.astype(np.float32), labels, label_length, logit_length, weights, blank_index=3)
    assert loss.dtype == np.float32
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-4, atol=1e-5)


def test_a_sequence_too_long_for_its_frames_is_infinite_as_in_torch():
    logits, labels, label_length, logit_length = random_problem(8)
    labels[1, :3] = [1, 1, 1]  # needs five frames
    label_length[1], logit_length[1] = 3, 4
    expected, expected_grad, weights = torch_ctc(logits, labels, label_length, logit_length)
    loss, grad = ef_ctc(logits, labels, label_length, logit_length, weights)
    assert np.isinf(loss[1]) and np.isinf(expected[1])
    assert np.isnan(grad[:4, 1]).all() and np.isnan(expected_grad[:4, 1]).all()
    np.testing.assert_allclose(np.delete(loss, 1), np.delete(expected, 1), rtol=1e-12)


def test_inside_a_function_and_bad_labels():
    logits, labels, label_length, logit_length = random_problem(9)
    fn = ef.function(lambda x: ef.nn.ctc_loss(labels, x, label_length, logit_length))
    eager = ef.nn.ctc_loss(labels, logits, label_length, logit_length).numpy()
    np.testing.assert_allclose(fn(ef.constant(logits)).numpy(), eager, rtol=1e-15)
    labels[2, 0] = 0
    label_length[2] = 1
    with pytest.raises(ef.errors.InvalidArgumentError, match="blank"):
        ef.nn.ctc_loss(labels, logits, label_length, logit_length)


def test_a_negative_blank_inside_a_function_with_unknown_classes():
    logits, labels, label_length, logit_length = random_problem(10, blank=5)
    spec = [ef.TensorSpec([None, None], ef.int64), ef.TensorSpec([None, None, None], ef.float64),
            ef.TensorSpec([None], ef.int64), ef.TensorSpec([None], ef.int64)]
    fn = ef.function(lambda a, b, c, d: ef.nn.ctc_loss(a, b, c, d, blank_index=-1), input_signature=spec)
    expected, _, _ = torch_ctc(logits, labels, label_length, logit_length, blank=5)
    np.testing.assert_allclose(fn(labels, logits, label_length, logit_length).numpy(), expected, rtol=1e-12)
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"blank_index' = -7 is outside \[-6, 6\)"):
        ef.nn.ctc_loss(labels, logits, label_length, logit_length, blank_index=-7)
    # A certain sequence (no frames, no labels) costs +0.
    zero = ef.nn.ctc_loss(np.zeros((1, 1), np.int32), np.zeros((1, 1, 3)), [0], [0]).numpy()
    assert zero[0] == 0 and not np.signbit(zero[0])
