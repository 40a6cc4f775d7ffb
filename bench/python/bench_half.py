#!/usr/bin/env python3
"""Half precision against PyTorch's CPU bfloat16, in one process:

- matmul_bf16/N, matmul_f16/N: an N x N x N matmul in bfloat16 / float16 (eagerflow
  widens to float32, multiplies with float32 BLAS and rounds once: Note
  [half-precision dtypes]); PyTorch multiplies bfloat16 natively and has no float16
  matmul on the CPU (n/a).
- train_step/POLICY: one training step (forward, backward, Adam) of the Fashion-MNIST
  MLP 784-256-10 on a batch of 32, under each mixed-precision policy: eagerflow's Keras
  train_on_batch (a traced step), PyTorch eager under torch.autocast("cpu", bfloat16)
  for mixed_bfloat16 (float32 otherwise; PyTorch's CPU autocast has no float16).

Prints JSON {case: {"eagerflow": s, "pytorch": s or null}} (medians).
"""
import argparse
import json

import numpy as np
import torch

import eagerflow as ef
from bench_function import median_time  # warm-up call, then the median of `repetitions`


def matmul_cases(repetitions):
    out = {}
    for n in (1024, 2048, 4096):
        a = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
        for dtype, torch_dtype, tag in ((ef.bfloat16, torch.bfloat16, "bf16"), (ef.float16, None, "f16")):
            x = ef.cast(ef.constant(a), dtype)
            ours = median_time(lambda: ef.matmul(x, x).shape, repetitions, inner=1)
            theirs = None
            if torch_dtype is not None:
                t = torch.from_numpy(a).to(torch_dtype)
                theirs = median_time(lambda: torch.mm(t, t), repetitions, inner=1)
            out[f"matmul_{tag}/{n}"] = {"eagerflow": ours, "pytorch": theirs}
    return out


def train_step_cases(repetitions):
    rng = np.random.default_rng(0)
    x = rng.random((32, 784), dtype=np.float32)
    y = rng.integers(0, 10, 32).astype(np.int32)
    out = {}
    for policy in ("float32", "mixed_bfloat16", "mixed_float16"):
        ef.keras.mixed_precision.set_global_policy(policy)
        model = ef.keras.Sequential([ef.keras.layers.Dense(256, activation="relu"), ef.keras.layers.Dense(10)])
        model.compile(optimizer=ef.keras.optimizers.Adam(1e-3),
                      loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        ef.keras.mixed_precision.set_global_policy(None)
        ours = median_time(lambda: model.train_on_batch(x, y), repetitions, inner=50)

        net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
        opt = torch.optim.Adam(net.parameters(), 1e-3)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y).long()
        autocast = policy == "mixed_bfloat16"

        def torch_step():
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = torch.nn.functional.cross_entropy(net(tx).float(), ty)
            loss.backward()
            opt.step()

        theirs = None if policy == "mixed_float16" else median_time(torch_step, repetitions, inner=50)
        out[f"train_step/{policy}"] = {"eagerflow": ours, "pytorch": theirs}
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    results = matmul_cases(args.repetitions)
    results.update(train_step_cases(args.repetitions))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
