// One thread pool for every kernel and for BLAS (which runs single-threaded inside
// it), sized to the machine's cores. Small work stays on the calling thread: a
// fork/join costs about 1.5 µs, more than a small op takes.
#pragma once

#include <cstdint>
#include <functional>

namespace ef {

// Sets the number of threads kernels may use (including the calling thread).
// Also read once from EF_NUM_THREADS at start-up. n < 1 is an InvalidArgumentError.
void set_num_threads(int n);
int num_threads();

// Runs fn(begin, end) over disjoint chunks covering [0, n). Work is split across the
// pool only when n * cost_per_item exceeds the fork/join break-even point; otherwise
// fn(0, n) runs on the calling thread. Chunk boundaries depend only on n and the
// thread count, never on timing. Exceptions thrown by fn propagate to the caller.
void parallel_for(int64_t n, double cost_per_item,
                  const std::function<void(int64_t begin, int64_t end)>& fn);

// True on the pool's worker threads and while the caller runs its own share, so
// nested parallel_for calls run inline instead of deadlocking.
bool in_parallel_region();

}  // namespace ef
