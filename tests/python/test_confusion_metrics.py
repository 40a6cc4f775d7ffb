"""Precision, Recall and AUC (eagerflow/nn/metrics.h) against NumPy computations of
Keras' definitions, the exact ROC area (the Mann-Whitney statistic), and PyTorch's
trapezoid rule; and in Model.compile by name."""
import numpy as np
import pytest
import torch

import eagerflow as ef
from eagerflow import keras


def _counts(y_true, y_pred, thresholds, weight=None):
    truth = y_true.astype(bool).reshape(-1, 1)
    positive = y_pred.reshape(-1, 1) > np.asarray(thresholds)[None, :]
    w = np.ones_like(y_pred, dtype=np.float64) if weight is None else np.broadcast_to(weight, y_pred.shape)
    w = w.reshape(-1, 1)
    return [((a & b) * w).sum(0) for a, b in ((truth, positive), (~truth, positive), (~truth, ~positive),
                                                (truth, ~positive))]


def _keras_thresholds(n):
    return [-1e-7] + [i / (n - 1) for i in range(1, n - 1)] + [1 + 1e-7]


def _safe(num, den):
    return np.where(den == 0, 0.0, num / np.where(den == 0, 1, den))


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 2, (64, 3))
    y_pred = np.clip(0.35 * y_true + 0.65 * rng.random((64, 3)), 0, 1).astype(np.float32)
    weight = rng.random(64).astype(np.float32)
    return y_true, y_pred, weight


def test_precision_and_recall(data):
    y_true, y_pred, weight = data
    thresholds = [0.3, 0.5, 0.8]
    precision = keras.metrics.Precision(thresholds=thresholds)
    recall = keras.metrics.Recall(thresholds=thresholds)
    for m in (precision, recall):  # two batches, the second weighted per example
        m.update_state(y_true[:32], y_pred[:32])
        m.update_state(y_true[32:], y_pred[32:], sample_weight=weight[32:])
    w = np.concatenate([np.ones(32), weight[32:]])[:, None]
    tp, fp, _, fn = _counts(y_true, y_pred.astype(np.float64), thresholds, w)
    np.testing.assert_allclose(precision.result().numpy(), tp / (tp + fp), rtol=1e-5)
    np.testing.assert_allclose(recall.result().numpy(), tp / (tp + fn), rtol=1e-5)
    precision.reset_state()
    assert float(keras.metrics.Precision().result()) == 0.0 and float(precision.result()[0]) == 0.0


def test_top_k_and_class_id(data):
    y_true, y_pred, _ = data
    kept = np.where(y_pred == y_pred.max(1, keepdims=True), y_pred, -np.inf)
    # Keras: with top_k and no thresholds, each example's top k predictions are positive
    # whatever their scores (the default threshold is -inf, not 0.5).
    top1, recall_top1 = keras.metrics.Precision(top_k=1), keras.metrics.Recall(top_k=1)
    for m in (top1, recall_top1):
        m.update_state(y_true, y_pred)
    tp, fp, _, fn = _counts(y_true, kept, [-np.inf])
    assert float(top1.result()) == pytest.approx(float(tp / (tp + fp)), rel=1e-6)
    assert float(recall_top1.result()) == pytest.approx(float(tp / (tp + fn)), rel=1e-6)
    # Given thresholds still apply to the top k.
    top1_half = keras.metrics.Precision(thresholds=0.5, top_k=1)
    top1_half.update_state(y_true, y_pred)
    tp, fp, _, _ = _counts(y_true, kept, [0.5])
    assert float(top1_half.result()) == pytest.approx(float(tp / (tp + fp)), rel=1e-6)
    with pytest.raises(ValueError, match="thresholds is empty"):
        keras.metrics.Precision(thresholds=[])
    second = keras.metrics.Recall(class_id=1)
    second.update_state(y_true, y_pred)
    tp, _, _, fn = _counts(y_true[:, 1], y_pred[:, 1], [0.5])
    assert float(second.result()) == pytest.approx(float(tp / (tp + fn)), rel=1e-6)
    with pytest.raises(ef.errors.InvalidArgumentError, match="class_id"):
        keras.metrics.Recall(class_id=3).update_state(y_true, y_pred)
    with pytest.raises(ef.errors.InvalidArgumentError, match="same shape"):
        keras.metrics.Recall().update_state(y_true[:, 0], y_pred)


