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
#include <vector>

#include "eagerflow/nn/config.h"
#include "eagerflow/nn/module.h"

namespace ef::nn::metrics {

// What Model::compile takes: a metric of (y_true, y_pred) batches.
class Metric : public Module {
 public:
  // Adds a batch (weighted per example by `sample_weight`).
  virtual void update(const Tensor& y_true, const Tensor& y_pred, const std::optional<Tensor>& sample_weight,
                      CallSite where) = 0;
  virtual Tensor result() const = 0;
  virtual void reset_state() = 0;
  // Keras' class name ("AUC"), under which metric_from_config makes the metric again
  // from get_config() (its name and arguments); empty for one that cannot be.
  virtual std::string class_name() const { return ""; }
  virtual Config get_config() const { return Config().set("name", name()); }

 protected:
  explicit Metric(std::string name) : Module(std::move(name)) {}
};

// The weighted mean of everything passed to update_state (Keras' Mean). Other metrics
// derive from it, averaging a per-example value.
class Mean : public Metric {
 public:
  explicit Mean(std::string name = "mean", DType dtype = DType::Float32);
  // Adds `values` (weighted by `sample_weight`, which must broadcast to them).
  void update_state(const Tensor& values, const std::optional<Tensor>& sample_weight = std::nullopt,
                    CallSite where = CallSite::current());
  // total / count as a scalar of the metric's dtype; 0 before any update.
  Tensor result() const override;
  void reset_state() override;
  // A plain Mean averages values, not (y_true, y_pred): InvalidArgumentError.
  void update(const Tensor& y_true, const Tensor& y_pred, const std::optional<Tensor>& sample_weight,
              CallSite where) override;
  std::string class_name() const override { return "Mean"; }
  Config get_config() const override;

 private:
  Variable total_, count_;
};

// Mean of a per-example function of (y_true, y_pred).
class MeanMetricWrapper : public Mean {
 public:
  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    const std::optional<Tensor>& sample_weight = std::nullopt, CallSite where = CallSite::current());
  void update(const Tensor& y_true, const Tensor& y_pred, const std::optional<Tensor>& sample_weight,
              CallSite where) override {
    update_state(y_true, y_pred, sample_weight, where);
  }

 protected:
  MeanMetricWrapper(std::string name, DType dtype) : Mean(std::move(name), dtype) {}
  virtual Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const = 0;
};

