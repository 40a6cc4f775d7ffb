// Losses, as Keras defines them: a function gives one value per example (reducing the
// last axis), a class weights and reduces those values.
//
//   ef::nn::losses::SparseCategoricalCrossentropy loss_fn({.from_logits = true});
//   ef::Tensor loss = loss_fn(labels, logits);     // mean over the batch
//   ef::Tensor per_example = ef::nn::losses::mean_squared_error(y_true, y_pred);
//
// y_true is cast to y_pred's dtype (class ids of the sparse loss to int64). Shapes
// that do not match throw InvalidArgumentError naming the loss and both shapes.
// Probabilities are clipped to [1e-7, 1 - 1e-7] before logs, as Keras does.
#pragma once

#include <optional>
#include <string>

#include "eagerflow/core/tensor.h"
#include "eagerflow/nn/config.h"

namespace ef::nn::losses {

// How a loss class turns per-example losses into its result.
enum class Reduction {
  kNone,              // the per-example losses, weighted
  kSum,               // their sum
  kSumOverBatchSize,  // their sum divided by their count (Keras' default)
};

// ---- Per-example functions: the last axis is reduced ----
// mean((y_true - y_pred)^2, axis=-1)
Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred, CallSite where = CallSite::current());
// mean(|y_true - y_pred|, axis=-1)
Tensor mean_absolute_error(const Tensor& y_true, const Tensor& y_pred, CallSite where = CallSite::current());
// mean over the last axis of -(y log p + (1 - y) log(1 - p)), p = y_pred or
// sigmoid(y_pred) when from_logits.
Tensor binary_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits = false,
                           CallSite where = CallSite::current());
// -sum(y_true * log p, axis=-1), p = y_pred normalized to sum 1, or softmax(y_pred).
Tensor categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits = false,
                                CallSite where = CallSite::current());
// -log p[y_true] for integer class ids y_true of shape y_pred.shape[:-1] (a trailing
// dimension of 1 is allowed). Ids outside [0, classes) throw.
Tensor sparse_categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits = false,
                                       CallSite where = CallSite::current());

// mean over the last axis of 0.5 x^2 where |x| <= delta, delta * (|x| - 0.5 delta)
// elsewhere, x = y_pred - y_true.
Tensor huber(const Tensor& y_true, const Tensor& y_pred, double delta = 1.0,
             CallSite where = CallSite::current());
// sum(t * log(t / p), axis=-1) with t and p clipped to [1e-7, 1].
Tensor kl_divergence(const Tensor& y_true, const Tensor& y_pred, CallSite where = CallSite::current());
// mean(p - t * log(p + 1e-7), axis=-1).
Tensor poisson(const Tensor& y_true, const Tensor& y_pred, CallSite where = CallSite::current());
// mean(log(cosh(p - t)), axis=-1), computed as x + softplus(-2x) - log 2 (no overflow).
Tensor log_cosh(const Tensor& y_true, const Tensor& y_pred, CallSite where = CallSite::current());
// -sum(l2_normalize(t) * l2_normalize(p), axis=-1): -1 for equal directions, as Keras.
Tensor cosine_similarity(const Tensor& y_true, const Tensor& y_pred, CallSite where = CallSite::current());

// ---- Classes: per-example function + weighting + reduction ----
struct LossOptions {
  bool from_logits = false;  // ignored by the regression losses
  Reduction reduction = Reduction::kSumOverBatchSize;
};

class Loss {
 public:
  virtual ~Loss() = default;
  // The reduced loss. `sample_weight` multiplies the per-example losses and must
  // broadcast to their shape (y_pred.shape[:-1]).
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred,
                    const std::optional<Tensor>& sample_weight = std::nullopt,
                    CallSite where = CallSite::current()) const;
  const std::string& name() const { return name_; }
  Reduction reduction() const { return options_.reduction; }
  // Keras' class name ("MeanSquaredError"), under which loss_from_config makes the loss
  // again from get_config() (from_logits, reduction; Huber: delta); empty for a loss
  // that cannot be made again (a Python function's).
  virtual std::string class_name() const { return ""; }
  virtual Config get_config() const;

 protected:
  Loss(std::string name, LossOptions options) : name_(std::move(name)), options_(options) {}
  virtual Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const = 0;
  const LossOptions& options() const { return options_; }

 private:
  std::string name_;
  LossOptions options_;
};

#define EF_DECLARE_LOSS(Class, name)                                               \
  class Class : public Loss {                                                      \
   public:                                                                         \
    explicit Class(LossOptions options = {}) : Loss(name, options) {}              \
    std::string class_name() const override { return #Class; }                     \
                                                                                   \
   protected:                                                                      \
    Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override; \
  };
EF_DECLARE_LOSS(MeanSquaredError, "mean_squared_error")
EF_DECLARE_LOSS(MeanAbsoluteError, "mean_absolute_error")
EF_DECLARE_LOSS(BinaryCrossentropy, "binary_crossentropy")
EF_DECLARE_LOSS(CategoricalCrossentropy, "categorical_crossentropy")
EF_DECLARE_LOSS(SparseCategoricalCrossentropy, "sparse_categorical_crossentropy")
EF_DECLARE_LOSS(KLDivergence, "kl_divergence")
EF_DECLARE_LOSS(Poisson, "poisson")
EF_DECLARE_LOSS(LogCosh, "log_cosh")
EF_DECLARE_LOSS(CosineSimilarity, "cosine_similarity")
#undef EF_DECLARE_LOSS

// huber with its delta (> 0).
class Huber : public Loss {
 public:
  explicit Huber(double delta = 1.0, LossOptions options = {});
  std::string class_name() const override { return "Huber"; }
  Config get_config() const override;

 protected:
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const override;

 private:
  double delta_;
};

// A new loss of `class_name` from its get_config(). NotFoundError for an unknown class.
std::shared_ptr<Loss> loss_from_config(const std::string& class_name, const Config& config);

}  // namespace ef::nn::losses
