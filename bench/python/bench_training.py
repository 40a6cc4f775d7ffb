#!/usr/bin/env python3
"""Seconds per epoch of the Fashion-MNIST examples' training loop (examples/python/
fashion_mnist_training.py minus its progress bar and checkpoints), eagerflow's Python
API (a custom loop, and Keras' compile / fit: "eagerflow_fit") against PyTorch's on the
same models and recipe: batch 32, Adam(1e-3), sparse
categorical cross-entropy from logits, running mean loss and accuracy.

  mlp: Flatten, Dense 256 relu, Dense 10
  cnn: Conv2D 32 3x3 relu, MaxPool 2, Conv2D 64 3x3 relu, MaxPool 2, Flatten,
       Dense 128 relu, Dense 10 (NHWC for eagerflow, NCHW for PyTorch)

eagerflow iterates ef.data.Dataset.from_tensor_slices(...).shuffle(n).batch(32).prefetch();
PyTorch slices pre-made tensors by a shuffled index per batch (no DataLoader). Both use
the same thread count: --threads, else EF_NUM_THREADS, else every core. On a loaded
machine PyTorch's OpenMP threads slow down far more than eagerflow's pool (on 2 cores
with two compile jobs running, PyTorch's 2-thread step took ~40x its 1-thread time,
eagerflow's under 2x): compare at --threads=1 there, or run on an idle machine.

A whole epoch is 1875 steps; to stay short, each library times `--repetitions` blocks of
`steps` steps (after warm-up steps) and the epoch is 1875 x the median block's time per
step plus the time one pass needs to start (eagerflow fills its shuffle buffer there).

Each library runs in its own subprocess, so that its peak memory is its own: "peak
memory" is the process's peak resident set (VmHWM) during training minus its resident set
once the data are loaded and before the model exists. The peak is reset at that point
(Linux's /proc/self/clear_refs), so the transient of loading and converting the data does
not count; it covers model, optimizer slots, activations, gradients, the input pipeline
(eagerflow's shuffle buffer, PyTorch's index permutation) and allocator caches.

Prints JSON: {"epoch/mlp": {"eagerflow": s, "pytorch": s, ...}, "peak_rss/mlp":
{"eagerflow": bytes, "pytorch": bytes}, ...}; {} when the Fashion-MNIST files are missing.
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

STEPS_PER_EPOCH = 60000 // 32 + (60000 % 32 > 0)  # 1875
MODELS = {"mlp": (300, 30), "cnn": (100, 10)}  # timed steps per block, warm-up steps
LIBRARIES = ("eagerflow", "eagerflow_fit", "pytorch")


def threads():
    return int(os.environ.get("EF_NUM_THREADS", os.cpu_count()))


def status_bytes(field):
    """VmRSS (resident set) or VmHWM (its peak) from /proc/self/status, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak():
    """Starts the peak resident set afresh from the current one; returns the current one."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return status_bytes("VmRSS")


def read_idx(path):
    """An IDX file (gzip) as a NumPy array: dimensions from the header, big-endian sizes."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    rank = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(shape)


# --- eagerflow -------------------------------------------------------------------------

def eagerflow_trainer(model_name, directory):
    """(start_pass, step) for eagerflow: start_pass() begins a fresh pass over the data,
    step() runs one training step of the examples' loop and returns the loss tensor."""
    import eagerflow as ef
    from eagerflow import keras

    train, _ = ef.data.datasets.fashion_mnist(directory)
    images = ef.expand_dims(train.images, -1) if model_name == "cnn" else train.images
    n = images.shape[0]
    baseline = reset_peak()

    ef.random.set_seed(1)
    model = _eagerflow_model(model_name)
    adam = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    mean_loss = keras.metrics.Mean("loss")
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    dataset = (ef.data.Dataset.from_tensor_slices((images, train.labels))
               .shuffle(n, seed=1).batch(32).prefetch(ef.data.AUTOTUNE))
    state = {}

    def start_pass():
        state["batches"] = iter(dataset)
        next_batch()

    def next_batch():
        state["batch"] = next(state["batches"])

    def step():
        x, y = state.pop("batch")
        with ef.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        variables = model.trainable_variables
        adam.apply_gradients(zip(tape.gradient(loss, variables), variables))
        mean_loss.update_state(loss)
        accuracy.update_state(y, logits)
        next_batch()
        return loss

    return start_pass, step, lambda loss: float(loss.numpy()), baseline


def eagerflow_fit_runner(model_name, directory):
    """The same recipe through Keras' compile / fit: run(k) trains k steps with one fit
    call (steps_per_epoch=k; the training step is an ef.function, fit's default) and
    returns the loss."""
    import eagerflow as ef
    from eagerflow import keras

    train, _ = ef.data.datasets.fashion_mnist(directory)
    images = ef.expand_dims(train.images, -1) if model_name == "cnn" else train.images
    baseline = reset_peak()
    ef.random.set_seed(1)
    model = _eagerflow_model(model_name)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    dataset = (ef.data.Dataset.from_tensor_slices((images, train.labels))
               .shuffle(images.shape[0], seed=1).batch(32).prefetch(ef.data.AUTOTUNE))

    def run(k):
        return model.fit(dataset, epochs=1, steps_per_epoch=k, verbose=0).history["loss"][-1]

    return run, baseline


