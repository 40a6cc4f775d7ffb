#!/usr/bin/env python3
"""ef.function against eager code (ours and PyTorch's), in one process:

- chain/N: an 8-op elementwise chain over N float32 values,
    y = tanh(x * 1.5 + 0.5) * sigmoid(x) - exp(-(x * x)) * 0.25
  (multiply, add, tanh, sigmoid, multiply, multiply, negative/exp, multiply-subtract),
- two_loop/100: the L-BFGS two-loop recursion with history 100 on vectors of 153,664
  floats (the seed benchmark's parameter count), as torch.optim.LBFGS computes it,
- branches/8x64: eight independent 64x64 matmuls, each summed, then added up: the
  executor runs the small independent nodes at once ("branches/function"), or one by one
  with GraphOptimizerOptions.parallel_execution off ("branches/serial").

- saved_model/mlp: a 784-256-10 MLP's forward pass on a batch of 64 ("function": the
  ef.function, "loaded": the same function saved with ef.saved_model and loaded again,
  which must cost no more), and saved_model/chain/1e+06 likewise for the chain above.

- arith/N: an 8-op chain of cheap arithmetic over N float32,
    y = ((x * 1.5 + 0.5) * x - x * x * 0.25) / (x * x + 1)
  which is bound by memory rather than by arithmetic.

Prints JSON {case: {"eagerflow": s, "pytorch": s}}: for "CASE/function" eagerflow is the
traced function's median time, for "CASE/compiled" the same function made with
jit_compile=True (its fused ops run as compiled kernels; the warm-up call compiles them),
for "CASE/eager" our eager time; PyTorch is eager in all three.
The reference for the chains is one read-and-write pass over N floats at this machine's
memory bandwidth, "pass/N": eagerflow's negative (two threads, its output buffer reused
from the caching allocator) against torch.neg(x, out=buffer). A fresh NumPy copy is not
that reference: its time is mostly the page faults of a new 40 MB buffer.
"""
import argparse
import json
import statistics
import time

import numpy as np
import torch

import eagerflow as ef


def median_time(fn, repetitions, inner=5):
    fn()  # warm up (and trace)
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def chain_ef(x):
    return ef.tanh(x * 1.5 + 0.5) * ef.sigmoid(x) - ef.exp(-(x * x)) * 0.25


def chain_torch(x):
    return torch.tanh(x * 1.5 + 0.5) * torch.sigmoid(x) - torch.exp(-(x * x)) * 0.25


def arith(x):
    """The same for either library: only operators."""
    return ((x * 1.5 + 0.5) * x - x * x * 0.25) / (x * x + 1)


def two_loop(lib, g, old_dirs, old_stps, ro, h_diag):
    """torch.optim.LBFGS's direction computation (d = -H g), for `lib` in (ef, torch)."""
    dot = (lambda a, b: ef.reduce_sum(a * b)) if lib is ef else (lambda a, b: a.dot(b))
    num_old = len(old_dirs)
    al = [None] * num_old
    q = -g
    for i in range(num_old - 1, -1, -1):
        al[i] = dot(old_stps[i], q) * ro[i]
        q = q - al[i] * old_dirs[i]
    d = q * h_diag
    for i in range(num_old):
        be_i = dot(old_dirs[i], d) * ro[i]
        d = d + old_stps[i] * (al[i] - be_i)
    return d


