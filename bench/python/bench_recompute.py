#!/usr/bin/env python3
"""Gradient checkpointing, eagerflow against PyTorch in one process: one training
gradient of a 50-layer, 512-wide tanh MLP (float32, batch `--batch`), plain and with the
layers in 10 checkpointed blocks of 5 (ef.recompute_grad against
torch.utils.checkpoint.checkpoint, use_reentrant=False).

Prints JSON: {"recompute/mlp50/plain": {"eagerflow": s, "pytorch": s},
"recompute/mlp50/checkpointed": {...}, "peak_bytes/mlp50/plain": {"eagerflow": B},
"peak_bytes/mlp50/checkpointed": {...}}: the median seconds of `--iters` gradients after
one untimed warm-up, and eagerflow's peak bytes of live tensors above those before the
forward pass (ef.config.experimental.get_memory_info("CPU:0"); PyTorch keeps no such
count on the CPU). EF_NUM_THREADS threads each (default 1).
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.utils.checkpoint

os.environ.setdefault("EF_NUM_THREADS", "1")
import eagerflow as ef  # noqa: E402 (reads EF_NUM_THREADS when it loads)
from timing import median_seconds  # noqa: E402

LAYERS, WIDTH, BLOCK = 50, 512, 5


def blocks(weights, tanh):
    """The MLP as LAYERS // BLOCK functions of BLOCK tanh layers each (either library)."""
    def block(ws):
        def run(h):
            for w in ws:
                h = tanh(h @ w)
            return h
        return run
    return [block(weights[b:b + BLOCK]) for b in range(0, LAYERS, BLOCK)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--iters", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ["EF_NUM_THREADS"]))
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((args.batch, WIDTH)).astype(np.float32)
    w_np = [(rng.standard_normal((WIDTH, WIDTH)) * 0.05).astype(np.float32) for _ in range(LAYERS)]

    x = ef.constant(x_np)
    ws = [ef.Variable(ef.constant(w)) for w in w_np]

    def ef_gradient(checkpointed):
        fs = [ef.recompute_grad(f) if checkpointed else f for f in blocks(ws, ef.tanh)]

        def step():
            with ef.GradientTape() as tape:
                h = x
                for f in fs:
                    h = f(h)
                loss = ef.reduce_sum(h)
            return tape.gradient(loss, ws)
        return step

    xt = torch.tensor(x_np)
    wts = [torch.tensor(w, requires_grad=True) for w in w_np]

    def torch_gradient(checkpointed):
        fs = blocks(wts, torch.tanh)

        def step():
            h = xt
            for f in fs:
                h = torch.utils.checkpoint.checkpoint(f, h, use_reentrant=False) if checkpointed else f(h)
            return torch.autograd.grad(h.sum(), wts)
        return step

    results = {}
    for name, checkpointed in (("plain", False), ("checkpointed", True)):
        ef_step = ef_gradient(checkpointed)
        results[f"recompute/mlp50/{name}"] = {
            "eagerflow": median_seconds(ef_step, args.iters, warmup=1),
            "pytorch": median_seconds(torch_gradient(checkpointed), args.iters, warmup=1),
        }
        base = ef.config.experimental.get_memory_info("CPU:0")["current"]
        ef.config.experimental.reset_memory_stats("CPU:0")
        ef_step()
        peak = ef.config.experimental.get_memory_info("CPU:0")["peak"]
        results[f"peak_bytes/mlp50/{name}"] = {"eagerflow": peak - base}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
