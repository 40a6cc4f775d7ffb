"""Keras utilities: Progbar."""
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
        """Shows progress at step `current` (1-based) with (name, value) pairs."""
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
