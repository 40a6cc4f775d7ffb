// map (sequential and parallel) and prefetch: order, errors, early destruction.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "data/data_test_util.h"
#include "eagerflow/data/pipeline_threads.h"

namespace ef::testing {
namespace {

using data::Dataset;
using data::Element;

Element square(const Element& e) { return {e[0] * e[0]}; }

std::vector<int64_t> squares(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i * i);
  return v;
}

TEST(DatasetMapTest, SequentialMap) {
  EXPECT_EQ(values(numbers(6).map(square)), squares(6));
  // A map may change the number of components.
  Dataset pairs = numbers(3).map([](const Element& e) { return Element{e[0], e[0] + int64_t{10}}; });
  for (const Element& e : pairs) EXPECT_EQ(e[1].item<int64_t>(), e[0].item<int64_t>() + 10);
}

TEST(DatasetMapTest, ParallelMapKeepsInputOrder) {
  // Later elements finish first (earlier ones sleep longer); the output is still in order.
  std::atomic<int> concurrent{0}, peak{0};
  auto slow_square = [&](const Element& e) {
    int now = ++concurrent;
    for (int seen = peak.load(); now > seen && !peak.compare_exchange_weak(seen, now);) {
    }
    const int64_t i = e[0].item<int64_t>();
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (8 - i % 8)));
    --concurrent;
    return square(e);
  };
  EXPECT_EQ(values(numbers(40).map(slow_square, 4)), squares(40));
  EXPECT_GT(peak.load(), 1);  // the calls did overlap
  EXPECT_LE(peak.load(), 4);
  EXPECT_EQ(values(numbers(40).map(square, data::kAutotune).batch(7)), squares(40));
}

TEST(DatasetMapTest, MapErrorsReachTheConsumerInOrder) {
  auto fail_at_5 = [](const Element& e) {
    if (e[0].item<int64_t>() == 5) fail("my map failed at 5");
    return e;
  };
  for (int64_t threads : {int64_t{1}, int64_t{3}}) {
    data::Iterator it = numbers(10).map(fail_at_5, threads).make_iterator();
    for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(it.get_next()->at(0).item<int64_t>(), i);
    EXPECT_ERROR(it.get_next(), InvalidArgumentError, "my map failed at 5");
  }
  EXPECT_ERROR(values(numbers(2).map([](const Element&) { return Element{Tensor()}; })), InvalidArgumentError,
               "map", "undefined");
}

TEST(DatasetMapTest, ParallelMapStopsCleanlyWhenAbandoned) {
  std::atomic<int> calls{0};
  {
    data::Iterator it = numbers(1000)
                            .map(
                                [&](const Element& e) {
                                  ++calls;
                                  return e;
                                },
                                4)
                            .make_iterator();
    it.get_next();
  }  // destroyed with work in flight
  EXPECT_LE(calls.load(), 10);
}

