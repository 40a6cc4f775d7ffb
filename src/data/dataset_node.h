// The machinery behind ef::data::Dataset: a dataset is a chain of immutable nodes,
// and each pass over it is a chain of iterators that the nodes create.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "eagerflow/data/dataset.h"
#include "eagerflow/data/pipeline_threads.h"
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
NodePtr make_tensors_node(Element element);
NodePtr make_generator_node(GeneratorFn generator);
NodePtr make_zip_node(std::vector<NodePtr> inputs);
NodePtr make_enumerate_node(NodePtr input, int64_t start);
NodePtr make_filter_node(NodePtr input, PredicateFn predicate);
NodePtr make_skip_node(NodePtr input, int64_t count);
NodePtr make_shard_node(NodePtr input, int64_t num_shards, int64_t index);
NodePtr make_concatenate_node(NodePtr first, NodePtr second);
NodePtr make_unbatch_node(NodePtr input);
// padded_shapes and padding_values: empty for the defaults (validated by Dataset).
NodePtr make_padded_batch_node(NodePtr input, int64_t batch_size, std::vector<Shape> padded_shapes,
                               std::vector<TensorOrScalar> padding_values, bool drop_remainder);
NodePtr make_cache_node(NodePtr input);
NodePtr make_interleave_node(NodePtr input, DatasetFn fn, int64_t cycle_length, int64_t block_length);

// A Dataset's node, for the nodes that hold other datasets (zip, flat_map, ...).
struct DatasetAccess {
  static const NodePtr& node(const Dataset& dataset) { return dataset.node_; }
};

// Marks the calling thread as one a pipeline started (prefetch, parallel map), and asks
// whether it is one (Note [iterators destroyed on pipeline threads] in dataset.cpp).
void mark_pipeline_thread();
bool on_pipeline_thread();

// Runs the wait hooks around its lifetime, on a consumer about to wait for its pass's
// threads (Note [waiting on pipeline threads] in eagerflow/data/pipeline_threads.h).
class WaitScope {
 public:
  WaitScope();
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  void* state_ = nullptr;
  void (*after_)(void*) = nullptr;
};

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

// The cardinality of `input` batched by batch_size (batch and padded_batch): unknown and
// infinite stay so; a smaller last batch counts unless dropped.
inline int64_t batched_cardinality(int64_t input, int64_t batch_size, bool drop_remainder) {
  if (input < 0) return input;
  return input / batch_size + (!drop_remainder && input % batch_size != 0);
}

}  // namespace ef::data::detail
