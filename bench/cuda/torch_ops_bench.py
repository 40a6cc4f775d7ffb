"""PyTorch's timings of bench/cuda/ops_bench.cpp's cases on the same GPU ("name median_ms")."""
import statistics
import time

import torch


def median_ms(step, reps):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    dev = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False  # as eagerflow (and cuBLAS) by default
    torch.backends.cudnn.allow_tf32 = False
    a, b = torch.randn(4096, 4096, device=dev), torch.randn(4096, 4096, device=dev)
    print(f"matmul_4096_f32 {median_ms(lambda: a @ b, 20):.4f}")
    ah, bh = a.bfloat16(), b.bfloat16()
    print(f"matmul_4096_bf16 {median_ms(lambda: ah @ bh, 20):.4f}")
    x, y = torch.randn(100_000_000, device=dev), torch.randn(100_000_000, device=dev)
    print(f"add_1e8_f32 {median_ms(lambda: x + y, 20):.4f}")
    xh, yh = x.bfloat16(), y.bfloat16()
    print(f"add_1e8_bf16 {median_ms(lambda: xh + yh, 20):.4f}")
    print(f"chain5_1e8_f32 {median_ms(lambda: torch.relu(torch.tanh(x * y + 1) - 0.5), 10):.4f}")
    print(f"reduce_sum_1e8_f32 {median_ms(lambda: x.sum(), 20):.4f}")
    s = torch.ones(8, device=dev)

    def tiny():
        for _ in range(1000):
            s + s

    print(f"tiny_add_x1000 {median_ms(tiny, 10):.4f}")
    img, f = torch.randn(32, 16, 28, 28, device=dev), torch.randn(32, 16, 3, 3, device=dev)
    print(f"conv2d_32x28x28x16_k3x32 {median_ms(lambda: torch.nn.functional.conv2d(img, f, padding=1), 20):.4f}")
    logits = torch.randn(512, 1000, device=dev)
    print(f"softmax_512x1000 {median_ms(lambda: torch.softmax(logits, -1), 20):.4f}")


if __name__ == "__main__":
    main()
