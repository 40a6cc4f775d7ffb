#!/usr/bin/env python3
"""Forward-mode derivatives, eagerflow against PyTorch in one process: ef.jvp against
functorch.jvp (PyTorch 1.13's torch.func.jvp) on an MLP's output, and the
Hessian-vector product of its loss forward-over-reverse (ef.autodiff.ForwardAccumulator
around a GradientTape) against functorch.jvp(functorch.grad(loss)).

Prints JSON: {"jvp/mlp/BATCH": {"eagerflow": s, "pytorch": s}, "hvp/mlp/BATCH": {...}},
each the median over `--iters` timed calls after two untimed warm-up calls, float32,
both libraries on the same inputs, with EF_NUM_THREADS threads each (default 1: on a
shared machine PyTorch's OpenMP threads slow down far more than eagerflow's pool).
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

SIZES = [784, 256, 256, 10]


def weights(seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 1 / np.sqrt(a), (a, b)).astype(np.float32) for a, b in zip(SIZES, SIZES[1:])]


def ef_mlp(ws, x):
    for i, w in enumerate(ws):
        x = ef.matmul(x, w)
        if i + 1 < len(ws):
            x = ef.tanh(x)
    return x


def torch_mlp(ws, x):
    for i, w in enumerate(ws):
        x = x @ w
        if i + 1 < len(ws):
            x = torch.tanh(x)
    return x


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 256])
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ["EF_NUM_THREADS"]))
    results = {}
    ws, vs = weights(0), weights(1)
    ef_ws, ef_vs = [ef.constant(w) for w in ws], [ef.constant(v) for v in vs]
    t_ws, t_vs = tuple(torch.tensor(w) for w in ws), tuple(torch.tensor(v) for v in vs)
    for batch in args.batches:
        x = np.random.default_rng(2).normal(size=(batch, SIZES[0])).astype(np.float32)
        ef_x, t_x = ef.constant(x), torch.tensor(x)

        def ef_jvp():
            return ef.jvp(lambda *w: ef_mlp(w, ef_x), ef_ws, ef_vs)[1].numpy()

        def torch_jvp():
            return functorch.jvp(lambda *w: torch_mlp(w, t_x), t_ws, t_vs)[1].numpy()

        np.testing.assert_allclose(ef_jvp(), torch_jvp(), rtol=2e-3, atol=2e-4)
        results[f"jvp/mlp/{batch}"] = {"eagerflow": median_seconds(ef_jvp, args.iters),
                                       "pytorch": median_seconds(torch_jvp, args.iters)}

        def ef_hvp():
            with ef.autodiff.ForwardAccumulator(ef_ws, ef_vs) as acc:
                with ef.GradientTape() as tape:
                    tape.watch(ef_ws)
                    loss = ef.reduce_mean(ef.square(ef_mlp(ef_ws, ef_x)))
                grads = tape.gradient(loss, ef_ws)
            return acc.jvp(grads)[0].numpy()

        def torch_loss(*w):
            return torch_mlp(w, t_x).square().mean()

        def torch_hvp():
            grad = functorch.grad(torch_loss, argnums=tuple(range(len(t_ws))))
            return functorch.jvp(grad, t_ws, t_vs)[1][0].numpy()

        np.testing.assert_allclose(ef_hvp(), torch_hvp(), rtol=2e-3, atol=2e-5)
        results[f"hvp/mlp/{batch}"] = {"eagerflow": median_seconds(ef_hvp, args.iters),
                                       "pytorch": median_seconds(torch_hvp, args.iters)}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
