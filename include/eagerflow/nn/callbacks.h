// Callbacks: code that Model::fit, evaluate and predict call at the start and end of
// training, of each epoch and of each batch (Keras' callbacks).
//
//   auto stop = std::make_shared<ef::nn::callbacks::EarlyStopping>(
//       ef::nn::callbacks::EarlyStoppingOptions{.monitor = "val_loss", .patience = 3});
//   model.fit(x, y, {.epochs = 50, .validation_split = 0.2, .callbacks = {stop}});
//
// Logs map names ("loss", "accuracy", "val_loss", "learning_rate") to numbers. A
// callback may set model().stop_training to end fit after the current epoch (after
// the current batch for TerminateOnNaN).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eagerflow/core/tensor.h"

namespace ef::summary {
class SummaryWriter;
}

namespace ef::nn {

class Model;
using Logs = std::map<std::string, double>;

namespace callbacks {

class Callback {
 public:
  virtual ~Callback() = default;
  // The model being trained; set by fit / evaluate / predict before the first call.
  Model& model() const;
  void set_model(Model* model) { model_ = model; }

  virtual void on_train_begin(const Logs& logs) { (void)logs; }
  virtual void on_train_end(const Logs& logs) { (void)logs; }
  // `epoch` counts from 0. `logs` holds the epoch's training and validation results;
  // a callback may add entries (learning_rate) for those after it.
  virtual void on_epoch_begin(int epoch, const Logs& logs) { (void)epoch, (void)logs; }
  virtual void on_epoch_end(int epoch, Logs& logs) { (void)epoch, (void)logs; }
  virtual void on_train_batch_begin(int64_t batch, const Logs& logs) { (void)batch, (void)logs; }
  virtual void on_train_batch_end(int64_t batch, const Logs& logs) { (void)batch, (void)logs; }
  virtual void on_test_begin(const Logs& logs) { (void)logs; }
  virtual void on_test_end(const Logs& logs) { (void)logs; }
  virtual void on_test_batch_end(int64_t batch, const Logs& logs) { (void)batch, (void)logs; }
  virtual void on_predict_batch_end(int64_t batch, const Logs& logs) { (void)batch, (void)logs; }

 private:
  Model* model_ = nullptr;
};

// Every epoch's logs, by name (fit returns it).
class History : public Callback {
 public:
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  const std::map<std::string, std::vector<double>>& history() const { return history_; }
  const std::vector<int>& epochs() const { return epochs_; }

 private:
  std::map<std::string, std::vector<double>> history_;
  std::vector<int> epochs_;
};

// Whether a smaller or a larger monitored value is better; kAuto: larger for names
// containing "acc" (accuracy), smaller otherwise, as Keras decides.
enum class Mode { kAuto, kMin, kMax };

struct EarlyStoppingOptions {
  std::string monitor = "val_loss";
  double min_delta = 0;  // an improvement must beat the best by more than this
  int patience = 0;      // epochs without improvement before stopping
  Mode mode = Mode::kAuto;
  std::optional<double> baseline;     // stop unless the value beats it within patience
  bool restore_best_weights = false;  // at the end, the weights of the best epoch
  int start_from_epoch = 0;           // epochs before this are not judged
};

// Stops training when the monitored value has stopped improving. A monitored name that
// the logs lack is an InvalidArgumentError listing the names they have.
class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  // The epoch (from 0) after which training stopped; -1 if it did not stop early.
  int stopped_epoch() const { return stopped_epoch_; }
  int best_epoch() const { return best_epoch_; }

 private:
  EarlyStoppingOptions options_;
  bool larger_is_better_ = false;
  int wait_ = 0, stopped_epoch_ = -1, best_epoch_ = -1;
  std::optional<double> best_;
  std::vector<Tensor> best_weights_;
};

// Stops training, after the batch, when a batch's loss is NaN or infinite.
class TerminateOnNaN : public Callback {
 public:
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
};

// Callbacks from functions; unset ones do nothing.
struct LambdaCallback : public Callback {
  std::function<void(int, Logs&)> epoch_end;
  std::function<void(int, const Logs&)> epoch_begin;
  std::function<void(int64_t, const Logs&)> train_batch_end;
  std::function<void(const Logs&)> train_begin, train_end;
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  void on_train_begin(const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
};

// Writes each epoch's logs as a CSV row ("epoch" first, then the names in order),
// flushed after each row; `append` continues an existing file.
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(std::string path, char separator = ',', bool append = false);
  ~CSVLogger() override;
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  std::string path_;
  char separator_;
  bool append_;
  std::FILE* file_ = nullptr;
  std::vector<std::string> columns_;
};

struct ModelCheckpointOptions {
  std::string monitor = "val_loss";
  bool save_best_only = false;
  Mode mode = Mode::kAuto;
};

// Saves the model's variables (an io::Checkpoint: atomic, checksummed) after each epoch,
// or only when the monitored value improved. `path` may contain "{epoch}" (from 1), as
// Keras' file patterns do.
class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(std::string path, ModelCheckpointOptions options = {});
  void on_epoch_end(int epoch, Logs& logs) override;
  // The paths written so far.
  const std::vector<std::string>& saved() const { return saved_; }

 private:
  std::string path_;
  ModelCheckpointOptions options_;
  std::optional<double> best_;
  std::vector<std::string> saved_;
};

// Sets the optimizer's learning rate at the start of each epoch to schedule(epoch,
// current rate); the optimizer must have a constant rate (not a schedule).
class LearningRateScheduler : public Callback {
 public:
  explicit LearningRateScheduler(std::function<double(int epoch, double learning_rate)> schedule);
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;

 private:
  std::function<double(int, double)> schedule_;
};

struct ReduceLROnPlateauOptions {
  std::string monitor = "val_loss";
  double factor = 0.1;  // new rate = rate * factor
  int patience = 10;
  Mode mode = Mode::kAuto;
  double min_delta = 1e-4;
  int cooldown = 0;  // epochs after a reduction before counting again
  double min_lr = 0;
};

// Multiplies the learning rate by `factor` when the monitored value has not improved
// for `patience` epochs.
class ReduceLROnPlateau : public Callback {
 public:
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;

 private:
  ReduceLROnPlateauOptions options_;
  bool larger_is_better_ = false;
  std::optional<double> best_;
  int wait_ = 0, cooldown_left_ = 0;
};

struct TensorBoardOptions {
  std::string log_dir = "logs";
  int histogram_freq = 0;   // epochs between histograms of every variable; 0: none
  bool write_graph = true;  // the traced train step's graph (TensorBoard's graph tab)
  int64_t update_freq = 0;  // 0: once per epoch (Keras' "epoch"); n: also every n batches
};

// Writes what fit logs as TensorBoard event files, as Keras' TensorBoard callback does:
// log_dir/train gets "epoch_<name>" scalars (loss, metrics, learning_rate) per epoch,
// "batch_<name>" every update_freq batches, the variables' histograms and the train
// step's graph; log_dir/validation gets the "val_" entries as "epoch_<name>".
class TensorBoard : public Callback {
 public:
  explicit TensorBoard(TensorBoardOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  const TensorBoardOptions& options() const { return options_; }

 private:
  TensorBoardOptions options_;
  std::shared_ptr<summary::SummaryWriter> train_, validation_;
  int64_t batches_ = 0;  // train batches since on_train_begin
  bool graph_pending_ = false;
};

}  // namespace callbacks
}  // namespace ef::nn
