// all_reduce against OpenMPI's own MPI_Allreduce, float32 sums of 1 KB to 64 MB (run by
// hand, with two or more ranks; a size in bytes as argument sets the largest):
//   mpirun -np 2 build-bench/bench/cpp/distribute_bench [268435456]
// Columns: MPI_Allreduce (blocking), MPI_Iallreduce + MPI_Wait, ef::distribute::all_reduce
// with its agreement check (Note [collectives never hang]) and without it; each the best
// of 3 runs' mean time per call, and bus bandwidth 2 (n - 1) / n * bytes / time.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <eagerflow/distribute/distribute.h>
#include <eagerflow/eagerflow.h>

namespace {

namespace dist = ef::distribute;

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The best of 3 runs of the mean time of `iterations` calls, every rank starting together.
template <class F>
double time_per_call(int iterations, F call) {
  double best = 1e30;
  for (int run = 0; run < 3; ++run) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = seconds_now();
    for (int i = 0; i < iterations; ++i) call();
    MPI_Barrier(MPI_COMM_WORLD);
    best = std::min(best, (seconds_now() - start) / iterations);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  dist::init();
  const long largest = argc > 1 ? std::atol(argv[1]) : (64L << 20);
  const int ranks = dist::size();
  if (dist::rank() == 0) {
    std::printf("%d ranks; microseconds per all_reduce (bus bandwidth GB/s)\n", ranks);
    std::printf("%12s %22s %22s %22s %22s\n", "bytes", "MPI_Allreduce", "MPI_Iallreduce", "ef all_reduce",
                "ef without check");
  }
  for (long bytes = 1024; bytes <= largest; bytes *= 4) {
    const int n = static_cast<int>(bytes / 4);
    const int iterations = static_cast<int>(std::clamp((1L << 26) / bytes, 3L, 1000L));
    std::vector<float> in(static_cast<size_t>(n), 1.f), out(static_cast<size_t>(n));
    const ef::Tensor x = ef::ones({n});
    const double mpi = time_per_call(
        iterations, [&] { MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
    const double impi = time_per_call(iterations, [&] {
      MPI_Request request;
      MPI_Iallreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    });
    const double ef_checked = time_per_call(iterations, [&] { dist::all_reduce(x); });
    dist::set_options({.timeout_seconds = 300, .check_agreement = false});
    const double ef_unchecked = time_per_call(iterations, [&] { dist::all_reduce(x); });
    dist::set_options({});
    if (dist::rank() == 0) {
      std::printf("%12ld", bytes);
      for (double t : {mpi, impi, ef_checked, ef_unchecked})
        std::printf(" %12.1f (%7.3f)", t * 1e6,
                    2.0 * (ranks - 1) / ranks * static_cast<double>(bytes) / t / 1e9);
      std::printf("\n");
    }
  }
}
