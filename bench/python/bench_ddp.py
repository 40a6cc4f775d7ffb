#!/usr/bin/env python3
"""Data-parallel training steps over MPI ranks: eagerflow's DataParallel (gradients
all-reduced in buckets while the backward pass runs) against PyTorch's
DistributedDataParallel on the gloo backend, same model, same batches, same run.

    mpirun -np 2 --oversubscribe --allow-run-as-root python3 bench/python/bench_ddp.py

Rank 0 prints JSON: for each model (the Fashion-MNIST MLP 784-256-10 and a wider
784-1024-1024-10 one, whose 19 MB of gradients make two buckets), the median step time
(forward, backward with gradient synchronization, Adam) of eagerflow (eager, and traced
by ef.function as Keras' fit runs it) and PyTorch with
`--batch` examples per rank, their ratio, eagerflow's all-reduce time per step and the
share of it that the backward pass hid, and one process doing the step on the whole
batch (both ranks' halves) for reference. EF_NUM_THREADS threads per rank (default 1).
"""
import argparse
import json
import os
import socket

import numpy as np
import torch
import torch.distributed as torch_dist

os.environ.setdefault("EF_NUM_THREADS", "1")
import eagerflow as ef  # noqa: E402 (reads EF_NUM_THREADS when it loads)
from timing import median_seconds  # noqa: E402

MODELS = {"mlp_784_256_10": [784, 256, 10], "mlp_784_1024_1024_10": [784, 1024, 1024, 10]}


def ef_model(widths):
    layers = [ef.keras.layers.Dense(w, activation="relu") for w in widths[1:-1]]
    return ef.keras.Sequential(layers + [ef.keras.layers.Dense(widths[-1])])


def torch_model(widths):
    layers = []
    for a, b in zip(widths[:-2], widths[1:-1]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(widths[-2], widths[-1]))


def ef_step_fn(model, x, y):
    optimizer = ef.optimizers.Adam(1e-3)
    loss_fn = ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = ef.constant(x), ef.constant(y)

    def step():
        with ef.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    return step


def torch_step_fn(model, x, y):
    optimizer = torch.optim.Adam(model.parameters(), 1e-3)
    x, y = torch.from_numpy(x), torch.from_numpy(y)

    def step():
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def init_torch(rank, size):
    # The launcher is MPI's; gloo meets at rank 0's address, passed by an MPI broadcast.
    port = int(ef.distribute.broadcast(ef.constant(_free_port() if rank == 0 else 0), root=0))
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch_dist.init_process_group("gloo", rank=rank, world_size=size)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64, help="examples per rank")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ["EF_NUM_THREADS"]))
    ef.distribute.init()
    rank, size = ef.distribute.rank(), ef.distribute.size()
    init_torch(rank, size)
    rng = np.random.default_rng(rank)
    results = {"ranks": size, "batch_per_rank": args.batch}
    for name, widths in MODELS.items():
        x = rng.standard_normal((args.batch, widths[0])).astype(np.float32)
        y = rng.integers(0, widths[-1], args.batch)
        ddp = ef.distribute.DataParallel(ef_model(widths))  # 25 MB buckets, the first 1 MB
        ef_step = ef_step_fn(ddp, x, y)
        communication, exposed = [], []

        def timed_ef_step():
            ef_step()
            stats = ddp.last_stats()
            communication.append(stats["communication_seconds"])
            exposed.append(stats["exposed_seconds"])

        ef_seconds = median_seconds(timed_ef_step, args.iters)
        traced_seconds = median_seconds(ef.function(ef_step_fn(ddp, x, y)), args.iters)
        torch_seconds = median_seconds(
            torch_step_fn(torch.nn.parallel.DistributedDataParallel(torch_model(widths)), x, y), args.iters)
        # One process with the whole batch, for reference (every rank runs it; no collectives).
        whole_x, whole_y = np.concatenate([x] * size), np.concatenate([y] * size)
        single = ef_model(widths)
        single_seconds = median_seconds(ef_step_fn(single, whole_x, whole_y), args.iters)
        median_communication = float(np.median(communication))
        results[name] = {
            "eagerflow_ddp_s": ef_seconds,
            "eagerflow_ddp_traced_s": traced_seconds,
            "pytorch_ddp_gloo_s": torch_seconds,
            "ratio_eagerflow_over_pytorch": ef_seconds / torch_seconds,
            "ratio_traced_over_pytorch": traced_seconds / torch_seconds,
            "eagerflow_one_process_whole_batch_s": single_seconds,
            "buckets": ddp.last_stats()["buckets"],
            "all_reduce_s_per_step": median_communication,
            # The wait after the backward pass also counts finishing the step: clamp at 0.
            "all_reduce_hidden_share": max(0.0, 1 - float(np.median(exposed)) / median_communication)
            if median_communication > 0 else None,
        }
    if rank == 0:
        print(json.dumps(results, indent=1))
    torch_dist.destroy_process_group()


if __name__ == "__main__":
    main()
