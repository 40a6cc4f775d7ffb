// Metrics: running statistics over batches (Keras' metrics). The state lives in
// non-trainable variables, so a checkpoint of a module holding a metric keeps it.
//
//   ef::nn::metrics::SparseCategoricalAccuracy accuracy;
//   for (auto& batch : batches) accuracy.update_state(batch.labels, model(batch.images));
//   double acc = accuracy.result().item<float>();
//   accuracy.reset_state();                       // next epoch
//
// Updates are never recorded by gradient tapes: metrics read values, not gradients.
#pragma once

#include <optional>
#include <string>

#include "eagerflow/nn/module.h"

namespace ef::nn::metrics {

// The weighted mean of everything passed to update_state (Keras' Mean). Other metrics
// derive from it, averaging a per-example value.
class Mean : public Module {
 public:
  explicit Mean(std::string name = "mean", DType dtype = DType::Float32);
  // Adds `values` (weighted by `sample_weight`, which must broadcast to them).
  void update_state(const Tensor& values, const std::optional<Tensor>& sample_weight = std::nullopt,
                    CallSite where = CallSite::current());
  // total / count as a scalar of the metric's dtype; 0 before any update.
  Tensor result() const;
  void reset_state();

 private:
  Variable total_, count_;
};

// Mean of a per-example function of (y_true, y_pred).
class MeanMetricWrapper : public Mean {
 public:
  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    const std::optional<Tensor>& sample_weight = std::nullopt, CallSite where = CallSite::current());

 protected:
  MeanMetricWrapper(std::string name, DType dtype) : Mean(std::move(name), dtype) {}
  virtual Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const = 0;
};

// Fraction of predictions equal to the labels.
class Accuracy : public MeanMetricWrapper {
 public:
  explicit Accuracy(std::string name = "accuracy", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// Fraction of (y_pred > threshold) equal to y_true, averaged over the last axis.
class BinaryAccuracy : public MeanMetricWrapper {
 public:
  explicit BinaryAccuracy(double threshold = 0.5, std::string name = "binary_accuracy",
                          DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype), threshold_(threshold) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;

 private:
  double threshold_;
};

// argmax(y_pred) == argmax(y_true) (one-hot labels).
class CategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// argmax(y_pred) == y_true (integer class ids; a trailing dimension of 1 is allowed).
class SparseCategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy",
                                     DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// mean((y_true - y_pred)^2) and mean(|y_true - y_pred|) over the last axis, averaged.
class MeanSquaredError : public MeanMetricWrapper {
 public:
  explicit MeanSquaredError(std::string name = "mean_squared_error", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};
class MeanAbsoluteError : public MeanMetricWrapper {
 public:
  explicit MeanAbsoluteError(std::string name = "mean_absolute_error", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// Whether the true class is among the k highest predictions: one-hot y_true
// (TopKCategoricalAccuracy) or class ids (sparse). A class tied with the true one's
// score does not push it out, as tf.math.in_top_k.
class TopKCategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit TopKCategoricalAccuracy(int64_t k = 5, bool sparse = false, std::string name = "",
                                   DType dtype = DType::Float32);

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;

 private:
  int64_t k_;
  bool sparse_;
};

}  // namespace ef::nn::metrics
