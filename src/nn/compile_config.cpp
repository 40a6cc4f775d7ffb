// The configs of losses and metrics (Keras' get_config / from_config), so that a
// whole-model file keeps what compile was given (eagerflow/io/model_file.h).
#include <functional>
#include <map>

#include "eagerflow/nn/losses.h"
#include "eagerflow/nn/metrics.h"

namespace ef::nn {
namespace {

const char* reduction_name(losses::Reduction r) {
  switch (r) {
    case losses::Reduction::kNone:
      return "none";
    case losses::Reduction::kSum:
      return "sum";
    case losses::Reduction::kSumOverBatchSize:
      return "sum_over_batch_size";
  }
  return "";
}

losses::LossOptions loss_options(const Config& c, const std::string& who) {
  losses::LossOptions o;
  o.from_logits = c.get<bool>("from_logits", who, false);
  const std::string reduction = c.get<std::string>("reduction", who, std::string("sum_over_batch_size"));
  if (reduction == "none") {
    o.reduction = losses::Reduction::kNone;
  } else if (reduction == "sum") {
    o.reduction = losses::Reduction::kSum;
  } else if (reduction != "sum_over_batch_size") {
    fail(who, ": unknown reduction \"", reduction, "\" (none, sum, sum_over_batch_size)");
  }
  return o;
}

Config numbers_config(const std::vector<double>& values) {
  return numbered_list(std::vector<ConfigValue>(values.begin(), values.end()));
}

std::vector<double> numbers_of(const Config& list, const std::string& who) {
  std::vector<double> values;
  for (int64_t i = 0, n = numbered_count(list, who); i < n; ++i)
    values.push_back(list.get<double>(std::to_string(i), who));
  return values;
}

DType dtype_of(const Config& c, const std::string& who) {
  const std::string text = c.get<std::string>("dtype", who, std::string("float32"));
  if (std::optional<DType> dtype = dtype_named(text)) return *dtype;
  fail(who, ": unknown dtype \"", text, "\"");
}

}  // namespace

// ---- losses ----

namespace losses {

Config Loss::get_config() const {
  return Config()
      .set("name", name())
      .set("from_logits", options_.from_logits)
      .set("reduction", reduction_name(options_.reduction));
}

Config Huber::get_config() const { return Loss::get_config().set("delta", delta_); }

std::shared_ptr<Loss> loss_from_config(const std::string& class_name, const Config& c) {
  const std::string who = class_name + " config";
  const LossOptions o = loss_options(c, who);
  using Make = std::function<std::shared_ptr<Loss>()>;
  const std::map<std::string, Make> makers = {
      {"MeanSquaredError", [&] { return std::make_shared<MeanSquaredError>(o); }},
      {"MeanAbsoluteError", [&] { return std::make_shared<MeanAbsoluteError>(o); }},
      {"BinaryCrossentropy", [&] { return std::make_shared<BinaryCrossentropy>(o); }},
      {"CategoricalCrossentropy", [&] { return std::make_shared<CategoricalCrossentropy>(o); }},
      {"SparseCategoricalCrossentropy", [&] { return std::make_shared<SparseCategoricalCrossentropy>(o); }},
      {"KLDivergence", [&] { return std::make_shared<KLDivergence>(o); }},
      {"Poisson", [&] { return std::make_shared<Poisson>(o); }},
      {"LogCosh", [&] { return std::make_shared<LogCosh>(o); }},
      {"CosineSimilarity", [&] { return std::make_shared<CosineSimilarity>(o); }},
      {"Huber", [&] { return std::make_shared<Huber>(c.get<double>("delta", who, 1.0), o); }},
  };
  auto it = makers.find(class_name);
  if (it == makers.end()) fail<NotFoundError>("loss_from_config: unknown loss class \"", class_name, "\"");
  return it->second();
}

}  // namespace losses

// ---- metrics ----

namespace metrics {

Config Mean::get_config() const {
  return Metric::get_config().set("dtype", std::string(ef::name(total_.dtype())));
}

Config BinaryAccuracy::get_config() const { return Mean::get_config().set("threshold", threshold_); }

Config TopKCategoricalAccuracy::get_config() const {
  return Mean::get_config().set("k", k_).set("sparse", sparse_);
}

Config ConfusionMetric::confusion_config() const {
  Config c = Metric::get_config();
  if (default_thresholds_)
    c.set("thresholds", ConfigValue(nullptr));
  else
    c.set("thresholds", numbers_config(thresholds_));
  c.set("top_k", top_k_ ? ConfigValue(*top_k_) : ConfigValue(nullptr));
  c.set("class_id", class_id_ ? ConfigValue(*class_id_) : ConfigValue(nullptr));
  return c;
}

Config Precision::get_config() const { return confusion_config(); }
Config Recall::get_config() const { return confusion_config(); }

Config AUC::get_config() const {
  return Metric::get_config()
      .set("num_thresholds", static_cast<int64_t>(thresholds().size()))
      .set("curve", curve_ == Curve::kROC ? "ROC" : "PR")
      .set("summation_method", summation_ == Summation::kInterpolation ? "interpolation"
                               : summation_ == Summation::kMinoring    ? "minoring"
                                                                       : "majoring")
      .set("from_logits", from_logits_);
}

std::shared_ptr<Metric> metric_from_config(const std::string& class_name, const Config& c) {
  const std::string who = class_name + " config";
  const std::string name = c.get<std::string>("name", who);
  auto thresholds = [&] {
    const std::shared_ptr<Config> list = c.nested("thresholds", who);
    return list ? numbers_of(*list, who + " thresholds") : std::vector<double>{};
  };
  using Make = std::function<std::shared_ptr<Metric>()>;
  const std::map<std::string, Make> makers = {
      {"Mean", [&] { return std::make_shared<Mean>(name, dtype_of(c, who)); }},
      {"Accuracy", [&] { return std::make_shared<Accuracy>(name, dtype_of(c, who)); }},
      {"BinaryAccuracy",
       [&] {
         return std::make_shared<BinaryAccuracy>(c.get<double>("threshold", who, 0.5), name,
                                                 dtype_of(c, who));
       }},
      {"CategoricalAccuracy", [&] { return std::make_shared<CategoricalAccuracy>(name, dtype_of(c, who)); }},
      {"SparseCategoricalAccuracy",
       [&] { return std::make_shared<SparseCategoricalAccuracy>(name, dtype_of(c, who)); }},
      {"MeanSquaredError", [&] { return std::make_shared<MeanSquaredError>(name, dtype_of(c, who)); }},
      {"MeanAbsoluteError", [&] { return std::make_shared<MeanAbsoluteError>(name, dtype_of(c, who)); }},
      {"RootMeanSquaredError",
       [&] { return std::make_shared<RootMeanSquaredError>(name, dtype_of(c, who)); }},
      {"TopKCategoricalAccuracy",
       [&] {
         return std::make_shared<TopKCategoricalAccuracy>(
             c.get<int64_t>("k", who, 5), c.get<bool>("sparse", who, false), name, dtype_of(c, who));
       }},
      {"Precision",
       [&] {
         return std::make_shared<Precision>(thresholds(), c.get_optional<int64_t>("top_k", who),
                                            c.get_optional<int64_t>("class_id", who), name);
       }},
      {"Recall",
       [&] {
         return std::make_shared<Recall>(thresholds(), c.get_optional<int64_t>("top_k", who),
                                         c.get_optional<int64_t>("class_id", who), name);
       }},
      {"AUC",
       [&] {
         const std::string curve = c.get<std::string>("curve", who, std::string("ROC"));
         const std::string summation =
             c.get<std::string>("summation_method", who, std::string("interpolation"));
         if (curve != "ROC" && curve != "PR") fail(who, ": unknown curve \"", curve, "\" (ROC, PR)");
         if (summation != "interpolation" && summation != "minoring" && summation != "majoring")
           fail(who, ": unknown summation_method \"", summation, "\"");
         return std::make_shared<AUC>(c.get<int64_t>("num_thresholds", who, 200),
                                      curve == "ROC" ? AUC::Curve::kROC : AUC::Curve::kPR,
                                      summation == "interpolation" ? AUC::Summation::kInterpolation
                                      : summation == "minoring"    ? AUC::Summation::kMinoring
                                                                   : AUC::Summation::kMajoring,
                                      name, c.get<bool>("from_logits", who, false));
       }},
  };
  auto it = makers.find(class_name);
  if (it == makers.end())
    fail<NotFoundError>("metric_from_config: unknown metric class \"", class_name, "\"");
  return it->second();
}

}  // namespace metrics
}  // namespace ef::nn
