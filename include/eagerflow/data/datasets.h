// Ready-made datasets, read from files that Debian packages install.
//
//   auto [train, test] = ef::data::datasets::fashion_mnist();
//   // train.images: float32 [60000, 28, 28] in [0, 1]; train.labels: int64 [60000] in [0, 10)
#pragma once

#include <string>

#include "eagerflow/core/error.h"
#include "eagerflow/core/tensor.h"
#include "eagerflow/data/idx.h"

namespace ef::data::datasets {

// Images and their class labels.
struct LabeledImages {
  Tensor images;
  Tensor labels;
};

struct FashionMnist {
  LabeledImages train;  // 60000 examples
  LabeledImages test;   // 10000 examples
};

// The four Fashion-MNIST IDX files as stored (ubyte images [N, 28, 28], ubyte labels [N]).
struct FashionMnistFiles {
  IdxFile train_images, train_labels, test_images, test_labels;
};

// The folder holding Fashion-MNIST's IDX files: `directory` when given, else
// $EF_DATASETS_DIR/fashion-mnist when that variable is set, else the folder of Debian's
// `dataset-fashion-mnist` package, /usr/share/datasets/fashion-mnist.
std::string fashion_mnist_directory(const std::string& directory = "");

// Reads and validates the four files (gzip-compressed or not) from
// fashion_mnist_directory(directory). Missing files throw NotFoundError saying where it
// looked and how to install them (`sudo apt-get install dataset-fashion-mnist`);
// files with unexpected shapes, types or labels throw InvalidArgumentError.
FashionMnistFiles read_fashion_mnist_files(const std::string& directory = "",
                                           CallSite where = CallSite::current());

// Fashion-MNIST (Zalando's 28x28 grey images of 10 clothing classes): images as float32
// scaled to [0, 1], shape [N, 28, 28]; labels as int64 class ids (what
// sparse_softmax_cross_entropy_with_logits and argmax comparisons take). Errors as
// read_fashion_mnist_files.
FashionMnist fashion_mnist(const std::string& directory = "", CallSite where = CallSite::current());

}  // namespace ef::data::datasets
