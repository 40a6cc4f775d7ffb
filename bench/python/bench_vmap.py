#!/usr/bin/env python3
"""Vectorization, eagerflow against PyTorch in one process: per-example gradients of an
MLP's loss through ef.vmap of a GradientTape against functorch.vmap(functorch.grad)
(PyTorch 1.13's torch.func) and against each library's Python loop over the examples;
and a 100x100 Jacobian through tape.jacobian with and without experimental_use_pfor
against torch.autograd.functional.jacobian (vectorize=True and False).

Prints JSON: {"per_example_grads/BATCH": {"eagerflow_vmap": s, "eagerflow_loop": s,
"pytorch_vmap": s, "pytorch_loop": s}, "per_example_grads/cnn/BATCH": the same for a
two-conv CNN on 28x28 images, "jacobian/100x100": {...}}, per-example gradients of a 784-128-10 MLP by default (--sizes), each the median over
`--iters` timed calls after two untimed warm-up calls, float32, with EF_NUM_THREADS
threads each (default 1).
"""
import argparse
import json
import os

import numpy as np
import torch

os.environ.setdefault("EF_NUM_THREADS", "1")
import eagerflow as ef  # noqa: E402 (reads EF_NUM_THREADS when it loads)
from timing import median_seconds  # noqa: E402

try:
    import functorch
except ImportError:  # PyTorch >= 2 has it as torch.func
    import torch.func as functorch

def time_per_example(results, key, iters, ef_grads, t_loss, t_ws, x, y, t_x, to_ef_layout=None, atol=1e-5):
    """Times per-example gradients of examples x, y: ef.vmap of ef_grads and the Python loop
    over the examples, against functorch.vmap(functorch.grad(t_loss)) and its loop on t_x
    (x in PyTorch's layout), after checking that the first parameter's gradients agree
    (to_ef_layout maps PyTorch's gradient to ours)."""
    ef_vmapped = ef.vmap(ef_grads)
    t_vmapped = functorch.vmap(functorch.grad(t_loss), in_dims=(None, 0, 0))
    t_grad = functorch.grad(t_loss)
    ef_x, ef_y, t_y = ef.constant(x), ef.constant(y), torch.tensor(y)
    ef_rows = [(ef.constant(x[i]), ef.constant(y[i])) for i in range(len(x))]
    t_rows = [(t_x[i], t_y[i]) for i in range(len(x))]
    layout = to_ef_layout or (lambda g: g)

    def ef_vmap():
        return ef_vmapped(ef_x, ef_y)[0].numpy()

    def ef_loop():
        return np.stack([ef_grads(a, b)[0].numpy() for a, b in ef_rows])

    def t_vmap():
        return layout(t_vmapped(t_ws, t_x, t_y)[0].numpy())

    def t_loop():
        return layout(np.stack([t_grad(t_ws, a, b)[0].numpy() for a, b in t_rows]))

    np.testing.assert_allclose(ef_vmap(), t_vmap(), rtol=1e-3, atol=atol)
    np.testing.assert_allclose(ef_loop(), t_loop(), rtol=1e-3, atol=atol)
    results[key] = {
        "eagerflow_vmap": median_seconds(ef_vmap, iters),
        "eagerflow_loop": median_seconds(ef_loop, iters),
        "pytorch_vmap": median_seconds(t_vmap, iters),
        "pytorch_loop": median_seconds(t_loop, iters),
    }


