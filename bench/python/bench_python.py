#!/usr/bin/env python3
"""Python-level benchmarks of eagerflow against PyTorch's Python API, in one process.

Prints JSON: {"case": {"eagerflow": seconds per op, "pytorch": seconds per op}, ...},
each the median of `--repetitions` runs. Cases:
  python/add_1elem          a + b on 1-element float32 tensors
  python/add_1elem_tape     the same while a tape records (torch: requires_grad)
  python/backward/100       the backward pass of a 100-op chain (time per node)
"""
import argparse
import json
import statistics
import time

import torch

import eagerflow as ef


def per_op(fn, ops, repetitions):
    """Median over repetitions of fn()'s time divided by the `ops` it runs."""
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) / ops)
    return statistics.median(times)


def add_loop(a, b, n):
    def run():
        for _ in range(n):
            a + b
    return run


def ef_add_under_tape(a, b, n, chunk=1000):
    def run():
        for _ in range(n // chunk):  # a fresh tape per chunk bounds what it holds
            with ef.GradientTape() as tape:
                tape.watch(a)
                for _ in range(chunk):
                    a + b
    return run


def backward_per_node(build_and_backward, repetitions, nodes):
    times = []
    for _ in range(repetitions * 20):
        times.append(build_and_backward() / nodes)
    return statistics.median(times)


def ef_chain(nodes):
    x = ef.constant([1.0])
    c = ef.constant([1.0001])

    def run():
        with ef.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(nodes):
                y = y * c
        start = time.perf_counter()
        tape.gradient(y, x)
        return time.perf_counter() - start
    return run


def torch_chain(nodes):
    c = torch.tensor([1.0001])

    def run():
        x = torch.tensor([1.0], requires_grad=True)
        y = x
        for _ in range(nodes):
            y = y * c
        start = time.perf_counter()
        y.backward()
        return time.perf_counter() - start
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--ops", type=int, default=100_000)
    args = ap.parse_args()
    torch.set_num_threads(2)
    n, reps = args.ops, args.repetitions
    results = {}

    a, b = ef.constant([1.0]), ef.constant([2.0])
    ta, tb = torch.tensor([1.0]), torch.tensor([2.0])
    results["python/add_1elem"] = {"eagerflow": per_op(add_loop(a, b, n), n, reps),
                                   "pytorch": per_op(add_loop(ta, tb, n), n, reps)}
    tg = torch.tensor([1.0], requires_grad=True)
    results["python/add_1elem_tape"] = {"eagerflow": per_op(ef_add_under_tape(a, b, n), n, reps),
                                        "pytorch": per_op(add_loop(tg, tb, n), n, reps)}
    results["python/backward/100"] = {"eagerflow": backward_per_node(ef_chain(100), reps, 100),
                                      "pytorch": backward_per_node(torch_chain(100), reps, 100)}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
