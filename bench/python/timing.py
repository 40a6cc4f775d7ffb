"""The timing rule the standalone benchmarks share: the median of `iters` timed calls
after `warmup` untimed ones (the machines are shared and noisy)."""
import statistics
import time


def median_seconds(fn, iters, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