def per_example(args, results):
    sizes = args.sizes
    rng = np.random.default_rng(0)
    ws = [rng.normal(0, 1 / np.sqrt(a), (a, b)).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
    ef_ws, t_ws = [ef.constant(w) for w in ws], tuple(torch.tensor(w) for w in ws)

    def ef_loss(x, y):
        h = ef.tanh(ef.matmul(x[None], ef_ws[0]))
        return ef.reduce_sum(ef.square(ef.matmul(h, ef_ws[1]) - y))

    def ef_grads(x, y):
        with ef.GradientTape() as tape:
            tape.watch(ef_ws)
            loss = ef_loss(x, y)
        return tape.gradient(loss, ef_ws)

    def t_loss(w, x, y):
        h = torch.tanh(x[None] @ w[0])
        return ((h @ w[1] - y) ** 2).sum()

    for batch in args.batches:
        x = rng.normal(size=(batch, sizes[0])).astype(np.float32)
        y = rng.normal(size=(batch, sizes[-1])).astype(np.float32)
        time_per_example(results, f"per_example_grads/{'-'.join(map(str, sizes))}/{batch}", args.iters, ef_grads,
                         t_loss, t_ws, x, y, torch.tensor(x))


def per_example_cnn(args, results):
    """Per-example gradients of a small CNN (DP-SGD's workload): the filter gradient
    reads each example and its own out_backprop, so it cannot be one convolution."""
    rng = np.random.default_rng(2)
    k1 = rng.normal(0, 1 / 3, (3, 3, 1, 8)).astype(np.float32)  # HWIO
    k2 = rng.normal(0, 1 / 8.5, (3, 3, 8, 16)).astype(np.float32)
    dense = rng.normal(0, 1 / 52, (13 * 13 * 16, 10)).astype(np.float32)
    ef_ws = [ef.constant(w) for w in (k1, k2, dense)]
    t_ws = (torch.tensor(k1.transpose(3, 2, 0, 1)), torch.tensor(k2.transpose(3, 2, 0, 1)),
            torch.tensor(dense.reshape(13, 13, 16, 10).transpose(2, 0, 1, 3).reshape(-1, 10)))

    def ef_grads(x, y):
        with ef.GradientTape() as tape:
            tape.watch(ef_ws)
            h = ef.nn.relu(ef.nn.conv2d(x[None], ef_ws[0], 1, "SAME"))
            h = ef.nn.relu(ef.nn.conv2d(h, ef_ws[1], 2, "VALID"))
            loss = ef.reduce_sum(ef.square(ef.matmul(ef.reshape(h, [1, -1]), ef_ws[2]) - y))
        return tape.gradient(loss, ef_ws)

    def t_loss(w, x, y):
        h = torch.relu(torch.nn.functional.conv2d(x[None], w[0], padding=1))
        h = torch.relu(torch.nn.functional.conv2d(h, w[1], stride=2))
        return ((h.reshape(1, -1) @ w[2] - y) ** 2).sum()

    batch = args.cnn_batch
    x = rng.normal(size=(batch, 28, 28, 1)).astype(np.float32)
    y = rng.normal(size=(batch, 10)).astype(np.float32)
    # The first conv's filter gradient, [batch, 3, 3, 1, 8] (PyTorch's is [batch, 8, 1, 3, 3]).
    time_per_example(results, f"per_example_grads/cnn/{batch}", args.iters, ef_grads, t_loss, t_ws, x, y,
                     torch.tensor(x.transpose(0, 3, 1, 2).copy()), lambda g: g.transpose(0, 3, 4, 2, 1), atol=1e-4)


def jacobian(args, results):
    rng = np.random.default_rng(1)
    w = rng.normal(0, 0.1, (100, 100)).astype(np.float32)
    x = rng.normal(size=(100,)).astype(np.float32)
    ef_w, ef_x, t_w, t_x = ef.constant(w), ef.constant(x), torch.tensor(w), torch.tensor(x)

    def ef_jac(pfor):
        with ef.GradientTape() as tape:
            tape.watch(ef_x)
            y = ef.tanh(ef.matmul(ef.tanh(ef.matmul(ef_x[None], ef_w)), ef_w))[0]
        return tape.jacobian(y, ef_x, experimental_use_pfor=pfor).numpy()

    def t_jac(vectorize):
        f = lambda v: torch.tanh(torch.tanh(v[None] @ t_w) @ t_w)[0]  # noqa: E731
        return torch.autograd.functional.jacobian(f, t_x, vectorize=vectorize).numpy()

    np.testing.assert_allclose(ef_jac(True), t_jac(True), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ef_jac(False), t_jac(True), rtol=1e-4, atol=1e-6)
    results["jacobian/100x100"] = {
        "eagerflow_pfor": median_seconds(lambda: ef_jac(True), args.iters),
        "eagerflow_loop": median_seconds(lambda: ef_jac(False), args.iters),
        "pytorch_vectorize": median_seconds(lambda: t_jac(True), args.iters),
        "pytorch_loop": median_seconds(lambda: t_jac(False), args.iters),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--batches", type=int, nargs="+", default=[64])
    parser.add_argument("--cnn-batch", type=int, default=64, help="examples in the CNN's batch")
    parser.add_argument("--sizes", type=int, nargs=3, default=[784, 128, 10], help="the MLP's layer widths")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ["EF_NUM_THREADS"]))
    results = {}
    per_example(args, results)
    per_example_cnn(args, results)
    jacobian(args, results)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
