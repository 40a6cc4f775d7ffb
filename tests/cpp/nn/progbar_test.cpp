// Progbar's rendering and its plain-line behaviour when not on a terminal.
#include <cstdio>

#include "eagerflow/utils/progbar.h"
#include "test_util.h"

namespace ef {
namespace {

TEST(Progbar, RendersStepsBarEtaAndValues) {
  utils::Progbar bar(200, 10, 0, nullptr, 0);
  EXPECT_EQ(bar.render(50, {{"loss", 0.51234}, {"accuracy", 0.8}}, 5.0),
            " 50/200 [==>.......] - ETA: 15s - loss: 0.5123 - accuracy: 0.8000");
  EXPECT_EQ(bar.render(200, {}, 130.0), "200/200 [==========] - 2:10 650ms/step");
  EXPECT_ERROR(utils::Progbar(0), InvalidArgumentError, "'target' must be positive");
}

TEST(Progbar, PrintsOnePlainLineWhenNotATerminal) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  utils::Progbar bar(3, 5, 0, file, 0);
  for (int step = 1; step <= 3; ++step) bar.update(step, {{"loss", 1.0 / step}});
  bar.update(3, {});  // after the end: nothing more
  std::rewind(file);
  char buffer[256] = {};
  size_t n = std::fread(buffer, 1, sizeof buffer - 1, file);
  std::fclose(file);
  std::string text(buffer, n);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_THAT(text, ::testing::StartsWith("3/3 [=====]"));
  EXPECT_THAT(text, ::testing::HasSubstr("loss: 0.3333"));
}

}  // namespace
}  // namespace ef
