// Faults that must end the whole job in bounded time with a message naming the rank
// (Note [collectives never hang]); run by ctest under mpirun -np 2.
//   distribute_fault hang    rank 1 never joins the collective: rank 0 times out
//   distribute_fault throw   rank 1 throws and does not catch: its error ends the job
#include <eagerflow/distribute/distribute.h>
#include <eagerflow/eagerflow.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "hang" && mode != "throw") {
    std::fprintf(stderr, "usage: distribute_fault hang|throw\n");
    return 2;
  }
  ef::distribute::init({.timeout_seconds = 2});
  if (ef::distribute::rank() == 1) {
    if (mode == "throw") throw std::runtime_error("rank 1 failed to read its batch");
    std::this_thread::sleep_for(std::chrono::seconds(60));  // longer than the ctest timeout allows
  }
  ef::distribute::all_reduce(ef::ones({4}));
  std::fprintf(stderr, "distribute_fault: the collective returned; the fault was not detected\n");
  return 1;
}
