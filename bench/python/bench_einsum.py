#!/usr/bin/env python3
"""ef.einsum against torch.einsum on float32 contractions with sides of 512 to 2048.

Prints JSON: {"einsum/<case>/<n>": {"eagerflow": seconds per call, "pytorch": ...}},
each the median of `--repetitions` timed runs (of enough calls to take ~0.1 s) after a
warm-up call; the two libraries take turns, so that a change in the machine's load
falls on both. Both use EF_NUM_THREADS threads (default: every core). Cases (one table, below):
  matmul      ij,jk->ik             [n, n] x [n, n]
  transposed  ji,kj->ik             both operands need a transpose
  attention   bhqd,bhkd->bhqk       [2, 8, n, 64] x [2, 8, n, 64] (attention scores)
  batched     bij,bjk->bik          [4, n, n] x [4, n, n]
  chain       ij,jk,kl->il          [n, 64] x [64, n] x [n, 64]: the order matters
                                    (left to right builds an n x n intermediate)
  inner       ij,ij->               [n, n] . [n, n] (no matmul: multiply and sum)
"""
import argparse
import json
import os
import statistics
import time

import numpy as np
import torch

import eagerflow as ef

# (case, equation, operand shapes for side n, sides)
CASES = [
    ("matmul", "ij,jk->ik", lambda n: [(n, n), (n, n)], (512, 1024, 2048)),
    ("transposed", "ji,kj->ik", lambda n: [(n, n), (n, n)], (512, 1024, 2048)),
    ("attention", "bhqd,bhkd->bhqk", lambda n: [(2, 8, n, 64), (2, 8, n, 64)], (512, 1024, 2048)),
    ("batched", "bij,bjk->bik", lambda n: [(4, n, n), (4, n, n)], (512, 1024)),
    ("chain", "ij,jk,kl->il", lambda n: [(n, 64), (64, n), (n, 64)], (512, 1024, 2048)),
    ("inner", "ij,ij->", lambda n: [(n, n), (n, n)], (512, 1024, 2048)),
]


def seconds_per_call(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def interleaved_medians(fns, repetitions):
    """The median seconds per call of each fn, the fns timed in turn in each repetition."""
    calls = [max(1, round(0.1 / seconds_per_call(fn, 1))) for fn in fns]  # also the warm-up
    times = [[] for _ in fns]
    for _ in range(repetitions):
        for fn, n, t in zip(fns, calls, times):
            t.append(seconds_per_call(fn, n))
    return [statistics.median(t) for t in times]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--filter", default="", help="run only the cases whose name contains this")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("EF_NUM_THREADS", os.cpu_count())))
    rng = np.random.default_rng(0)
    results = {}
    for case, equation, shapes_of, sides in CASES:
        for n in sides:
            name = f"einsum/{case}/{n}"
            if args.filter not in name:
                continue
            arrays = [rng.uniform(-1, 1, shape).astype(np.float32) for shape in shapes_of(n)]
            ours = [ef.constant(a) for a in arrays]
            theirs = [torch.from_numpy(a) for a in arrays]
            with torch.inference_mode():  # no autograd bookkeeping, as eagerflow outside a tape
                ef_seconds, torch_seconds = interleaved_medians(
                    [lambda: ef.einsum(equation, *ours), lambda: torch.einsum(equation, *theirs)], args.repetitions)
            results[name] = {"eagerflow": ef_seconds, "pytorch": torch_seconds}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
