#!/usr/bin/env python3
"""Keras training in eagerflow against PyTorch, in one process (timed in turn, so that
load changes on a shared machine fall on both):

  epoch/mlp_fit    seconds per epoch of Keras' fit (x, y arrays, batch 32, shuffled) on
                   the Fashion-MNIST MLP of examples/python/fashion_mnist_mlp.py (Flatten,
                   Dense 256 relu, Dense 10; Adam(1e-3), sparse categorical
                   cross-entropy from logits, accuracy), against PyTorch's loop
  epoch/mlp_loop   the same epoch as a hand-written eagerflow loop: GradientTape +
                   optimizer.apply_gradients inside an ef.function, a running mean loss
                   and accuracy, batches gathered by a shuffled index; against PyTorch's
                   loop (a shuffled index per batch, no DataLoader)
  train_step/lstm  one training step (forward, backward, Adam) of LSTM(128) + Dense(10)
                   on [64, 28, 28] (the model of examples/python/fashion_mnist_lstm.py)
                   against torch.nn.LSTM + nn.Linear
  train_step/mha   a MultiHeadAttention self-attention step: [64, 49, 64], 4 heads of 16,
                   mean-square loss; against torch.nn.MultiheadAttention
  train_step/transformer_block
                   a pre-norm encoder block (LayerNormalization, MultiHeadAttention, Add,
                   LayerNormalization, Dense 128 gelu, Dense 64, Add), global average
                   pooling, Dense 10, sparse categorical cross-entropy, on [64, 49, 64]

eagerflow's steps run as an ef.function (fit's default); PyTorch's eagerly, as its users
write them. Each figure is the median of `--repetitions` timed blocks after warm-up; the
fit overhead (fit's epoch over the loop's) is printed to stderr with the other ratios.
Both libraries use the same thread count: --threads, else EF_NUM_THREADS, else every
core (on a loaded 2-core machine, compare at --threads=1: PyTorch's OpenMP threads
slow down far more than eagerflow's pool there).

Prints JSON: {"case": {"eagerflow": seconds, "pytorch": seconds, ...}, ...}; the epoch
cases are left out when the Fashion-MNIST files are missing.
"""
import argparse
import json
import os
import statistics
import sys
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of both libraries (default: EF_NUM_THREADS or every core)")
    ap.add_argument("--cases", default="mlp,lstm,mha,transformer_block")
    return ap.parse_args()


ARGS = parse_args()
if ARGS.threads is not None:
    os.environ["EF_NUM_THREADS"] = str(ARGS.threads)
THREADS = int(os.environ.get("EF_NUM_THREADS", os.cpu_count()))
os.environ["EF_NUM_THREADS"] = str(THREADS)  # before eagerflow starts its pool

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import eagerflow as ef  # noqa: E402
from eagerflow import keras  # noqa: E402

torch.set_num_threads(THREADS)


