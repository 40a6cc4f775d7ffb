#!/usr/bin/env python3
"""Python-level benchmarks of eagerflow against PyTorch's Python API, in one process.

Prints JSON: {"case": {"eagerflow": seconds per op, "pytorch": seconds per op}, ...},
each the median of `--repetitions` runs. Cases:
  python/add_1elem          a + b on 1-element float32 tensors
  python/add_1elem_tape     the same while a tape records (torch: requires_grad)
  python/backward/100       the backward pass of a 100-op chain (time per node)
  python/convnet_layer      forward + backward (filter gradients) of a Fashion-MNIST-sized
                            conv stack: batch 64, 28x28x1 -> conv 3x3x32 SAME, relu, max
                            pool 2 -> conv 3x3x64 SAME, relu, max pool 2 (float32)
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


def convnet_layer(repetitions):
    """{eagerflow, pytorch} seconds per forward + backward of the conv stack (same data;
    eagerflow NHWC / HWIO as TensorFlow, torch NCHW / OIHW)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 28, 28, 1, generator=g)
    w1, w2 = torch.randn(3, 3, 1, 32, generator=g) * 0.3, torch.randn(3, 3, 32, 64, generator=g) * 0.05
    xe, w1e, w2e = ef.constant(x.numpy()), ef.constant(w1.numpy()), ef.constant(w2.numpy())
    xt = x.permute(0, 3, 1, 2).contiguous()
    w1t = w1.permute(3, 2, 0, 1).contiguous().requires_grad_()
    w2t = w2.permute(3, 2, 0, 1).contiguous().requires_grad_()

    def ef_step():
        with ef.GradientTape() as tape:
            tape.watch([w1e, w2e])
            h = ef.nn.max_pool2d(ef.nn.relu(ef.nn.conv2d(xe, w1e, 1, "SAME")), 2, 2, "VALID")
            h = ef.nn.max_pool2d(ef.nn.relu(ef.nn.conv2d(h, w2e, 1, "SAME")), 2, 2, "VALID")
            loss = ef.reduce_sum(h)
        tape.gradient(loss, [w1e, w2e])

    def torch_step():
        F = torch.nn.functional
        h = F.max_pool2d(F.relu(F.conv2d(xt, w1t, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w2t, padding=1)), 2)
        torch.autograd.grad(h.sum(), [w1t, w2t])

    def median_step(step):
        step()  # warm-up
        return statistics.median(per_op(step, 1, 1) for _ in range(repetitions * 4))

    return {"eagerflow": median_step(ef_step), "pytorch": median_step(torch_step)}


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
    results["python/convnet_layer"] = convnet_layer(reps)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
