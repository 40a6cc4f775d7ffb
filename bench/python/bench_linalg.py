#!/usr/bin/env python3
"""ef.linalg.solve and ef.linalg.cholesky against torch.linalg on float32 and float64
matrices with sides of 512 to 2048.

Prints JSON: {"linalg/<case>/<dtype>/<n>": {"eagerflow": seconds per call, "pytorch": ...}},
each the median of `--repetitions` timed runs, the two libraries in turn (timing as in
bench_einsum.py). Both use EF_NUM_THREADS threads (default: every core). Cases:
  solve     A X = B, A [n, n] well conditioned, B [n, n]
  solve_vec A x = b, b [n, 1] (the factorization alone, nearly)
  cholesky  L of a symmetric positive definite [n, n]
"""
import argparse
import json
import os

import numpy as np
import torch

import eagerflow as ef
from bench_einsum import interleaved_medians

CASES = [
    ("solve", lambda a, b: ef.linalg.solve(a, b), lambda a, b: torch.linalg.solve(a, b), None),
    ("solve_vec", lambda a, b: ef.linalg.solve(a, b), lambda a, b: torch.linalg.solve(a, b), 1),
    ("cholesky", lambda a, b: ef.linalg.cholesky(a), lambda a, b: torch.linalg.cholesky(a), None),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--filter", default="", help="run only the cases whose name contains this")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("EF_NUM_THREADS", os.cpu_count())))
    rng = np.random.default_rng(0)
    results = {}
    for case, ours, theirs, cols in CASES:
        for dtype in (np.float32, np.float64):
            for n in (512, 1024, 2048):
                name = f"linalg/{case}/{np.dtype(dtype).name}/{n}"
                if args.filter not in name:
                    continue
                x = rng.uniform(-1, 1, (n, n))
                a = (x @ x.T / n + np.eye(n)).astype(dtype)  # symmetric positive definite
                b = rng.uniform(-1, 1, (n, cols or n)).astype(dtype)
                ea, eb = ef.constant(a), ef.constant(b)
                ta, tb = torch.from_numpy(a), torch.from_numpy(b)
                with torch.inference_mode():
                    ef_seconds, torch_seconds = interleaved_medians(
                        [lambda: ours(ea, eb), lambda: theirs(ta, tb)], args.repetitions)
                results[name] = {"eagerflow": ef_seconds, "pytorch": torch_seconds}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
