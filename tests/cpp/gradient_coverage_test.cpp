// Writes the gradient coverage table (docs/gradient_coverage.md) after the whole suite
// ran in this process, when EF_GRADIENT_COVERAGE_OUT names the file: `make docs` does
// that, and a ctest compares the result with the committed file.
#include <cstdlib>
#include <fstream>

#include "test_util.h"

namespace ef {
namespace {

class WriteGradientCoverage : public ::testing::Environment {
 public:
  void TearDown() override {
    const char* path = std::getenv("EF_GRADIENT_COVERAGE_OUT");
    if (!path || !*path) return;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << testing::gradient_coverage_table();
    if (!out) ADD_FAILURE() << "could not write " << path;
    // The whole suite ran: every jvp rule must have been checked (Note [forward-mode checks]).
    for (const std::string& op : testing::unverified_jvp_rules())
      ADD_FAILURE() << "op '" << op << "' has a jvp rule that no check_gradients call verified; add a "
                    << "gradient test whose function uses it";
    for (const std::string& op : testing::unverified_batch_rules())
      ADD_FAILURE() << "op '" << op << "' has a batching rule that no check_gradients call verified; add a "
                    << "gradient test whose function uses it (tests/cpp/autodiff/batching_rules_test.cpp)";
  }
};

[[maybe_unused]] ::testing::Environment* const kWriter =
    ::testing::AddGlobalTestEnvironment(new WriteGradientCoverage);

TEST(GradientCoverage, TableListsEveryOpAndItsVerification) {
  ASSERT_TRUE(testing::check_gradients([](const std::vector<Tensor>& a) { return tanh(a[0]); },
                                       {constant({0.5, -1.0})}).ok);
  std::string table = testing::gradient_coverage_table();
  EXPECT_THAT(table, ::testing::HasSubstr("| `tanh` | yes | ✓ | ✓ |"));
  EXPECT_THAT(table, ::testing::HasSubstr("| `argmax` | no: "));
  for (const OpDef* op : registered_ops())
    EXPECT_THAT(table, ::testing::HasSubstr("| `" + std::string(op->name) + "` |"));
}

}  // namespace
}  // namespace ef
