// Fashion-MNIST from the files of Debian's dataset-fashion-mnist package.
#include <cstdlib>
#include <filesystem>

#include "eagerflow/data/datasets.h"

namespace ef::data::datasets {

namespace {

constexpr const char* kDebianDirectory = "/usr/share/datasets/fashion-mnist";

// `name` or `name.gz` in `directory`; NotFoundError with installation advice otherwise.
std::string find_file(const std::string& directory, const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const std::string& candidate : {name + ".gz", name})
    if (fs::is_regular_file(fs::path(directory) / candidate, ec))
      return (fs::path(directory) / candidate).string();
  fail<NotFoundError>("fashion_mnist: Fashion-MNIST is not installed: looked for ", name, ".gz (or ", name,
                      ") in ", directory,
                      ". Install Debian's package with `sudo apt-get install dataset-fashion-mnist`, or pass "
                      "the folder holding the four IDX files (or set EF_DATASETS_DIR to a folder containing "
                      "fashion-mnist/).");
}

void check_images(const IdxFile& f, const std::string& path) {
  if (f.type != IdxType::UInt8 || f.dims.size() != 3 || f.dims[1] != 28 || f.dims[2] != 28)
    fail("fashion_mnist: '", path, "' should hold ubyte images of shape [N, 28, 28], got ", f.dims.size(),
         " dimensions of type code 0x", std::hex, int(f.type));
}

void check_labels(const IdxFile& f, const IdxFile& images, const std::string& path) {
  if (f.type != IdxType::UInt8 || f.dims.size() != 1 || f.dims[0] != images.dims[0])
    fail("fashion_mnist: '", path, "' should hold ", images.dims[0], " ubyte labels (one per image)");
  for (size_t i = 0; i < f.data.size(); ++i)
    if (f.data[i] > 9)
      fail("fashion_mnist: '", path, "': label ", i, " is ", int(f.data[i]), ", outside [0, 10)");
}

LabeledImages to_tensors(const IdxFile& images, const IdxFile& labels) {
  Tensor x = ef::detail::empty_tensor(DType::Float32, Shape(images.dims), kCPU, "fashion_mnist");
  float* px = static_cast<float*>(x.impl()->storage->data());
  for (size_t i = 0; i < images.data.size(); ++i) px[i] = static_cast<float>(images.data[i]) / 255.0f;
  Tensor y = ef::detail::empty_tensor(DType::Int64, Shape(labels.dims), kCPU, "fashion_mnist");
  int64_t* py = static_cast<int64_t*>(y.impl()->storage->data());
  for (size_t i = 0; i < labels.data.size(); ++i) py[i] = labels.data[i];
  return {x, y};
}

}  // namespace

std::string fashion_mnist_directory(const std::string& directory) {
  if (!directory.empty()) return directory;
  if (const char* root = std::getenv("EF_DATASETS_DIR"); root && *root)
    return (std::filesystem::path(root) / "fashion-mnist").string();
  return kDebianDirectory;
}

FashionMnistFiles read_fashion_mnist_files(const std::string& directory, CallSite where) {
  try {
    const std::string dir = fashion_mnist_directory(directory);
    const std::string paths[4] = {
        find_file(dir, "train-images-idx3-ubyte"), find_file(dir, "train-labels-idx1-ubyte"),
        find_file(dir, "t10k-images-idx3-ubyte"), find_file(dir, "t10k-labels-idx1-ubyte")};
    FashionMnistFiles files{read_idx_file(paths[0]), read_idx_file(paths[1]), read_idx_file(paths[2]),
                            read_idx_file(paths[3])};
    check_images(files.train_images, paths[0]);
    check_labels(files.train_labels, files.train_images, paths[1]);
    check_images(files.test_images, paths[2]);
    check_labels(files.test_labels, files.test_images, paths[3]);
    return files;
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

FashionMnist fashion_mnist(const std::string& directory, CallSite where) {
  try {
    const FashionMnistFiles files = read_fashion_mnist_files(directory);
    return {to_tensors(files.train_images, files.train_labels),
            to_tensors(files.test_images, files.test_labels)};
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef::data::datasets
