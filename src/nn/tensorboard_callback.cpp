// The Keras TensorBoard callback over the summary writers (eagerflow/io/summary.h).
#include <filesystem>

#include "eagerflow/io/summary.h"
#include "eagerflow/nn/callbacks.h"
#include "eagerflow/nn/model.h"
#include "eagerflow/optim/optimizer.h"

namespace ef::nn::callbacks {

TensorBoard::TensorBoard(TensorBoardOptions options) : options_(std::move(options)) {
  if (options_.log_dir.empty()) fail("TensorBoard: log_dir is empty");
  if (options_.histogram_freq < 0)
    fail("TensorBoard: histogram_freq must be >= 0, got ", options_.histogram_freq);
  if (options_.update_freq < 0) fail("TensorBoard: update_freq must be >= 0, got ", options_.update_freq);
}

void TensorBoard::on_train_begin(const Logs&) {
  const std::filesystem::path dir(options_.log_dir);
  if (!train_) train_ = summary::create_file_writer((dir / "train").string());
  batches_ = 0;
  // The train step is traced during the first batch; its graph is written after it.
  graph_pending_ = options_.write_graph && !summary::tracing();
  if (graph_pending_) summary::trace_on();
}

void TensorBoard::on_train_batch_end(int64_t, const Logs& logs) {
  ++batches_;
  if (graph_pending_) {
    graph_pending_ = false;
    summary::WriterScope scope(train_, 0);
    summary::trace_export("train_step");
  }
  if (options_.update_freq > 0 && batches_ % options_.update_freq == 0) {
    summary::WriterScope scope(train_, batches_);
    for (const auto& [name, value] : logs) summary::scalar("batch_" + name, value);
  }
}

void TensorBoard::on_epoch_end(int epoch, Logs& logs) {
  {
    summary::WriterScope scope(train_, epoch);
    for (const auto& [name, value] : logs)
      if (!name.starts_with("val_")) summary::scalar("epoch_" + name, value);
    const CompileOptions& compiled = model().compile_options();
    if (!logs.contains("learning_rate") && compiled.optimizer)
      summary::scalar("epoch_learning_rate", compiled.optimizer->current_learning_rate());
    if (options_.histogram_freq > 0 && epoch % options_.histogram_freq == 0)
      for (const auto& [path, variable] : model().named_variables())
        summary::histogram(path, variable.value());
  }
  bool has_validation = false;
  for (const auto& entry : logs) has_validation |= entry.first.starts_with("val_");
  if (has_validation) {
    if (!validation_)
      validation_ =
          summary::create_file_writer((std::filesystem::path(options_.log_dir) / "validation").string());
    summary::WriterScope scope(validation_, epoch);
    for (const auto& [name, value] : logs)
      if (name.starts_with("val_")) summary::scalar("epoch_" + name.substr(4), value);
    validation_->flush();
  }
  train_->flush();
}

void TensorBoard::on_train_end(const Logs&) {
  if (graph_pending_) summary::trace_off();  // fit ended before a batch ran
  graph_pending_ = false;
  if (train_) train_->flush();
  if (validation_) validation_->flush();
}

}  // namespace ef::nn::callbacks
