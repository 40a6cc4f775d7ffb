// Note [variable creation hooks]: hooks see each eager variable once it holds its
// value, innermost first, only while they live and only on their own thread.
#include <eagerflow/runtime/variable_creation.h>

#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace ef {
namespace {

TEST(VariableCreationHook, SeesVariablesInnermostFirstWhileItLives) {
  std::vector<std::string> seen;
  Variable before(ones({2}), "before");
  {
    VariableCreationHook outer([&](Variable& v) { seen.push_back("outer " + v.name()); });
    Variable a(ones({2}), "a");
    {
      // A hook may change the new variable: the outer hook then sees the change.
      VariableCreationHook inner([&](Variable& v) {
        seen.push_back("inner " + v.name());
        v.assign(v.value() * 3.f);
      });
      Variable b(ones({2}), "b");
      EXPECT_EQ(b.value().to_vector<float>(), (std::vector<float>{3.f, 3.f}));
    }
    std::thread([] { Variable elsewhere(ones({1}), "other thread"); }).join();
  }
  Variable after(ones({2}), "after");
  EXPECT_EQ(seen, (std::vector<std::string>{"outer a", "inner b", "outer b"}));
}

TEST(VariableCreationHook, AnEmptyFunctionIsAnError) {
  EXPECT_ERROR(VariableCreationHook(nullptr), InvalidArgumentError, "VariableCreationHook", "empty");
}

}  // namespace
}  // namespace ef
