#!/usr/bin/env python3
"""A sparse autoencoder on Fashion-MNIST trained by L-BFGS (the Python twin of
examples/autoencoder_lbfgs.cpp; the benchmark of yaroslavvb/stuff `eager_lbfgs/`).

  autoencoder_lbfgs.py [--batch 10000] [--history 5] [--iters 10] [--dtype float32|float64]
                       [--model tied|ufldl] [--data-dir DIR]

--model tied: 784 -> 196 -> 784, one weight matrix W [784, 196] (the decoder uses W^T),
no biases, sigmoid on both layers, loss mean((out - x)^2). --model ufldl: UFLDL's sparse
autoencoder cost (untied W1 [196, 784], W2 [784, 196], biases, weight decay 3e-3, KL
sparsity rho = 0.1, beta = 3). Weights uniform in +-sqrt(6)/sqrt(784 + 196 + 1) from
np.random.seed(1); inputs the first `batch` training images in [0, 1]; L-BFGS without
line search (torch7's lbfgs.lua), one step() per iteration.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

import eagerflow as ef

VISIBLE, HIDDEN = 28 * 28, 196


def read_images(data_dir, count):
    """The first `count` training images as float64 [count, 784] in [0, 1]."""
    (x_train, _), _ = ef.datasets.fashion_mnist.load_data(data_dir)
    if count > len(x_train):
        sys.exit(f"--batch {count} exceeds the {len(x_train)} training images")
    return x_train[:count].reshape(count, VISIBLE) / 255.0


def uniform_init(shape):
    """UFLDL's initializeParameters, drawn from NumPy's global generator."""
    r = np.sqrt(6) / np.sqrt(HIDDEN + VISIBLE + 1)
    return (np.random.random(int(np.prod(shape))) * 2 * r - r).reshape(shape)


def tied_loss(x, w):
    hidden = ef.sigmoid(ef.matmul(x, w))
    out = ef.sigmoid(ef.matmul(hidden, w, transpose_b=True))
    return ef.reduce_mean(ef.square(out - x))


def ufldl_loss(x, w1, w2, b1, b2, lam=3e-3, rho=0.1, beta=3.0):
    hidden = ef.sigmoid(ef.matmul(x, w1, transpose_b=True) + b1)
    out = ef.sigmoid(ef.matmul(hidden, w2, transpose_b=True) + b2)
    reconstruction = ef.reduce_sum(ef.square(out - x)) * (0.5 / x.shape[0])
    decay = (ef.reduce_sum(ef.square(w1)) + ef.reduce_sum(ef.square(w2))) * (lam / 2)
    rho_hat = ef.reduce_mean(hidden, axis=0)
    kl = rho * ef.math.log(rho / rho_hat) + (1 - rho) * ef.math.log((1 - rho) / (1 - rho_hat))
    return reconstruction + decay + beta * ef.reduce_sum(kl)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--history", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--model", choices=["tied", "ufldl"], default="tied")
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    args = ap.parse_args()

    dtype = np.dtype(args.dtype)
    x = ef.constant(read_images(args.data_dir, args.batch).astype(dtype))
    np.random.seed(1)
    if args.model == "tied":
        params = [ef.Variable(uniform_init((VISIBLE, HIDDEN)).astype(dtype), name="W")]
        loss = lambda: tied_loss(x, *params)  # noqa: E731
    else:
        params = [ef.Variable(uniform_init((HIDDEN, VISIBLE)).astype(dtype), name="W1"),
                  ef.Variable(uniform_init((VISIBLE, HIDDEN)).astype(dtype), name="W2"),
                  ef.Variable(np.zeros(HIDDEN, dtype), name="b1"), ef.Variable(np.zeros(VISIBLE, dtype), name="b2")]
        loss = lambda: ufldl_loss(x, *params)  # noqa: E731
    lbfgs = ef.optimizers.LBFGS(params, max_iter=1, history_size=args.history)

    print(f"model {args.model}, batch {args.batch}, history {args.history}, {args.dtype}")
    seconds = []
    for i in range(args.iters):
        start = time.perf_counter()
        value = float(lbfgs.step(loss).numpy())
        seconds.append(time.perf_counter() - start)
        print(f"iteration {i:3d}  loss {value:.10g}  {seconds[-1]:.3f} s", flush=True)
    print(f"final loss {float(loss().numpy()):.10g}")
    if seconds:
        print(f"median seconds per iteration: {statistics.median(seconds):.4f}")


if __name__ == "__main__":
    main()