def _eagerflow_model(model_name):
    from eagerflow import keras
    if model_name == "mlp":
        return keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(256, activation="relu"),
                                 keras.layers.Dense(10)])
    return keras.Sequential([
        keras.layers.Conv2D(32, 3, activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(10)])


# --- PyTorch ---------------------------------------------------------------------------

def pytorch_trainer(model_name, directory):
    """The same as eagerflow_trainer, in PyTorch."""
    import torch
    from torch import nn

    torch.set_num_threads(threads())
    images = torch.from_numpy(read_idx(os.path.join(directory, "train-images-idx3-ubyte.gz")).astype(np.float32) / 255)
    labels = torch.from_numpy(read_idx(os.path.join(directory, "train-labels-idx1-ubyte.gz")).astype(np.int64))
    images = images.unsqueeze(1) if model_name == "cnn" else images  # NCHW
    n = images.shape[0]
    baseline = reset_peak()

    torch.manual_seed(1)
    if model_name == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    else:
        model = nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, 10))
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(1)
    state = {"loss_sum": torch.zeros(()), "correct": torch.zeros((), dtype=torch.int64)}

    def start_pass():
        state["order"] = torch.randperm(n, generator=generator)
        state["next"] = 0

    def step():
        index = state["order"][state["next"]:state["next"] + 32]
        state["next"] += 32
        x, y = images[index], labels[index]
        adam.zero_grad()
        logits = model(x)
        loss = loss_fn(logits, y)
        loss.backward()
        adam.step()
        with torch.no_grad():  # the running mean loss and accuracy, as the examples keep
            state["loss_sum"] += loss
            state["correct"] += (logits.argmax(1) == y).sum()
        return loss

    return start_pass, step, lambda loss: float(loss), baseline


# --- measuring -------------------------------------------------------------------------

def measure(library, model_name, directory, repetitions):
    """Runs in the worker process: times one library on one model."""
    steps, warmup = MODELS[model_name]
    if library == "eagerflow_fit":
        return measure_fit(model_name, directory, repetitions)
    make = eagerflow_trainer if library == "eagerflow" else pytorch_trainer
    start_pass, step, to_float, baseline = make(model_name, directory)
    start = time.perf_counter()
    start_pass()
    pass_start_seconds = time.perf_counter() - start
    for _ in range(warmup):
        loss = step()
    used, blocks = warmup, []
    for _ in range(repetitions):
        if used + steps + 1 > STEPS_PER_EPOCH:  # never run past the end of a pass
            start_pass()
            used = 0
        used += steps
        start = time.perf_counter()
        for _ in range(steps):
            loss = step()
        last = to_float(loss)  # waits for the work (no-op on CPU, kept for clarity)
        blocks.append((time.perf_counter() - start) / steps)
    step_seconds = statistics.median(blocks)
    return {"epoch_seconds": pass_start_seconds + STEPS_PER_EPOCH * step_seconds, "step_seconds": step_seconds,
            "pass_start_seconds": pass_start_seconds, "peak_rss_growth": status_bytes("VmHWM") - baseline,
            "peak_rss": status_bytes("VmHWM"), "loss": last}


def measure_fit(model_name, directory, repetitions):
    """measure() for Keras' fit: each block is one fit call of `steps` steps, so its
    fresh pass over the data (the shuffle buffer) and its callbacks count in the step."""
    steps, warmup = MODELS[model_name]
    run, baseline = eagerflow_fit_runner(model_name, directory)
    run(warmup)  # traces the training step
    blocks = []
    for _ in range(repetitions):
        start = time.perf_counter()
        last = run(steps)
        blocks.append((time.perf_counter() - start) / steps)
    step_seconds = statistics.median(blocks)
    return {"epoch_seconds": STEPS_PER_EPOCH * step_seconds, "step_seconds": step_seconds, "pass_start_seconds": 0.0,
            "peak_rss_growth": status_bytes("VmHWM") - baseline, "peak_rss": status_bytes("VmHWM"), "loss": last}


def worker_result(library, model_name, directory, repetitions):
    """Runs the measurement of one library in a fresh subprocess and returns its JSON."""
    cmd = [sys.executable, __file__, "--worker", library, model_name, f"--data-dir={directory}",
           f"--repetitions={repetitions}"]
    env = dict(os.environ, EF_NUM_THREADS=str(threads()), OMP_NUM_THREADS=str(threads()))
    return json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--threads", type=int, default=None, help="threads of both libraries (default: EF_NUM_THREADS or every core)")
    ap.add_argument("--worker", nargs=2, metavar=("LIBRARY", "MODEL"), help=argparse.SUPPRESS)
    ap.add_argument("--data-dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.threads is not None:
        os.environ["EF_NUM_THREADS"] = str(args.threads)
    if args.worker:
        print(json.dumps(measure(*args.worker, args.data_dir, args.repetitions)))
        return

    import eagerflow as ef  # only to find the data; each library runs in its own process
    try:
        directory = ef.data.datasets.fashion_mnist_directory()
        ef.data.datasets.fashion_mnist(directory)
    except ef.errors.NotFoundError:
        print(json.dumps({}))
        return
    results = {}
    for model_name in args.models.split(","):
        runs = {library: worker_result(library, model_name, directory, args.repetitions) for library in LIBRARIES}
        results[f"epoch/{model_name}"] = {library: runs[library]["epoch_seconds"] for library in LIBRARIES}
        results[f"epoch/{model_name}"].update(
            {f"{library}_{key}": runs[library][key] for library in LIBRARIES
             for key in ("step_seconds", "pass_start_seconds", "loss")})
        results[f"peak_rss/{model_name}"] = {library: runs[library]["peak_rss_growth"] for library in LIBRARIES}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
