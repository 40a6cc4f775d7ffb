// Object-based checkpoints (TensorFlow's tf.train.Checkpoint / CheckpointManager):
// modules, optimizers and variables saved and restored by path, in a safetensors file.
//
//   ef::io::Checkpoint ckpt{{"model", model}, {"optimizer", adam}};
//   ckpt.save("run/model.safetensors");
//   ...                                       // in a new process, fresh objects:
//   ckpt.restore("run/model.safetensors");    // weights, and Adam's slots and step counts,
//                                             // so training continues exactly
//   ef::io::CheckpointManager manager(ckpt, "run", /*max_to_keep=*/3);
//   manager.save();                           // run/ckpt-1.safetensors, ckpt-2, ... keeps 3
//   if (auto latest = manager.latest_checkpoint()) ckpt.restore(*latest);
//
// Note [checkpoint keys]: an object named O contributes
//   - a variable:  "O"
//   - a module:    "O/<path>" for each of its named_variables() ("model/dense/kernel")
//   - an optimizer: "O/iterations" (int64 scalar), and for each variable it has updated,
//     "O/steps/<key>" (int64 scalar, that variable's update count) and
//     "O/slots/<key>/<slot>" ("optimizer/slots/model/dense/kernel/m"), where <key> is the
//     variable's own key in this checkpoint: so the optimizer's variables must be
//     tracked by another object of the checkpoint.
//   - an L-BFGS optimizer: "O/<name>" for each entry of its state (Note [LBFGS state] in
//     optim/lbfgs.h: "O/n_iter", "O/old_dirs", ...); its variables, too, are saved by
//     the objects that track them.
// restore() reads and validates the whole file, then checks that every expected key is
// present with the right dtype and shape and that no other key is, and only then assigns:
// on any error every object is left as it was.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eagerflow/core/error.h"
#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable.h"

namespace ef::nn {
class Module;
}
namespace ef::optim {
class LBFGS;
class Optimizer;
}

namespace ef::io {

// How Checkpoint::restore treats a file that differs from the objects.
struct RestoreOptions {
  // A float tensor of another float dtype than its variable's (float32 weights into a
  // bfloat16 model, say) is cast to the variable's dtype instead of being an error.
  bool convert_dtypes = false;
};

class Checkpoint {
 public:
  // One tracked object. Modules and optimizers are referred to, not copied: they must
  // outlive the checkpoint.
  class Object {
   public:
    Object(const nn::Module& module);       // NOLINT: implicit, for {"model", model}
    Object(optim::Optimizer& optimizer);    // NOLINT
    Object(optim::LBFGS& lbfgs);            // NOLINT
    Object(Variable variable);              // NOLINT
    // Any source of (path, variable) pairs, asked at every save and restore (e.g. a
    // model defined in Python).
    explicit Object(std::function<std::vector<std::pair<std::string, Variable>>()> named_variables);

   private:
    friend class Checkpoint;
    std::function<std::vector<std::pair<std::string, Variable>>()> variables_;  // modules, variables
    optim::Optimizer* optimizer_ = nullptr;
    optim::LBFGS* lbfgs_ = nullptr;
    bool has_variables() const { return !optimizer_ && !lbfgs_; }
  };

  // Tracks `objects` under their names; an empty or repeated name, or one containing
  // '/', is an InvalidArgumentError.
  Checkpoint(std::initializer_list<std::pair<std::string, Object>> objects);
  explicit Checkpoint(std::vector<std::pair<std::string, Object>> objects);

  // Every key and its current value (Note [checkpoint keys]). Throws
  // FailedPreconditionError when an optimizer has state for a variable that no object
  // tracks, InvalidArgumentError when two variables would get the same key.
  std::map<std::string, Tensor> state() const;
  // Writes state() to `path` atomically (see save_safetensors).
  void save(const std::string& path, CallSite where = CallSite::current()) const;
  // Restores every object from `path`: load_safetensors' errors for a bad file;
  // NotFoundError for a missing key, InvalidArgumentError for a wrong dtype or shape or
  // an unexpected key, each naming the file, the key and the shapes. Nothing changes on error.
  void restore(const std::string& path, CallSite where = CallSite::current()) { restore(path, {}, where); }
  void restore(const std::string& path, const RestoreOptions& options, CallSite where = CallSite::current());
  // As restore, from tensors already read; `source` names them in errors.
  void restore_state(const std::map<std::string, Tensor>& tensors, const std::string& source = "<state>",
                     CallSite where = CallSite::current(), const RestoreOptions& options = {});

 private:
  std::vector<std::pair<std::string, Object>> objects_;
};

// Keeps numbered checkpoints "<directory>/ckpt-<n>.safetensors", the newest
// `max_to_keep` of them (0 keeps all). The list is the folder's content: files only
// appear there complete (atomic saves), so no index file can disagree with it.
class CheckpointManager {
 public:
  // Creates `directory` if needed. Throws InvalidArgumentError for max_to_keep < 0.
  CheckpointManager(Checkpoint& checkpoint, std::string directory, int max_to_keep = 5,
                    CallSite where = CallSite::current());

  // Saves ckpt-<n>, n one more than the newest present (1 in an empty folder), then
  // deletes the oldest beyond max_to_keep. Returns the new file's path.
  std::string save(CallSite where = CallSite::current());
  // The newest checkpoint's path, if any.
  std::optional<std::string> latest_checkpoint() const;
  // Every checkpoint's path, oldest first.
  std::vector<std::string> checkpoints() const;
  const std::string& directory() const { return directory_; }

 private:
  Checkpoint& checkpoint_;
  std::string directory_;
  int max_to_keep_;
};

}  // namespace ef::io