@pytest.mark.parametrize("curve", ["ROC", "PR"])
@pytest.mark.parametrize("method", ["interpolation", "minoring", "majoring"])
def test_auc_matches_keras_definition(data, curve, method):
    y_true, y_pred, weight = data
    n = 50
    auc = keras.metrics.AUC(num_thresholds=n, curve=curve, summation_method=method)
    auc.update_state(y_true, y_pred, sample_weight=weight)
    tp, fp, tn, fn = _counts(y_true, y_pred.astype(np.float64), _keras_thresholds(n), weight[:, None])
    if curve == "PR" and method == "interpolation":
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        slope = _safe(dtp, np.maximum(p[:-1] - p[1:], 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:-1] > 0) & (p[1:] > 0), _safe(p[:-1], np.maximum(p[1:], 0)), 1.0)
        want = _safe(slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0)).sum()
    else:
        x, y = (_safe(fp, fp + tn), _safe(tp, tp + fn)) if curve == "ROC" else (_safe(tp, tp + fn), _safe(tp, tp + fp))
        heights = {"interpolation": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
                   "majoring": np.maximum(y[:-1], y[1:])}[method]
        want = ((x[:-1] - x[1:]) * heights).sum()
    assert float(auc.result()) == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_roc_auc_converges_to_the_exact_area():
    rng = np.random.default_rng(1)
    y_true = rng.integers(0, 2, 2000)
    scores = np.clip(0.3 * y_true + 0.7 * rng.random(2000), 0, 1).astype(np.float32)
    auc = keras.metrics.AUC(num_thresholds=2000)
    auc.update_state(y_true, scores)
    pos, neg = scores[y_true == 1], scores[y_true == 0]
    exact = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg))
    assert float(auc.result()) == pytest.approx(exact, abs=2e-3)
    # The trapezoids themselves, as torch.trapezoid integrates the same ROC points.
    tp, fp, tn, fn = _counts(y_true, scores.astype(np.float64), _keras_thresholds(2000))
    fpr, tpr = torch.tensor(fp / (fp + tn)), torch.tensor(tp / (tp + fn))
    assert float(auc.result()) == pytest.approx(-float(torch.trapezoid(tpr, fpr)), rel=1e-5)
    logits = keras.metrics.AUC(num_thresholds=2000, from_logits=True)
    logits.update_state(y_true, np.log(scores + 1e-6) - np.log1p(-scores + 1e-6))
    assert float(logits.result()) == pytest.approx(float(auc.result()), abs=2e-3)


def test_metrics_by_name_in_compile():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((200, 4)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    ef.random.set_seed(0)
    model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy",
                  metrics=["precision", "recall", "auc", keras.metrics.AUC(curve="PR", name="pr_auc")])
    history = model.fit(x, y, epochs=5, batch_size=20, verbose=0)
    assert {"precision", "recall", "auc", "pr_auc"} <= set(history.history)
    assert history.history["auc"][-1] > 0.95
    results = model.evaluate(x, y, return_dict=True, verbose=0)
    auc = keras.metrics.AUC()
    auc.update_state(y, model.predict(x))
    assert results["auc"] == pytest.approx(float(auc.result()), rel=1e-6)
    with pytest.raises(ef.errors.InvalidArgumentError, match="curve"):
        keras.metrics.AUC(curve="DET")
    with pytest.raises(ef.errors.InvalidArgumentError, match="num_thresholds"):
        keras.metrics.AUC(num_thresholds=1)