TEST(DatasetPrefetchTest, PrefetchYieldsEverythingInOrder) {
  EXPECT_EQ(values(numbers(100).prefetch(3)), iota_vector(100));
  EXPECT_EQ(values(numbers(100).shuffle(100, 1).batch(8).prefetch()),
            values(numbers(100).shuffle(100, 1).batch(8)));
  EXPECT_EQ(values(numbers(5).prefetch(1).repeat(2)), (std::vector<int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
}

TEST(DatasetPrefetchTest, ProducerRunsAheadByAtMostTheBuffer) {
  std::atomic<int> produced{0};
  data::Iterator it = numbers(100)
                          .map([&](const Element& e) {
                            ++produced;
                            return e;
                          })
                          .prefetch(3)
                          .make_iterator();
  it.get_next();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // One taken, three queued, at most one more in the producer's hands.
  EXPECT_GE(produced.load(), 4);
  EXPECT_LE(produced.load(), 5);
}

TEST(DatasetPrefetchTest, EarlyDestructionStopsTheProducer) {
  for (int round = 0; round < 20; ++round) {
    data::Iterator it = numbers(10).repeat().prefetch(2).make_iterator();  // infinite input
    if (round % 2) it.get_next();
  }
  // Never started: nothing to stop.
  { data::Iterator it = numbers(10).prefetch(2).make_iterator(); }
  // Range-for broken out of early.
  int seen = 0;
  for (const Element& e : numbers(10).repeat().prefetch(4)) {
    (void)e;
    if (++seen == 3) break;
  }
  EXPECT_EQ(seen, 3);
}

TEST(DatasetPrefetchTest, ProducerErrorsAreRethrownAfterTheGoodElements) {
  auto fail_at_3 = [](const Element& e) {
    if (e[0].item<int64_t>() == 3) fail<OutOfRangeError>("producer failed at 3");
    return e;
  };
  data::Iterator it = numbers(10).map(fail_at_3).prefetch(8).make_iterator();
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(it.get_next()->at(0).item<int64_t>(), i);
  EXPECT_ERROR(it.get_next(), OutOfRangeError, "producer failed at 3");
  EXPECT_FALSE(it.get_next().has_value());  // the pass ended with the error
}

TEST(DatasetPrefetchTest, ParallelMapUnderPrefetchAndBatch) {
  Dataset ds = numbers(64).shuffle(64, 2).map(square, 3).batch(8).prefetch(2);
  std::vector<int64_t> got = values(ds);
  std::vector<int64_t> expected;
  for (int64_t v : values(numbers(64).shuffle(64, 2))) expected.push_back(v * v);
  // Each pass reshuffles: compare with the same pass number of a fresh pipeline.
  EXPECT_EQ(got, expected);
}

// Note [waiting on pipeline threads]: the hooks bracket every wait of a consumer for its
// pass's threads (here also the prefetch thread's waits for the parallel map below it).
std::atomic<int> g_open_waits{0}, g_waits{0};

TEST(DatasetPrefetchTest, WaitHooksBracketEveryWaitForPipelineThreads) {
  data::set_wait_hooks({[]() -> void* {
                          ++g_open_waits;
                          ++g_waits;
                          return &g_open_waits;
                        },
                        [](void* state) { --*static_cast<std::atomic<int>*>(state); }});
  EXPECT_EQ(values(numbers(20).map(square, 3).prefetch(2)), squares(20));
  {
    data::Iterator abandoned = numbers(100).repeat().map(square, 2).prefetch(4).make_iterator();
    abandoned.get_next();
  }
  data::set_wait_hooks({});
  EXPECT_GT(g_waits.load(), 20);  // each element from prefetch, each from the parallel map, the joins
  EXPECT_EQ(g_open_waits.load(), 0);
  const int before = g_waits.load();
  EXPECT_EQ(values(numbers(3).prefetch(1)), iota_vector(3));  // no hooks installed
  EXPECT_EQ(g_waits.load(), before);
}

}  // namespace
}  // namespace ef::testing

namespace ef::testing {
namespace {

// Python's garbage collector can drop an abandoned pass on one of that pass's own
// threads (Note [iterators destroyed on pipeline threads]); emulated here by a map
// function that destroys the pass it belongs to.
void destroy_pass_on_its_own_thread(int64_t map_threads) {
  struct Graveyard {
    std::mutex mu;
    std::optional<data::Iterator> pass;
  };
  auto graveyard = std::make_shared<Graveyard>();
  auto sentinel = std::make_shared<int>(0);  // alive while any copy of the map function is
  std::weak_ptr<int> fn_alive = sentinel;
  std::atomic<bool> destroyed{false};
  auto fn = [graveyard, sentinel, &destroyed](const data::Element& e) {
    std::optional<data::Iterator> victim;
    {
      std::lock_guard lock(graveyard->mu);
      victim.swap(graveyard->pass);
    }
    if (victim) {
      victim.reset();  // joins the pass's threads, this one among them
      destroyed = true;
    }
    return e;
  };
  // A buffer the producer cannot fill before the pass is abandoned: it keeps calling fn.
  data::Iterator pass =
      numbers(1000).repeat().map(std::move(fn), map_threads).prefetch(100000).make_iterator();
  sentinel.reset();
  ASSERT_TRUE(pass.get_next().has_value());
  {
    std::lock_guard lock(graveyard->mu);
    graveyard->pass = std::move(pass);  // abandoned by the consumer
  }
  graveyard.reset();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!fn_alive.expired() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(destroyed.load());
  EXPECT_TRUE(fn_alive.expired()) << "the pass was never destroyed";
}

TEST(DatasetPrefetchTest, PassDestroyedOnItsOwnProducerThread) { destroy_pass_on_its_own_thread(1); }
TEST(DatasetPrefetchTest, PassDestroyedOnItsOwnMapWorker) { destroy_pass_on_its_own_thread(3); }

}  // namespace
}  // namespace ef::testing
