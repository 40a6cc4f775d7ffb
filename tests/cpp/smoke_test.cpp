#include <gtest/gtest.h>

#include <eagerflow/eagerflow.h>

TEST(Smoke, AddAndPrint) {
  ef::Tensor x = ef::constant({{2.f}});
  EXPECT_EQ((x * x).to_string(), "Tensor([[4.]], shape=(1, 1), dtype=float32)");
}
