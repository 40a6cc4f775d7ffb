"""Keras utilities: Progbar, plot_history."""
import sys
import time

from eagerflow._core import keras as _keras


class Progbar:
    """A training progress bar (tf.keras.utils.Progbar). On a terminal it redraws one
    line in place, at most every `interval` seconds; elsewhere it prints one plain line
    when `target` is reached. The layout is eagerflow's C++ Progbar's."""

    def __init__(self, target, width=30, interval=0.05, file=None):
        self._layout = _keras._ProgbarLayout(target, width)
        self._target = target
        self._interval = interval
        self._file = file if file is not None else sys.stdout
        self._interactive = hasattr(self._file, "isatty") and self._file.isatty()
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._finished = False

    def update(self, current, values=None):
        """Shows the progress at step ``current``.

        On a terminal the line is redrawn at most every ``interval`` seconds;
        elsewhere one line is printed when ``target`` is reached.

        Args:
          current: The step reached, counting from 1.
          values: None, or a list of (name, value) pairs to show (e.g. the loss).
        """
        if self._finished:
            return
        now = time.monotonic()
        last = current >= self._target
        if not last and (not self._interactive or now - self._last_draw < self._interval):
            return
        self._last_draw = now
        values = [(name, float(value)) for name, value in (values or [])]
        line = self._layout.render(min(current, self._target), values, now - self._start)
        if self._interactive:
            self._file.write("\r" + line + "\033[K" + ("\n" if last else ""))
        else:
            self._file.write(line + "\n")
        self._file.flush()
        self._finished = last


def plot_history(history, path, metrics=None, title=None):
    """Draws the curves of a fit's History (or its .history dict) into an image file at
    `path` (PNG, SVG or PDF by its extension), one panel per metric with its training and
    validation ("val_") curves over the epochs. `metrics`: the names to draw (default:
    every one that is not a validation entry). Needs matplotlib (Debian's
    python3-matplotlib). Returns the path."""
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("plot_history needs matplotlib: install Debian's python3-matplotlib "
                          "(apt-get install python3-matplotlib)") from e
    logs = history.history if hasattr(history, "history") else dict(history)
    epochs = list(getattr(history, "epoch", None) or range(len(next(iter(logs.values()), []))))
    names = list(metrics) if metrics is not None else [k for k in logs if not k.startswith("val_")]
    missing = [n for n in names if n not in logs]
    if missing:
        raise ValueError(f"plot_history: {missing} not in the history, which has {sorted(logs)}")
    if not names:
        raise ValueError("plot_history: the history has nothing to draw")
    figure, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.5), squeeze=False)
    for ax, name in zip(axes[0], names):
        x = [e + 1 for e in epochs[:len(logs[name])]]
        ax.plot(x, logs[name], marker="o", label="training")
        if "val_" + name in logs:
            ax.plot(x, logs["val_" + name][:len(x)], marker="o", label="validation")
        ax.set_title(name)
        ax.set_xlabel("epoch")
        ax.grid(alpha=0.3)
        ax.legend()
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot rows for the integer class ids in ``y``, as a NumPy array (Keras' helper).

    >>> ef.keras.utils.to_categorical([0, 2, 1], num_classes=3)
    array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 1., 0.]], dtype=float32)

    Args:
      y: Integer class ids (any shape), non-negative.
      num_classes: The number of classes; None: max(y) + 1.
      dtype: The result's NumPy dtype.

    Returns:
      An array of shape y.shape + (num_classes,); a trailing axis of size 1 in y is
      dropped first, as Keras does.

    Raises:
      ValueError: ids that are negative, not integers, or not below num_classes.
    """
    import numpy as np
    ids = np.asarray(y.numpy() if hasattr(y, "numpy") else y)
    if ids.size and not np.issubdtype(ids.dtype, np.integer):
        if not np.all(np.equal(np.mod(ids, 1), 0)):
            raise ValueError("to_categorical: class ids must be integers")
        ids = ids.astype(np.int64)
    if ids.ndim > 1 and ids.shape[-1] == 1:
        ids = ids.reshape(ids.shape[:-1])
    if ids.size and ids.min() < 0:
        raise ValueError(f"to_categorical: class ids must be non-negative, got {ids.min()}")
    if num_classes is None:
        num_classes = int(ids.max()) + 1 if ids.size else 0
    if ids.size and ids.max() >= num_classes:
        raise ValueError(f"to_categorical: class id {ids.max()} is not below num_classes={num_classes}")
    out = np.zeros(ids.shape + (num_classes,), dtype=dtype)
    np.put_along_axis(out, ids.astype(np.int64)[..., None], 1, axis=-1)
    return out
