"""TensorBoard summaries, as TensorFlow's tf.summary writes them.

    writer = ef.summary.create_file_writer("logs/run1")
    with writer.as_default():
        for step in range(100):
            ...
            ef.summary.scalar("loss", loss, step=step)
            ef.summary.histogram("weights", w, step=step)
    writer.flush()                       # then: tensorboard --logdir logs

Each summary op returns False (writing nothing) when no writer is the default. Files
are TensorBoard event files (TFRecords of Event protocol buffers); a background thread
writes them, so summaries never wait for the disk. `read_event_file(path)` reads one
back (checking every record's CRC) as a list of dicts. See eagerflow/io/summary.h.
"""
import types

from eagerflow._core import summary as _summary

SummaryWriter = _summary.SummaryWriter
create_file_writer = _summary.create_file_writer
scalar = _summary.scalar
histogram = _summary.histogram
image = _summary.image
text = _summary.text
graph = _summary.graph
trace_off = _summary.trace_off
read_event_file = _summary.read_event_file


def trace_on(graph=True, profiler=False):
    """Keeps the graph of every ef.function called from now on, until trace_export
    writes them (TensorBoard's graph tab) or trace_off drops them."""
    if not graph:
        raise ValueError("ef.summary.trace_on: graph=False leaves nothing to trace")
    if profiler:
        raise NotImplementedError("ef.summary.trace_on: profiler=True is not supported; use ef.profiler")
    _summary.trace_on()


def trace_export(name, step=None, profiler_outdir=None):
    """Writes the graphs traced since trace_on to the default writer and stops tracing."""
    del profiler_outdir  # only graphs are traced (trace_on)
    return _summary.trace_export(name, step)


def should_record_summaries():
    """Returns whether a default writer is set on this thread.

    When it is, the summary ops write; otherwise they return False.
    """
    return _summary.default_writer() is not None


experimental = types.SimpleNamespace(set_step=_summary.set_step, get_step=_summary.get_step)