def timed(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def interleaved(runs, repetitions):
    """{name: median seconds of run()} with the runs taken in turn each repetition."""
    times = {name: [] for name in runs}
    for _ in range(repetitions):
        for name, run in runs.items():
            times[name].append(timed(run))
    return {name: statistics.median(t) for name, t in times.items()}


# --- the MLP epoch: fit, the hand-written loop, PyTorch's loop -------------------------

BATCH = 32


def mlp_cases(repetitions):
    try:
        train, _ = ef.data.datasets.fashion_mnist()
    except ef.errors.NotFoundError:
        return {}
    images_np, labels_np = np.array(train.images.numpy()), np.array(train.labels.numpy())
    n = images_np.shape[0]
    steps = n // BATCH

    def ef_model():
        return keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(256, activation="relu"),
                                 keras.layers.Dense(10)])

    # fit
    ef.random.set_seed(1)
    fit_model = ef_model()
    fit_model.compile(optimizer=keras.optimizers.Adam(1e-3),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])

    def fit_epoch():
        fit_model.fit(images_np, labels_np, batch_size=BATCH, epochs=1, verbose=0, seed=1)

    # the hand-written loop
    ef.random.set_seed(1)
    model = ef_model()
    adam = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    mean_loss = keras.metrics.Mean("loss")
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    images, labels = ef.constant(images_np), ef.constant(labels_np)
    rng = np.random.default_rng(1)

    @ef.function
    def train_step(x, y):
        with ef.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        variables = model.trainable_variables
        adam.apply_gradients(zip(tape.gradient(loss, variables), variables))
        mean_loss.update_state(loss)
        accuracy.update_state(y, logits)
        return loss

    def loop_epoch():
        mean_loss.reset_state()
        accuracy.reset_state()
        order = ef.constant(rng.permutation(n).astype(np.int64))
        for i in range(steps):
            index = order[i * BATCH:(i + 1) * BATCH]
            train_step(ef.gather(images, index), ef.gather(labels, index))
        float(mean_loss.result())

    # PyTorch
    torch.manual_seed(1)
    torch_model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    torch_adam = torch.optim.Adam(torch_model.parameters(), lr=1e-3)
    torch_loss = nn.CrossEntropyLoss()
    t_images, t_labels = torch.from_numpy(images_np), torch.from_numpy(labels_np.astype(np.int64))
    generator = torch.Generator().manual_seed(1)

    def torch_epoch():
        loss_sum, correct = torch.zeros(()), torch.zeros((), dtype=torch.int64)
        order = torch.randperm(n, generator=generator)
        for i in range(steps):
            index = order[i * BATCH:(i + 1) * BATCH]
            x, y = t_images[index], t_labels[index]
            torch_adam.zero_grad()
            logits = torch_model(x)
            loss = torch_loss(logits, y)
            loss.backward()
            torch_adam.step()
            with torch.no_grad():  # the running mean loss and accuracy, as fit keeps
                loss_sum += loss
                correct += (logits.argmax(1) == y).sum()
        float(loss_sum)

    # One warm-up epoch each (traces the steps, allocates Adam's slots).
    fit_epoch(), loop_epoch(), torch_epoch()
    t = interleaved({"fit": fit_epoch, "loop": loop_epoch, "pytorch": torch_epoch}, repetitions)
    report(f"MLP epoch: fit {t['fit']:.3f} s, loop {t['loop']:.3f} s (fit / loop {t['fit'] / t['loop']:.3f}), "
           f"PyTorch {t['pytorch']:.3f} s")
    return {"epoch/mlp_fit": {"eagerflow": t["fit"], "pytorch": t["pytorch"], "loop": t["loop"],
                              "fit_over_loop": t["fit"] / t["loop"]},
            "epoch/mlp_loop": {"eagerflow": t["loop"], "pytorch": t["pytorch"]}}


# --- layer training steps --------------------------------------------------------------

def step_case(name, ef_step, torch_step, repetitions, block_seconds=0.3):
    """Times blocks of k steps of each library in turn (k from a first timing, so that a
    block takes about block_seconds); {"eagerflow": s/step, "pytorch": s/step}."""
    for _ in range(3):
        ef_step(), torch_step()
    k = max(1, int(block_seconds / max(timed(ef_step), timed(torch_step), 1e-6)))

    def block(step):
        def run():
            for _ in range(k):
                step()
        return run

    t = interleaved({"eagerflow": block(ef_step), "pytorch": block(torch_step)}, repetitions)
    result = {lib: s / k for lib, s in t.items()}
    report(f"{name} step: eagerflow {result['eagerflow'] * 1e3:.2f} ms, PyTorch {result['pytorch'] * 1e3:.2f} ms "
           f"(ratio {result['eagerflow'] / result['pytorch']:.2f})")
    return {f"train_step/{name}": result}


def ef_trainer(model, loss_fn, x, y):
    """A training step of model on (x, y) with Adam as an ef.function; returns a callable
    that runs it and waits for the loss."""
    adam = keras.optimizers.Adam(1e-3)

    @ef.function
    def train_step(x, y):
        with ef.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        variables = model.trainable_variables
        adam.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    return lambda: float(train_step(x, y))


