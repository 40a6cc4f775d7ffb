// Helpers shared by the graph tests: bitwise comparison and scoped optimizer options.
#pragma once

#include <cstring>

#include "eagerflow/graph/optimizer_options.h"
#include "test_util.h"

namespace ef::testing {

// Same dtype, shape and bytes.
inline void expect_identical(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  const Tensor x = a.contiguous(), y = b.contiguous();
  EXPECT_EQ(std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.num_elements()) * size_of(x.dtype())), 0)
      << x << " vs " << y;
}

// Sets the process-wide graph optimizer options for a scope.
class OptionsScope {
 public:
  explicit OptionsScope(const GraphOptimizerOptions& o) : saved_(graph_optimizer_options()) {
    set_graph_optimizer_options(o);
  }
  ~OptionsScope() { set_graph_optimizer_options(saved_); }
  OptionsScope(const OptionsScope&) = delete;
  OptionsScope& operator=(const OptionsScope&) = delete;

 private:
  GraphOptimizerOptions saved_;
};

}  // namespace ef::testing
