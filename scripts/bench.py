#!/usr/bin/env python3
"""Runs eagerflow's and PyTorch's benchmarks in one go and prints them side by side.

  scripts/bench.py [--build-dir build-bench] [--repetitions 5] [--min-time 0.2] [--filter REGEX]

Both binaries (bench/cpp: ef_bench, torch_bench) register the same case names; each case
runs `repetitions` times and the median is reported. bench/python/bench_python.py adds the
Python-level cases (eagerflow's package against PyTorch's Python API, in one process),
bench/python/bench_lbfgs.py the seconds per L-BFGS iteration of the sparse autoencoder, and
bench/python/bench_training.py the seconds per epoch and peak memory of the Fashion-MNIST
examples' training loop, and bench/python/bench_function.py traced functions against eager
code (elementwise chains, the L-BFGS two-loop recursion), and bench/python/bench_half.py
bfloat16/float16 matmuls and a training step per mixed-precision policy, and
bench/python/bench_einsum.py einsum contractions with sides of 512 to 2048, and
bench/python/bench_linalg.py linalg.solve and cholesky with sides of 512 to 2048, and
bench/python/bench_keras.py Keras' fit against a hand-written loop and PyTorch's (the
Fashion-MNIST MLP's epoch) and LSTM, MultiHeadAttention and transformer-block training
steps against torch.nn.LSTM / MultiheadAttention.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

# How each case family is shown: unit, and the work per op that turns a time into a rate.
FAMILIES = {
    "dispatch": ("us/op", None),
    "matmul": ("GFLOP/s", lambda n: 2.0 * n ** 3 / 1e9),
    # bench/python/bench_half.py: half-precision matmuls and training steps per policy
    "matmul_bf16": ("GFLOP/s", lambda n: 2.0 * n ** 3 / 1e9),
    "matmul_f16": ("GFLOP/s", lambda n: 2.0 * n ** 3 / 1e9),
    "train_step": ("us/step", None),  # also bench/python/bench_keras.py: LSTM, attention
    "add": ("GB/s", lambda n: 3 * 4 * n / 1e9),
    "exp": ("GB/s", lambda n: 2 * 4 * n / 1e9),
    "reduce_sum": ("GB/s", lambda n: 4 * n / 1e9),
    "lbfgs": ("s/iter", None),  # bench/python/bench_lbfgs.py: seconds per L-BFGS iteration
    "epoch": ("s/epoch", None),  # bench/python/bench_training.py: Fashion-MNIST examples
    "peak_rss": ("MB", None),  # bench/python/bench_training.py: peak resident set growth (bytes)
    # bench/python/bench_function.py: ef.function (or our eager code) against PyTorch eager
    "chain": ("us/call", None),
    "arith": ("us/call", None),
    "two_loop": ("us/call", None),
    "branches": ("us/call", None),
    "pass": ("us/call", None),
    "einsum": ("us/op", None),  # bench/python/bench_einsum.py: einsum contractions
    "linalg": ("us/op", None),  # bench/python/bench_linalg.py: solve and cholesky
    "saved_model": ("us/call", None),  # bench/python/bench_function.py: a loaded saved model's call
}
# Families whose case runs n ops per iteration (name "family/n"): shown as time per op.
PER_OP = {"backward"}


def run_python(args):
    """bench/python/bench_python.py against the package in the build tree:
    {case: (eagerflow seconds per op, PyTorch seconds per op)}, or {} without it."""
    package = os.path.join(args.build_dir, "python")
    script = os.path.join(os.path.dirname(__file__), "..", "bench", "python", "bench_python.py")
    if not os.path.isdir(os.path.join(package, "eagerflow")):
        return {}
    env = dict(os.environ, PYTHONPATH=os.path.abspath(package))
    results = {}
    for path in (script, script.replace("bench_python.py", "bench_lbfgs.py"),
                 script.replace("bench_python.py", "bench_training.py"),
                 script.replace("bench_python.py", "bench_function.py"),
                 script.replace("bench_python.py", "bench_half.py"),
                 script.replace("bench_python.py", "bench_einsum.py"),
                 script.replace("bench_python.py", "bench_linalg.py"),
                 script.replace("bench_python.py", "bench_keras.py")):
        out = subprocess.run(["/usr/bin/python3", path, f"--repetitions={args.repetitions}"], check=True,
                             stdout=subprocess.PIPE, text=True, env=env).stdout
        results.update({name: (v["eagerflow"], v["pytorch"]) for name, v in json.loads(out).items()})
    return results


def run(binary, args):
    """Runs one benchmark binary; returns {case name: median real time in seconds}."""
    if not os.path.exists(binary):
        return None
    cmd = [binary, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
           "--benchmark_report_aggregates_only=true", f"--benchmark_min_time={args.min_time}"]
    if args.filter:
        cmd.append(f"--benchmark_filter={args.filter}")
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    data = json.loads(out)
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    medians = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            name = b["run_name"].removesuffix("/real_time")  # added by UseRealTime()
            medians[name] = b["real_time"] * scale[b["time_unit"]]
    return medians, data.get("context", {})


def describe(name, seconds):
    """(unit, value) for a case: time per op for dispatch cases, else a rate."""
    family = name.split("/")[0]
    unit, work = FAMILIES.get(family, ("us/op", None))
    if seconds is None:
        return unit, None
    if family in PER_OP:
        return unit, seconds * 1e6 / int(name.split("/")[1])
    if family == "python":  # already per op
        return unit, seconds * 1e6
    if family in ("lbfgs", "epoch"):
        return unit, seconds
    if family == "peak_rss":  # bytes, not seconds; "speedup" is then PyTorch's / eagerflow's memory
        return unit, seconds / 1e6
    if work is None:
        return unit, seconds * 1e6
    return unit, work(int(name.split("/")[1])) / seconds


def fmt(v):
    if v is None:
        return "n/a"
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build-bench")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--filter", default="")
    args = ap.parse_args()

    bench_dir = os.path.join(args.build_dir, "bench", "cpp")
    ours = run(os.path.join(bench_dir, "ef_bench"), args)
    if ours is None:
        sys.exit(f"bench: {bench_dir}/ef_bench not found; run `make bench`")
    theirs = run(os.path.join(bench_dir, "torch_bench"), args)
    ours, ctx = ours
    theirs_medians, theirs_ctx = theirs if theirs else ({}, {})

    print(f"machine: {platform.processor() or platform.machine()}, {ctx.get('num_cpus', '?')} CPUs "
          f"at {ctx.get('mhz_per_cpu', '?')} MHz; threads: eagerflow {ctx.get('threads', '?')}, "
          f"PyTorch {theirs_ctx.get('threads', 'n/a')} ({theirs_ctx.get('library', 'libtorch not built')})")
    print(f"medians of {args.repetitions} repetitions. speedup = PyTorch time / eagerflow time "
          f"(> 1: eagerflow is faster); rates are higher-is-better.")
    if not args.filter or "python" in args.filter:
        for name, (ef_seconds, pt_seconds) in run_python(args).items():
            ours[name], theirs_medians[name] = ef_seconds, pt_seconds
    names = list(ours) + [n for n in theirs_medians if n not in ours]
    rows = [("benchmark", "unit", "eagerflow", "PyTorch", "speedup")]
    for name in names:
        unit, ef_value = describe(name, ours.get(name))
        _, pt_value = describe(name, theirs_medians.get(name))
        speedup = None
        if ours.get(name) is not None and theirs_medians.get(name) is not None:
            speedup = theirs_medians[name] / ours[name]
        rows.append((name, unit, fmt(ef_value), fmt(pt_value), "n/a" if speedup is None else f"{speedup:.2f}x"))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if k == 0:
            print("  ".join("-" * w for w in widths))


if __name__ == "__main__":
    main()