def torch_trainer(model, forward, loss_fn, x, y):
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        adam.zero_grad()
        loss = loss_fn(forward(x), y)
        loss.backward()
        adam.step()
        return float(loss)
    return step


def lstm_case(repetitions):
    rng = np.random.default_rng(0)
    x = rng.random((64, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    ef.random.set_seed(1)
    model = keras.Sequential([keras.layers.LSTM(128), keras.layers.Dense(10)])
    ef_step = ef_trainer(model, keras.losses.SparseCategoricalCrossentropy(from_logits=True), ef.constant(x),
                         ef.constant(y.astype(np.int32)))
    torch.manual_seed(1)
    lstm, head = nn.LSTM(28, 128, batch_first=True), nn.Linear(128, 10)
    torch_model = nn.ModuleList([lstm, head])

    def forward(t):
        _, (h, _) = lstm(t)
        return head(h[-1])
    torch_step = torch_trainer(torch_model, forward, nn.CrossEntropyLoss(), torch.from_numpy(x), torch.from_numpy(y))
    return step_case("lstm", ef_step, torch_step, repetitions)


TOKENS, WIDTH, HEADS = 49, 64, 4


def mha_case(repetitions):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, TOKENS, WIDTH), dtype=np.float32)
    target = rng.standard_normal((64, TOKENS, WIDTH), dtype=np.float32)
    ef.random.set_seed(1)
    mha = keras.layers.MultiHeadAttention(HEADS, WIDTH // HEADS)
    tokens = keras.Input(shape=(TOKENS, WIDTH))
    model = keras.Model(tokens, mha(tokens, tokens))
    ef_step = ef_trainer(model, keras.losses.MeanSquaredError(), ef.constant(x), ef.constant(target))
    torch.manual_seed(1)
    torch_mha = nn.MultiheadAttention(WIDTH, HEADS, batch_first=True)
    torch_step = torch_trainer(torch_mha, lambda t: torch_mha(t, t, t, need_weights=False)[0], nn.MSELoss(),
                               torch.from_numpy(x), torch.from_numpy(target))
    return step_case("mha", ef_step, torch_step, repetitions)


class TorchBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.attention = nn.MultiheadAttention(WIDTH, HEADS, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 2 * WIDTH), nn.GELU(), nn.Linear(2 * WIDTH, WIDTH))
        self.head = nn.Linear(WIDTH, 10)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.norm2(x))
        return self.head(self.norm3(x).mean(1))


def transformer_block_case(repetitions):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, TOKENS, WIDTH), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    ef.random.set_seed(1)
    L = keras.layers
    tokens = keras.Input(shape=(TOKENS, WIDTH))
    h = L.LayerNormalization()(tokens)
    h = L.Add()([tokens, L.MultiHeadAttention(HEADS, WIDTH // HEADS)(h, h)])
    m = L.Dense(WIDTH)(L.Dense(2 * WIDTH, activation="gelu")(L.LayerNormalization()(h)))
    h = L.Add()([h, m])
    logits = L.Dense(10)(L.GlobalAveragePooling1D()(L.LayerNormalization()(h)))
    ef_step = ef_trainer(keras.Model(tokens, logits), keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                         ef.constant(x), ef.constant(y.astype(np.int32)))
    torch.manual_seed(1)
    block = TorchBlock()
    torch_step = torch_trainer(block, block, nn.CrossEntropyLoss(), torch.from_numpy(x), torch.from_numpy(y))
    return step_case("transformer_block", ef_step, torch_step, repetitions)


def report(line):
    print(line, file=sys.stderr, flush=True)


CASES = {"mlp": mlp_cases, "lstm": lstm_case, "mha": mha_case, "transformer_block": transformer_block_case}


def main():
    report(f"threads: {THREADS} (eagerflow and PyTorch); load average {os.getloadavg()[0]:.2f}")
    results = {}
    for name in ARGS.cases.split(","):
        results.update(CASES[name](ARGS.repetitions))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
