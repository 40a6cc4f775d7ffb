// The profiler: op runs recorded eagerly and inside functions, per-op statistics, and
// the Chrome trace file.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "test_util.h"

namespace ef {
namespace {

int count_named(const profiler::Profile& profile, const std::string& name) {
  int n = 0;
  for (const profiler::OpEvent& e : profile.events) n += e.name == name;
  return n;
}

TEST(Profiler, RecordsEagerOpsAndOpsInsideFunctions) {
  const Tensor a = ones({2, 3}), b = ones({3, 4});
  auto affine = function([](Tensor x, Tensor w) { return matmul(x, w) + 1.f; }, "affine");
  affine(a, b);  // traced before the profile: tracing runs no kernels anyway
  profiler::start();
  matmul(a, b);
  affine(a, b);
  affine(a, b);
  const profiler::Profile profile = profiler::stop();
  matmul(a, b);  // after stop: not recorded

  EXPECT_EQ(count_named(profile, "matmul"), 3);
  const profiler::OpEvent& first = profile.events.front();
  EXPECT_EQ(first.name, "matmul");
  EXPECT_EQ(first.input_shapes, (std::vector<Shape>{Shape{2, 3}, Shape{3, 4}}));
  EXPECT_EQ(first.input_dtypes, (std::vector<DType>{DType::Float32, DType::Float32}));
  EXPECT_EQ(first.device, kCPU);
  int64_t previous = -1;
  for (const profiler::OpEvent& e : profile.events) {
    EXPECT_GE(e.start_ns, previous);
    EXPECT_GE(e.duration_ns, 0);
    EXPECT_LE(e.start_ns + e.duration_ns, profile.wall_ns);
    previous = e.start_ns;
  }
  const std::vector<profiler::OpStats> stats = profile.key_averages();
  int64_t calls = 0, total = 0;
  for (const profiler::OpStats& s : stats) {
    calls += s.calls;
    total += s.total_ns;
    EXPECT_LE(s.min_ns, s.max_ns);
    if (s.name == "matmul") EXPECT_EQ(s.calls, 3);
  }
  EXPECT_EQ(calls, static_cast<int64_t>(profile.events.size()));
  for (size_t i = 1; i < stats.size(); ++i) EXPECT_GE(stats[i - 1].total_ns, stats[i].total_ns);
  const std::string table = profile.table();
  EXPECT_THAT(table, ::testing::HasSubstr("matmul"));
  EXPECT_THAT(table, ::testing::HasSubstr("Calls"));
  EXPECT_TRUE(profile.trace_path.empty());
  (void)total;
}

TEST(Profiler, WritesAChromeTrace) {
  // One folder per process: ctest may run this binary twice at once.
  const std::string dir = ::testing::TempDir() + "/ef_profiler_trace_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  {
    profiler::Scope scope(dir);
    exp(ones({8}));
    std::thread([] { tanh(ones({4, 4})); }).join();
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files[0].string().ends_with(".pt.trace.json")) << files[0];
  std::ifstream in(files[0]);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::set<std::string> names;
  std::set<uint64_t> threads;
  for (const auto& event : trace.at("traceEvents")) {
    if (event.at("ph") != "X") continue;
    names.insert(event.at("name").get<std::string>());
    threads.insert(event.at("tid").get<uint64_t>());
    EXPECT_GE(event.at("dur").get<double>(), 0.0);
    EXPECT_EQ(event.at("args").at("device"), "CPU:0");
    if (event.at("name") == "tanh")
      EXPECT_EQ(event.at("args").at("Input Dims"), nlohmann::json::parse("[[4, 4]]"));
  }
  EXPECT_TRUE(names.contains("exp") && names.contains("tanh"));
  EXPECT_EQ(threads.size(), 2u);  // the test's thread and the one it started
  std::filesystem::remove_all(dir);
}

TEST(Profiler, WithoutShapesAndMisuse) {
  profiler::start("", {.record_shapes = false});
  EXPECT_THROW(profiler::start(), FailedPreconditionError);
  exp(ones({3}));
  const profiler::Profile profile = profiler::stop();
  ASSERT_EQ(count_named(profile, "exp"), 1);
  for (const profiler::OpEvent& e : profile.events) EXPECT_TRUE(e.input_shapes.empty());
  EXPECT_THROW(profiler::stop(), FailedPreconditionError);
  // A later profile starts empty.
  profiler::start();
  EXPECT_EQ(profiler::stop().events.size(), 0u);
}

}  // namespace
}  // namespace ef
