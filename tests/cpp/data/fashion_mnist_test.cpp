// datasets::fashion_mnist: the installed files when present, and the advice when not.
#include <cstdlib>
#include <filesystem>

#include "data/data_test_util.h"

namespace ef::testing {
namespace {

namespace fs = std::filesystem;

TEST(FashionMnistTest, MissingFilesSayHowToInstallThem) {
  const std::string dir = (fs::temp_directory_path() / "ef_no_such_fashion_mnist").string();
  EXPECT_ERROR(data::datasets::fashion_mnist(dir), NotFoundError,
               "sudo apt-get install dataset-fashion-mnist", dir, "train-images-idx3-ubyte");
}

TEST(FashionMnistTest, DirectoryComesFromTheArgumentThenTheEnvironment) {
  EXPECT_EQ(data::datasets::fashion_mnist_directory("/x/y"), "/x/y");
  const char* saved = std::getenv("EF_DATASETS_DIR");
  const std::string saved_value = saved ? saved : "";
  ::setenv("EF_DATASETS_DIR", "/opt/data", 1);
  EXPECT_EQ(data::datasets::fashion_mnist_directory(), "/opt/data/fashion-mnist");
  ::unsetenv("EF_DATASETS_DIR");
  EXPECT_EQ(data::datasets::fashion_mnist_directory(), "/usr/share/datasets/fashion-mnist");
  if (saved) ::setenv("EF_DATASETS_DIR", saved_value.c_str(), 1);
}

TEST(FashionMnistTest, LoadsTheInstalledDataset) {
  const std::string dir = data::datasets::fashion_mnist_directory();
  if (!fs::exists(fs::path(dir) / "train-images-idx3-ubyte.gz") &&
      !fs::exists(fs::path(dir) / "train-images-idx3-ubyte"))
    GTEST_SKIP() << "Fashion-MNIST is not installed in " << dir
                 << " (sudo apt-get install dataset-fashion-mnist)";
  data::datasets::FashionMnist d = data::datasets::fashion_mnist();
  expect_meta(d.train.images, {60000, 28, 28}, DType::Float32);
  expect_meta(d.train.labels, {60000}, DType::Int64);
  expect_meta(d.test.images, {10000, 28, 28}, DType::Float32);
  expect_meta(d.test.labels, {10000}, DType::Int64);
  EXPECT_EQ(reduce_min(d.train.images).item<float>(), 0.0f);
  EXPECT_EQ(reduce_max(d.train.images).item<float>(), 1.0f);
  EXPECT_EQ(reduce_min(d.test.labels).item<int64_t>(), 0);
  EXPECT_EQ(reduce_max(d.test.labels).item<int64_t>(), 9);
  // Fashion-MNIST is balanced: 6000 training images per class.
  Tensor counts =
      reduce_sum(cast(equal(expand_dims(d.train.labels, 1), range(0, 10, 1, DType::Int64)), DType::Int64), 0);
  expect_values(counts, std::vector<double>(10, 6000));
}

}  // namespace
}  // namespace ef::testing
