// The thread pool: parallel_for covers [0, n) exactly once, small work and nested
// calls stay on the calling thread, exceptions reach the caller.
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "test_util.h"

namespace ef {
namespace {

class ThreadPool : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = num_threads(); }
  void TearDown() override { set_num_threads(saved_); }
  int saved_ = 1;
};

constexpr double kExpensive = 1e6;  // ns per item: always worth splitting

TEST_F(ThreadPool, CoversRangeExactlyOnceInChunks) {
  for (int threads : {1, 2, 3, 4}) {
    set_num_threads(threads);
    EXPECT_EQ(num_threads(), threads);
    for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7}, int64_t{1000}, int64_t{10007}}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::mutex mutex;
      std::vector<std::pair<int64_t, int64_t>> chunks;
      parallel_for(n, kExpensive, [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, n);
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
        std::lock_guard<std::mutex> lock(mutex);
        chunks.emplace_back(begin, end);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
      EXPECT_EQ(chunks.size(), static_cast<size_t>(std::min<int64_t>(threads, n))) << "n=" << n;
    }
  }
}

TEST_F(ThreadPool, ChunksDependOnlyOnSizeAndThreadCount) {
  set_num_threads(3);
  auto run = [] {
    std::mutex mutex;
    std::set<std::pair<int64_t, int64_t>> chunks;
    parallel_for(1000, kExpensive, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(mutex);
      chunks.emplace(b, e);
    });
    return chunks;
  };
  EXPECT_EQ(run(), run());
}

TEST_F(ThreadPool, SmallWorkRunsInlineAsOneChunk) {
  set_num_threads(4);
  int calls = 0;
  std::thread::id caller = std::this_thread::get_id();
  parallel_for(100, 1.0, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 100);
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
  EXPECT_EQ(calls, 1);
  parallel_for(0, kExpensive, [&](int64_t, int64_t) { ADD_FAILURE() << "called for n = 0"; });
  parallel_for(-5, kExpensive, [&](int64_t, int64_t) { ADD_FAILURE() << "called for n < 0"; });
}

TEST_F(ThreadPool, ExceptionsPropagateWithTheirType) {
  set_num_threads(4);
  for (int rep = 0; rep < 20; ++rep) {
    EXPECT_ERROR(parallel_for(1000, kExpensive,
                              [&](int64_t begin, int64_t) {
                                if (begin > 0) fail<OutOfRangeError>("chunk at ", begin, " failed");
                              }),
                 OutOfRangeError, "failed");
  }
  // The pool still works afterwards.
  std::atomic<int64_t> sum{0};
  parallel_for(100, kExpensive, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

TEST_F(ThreadPool, NestedCallsRunInline) {
  set_num_threads(4);
  EXPECT_FALSE(in_parallel_region());
  std::atomic<int> outer_chunks{0}, inner_calls{0};
  parallel_for(8, kExpensive, [&](int64_t, int64_t) {
    ++outer_chunks;
    EXPECT_TRUE(in_parallel_region());
    std::thread::id me = std::this_thread::get_id();
    parallel_for(1000, kExpensive, [&](int64_t b, int64_t e) {
      ++inner_calls;
      EXPECT_EQ(b, 0);
      EXPECT_EQ(e, 1000);
      EXPECT_EQ(std::this_thread::get_id(), me);
    });
    EXPECT_ERROR(set_num_threads(2), FailedPreconditionError, "parallel region");
  });
  EXPECT_EQ(inner_calls.load(), outer_chunks.load());
  EXPECT_FALSE(in_parallel_region());
}

TEST_F(ThreadPool, SetNumThreadsRejectsNonPositive) {
  EXPECT_ERROR(set_num_threads(0), InvalidArgumentError, "set_num_threads", "at least 1", "0");
  EXPECT_ERROR(set_num_threads(-3), InvalidArgumentError, "-3");
  set_num_threads(1);
  EXPECT_EQ(num_threads(), 1);
}

TEST_F(ThreadPool, KernelsGiveTheSameResultsWithAnyThreadCount) {
  Tensor x = ef::range(0, 200000, 1, DType::Float64);
  set_num_threads(1);
  std::vector<double> one = ef::sqrt(x).to_vector<double>();
  set_num_threads(4);
  EXPECT_EQ(ef::sqrt(x).to_vector<double>(), one);
}

}  // namespace
}  // namespace ef
