// ef::distribute's collectives, run as a group of one (no launcher) and under mpirun
// with several ranks: every expected value is computed from rank() and size().
#include <eagerflow/distribute/distribute.h>

#include <cstdlib>

#include "test_util.h"

namespace ef {
namespace {

namespace dist = ef::distribute;
using dist::Reduction;

class Distribute : public ::testing::Test {
 protected:
  void SetUp() override { dist::init(); }
  static double n() { return dist::size(); }
  static double r() { return dist::rank(); }
};

// First in the binary's own ctest run (distribute.before_init), before any init().
TEST(DistributeBeforeInit, CollectivesNeedInit) {
  EXPECT_ERROR(dist::rank(), FailedPreconditionError, "init()");
  EXPECT_ERROR(dist::all_reduce(ones({2})), FailedPreconditionError, "all_reduce", "init()");
}

TEST_F(Distribute, RankAndSize) {
  EXPECT_GE(dist::rank(), 0);
  EXPECT_LT(dist::rank(), dist::size());
  EXPECT_LE(dist::local_rank(), dist::rank());
  if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMIX_RANK")) {
    // No launcher: a group of one, without MPI.
    EXPECT_EQ(dist::size(), 1);
    EXPECT_EQ(dist::rank(), 0);
  } else {
    EXPECT_EQ(dist::size(), std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")));
  }
}

TEST_F(Distribute, InitAgainReplacesTheOptions) {
  dist::init({.timeout_seconds = 30, .check_agreement = false});
  EXPECT_EQ(dist::options().timeout_seconds, 30);
  EXPECT_FALSE(dist::options().check_agreement);
  EXPECT_ERROR(dist::init({.timeout_seconds = 0}), InvalidArgumentError, "timeout_seconds must be positive");
  dist::init();
  EXPECT_EQ(dist::options().timeout_seconds, 300);
  EXPECT_TRUE(dist::options().check_agreement);
}

TEST_F(Distribute, AllReduceEveryReductionAndDtype) {
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    // Rank r holds [r + 1, 2 (r + 1)].
    const Tensor x = cast(constant({1.0, 2.0}) * (r() + 1), dtype);
    const double total = n() * (n() + 1) / 2;
    EXPECT_EQ(dist::all_reduce(x).dtype(), dtype);
    EXPECT_EQ(cast(dist::all_reduce(x, Reduction::kSum), DType::Float64).to_vector<double>(),
              (std::vector<double>{total, 2 * total}));
    EXPECT_EQ(cast(dist::all_reduce(x, Reduction::kMax), DType::Float64).to_vector<double>(),
              (std::vector<double>{n(), 2 * n()}));
    EXPECT_EQ(cast(dist::all_reduce(x, Reduction::kMin), DType::Float64).to_vector<double>(),
              (std::vector<double>{1, 2}));
    if (is_floating(dtype)) {
      EXPECT_EQ(cast(dist::all_reduce(x, Reduction::kMean), DType::Float64).to_vector<double>(),
                (std::vector<double>{total / n(), 2 * total / n()}));
    }
  }
}

TEST_F(Distribute, AllReduceScalarEmptyAndNonContiguous) {
  EXPECT_EQ(dist::all_reduce(constant(2.0)).item<double>(), 2 * n());
  const Tensor empty = dist::all_reduce(zeros({0, 3}));
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  const Tensor t = transpose(constant({{1.0, 2.0}, {3.0, 4.0}}));  // a view: [[1, 3], [2, 4]]
  EXPECT_EQ(dist::all_reduce(t).to_vector<double>(), (std::vector<double>{n(), 3 * n(), 2 * n(), 4 * n()}));
}

TEST_F(Distribute, AllReduceManyFusesByDtype) {
  const std::vector<Tensor> xs = {constant({{1.0, 2.0}}) * (r() + 1), Tensor(),
                                  fill({3}, r() + 1, DType::Int32),
                                  constant(3.f) * static_cast<float>(r() + 1)};
  const std::vector<Tensor> ys = dist::all_reduce_many(xs, Reduction::kSum);
  const double total = n() * (n() + 1) / 2;
  ASSERT_EQ(ys.size(), 4u);
  EXPECT_EQ(ys[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(ys[0].to_vector<double>(), (std::vector<double>{total, 2 * total}));
  EXPECT_FALSE(ys[1].defined());
  EXPECT_EQ(ys[2].to_vector<int32_t>(), std::vector<int32_t>(3, static_cast<int32_t>(total)));
  EXPECT_EQ(ys[3].shape(), Shape{});
  EXPECT_EQ(ys[3].item<float>(), static_cast<float>(3 * total));
  // Its gradient is all_reduce's: each rank's loss counts once per rank.
  const Tensor w = constant({1.0, 2.0, 3.0});
  GradientTape tape;
  tape.watch(w);
  const Tensor loss = reduce_sum(dist::all_reduce_many({w * w, w}, Reduction::kMean)[0]);
  EXPECT_EQ(tape.gradient(loss, w).to_vector<double>(), (std::vector<double>{2, 4, 6}));
}

TEST_F(Distribute, BroadcastFromEveryRoot) {
  for (int root = 0; root < dist::size(); ++root) {
    const Tensor y = dist::broadcast(fill({2, 2}, r() * 10, DType::Int64), root);
    EXPECT_EQ(y.to_vector<int64_t>(), std::vector<int64_t>(4, root * 10));
  }
  EXPECT_ERROR(dist::broadcast(ones({2}), dist::size()), InvalidArgumentError, "broadcast", "root");
}

TEST_F(Distribute, AllGatherConcatenatesInRankOrder) {
  const Tensor y = dist::all_gather(constant({{1.0, 10.0}}) * (r() + 1));  // [1, 2] per rank
  EXPECT_EQ(y.shape(), (Shape{dist::size(), 2}));
  for (int s = 0; s < dist::size(); ++s)
    EXPECT_EQ(y[s].to_vector<double>(), (std::vector<double>{s + 1.0, 10.0 * (s + 1)}));
  EXPECT_ERROR(dist::all_gather(constant(1.0)), InvalidArgumentError, "all_gather", "scalar");
}

TEST_F(Distribute, ReduceScatterGivesEachRankItsSlice) {
  // Every rank holds [0, 1, ..., 2n - 1] + rank; rank s gets elements [2s, 2s + 1] summed.
  const Tensor x = range(0, 2 * dist::size(), 1, DType::Float64) + r();
  const Tensor y = dist::reduce_scatter(x);
  const double ranks = n() * (n() - 1) / 2;
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{2 * r() * n() + ranks, (2 * r() + 1) * n() + ranks}));
  EXPECT_EQ(dist::reduce_scatter(x, Reduction::kMax).to_vector<double>(),
            (std::vector<double>{2 * r() + n() - 1, 2 * r() + n()}));
  EXPECT_ERROR(dist::reduce_scatter(constant(1.0)), InvalidArgumentError, "reduce_scatter", "scalar");
  if (dist::size() > 1)
    EXPECT_ERROR(dist::reduce_scatter(ones({dist::size() + 1})), InvalidArgumentError, "reduce_scatter",
                 "equal parts");
}

TEST_F(Distribute, BadDtypesAreErrors) {
  EXPECT_ERROR(dist::all_reduce(constant({1, 2}), Reduction::kMean), InvalidArgumentError, "all_reduce",
               "mean", "int32");
  EXPECT_ERROR(dist::all_reduce(cast(ones({2}), DType::Bool)), UnimplementedError, "all_reduce", "bool");
  EXPECT_ERROR(dist::reduction_from_name("avg"), InvalidArgumentError, "avg", "sum, mean, max, min");
}

// Note [collectives never hang]: ranks that disagree all get the error, and stay in step.
TEST_F(Distribute, RanksThatDisagreeGetAnErrorNamingThem) {
  if (dist::size() == 1) GTEST_SKIP() << "needs two or more ranks (run under mpirun)";
  const Tensor x = dist::rank() == 0 ? ones({2}) : ones({3});
  EXPECT_ERROR(dist::all_reduce(x), InvalidArgumentError, "all_reduce", "disagree",
               "ranks 0: all_reduce(sum) float32 [2]", "ranks 1");
  EXPECT_ERROR(dist::broadcast(dist::rank() == 0 ? ones({2}) : ones({2}, DType::Float64)),
               InvalidArgumentError, "broadcast", "float64 [2]");
  EXPECT_EQ(dist::all_reduce(ones({2})).to_vector<float>(), std::vector<float>(2, static_cast<float>(n())));
  dist::barrier();
}

// Note [collective gradients]: each rank's loss is summed over the ranks.
TEST_F(Distribute, GradientsFollowTheMath) {
  const Tensor x = constant({1.0, 2.0}) + r();
  {
    GradientTape tape;
    tape.watch(x);
    const Tensor dx = tape.gradient(reduce_sum(dist::all_reduce(x * x)), x);
    EXPECT_EQ(dx.to_vector<double>(), (std::vector<double>{2 * (1 + r()) * n(), 2 * (2 + r()) * n()}));
  }
  {
    GradientTape tape;
    tape.watch(x);
    const Tensor dx = tape.gradient(reduce_sum(dist::all_reduce(x, Reduction::kMean) * (r() + 1)), x);
    EXPECT_EQ(dx.to_vector<double>(), std::vector<double>(2, (n() + 1) / 2));  // mean of (r + 1)
  }
  {
    GradientTape tape;
    tape.watch(x);
    const Tensor dx = tape.gradient(reduce_sum(dist::all_reduce(x, Reduction::kMax)), x);
    const double last = dist::rank() == dist::size() - 1 ? n() : 0;  // the largest x is the last rank's
    EXPECT_EQ(dx.to_vector<double>(), std::vector<double>(2, last));
  }
  {
    GradientTape tape;
    tape.watch(x);
    const Tensor dx = tape.gradient(reduce_sum(dist::broadcast(x, dist::size() - 1) * 3.0), x);
    EXPECT_EQ(dx.to_vector<double>(), std::vector<double>(2, dist::rank() == dist::size() - 1 ? 3 * n() : 0));
  }
  {
    GradientTape tape;
    tape.watch(x);
    // d/dx_s of Σ_r Σ (all_gather(x) * w): n times w's slice s.
    const Tensor w = range(0, 2 * dist::size(), 1, DType::Float64);
    const Tensor dx = tape.gradient(reduce_sum(dist::all_gather(x) * w), x);
    EXPECT_EQ(dx.to_vector<double>(), (std::vector<double>{2 * r() * n(), (2 * r() + 1) * n()}));
  }
  {
    const Tensor big = range(0, 2 * dist::size(), 1, DType::Float64);
    GradientTape tape;
    tape.watch(big);
    // Rank s's slice reaches every rank's loss with that rank's weight (s + 1).
    const Tensor d = tape.gradient(reduce_sum(dist::reduce_scatter(big) * (r() + 1)), big);
    std::vector<double> expected;
    for (int s = 0; s < dist::size(); ++s) expected.insert(expected.end(), {s + 1.0, s + 1.0});
    EXPECT_EQ(d.to_vector<double>(), expected);
  }
}

// Forward mode: the tangents of the same collectives.
TEST_F(Distribute, ForwardModeTangents) {
  const Tensor x = constant({1.0, 2.0}) + r();
  const Tensor tangent = constant({1.0, 10.0}) * (r() + 1);  // rank r's direction
  const double tangents = n() * (n() + 1) / 2;               // Σ_r (r + 1)
  {
    ForwardAccumulator acc(x, tangent);
    EXPECT_EQ(acc.jvp(dist::all_reduce(x)).to_vector<double>(),
              (std::vector<double>{tangents, 10 * tangents}));
    EXPECT_EQ(acc.jvp(dist::all_reduce(x, Reduction::kMax)).to_vector<double>(),
              (std::vector<double>{n(), 10 * n()}));  // the last rank's tangent
    EXPECT_EQ(acc.jvp(dist::broadcast(x, 0)).to_vector<double>(), (std::vector<double>{1, 10}));
    std::vector<double> gathered;  // the ranks' tangents, concatenated
    for (int s = 0; s < dist::size(); ++s) gathered.insert(gathered.end(), {s + 1.0, 10.0 * (s + 1)});
    EXPECT_EQ(acc.jvp(dist::all_gather(x)).to_vector<double>(), gathered);
  }
  const Tensor big = range(0, 2 * dist::size(), 1, DType::Float64);
  ForwardAccumulator acc(big, ones_like(big) * (r() + 1));
  EXPECT_EQ(acc.jvp(dist::reduce_scatter(big)).to_vector<double>(), std::vector<double>(2, tangents));
}

TEST_F(Distribute, CollectivesRunInsideFunctions) {
  auto f = function([](Tensor x) { return dist::all_reduce(x * 2.0, Reduction::kSum); });
  for (int call = 0; call < 2; ++call)
    EXPECT_EQ(f(constant({1.0, 2.0}) + r()).to_vector<double>(),
              (std::vector<double>{2 * (n() + n() * (n() - 1) / 2), 2 * (2 * n() + n() * (n() - 1) / 2)}));
  EXPECT_EQ(f.trace_count(), 1);
}

TEST_F(Distribute, MirroredScopeStartsVariablesFromRankZero) {
  Variable before(fill({2}, r()));
  {
    dist::MirroredScope mirrored;
    Variable w(fill({2}, r() + 5));
    EXPECT_EQ(w.value().to_vector<double>(), std::vector<double>(2, 5.0));
  }
  Variable after(fill({2}, r()));
  EXPECT_EQ(before.value().to_vector<double>(), std::vector<double>(2, r()));
  EXPECT_EQ(after.value().to_vector<double>(), std::vector<double>(2, r()));
}

}  // namespace
}  // namespace ef