def branches(lib, ws):
    """Eight independent small matmuls, each summed, then added up."""
    total = None
    for w in ws[1:]:
        s = (ef.reduce_sum(ef.matmul(ws[0], w)) if lib is ef else torch.matmul(ws[0], w).sum())
        total = s if total is None else total + s
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    results = {}
    rng = np.random.default_rng(0)

    for n in (10 ** 6, 10 ** 7):
        x_np = rng.standard_normal(n).astype(np.float32)
        x_ef, x_torch = ef.constant(x_np), torch.from_numpy(x_np)
        for name, ef_fn, torch_fn in (("chain", chain_ef, chain_torch), ("arith", arith, arith)):
            traced = ef.function(ef_fn)
            torch_time = median_time(lambda: torch_fn(x_torch), args.repetitions)
            results[f"{name}/function/{n:.0e}"] = {
                "eagerflow": median_time(lambda: traced(x_ef), args.repetitions), "pytorch": torch_time}
            results[f"{name}/eager/{n:.0e}"] = {
                "eagerflow": median_time(lambda: ef_fn(x_ef), args.repetitions), "pytorch": torch_time}
            compiled = ef.function(ef_fn, jit_compile=True)  # the warm-up call compiles its kernel
            results[f"{name}/compiled/{n:.0e}"] = {
                "eagerflow": median_time(lambda: compiled(x_ef), args.repetitions), "pytorch": torch_time}
        out_torch = torch.empty_like(x_torch)
        results[f"pass/{n:.0e}"] = {
            "eagerflow": median_time(lambda: -x_ef, args.repetitions),
            "pytorch": median_time(lambda: torch.neg(x_torch, out=out_torch), args.repetitions)}

    size, history = 153664, 100
    vecs = [rng.standard_normal(size).astype(np.float32) for _ in range(2 * history + 1)]
    ro_np = [float(1.0 / (1.0 + i)) for i in range(history)]
    g_ef = ef.constant(vecs[0])
    dirs_ef = [ef.constant(v) for v in vecs[1:history + 1]]
    stps_ef = [ef.constant(v) for v in vecs[history + 1:]]
    ro_ef = [ef.constant(r, dtype=ef.float32) for r in ro_np]
    g_t = torch.from_numpy(vecs[0])
    dirs_t = [torch.from_numpy(v) for v in vecs[1:history + 1]]
    stps_t = [torch.from_numpy(v) for v in vecs[history + 1:]]
    ro_t = [torch.tensor(r) for r in ro_np]
    traced_two_loop = ef.function(lambda g, dirs, stps, ro: two_loop(ef, g, dirs, stps, ro, 1.0))
    torch_time = median_time(lambda: two_loop(torch, g_t, dirs_t, stps_t, ro_t, 1.0), args.repetitions)
    results[f"two_loop/function/{history}"] = {
        "eagerflow": median_time(lambda: traced_two_loop(g_ef, dirs_ef, stps_ef, ro_ef), args.repetitions),
        "pytorch": torch_time}
    compiled_two_loop = ef.function(lambda g, dirs, stps, ro: two_loop(ef, g, dirs, stps, ro, 1.0), jit_compile=True)
    results[f"two_loop/compiled/{history}"] = {
        "eagerflow": median_time(lambda: compiled_two_loop(g_ef, dirs_ef, stps_ef, ro_ef), args.repetitions),
        "pytorch": torch_time}
    results[f"two_loop/eager/{history}"] = {
        "eagerflow": median_time(lambda: two_loop(ef, g_ef, dirs_ef, stps_ef, ro_ef, 1.0), args.repetitions),
        "pytorch": torch_time}
    w_np = [rng.standard_normal((64, 64)).astype(np.float32) for _ in range(9)]
    ws_ef, ws_t = [ef.constant(w) for w in w_np], [torch.from_numpy(w) for w in w_np]
    torch_time = median_time(lambda: branches(torch, ws_t), args.repetitions, inner=50)
    for label, parallel in (("function", True), ("serial", False)):
        saved = ef.graph_optimizer_options()
        options = ef.graph_optimizer_options()
        options.parallel_execution = parallel
        ef.set_graph_optimizer_options(options)
        traced_branches = ef.function(lambda ws: branches(ef, ws))
        results[f"branches/{label}/8x64"] = {
            "eagerflow": median_time(lambda: traced_branches(ws_ef), args.repetitions, inner=50),
            "pytorch": torch_time}
        ef.set_graph_optimizer_options(saved)
    saved_model_cases(results, rng, args.repetitions)
    print(json.dumps(results, indent=1))


def saved_model_cases(results, rng, repetitions):
    import tempfile
    w1, w2 = (ef.Variable(rng.standard_normal(s).astype(np.float32) * 0.05) for s in ((784, 256), (256, 10)))
    tw1, tw2 = (torch.from_numpy(w.numpy()) for w in (w1, w2))
    x_np = rng.standard_normal((64, 784)).astype(np.float32)
    c_np = rng.standard_normal(10 ** 6).astype(np.float32)
    cases = (
        ("mlp", lambda x: ef.nn.softmax(ef.matmul(ef.nn.relu(ef.matmul(x, w1)), w2)), [None, 784], x_np,
         lambda x: torch.softmax(torch.relu(x @ tw1) @ tw2, -1)),
        ("chain/1e+06", chain_ef, [None], c_np, chain_torch),
    )
    with tempfile.TemporaryDirectory() as tmp, torch.inference_mode():
        for name, fn, shape, value, torch_fn in cases:
            traced = ef.function(fn, input_signature=[ef.TensorSpec(shape, ef.float32)])
            ef.saved_model.save(traced, f"{tmp}/{name.replace('/', '_')}")
            loaded = ef.saved_model.load(f"{tmp}/{name.replace('/', '_')}")
            x_ef, x_torch = ef.constant(value), torch.from_numpy(value)
            torch_time = median_time(lambda: torch_fn(x_torch), repetitions, inner=20)
            results[f"saved_model/{name}/function"] = {
                "eagerflow": median_time(lambda: traced(x_ef), repetitions, inner=20), "pytorch": torch_time}
            results[f"saved_model/{name}/loaded"] = {
                "eagerflow": median_time(lambda: loaded(x_ef), repetitions, inner=20), "pytorch": torch_time}


if __name__ == "__main__":
    main()
