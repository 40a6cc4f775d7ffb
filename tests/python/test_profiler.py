"""ef.profiler from Python: op runs recorded eagerly and inside ef.function, per-op
statistics and tables, and the Chrome trace file. (C++: tests/cpp/runtime/profiler_test.cpp.)"""
import json
import os

import pytest

import eagerflow as ef


def test_profile_records_eager_and_function_ops(tmp_path):
    @ef.function
    def step(x):
        return ef.tanh(ef.matmul(x, x))

    x = ef.ones([8, 8])
    step(x)  # traced outside the profile
    with ef.profiler.Profile(str(tmp_path)) as prof:
        ef.exp(x)
        step(x)
        step(x)
    names = [e.name for e in prof.events]
    assert names.count("matmul") == 2 and names.count("exp") == 1
    exp_event = prof.events[names.index("exp")]
    assert exp_event.input_shapes == [(8, 8)] and exp_event.device.endswith("CPU:0")
    stats = {row.name: row for row in prof.key_averages()}
    assert stats["matmul"].count == 2
    assert stats["matmul"].min_us <= stats["matmul"].mean_us <= stats["matmul"].max_us
    assert "matmul" in prof.key_averages().table(row_limit=5)
    assert prof.key_averages().table(sort_by="count").splitlines()[0].startswith("Name")

    assert os.path.dirname(prof.trace_path) == str(tmp_path) and prof.trace_path.endswith(".pt.trace.json")
    with open(prof.trace_path) as f:
        trace = json.load(f)
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(ops) == len(prof.events)
    assert all(e["dur"] >= 0 and "device" in e["args"] for e in ops)


def test_start_stop_misuse():
    ef.profiler.start()
    with pytest.raises(ef.errors.FailedPreconditionError, match="already running"):
        ef.profiler.start()
    profile = ef.profiler.stop()
    assert profile.trace_path == ""
    with pytest.raises(ef.errors.FailedPreconditionError, match="no profile"):
        ef.profiler.stop()
    with pytest.raises(ValueError, match="sort_by"):
        profile.key_averages().table(sort_by="colour")
