// A process killed at any moment while saving leaves the old checkpoint or the new one,
// never a broken file (Note [checkpoint integrity]).
#include <eagerflow/io/safetensors.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "io/atomic_file.h"
#include "io_test_util.h"

namespace ef::testing {
namespace {

TEST(AtomicSaveTest, KilledSaverLeavesTheOldOrTheNewCheckpoint) {
  TempDir dir("kill");
  const std::string path = dir.file("model.safetensors");
  // Four versions of a 4 MB checkpoint; each is recognisable by its "version" tensor.
  constexpr int kVersions = 4;
  std::vector<std::map<std::string, Tensor>> versions;
  for (int v = 0; v < kVersions; ++v)
    versions.push_back({{"version", constant(int64_t{v})},
                        {"weights", iota({1024, 1024}) * static_cast<float>(v + 1)},
                        {"bias", fill({1000}, v, DType::Int32)}});
  // Delays between kills scale with how long one save takes here (disks differ a lot).
  const auto start = std::chrono::steady_clock::now();
  io::save_safetensors(path, versions[0]);
  const long save_ns = static_cast<long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  const long step_ns = std::max(1'500'000L, save_ns / 8);

  std::set<int64_t> seen;
  std::set<std::string> temporaries;  // one per kill that landed mid-save
  constexpr int kKills = 50;
  for (int k = 0; k < kKills; ++k) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // the child saves version after version until it is killed
      try {
        for (int i = 1;; ++i) io::save_safetensors(path, versions[static_cast<size_t>(i % kVersions)]);
      } catch (...) {
        ::_exit(1);
      }
    }
    // Delays from 0 to 50 steps (several saves) land at every phase of a save.
    const long ns = static_cast<long>(k) * step_ns;
    timespec delay{ns / 1'000'000'000L, ns % 1'000'000'000L};
    ::nanosleep(&delay, nullptr);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the saving child failed on its own (exit status " << status << ")";

    for (const std::string& name : dir.entries())
      if (name != "model.safetensors") {
        EXPECT_TRUE(io::detail::is_temporary_file_name(name)) << name;
        temporaries.insert(name);
      }
    io::TensorFile f;
    ASSERT_NO_THROW(f = io::load_safetensors(path)) << "after kill " << k;
    const int64_t v = f.tensors.at("version").item<int64_t>();
    ASSERT_TRUE(v >= 0 && v < kVersions);
    for (const auto& [name, t] : versions[static_cast<size_t>(v)]) expect_identical(f.tensors.at(name), t, name);
    seen.insert(v);
  }
  const int killed_mid_save = static_cast<int>(temporaries.size());
  std::printf("[ kill ] one save %.1f ms; %d kills, %d left a temporary file, versions seen: %zu\n", save_ns / 1e6,
              kKills, killed_mid_save, seen.size());
  EXPECT_GE(seen.size(), 2u) << "the children never completed a save";
  // Kills also land between saves (checksums, tidying, fork): most, not all, leave a temporary.
  EXPECT_GE(killed_mid_save, kKills / 10) << "too few kills landed in the middle of writing a file";

  // The next save tidies the temporary files the killed processes left behind.
  io::save_safetensors(path, versions[1]);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});
}

}  // namespace
}  // namespace ef::testing
