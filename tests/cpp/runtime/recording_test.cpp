// The recorder interface (what gradient tapes build on): every op call made by user
// code is seen once, and ops a kernel runs internally are not seen at all
// (Note [kernels are below the tape] in src/runtime/dispatch.cpp).
#include <string>
#include <vector>

#include "test_util.h"

namespace ef {
namespace {

class NameRecorder : public OpRecorder {
 public:
  void record(const OpCall& call, std::span<const Tensor> outputs) override {
    names.emplace_back(call.op.name);
    output_counts.push_back(outputs.size());
  }
  std::vector<std::string> names;
  std::vector<size_t> output_counts;
};

// Installs a recorder for the current thread for the lifetime of the scope.
class RecordScope {
 public:
  explicit RecordScope(OpRecorder* r) : saved_(std::exchange(Context::current().recorder, r)) {}
  ~RecordScope() { Context::current().recorder = saved_; }

 private:
  OpRecorder* saved_;
};

TEST(Recording, SeesEachUserOpOnce) {
  Tensor a = constant({{1.f, 2.f}, {3.f, 4.f}});
  NameRecorder recorder;
  {
    RecordScope scope(&recorder);
    Tensor b = exp(a) + 1;
    std::vector<Tensor> parts = unstack(b);
    (void)parts;
  }
  EXPECT_EQ(recorder.names, (std::vector<std::string>{"exp", "add", "unstack"}));
  EXPECT_EQ(recorder.output_counts, (std::vector<size_t>{1, 1, 2}));
}

TEST(Recording, OpsInsideKernelsAreNotRecorded) {
  // softmax's kernel makes its transposed input contiguous through a public op; the
  // recorder must see only transpose and softmax.
  Tensor x = transpose(constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}));
  ASSERT_FALSE(x.is_contiguous());
  NameRecorder recorder;
  Tensor y;
  {
    RecordScope scope(&recorder);
    y = softmax(x);
  }
  EXPECT_EQ(recorder.names, (std::vector<std::string>{"softmax"}));
  EXPECT_EQ(Context::current().recorder, nullptr);
  testing::expect_values(reduce_sum(y, 1), {1, 1, 1}, 1e-6);
}

TEST(Recording, RecorderIsRestoredWhenAKernelThrows) {
  NameRecorder recorder;
  RecordScope scope(&recorder);
  EXPECT_THROW(divide(constant({1}), constant({0})), InvalidArgumentError);
  EXPECT_EQ(Context::current().recorder, &recorder);
}

}  // namespace
}  // namespace ef
