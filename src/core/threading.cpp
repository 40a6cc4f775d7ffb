// The thread pool behind parallel_for. Workers spin briefly after a job (a small op
// that follows is then picked up in well under a microsecond) and then block, so an
// idle pool costs nothing. BLAS runs single-threaded inside this pool (see
// backends/cpu/blas.cpp): one pool, no competing spinners.
#include "eagerflow/core/threading.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "core/parallel_tasks.h"
#include "eagerflow/core/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define EF_CPU_RELAX() _mm_pause()
#else
#define EF_CPU_RELAX() ((void)0)
#endif

namespace ef {
namespace {

// Below this much work (in nanoseconds) a fork/join costs more than it saves.
constexpr double kParallelBreakEvenNs = 20000;

thread_local bool tl_in_parallel_region = false;

int default_num_threads() {
  if (const char* env = std::getenv("EF_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

class ThreadPool {
 public:
  explicit ThreadPool(int threads) { resize(threads); }
  ~ThreadPool() { stop_workers(); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int threads) {
    stop_workers();
    stopping_ = false;
    for (int i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  void run(int64_t n, int chunks, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard<std::mutex> serialize(run_mutex_);  // one job at a time
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      job_n_ = n;
      job_chunks_ = chunks;
      next_chunk_.store(0, std::memory_order_release);
      pending_.store(chunks, std::memory_order_relaxed);
      error_ = nullptr;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    tl_in_parallel_region = true;
    work_on_chunks();
    tl_in_parallel_region = false;
    while (pending_.load(std::memory_order_acquire) != 0) EF_CPU_RELAX();
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work_on_chunks() {
    for (;;) {
      int c = next_chunk_.fetch_add(1, std::memory_order_acq_rel);
      if (c >= job_chunks_) return;
      int64_t begin = job_n_ * c / job_chunks_, end = job_n_ * (c + 1) / job_chunks_;
      try {
        if (begin < end) (*job_)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  void worker_loop() {
    tl_in_parallel_region = true;
    uint64_t seen = generation_.load(std::memory_order_acquire);
    for (;;) {
      // Spin a little first: eager code issues ops back to back.
      for (int spin = 0; spin < 20000 && generation_.load(std::memory_order_acquire) == seen && !stopping_;
           ++spin)
        EF_CPU_RELAX();
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_.load(std::memory_order_acquire) != seen; });
        if (stopping_) return;
        seen = generation_.load(std::memory_order_acquire);
        if (!job_) continue;
      }
      work_on_chunks();
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t job_n_ = 0;
  int job_chunks_ = 0;
  std::atomic<int> next_chunk_{0};
  std::atomic<int> pending_{0};
  std::exception_ptr error_;
  bool stopping_ = false;
};

std::atomic<int> g_num_threads{0};

ThreadPool& pool() {
  // Never destroyed: joining threads during static destruction can deadlock.
  static auto* p = new ThreadPool(g_num_threads.load() ? g_num_threads.load() : default_num_threads());
  return *p;
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1) fail("set_num_threads: the thread count must be at least 1, got ", n);
  if (tl_in_parallel_region) fail<FailedPreconditionError>("set_num_threads: called from inside a parallel region");
  g_num_threads = n;
  pool().resize(n);
}

int num_threads() { return pool().size(); }

bool in_parallel_region() { return tl_in_parallel_region; }

void parallel_for(int64_t n, double cost_per_item,
                  const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (n <= 0) return;
  int threads = tl_in_parallel_region ? 1 : num_threads();
  double work = static_cast<double>(n) * cost_per_item;
  if (threads == 1 || work < kParallelBreakEvenNs || n == 1) {
    fn(0, n);
    return;
  }
  int chunks = static_cast<int>(std::min<int64_t>(threads, n));
  pool().run(n, chunks, fn);
}

namespace detail {

void parallel_tasks(int64_t n, const std::function<void(int64_t i)>& fn) {
  if (n <= 0) return;
  if (tl_in_parallel_region || n == 1 || num_threads() == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  const int chunks = static_cast<int>(std::min<int64_t>(n, std::numeric_limits<int>::max()));
  pool().run(n, chunks, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

}  // namespace detail

}  // namespace ef
