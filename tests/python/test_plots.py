"""keras.utils.plot_history and examples/python/plot_training.py (matplotlib from
Debian's python3-matplotlib; without it plot_history says how to install it)."""
import os
import pathlib
import subprocess
import sys

import pytest

import eagerflow as ef

matplotlib = pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed")


def _is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_history_draws_each_metric(tmp_path):
    history = {"loss": [1.0, 0.6, 0.4], "val_loss": [1.1, 0.7, 0.6], "accuracy": [0.5, 0.7, 0.8]}
    path = ef.keras.utils.plot_history(history, str(tmp_path / "curves.png"), title="run")
    assert _is_png(path) and os.path.getsize(path) > 5000
    svg = ef.keras.utils.plot_history(history, str(tmp_path / "loss.svg"), metrics=["loss"])
    text = open(svg).read()
    assert "<svg" in text and "training" in text and "validation" in text
    with pytest.raises(ValueError, match="not in the history"):
        ef.keras.utils.plot_history(history, str(tmp_path / "x.png"), metrics=["precision"])


def test_plot_history_without_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="python3-matplotlib"):
        ef.keras.utils.plot_history({"loss": [1.0]}, str(tmp_path / "x.png"))


def test_the_plot_training_example(tmp_path):
    root = pathlib.Path(__file__).parents[2]
    run = subprocess.run([sys.executable, str(root / "examples/python/plot_training.py"), "--epochs", "2",
                          "--train-examples", "600", "--checkpoint-dir", str(tmp_path)], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=300)
    if run.returncode == 77:
        pytest.skip("Fashion-MNIST is not installed")
    assert run.returncode == 0, run.stderr
    assert _is_png(tmp_path / "training_curves.png")
    for part in ("train", "validation"):
        (event_file,) = os.listdir(tmp_path / "logs" / part)
        events = ef.summary.read_event_file(str(tmp_path / "logs" / part / event_file))
        tags = {v["tag"] for e in events for v in e["values"]}
        assert {"epoch_loss", "epoch_accuracy"} <= tags
