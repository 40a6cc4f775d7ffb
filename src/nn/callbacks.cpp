// Keras' callbacks (eagerflow/nn/callbacks.h).
#include "eagerflow/nn/callbacks.h"

#include <cmath>
#include <filesystem>

#include "eagerflow/io/checkpoint.h"
#include "eagerflow/nn/model.h"

namespace ef::nn::callbacks {
namespace {

bool larger_is_better(Mode mode, const std::string& monitor) {
  if (mode == Mode::kAuto) return monitor.find("acc") != std::string::npos;
  return mode == Mode::kMax;
}

// The monitored value, or InvalidArgumentError naming the callback and what the logs hold.
double monitored(const Logs& logs, const std::string& monitor, const char* callback) {
  auto it = logs.find(monitor);
  if (it != logs.end()) return it->second;
  std::string names;
  for (const auto& [name, value] : logs) names += (names.empty() ? "" : ", ") + name;
  fail(callback, ": the logs have no '", monitor, "' (they have: ", names.empty() ? "nothing" : names,
       "); for val_ names, give fit validation data");
}

bool improved(double value, const std::optional<double>& best, double min_delta, bool larger) {
  if (!best) return true;
  return larger ? value - min_delta > *best : value + min_delta < *best;
}

}  // namespace

Model& Callback::model() const {
  if (!model_) fail<FailedPreconditionError>("Callback: no model yet; fit, evaluate or predict sets it");
  return *model_;
}

// ---- History ----

void History::on_train_begin(const Logs&) {}

void History::on_epoch_end(int epoch, Logs& logs) {
  epochs_.push_back(epoch);
  for (const auto& [name, value] : logs) history_[name].push_back(value);
}

// ---- EarlyStopping ----

EarlyStopping::EarlyStopping(EarlyStoppingOptions options) : options_(std::move(options)) {
  if (options_.patience < 0) fail("EarlyStopping: patience must be >= 0, got ", options_.patience);
  options_.min_delta = std::abs(options_.min_delta);
}

void EarlyStopping::on_train_begin(const Logs&) {
  larger_is_better_ = larger_is_better(options_.mode, options_.monitor);
  wait_ = 0;
  stopped_epoch_ = best_epoch_ = -1;
  best_.reset();
  best_weights_.clear();
}

void EarlyStopping::on_epoch_end(int epoch, Logs& logs) {
  const double value = monitored(logs, options_.monitor, "EarlyStopping");
  if (epoch < options_.start_from_epoch) return;
  ++wait_;
  if (improved(value, best_, options_.min_delta, larger_is_better_)) {
    best_ = value;
    best_epoch_ = epoch;
    if (options_.restore_best_weights) {
      best_weights_.clear();
      for (const Variable& v : model().variables()) best_weights_.push_back(v.value());
    }
    // Like Keras, a baseline that has not been beaten keeps the wait counting.
    if (!options_.baseline || improved(value, options_.baseline, 0, larger_is_better_)) wait_ = 0;
    return;
  }
  if (wait_ >= options_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    model().stop_training = true;
  }
}

void EarlyStopping::on_train_end(const Logs&) {
  if (!options_.restore_best_weights || best_weights_.empty()) return;
  const std::vector<Variable> variables = model().variables();
  if (variables.size() != best_weights_.size()) return;  // the model changed: nothing sensible to restore
  for (size_t i = 0; i < variables.size(); ++i) Variable(variables[i]).assign(best_weights_[i]);
}

// ---- TerminateOnNaN ----

void TerminateOnNaN::on_train_batch_end(int64_t batch, const Logs& logs) {
  auto it = logs.find("loss");
  if (it == logs.end() || std::isfinite(it->second)) return;
  std::fprintf(stderr, "Batch %lld: invalid loss, terminating training\n", static_cast<long long>(batch));
  model().stop_training = true;
}

// ---- LambdaCallback ----

void LambdaCallback::on_epoch_begin(int epoch, const Logs& logs) {
  if (epoch_begin) epoch_begin(epoch, logs);
}
void LambdaCallback::on_epoch_end(int epoch, Logs& logs) {
  if (epoch_end) epoch_end(epoch, logs);
}
void LambdaCallback::on_train_batch_end(int64_t batch, const Logs& logs) {
  if (train_batch_end) train_batch_end(batch, logs);
}
void LambdaCallback::on_train_begin(const Logs& logs) {
  if (train_begin) train_begin(logs);
}
void LambdaCallback::on_train_end(const Logs& logs) {
  if (train_end) train_end(logs);
}

// ---- CSVLogger ----

CSVLogger::CSVLogger(std::string path, char separator, bool append)
    : path_(std::move(path)), separator_(separator), append_(append) {}

CSVLogger::~CSVLogger() {
  if (file_) std::fclose(file_);
}

void CSVLogger::on_train_begin(const Logs&) {
  const bool continuing = append_ && std::filesystem::exists(path_) && std::filesystem::file_size(path_) > 0;
  if (file_) std::fclose(file_);
  file_ = std::fopen(path_.c_str(), continuing ? "a" : "w");
  if (!file_) fail<NotFoundError>("CSVLogger: cannot open '", path_, "' for writing");
  columns_.clear();
  if (continuing) columns_.push_back("");  // the file has its header
}

void CSVLogger::on_epoch_end(int epoch, Logs& logs) {
  if (!file_) return;
  if (columns_.empty()) {  // the header, from the first epoch's names
    std::fprintf(file_, "epoch");
    for (const auto& [name, value] : logs) {
      std::fprintf(file_, "%c%s", separator_, name.c_str());
      columns_.push_back(name);
    }
    std::fprintf(file_, "\n");
  } else if (columns_.size() == 1 && columns_[0].empty()) {
    columns_.clear();
    for (const auto& [name, value] : logs) columns_.push_back(name);
  }
  std::fprintf(file_, "%d", epoch);
  for (const std::string& name : columns_) {
    auto it = logs.find(name);
    if (it == logs.end())
      std::fprintf(file_, "%c", separator_);
    else
      std::fprintf(file_, "%c%.17g", separator_, it->second);
  }
  std::fprintf(file_, "\n");
  std::fflush(file_);
}

void CSVLogger::on_train_end(const Logs&) {
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

// ---- ModelCheckpoint ----

ModelCheckpoint::ModelCheckpoint(std::string path, ModelCheckpointOptions options)
    : path_(std::move(path)), options_(std::move(options)) {
  if (path_.empty()) fail("ModelCheckpoint: the path is empty");
}

void ModelCheckpoint::on_epoch_end(int epoch, Logs& logs) {
  if (options_.save_best_only) {
    const double value = monitored(logs, options_.monitor, "ModelCheckpoint");
    if (!improved(value, best_, 0, larger_is_better(options_.mode, options_.monitor))) return;
    best_ = value;
  }
  std::string path = path_;
  if (auto at = path.find("{epoch}"); at != std::string::npos) path.replace(at, 7, std::to_string(epoch + 1));
  io::Checkpoint checkpoint{{"model", model()}};
  checkpoint.save(path);
  saved_.push_back(path);
}

// ---- LearningRateScheduler ----

LearningRateScheduler::LearningRateScheduler(std::function<double(int, double)> schedule)
    : schedule_(std::move(schedule)) {
  if (!schedule_) fail("LearningRateScheduler: the schedule is an empty function");
}

void LearningRateScheduler::on_epoch_begin(int epoch, const Logs&) {
  optim::Optimizer& opt = *model().compile_options().optimizer;
  const double rate = schedule_(epoch, opt.current_learning_rate());
  if (!std::isfinite(rate) || rate < 0)
    fail("LearningRateScheduler: the schedule gave ", rate, " for epoch ", epoch,
         "; a rate must be finite and >= 0");
  opt.set_learning_rate(rate);
}

void LearningRateScheduler::on_epoch_end(int, Logs& logs) {
  logs["learning_rate"] = model().compile_options().optimizer->current_learning_rate();
}

// ---- ReduceLROnPlateau ----

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions options) : options_(std::move(options)) {
  if (!(options_.factor >= 0 && options_.factor < 1))
    fail("ReduceLROnPlateau: factor must be in [0, 1), got ", options_.factor);
  if (options_.patience < 0) fail("ReduceLROnPlateau: patience must be >= 0, got ", options_.patience);
}

void ReduceLROnPlateau::on_train_begin(const Logs&) {
  larger_is_better_ = larger_is_better(options_.mode, options_.monitor);
  best_.reset();
  wait_ = cooldown_left_ = 0;
}

void ReduceLROnPlateau::on_epoch_end(int, Logs& logs) {
  optim::Optimizer& opt = *model().compile_options().optimizer;
  logs["learning_rate"] = opt.current_learning_rate();
  const double value = monitored(logs, options_.monitor, "ReduceLROnPlateau");
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    wait_ = 0;
  }
  if (improved(value, best_, options_.min_delta, larger_is_better_)) {
    best_ = value;
    wait_ = 0;
    return;
  }
  if (cooldown_left_ > 0 || ++wait_ < options_.patience) return;
  const double rate = opt.current_learning_rate();
  if (rate > options_.min_lr) {
    opt.set_learning_rate(std::max(rate * options_.factor, options_.min_lr));
    cooldown_left_ = options_.cooldown;
    wait_ = 0;
  }
}

}  // namespace ef::nn::callbacks