// Fraction of predictions equal to the labels.
class Accuracy : public MeanMetricWrapper {
 public:
  std::string class_name() const override { return "Accuracy"; }
  explicit Accuracy(std::string name = "accuracy", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// Fraction of (y_pred > threshold) equal to y_true, averaged over the last axis.
class BinaryAccuracy : public MeanMetricWrapper {
 public:
  std::string class_name() const override { return "BinaryAccuracy"; }
  Config get_config() const override;
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
  std::string class_name() const override { return "CategoricalAccuracy"; }
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// argmax(y_pred) == y_true (integer class ids; a trailing dimension of 1 is allowed).
class SparseCategoricalAccuracy : public MeanMetricWrapper {
 public:
  std::string class_name() const override { return "SparseCategoricalAccuracy"; }
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy",
                                     DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// mean((y_true - y_pred)^2) and mean(|y_true - y_pred|) over the last axis, averaged.
class MeanSquaredError : public MeanMetricWrapper {
 public:
  std::string class_name() const override { return "MeanSquaredError"; }
  explicit MeanSquaredError(std::string name = "mean_squared_error", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};
class MeanAbsoluteError : public MeanMetricWrapper {
 public:
  std::string class_name() const override { return "MeanAbsoluteError"; }
  explicit MeanAbsoluteError(std::string name = "mean_absolute_error", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// sqrt of the mean of (y_true - y_pred)^2 over everything seen (Keras'
// RootMeanSquaredError). The squares are averaged over the last axis per example
// (inputs of rank <= 1 are one value per example), so a sample_weight weighs examples.
class RootMeanSquaredError : public MeanMetricWrapper {
 public:
  std::string class_name() const override { return "RootMeanSquaredError"; }
  explicit RootMeanSquaredError(std::string name = "root_mean_squared_error", DType dtype = DType::Float32)
      : MeanMetricWrapper(std::move(name), dtype) {}
  Tensor result() const override;

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;
};

// Whether the true class is among the k highest predictions: one-hot y_true
// (TopKCategoricalAccuracy) or class ids (sparse). A class tied with the true one's
// score does not push it out, as tf.math.in_top_k.
class TopKCategoricalAccuracy : public MeanMetricWrapper {
 public:
  std::string class_name() const override { return "TopKCategoricalAccuracy"; }
  Config get_config() const override;
  explicit TopKCategoricalAccuracy(int64_t k = 5, bool sparse = false, std::string name = "",
                                   DType dtype = DType::Float32);

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;

 private:
  int64_t k_;
  bool sparse_;
};

// ---- metrics of the confusion matrix at thresholds ----

// True and false positives and negatives of (y_pred > threshold) against y_true (cast to
// bool), weighted, accumulated per threshold in float32 variables. Predictions are
// probabilities in [0, 1]. The base of Precision, Recall and AUC.
class ConfusionMetric : public Metric {
 public:
  void update(const Tensor& y_true, const Tensor& y_pred, const std::optional<Tensor>& sample_weight,
              CallSite where) override;
  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    const std::optional<Tensor>& sample_weight = std::nullopt,
                    CallSite where = CallSite::current()) {
    update(y_true, y_pred, sample_weight, where);
  }
  void reset_state() override;
  const std::vector<double>& thresholds() const { return thresholds_; }

 protected:
  // top_k: only each example's k highest predictions can be positive; class_id: only
  // that column of the last axis is scored. Empty thresholds take Keras' default: 0.5, or
  // -inf with top_k (every one of the k highest predictions is positive, whatever its score).
  ConfusionMetric(std::string name, std::vector<double> thresholds, std::optional<int64_t> top_k,
                  std::optional<int64_t> class_id);
  // name, thresholds, top_k and class_id, for the derived classes' get_config.
  Config confusion_config() const;
  Variable true_positives_, false_positives_, true_negatives_, false_negatives_;  // [thresholds]

 private:
  std::vector<double> thresholds_;
  bool default_thresholds_;  // thresholds were not given (get_config writes null)
  std::optional<int64_t> top_k_, class_id_;
};

// TP / (TP + FP): a scalar for one threshold, one value per threshold otherwise; 0 where
// nothing was predicted positive (Keras' Precision).
class Precision : public ConfusionMetric {
 public:
  std::string class_name() const override { return "Precision"; }
  Config get_config() const override;
  explicit Precision(std::vector<double> thresholds = {}, std::optional<int64_t> top_k = std::nullopt,
                     std::optional<int64_t> class_id = std::nullopt, std::string name = "precision");
  Tensor result() const override;
};

// TP / (TP + FN), likewise (Keras' Recall).
class Recall : public ConfusionMetric {
 public:
  std::string class_name() const override { return "Recall"; }
  Config get_config() const override;
  explicit Recall(std::vector<double> thresholds = {}, std::optional<int64_t> top_k = std::nullopt,
                  std::optional<int64_t> class_id = std::nullopt, std::string name = "recall");
  Tensor result() const override;
};

// The area under the ROC or precision-recall curve, by a Riemann sum over
// num_thresholds thresholds spread evenly over [0, 1] (plus one just below 0 and one just
// above 1), as Keras' AUC: "interpolation" uses trapezoids for ROC and Davis &
// Goadrich's interpolation for PR; "minoring" / "majoring" the lower / upper heights.
// from_logits: y_pred are logits (a sigmoid is applied first).
class AUC : public ConfusionMetric {
 public:
  std::string class_name() const override { return "AUC"; }
  Config get_config() const override;
  enum class Curve { kROC, kPR };
  enum class Summation { kInterpolation, kMinoring, kMajoring };
  explicit AUC(int64_t num_thresholds = 200, Curve curve = Curve::kROC,
               Summation summation = Summation::kInterpolation, std::string name = "auc",
               bool from_logits = false);
  void update(const Tensor& y_true, const Tensor& y_pred, const std::optional<Tensor>& sample_weight,
              CallSite where) override;
  Tensor result() const override;

 private:
  Curve curve_;
  Summation summation_;
  bool from_logits_;
};

// A new metric of `class_name` from its get_config(). NotFoundError for an unknown class.
std::shared_ptr<Metric> metric_from_config(const std::string& class_name, const Config& config);

}  // namespace ef::nn::metrics
