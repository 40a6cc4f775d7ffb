"""The profiler: every op run, eagerly or inside ef.function, with its time, input
shapes, thread and device.

    ef.profiler.start("logs/profile")
    ... training steps ...
    profile = ef.profiler.stop()          # writes logs/profile/<host>_<pid>.<ms>.pt.trace.json
    print(profile.key_averages().table(row_limit=10))

    with ef.profiler.Profile("logs/profile") as prof:
        ...
    prof.key_averages()

The trace file is Chrome trace-event JSON (PyTorch's profiler format): open it in
Perfetto (ui.perfetto.dev) or chrome://tracing. When no profile runs an op pays one
atomic load; while one runs, well under a microsecond. See eagerflow/runtime/profiler.h.
"""
import types

from eagerflow._core import profiler as _profiler

OpEvent = _profiler.OpEvent
OpStats = _profiler.OpStats


class KeyAverages(list):
    """The per-op statistics of a profile: a list of OpStats, most total time first.

    Each row has name, count, total_us, mean_us, min_us and max_us.
    """

    def __init__(self, rows, profile):
        super().__init__(rows)
        self._profile = profile

    def table(self, sort_by="total", row_limit=0):
        """The rows as a text table. sort_by: "total" (the default), "count" or "mean"
        (PyTorch's "cpu_time_total", "count" and "cpu_time" are accepted too)."""
        keys = {"total": None, "cpu_time_total": None, "self_cpu_time_total": None,
                "count": "count", "mean": "mean_us", "cpu_time": "mean_us"}
        if sort_by not in keys:
            raise ValueError(f"table: sort_by must be one of {sorted(keys)}, got {sort_by!r}")
        if keys[sort_by] is None:
            return self._profile._table(row_limit)
        rows = sorted(self, key=lambda r: getattr(r, keys[sort_by]), reverse=True)
        limit = row_limit or len(rows)
        width = max([4] + [len(r.name) for r in rows])
        lines = [f"{'Name':<{width}}  {'Calls':>8}  {'Total':>12}  {'Mean':>12}"]
        lines += [f"{r.name:<{width}}  {r.count:>8}  {r.total_us:>10.3f}us  {r.mean_us:>10.3f}us" for r in rows[:limit]]
        return "\n".join(lines) + "\n"


def _key_averages(profile):
    return KeyAverages(profile._key_averages(), profile)


_profiler.Profile.key_averages = _key_averages
_profiler.Profile.table = lambda self, row_limit=0: self._table(row_limit)


def start(logdir=None, record_shapes=True):
    """Starts recording every op run (eagerly or inside ef.function).

    >>> ef.profiler.start()
    >>> _ = ef.add([1.], [2.])
    >>> profile = ef.profiler.stop()
    >>> [event.name for event in profile.events]
    ['add']

    Args:
      logdir: None, or a directory: stop() then writes a Chrome trace-event JSON
        file there (<host>_<pid>.<ms>.pt.trace.json, PyTorch's format).
      record_shapes: Whether to record each op's input shapes (default True).
    """
    _profiler.start(logdir, record_shapes)


def stop():
    """Stops recording and returns the Profile.

    Returns:
      A Profile: its ``events`` (OpEvents), ``key_averages()`` (per-op OpStats,
      with ``table()``), ``wall_us`` and ``trace_path``.
    """
    return _profiler.stop()


class Profile:
    """A context manager profiling its block (tf.profiler.experimental.Profile); after it,
    the Profile's events, key_averages() and trace_path are available on it."""

    def __init__(self, logdir=None, record_shapes=True):
        self._logdir, self._record_shapes, self._profile = logdir, record_shapes, None

    def __enter__(self):
        start(self._logdir, self._record_shapes)
        return self

    def __exit__(self, *exc):
        self._profile = stop()
        return False

    def __getattr__(self, name):
        if name.startswith("_") or self._profile is None:
            raise AttributeError(name)
        return getattr(self._profile, name)


# TensorFlow's spelling: tf.profiler.experimental.start / stop / Profile.
experimental = types.SimpleNamespace(start=start, stop=stop, Profile=Profile)
