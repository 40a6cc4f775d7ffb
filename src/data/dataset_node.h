// The machinery behind ef::data::Dataset: a dataset is a chain of immutable nodes,
// and each pass over it is a chain of iterators that the nodes create.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "eagerflow/data/dataset.h"
#include "eagerflow/runtime/context.h"

namespace ef::data::detail {

// The tensors of from_tensor_slices, made contiguous once, and their row count.
struct SliceSource {
  std::vector<Tensor> tensors;
  int64_t rows = 0;
  // Element `row`: a view of that row of every tensor (Note [views]).
  Element row(int64_t row) const;
};

// One pass over a dataset. After returning false (the end), next keeps returning false.
//
// Note [row fast path]: an iterator whose elements are rows of a from_tensor_slices
// source — the source itself, and shuffle, repeat and take over such an iterator —
// reports that source from rows() and can hand out row numbers (next_row) instead of
// elements. Shuffle then shuffles row numbers, and batch gathers the rows of each
// component straight into the batch tensor (one ef::gather per component) instead of
// slicing batch_size rows and stacking them. rows() is the same for the whole pass,
// its end included: a consumer picks its path on the first element and keeps it.
class IteratorImpl {
 public:
  virtual ~IteratorImpl() = default;
  virtual bool next(Element& out) = 0;
  // The source whose rows next_row numbers, or null (Note [row fast path]).
  virtual const SliceSource* rows() const { return nullptr; }
  // The next row number; false at the end. Only called when rows() is non-null.
  virtual bool next_row(int64_t& row) {
    (void)row;
    return false;
  }
};

class DatasetNode {
 public:
  virtual ~DatasetNode() = default;
  virtual std::unique_ptr<IteratorImpl> make_iterator() const = 0;
  virtual int64_t cardinality() const = 0;
};

using NodePtr = std::shared_ptr<const DatasetNode>;

// The node of each transformation (one file each); arguments are validated by Dataset.
NodePtr make_slices_node(std::vector<Tensor> tensors, int64_t rows);
NodePtr make_shuffle_node(NodePtr input, int64_t buffer_size, int64_t seed, bool reshuffle_each_iteration);
NodePtr make_batch_node(NodePtr input, int64_t batch_size, bool drop_remainder);
NodePtr make_map_node(NodePtr input, MapFn fn, int num_threads);
NodePtr make_repeat_node(NodePtr input, int64_t count);
NodePtr make_take_node(NodePtr input, int64_t count);
NodePtr make_prefetch_node(NodePtr input, int64_t buffer_size);

// Marks the calling thread as one a pipeline started (prefetch, parallel map), and asks
// whether it is one (Note [iterators destroyed on pipeline threads] in dataset.cpp).
void mark_pipeline_thread();
bool on_pipeline_thread();

// Pipeline work is data loading, not model computation: it always runs eagerly and no
// gradient tape records it (as tf.data's functions run outside the caller's tape).
// Installed around every call into a pass, on whichever thread makes it.
class PipelineScope {
 public:
  PipelineScope() : saved_(Context::current()) {
    Context::current().builder = nullptr;
    Context::current().recorder = nullptr;
  }
  ~PipelineScope() {
    Context::current().builder = saved_.builder;
    Context::current().recorder = saved_.recorder;
  }
  PipelineScope(const PipelineScope&) = delete;
  PipelineScope& operator=(const PipelineScope&) = delete;

 private:
  Context saved_;
};

}  // namespace ef::data::detail
