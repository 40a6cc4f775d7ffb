// Module: a container of variables and sub-modules (tf.Module, torch.nn.Module).
//
//   struct Mlp : ef::nn::Layer {
//     ef::nn::Dense& hidden = add_module<ef::nn::Dense>("hidden", 256, ef::nn::DenseOptions{.activation = "relu"});
//     ef::nn::Dense& logits = add_module<ef::nn::Dense>("logits", 10);
//     ef::Tensor call(const ef::Tensor& x, bool) override { return logits(hidden(x)); }
//   };
//   Mlp model;
//   model(images);                       // builds the Dense layers on first use
//   model.trainable_variables();         // hidden's kernel and bias, then logits'
//   model.named_variables();             // {"hidden/kernel", ...}: checkpoint keys
//
// Note [module paths]: a variable's path is the chain of names under which it was
// tracked ("hidden/kernel"), not the variable's own name. Paths are stable across
// runs as long as the code tracks the same things under the same names, which is
// what checkpoints key on. A module or variable tracked twice (shared weights) is
// listed once, under the first path that reaches it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eagerflow/core/tensor.h"
#include "eagerflow/runtime/variable.h"

namespace ef::nn {

// Modules are shared (a layer used twice, a model inside another): enable_shared_from_this
// lets a layer called on symbolic inputs record itself in the functional graph.
class Module : public std::enable_shared_from_this<Module> {
 public:
  // An empty name becomes "module"; layers pass their type's name ("dense").
  explicit Module(std::string name = "");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // Moving is for handing a freshly made module to a container (Sequential::add);
  // a module that others track is held by shared_ptr and never moved.
  Module(Module&&) = default;

  const std::string& name() const { return name_; }

  // Every variable of this module and its sub-modules: its own in tracking order, then
  // each sub-module's, depth first, each variable once.
  std::vector<Variable> variables() const;
  std::vector<Variable> trainable_variables() const;
  std::vector<Variable> non_trainable_variables() const;
  // (path, variable) pairs in the order of variables() (Note [module paths]).
  std::vector<std::pair<std::string, Variable>> named_variables() const;
  // The direct sub-modules with the names they were tracked under.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const {
    return children_;
  }

  // Tracks `variable` under `name`; a name already used in this module for something
  // else throws InvalidArgumentError. Returns the variable.
  Variable track_variable(const std::string& name, Variable variable);
  // Tracks `module` under `name` (same rule); the module may be shared with others.
  template <class M>
  M& track_module(const std::string& name, std::shared_ptr<M> module) {
    track_child(name, module);
    return *module;
  }
  // Creates an M from `args` and tracks it under `name`.
  template <class M, class... Args>
  M& add_module(const std::string& name, Args&&... args) {
    return track_module(name, std::make_shared<M>(std::forward<Args>(args)...));
  }

  // Stops tracking what was tracked under `name` (a variable or a module); returns
  // whether there was one. Python uses it when an attribute is reassigned.
  bool untrack(const std::string& name);

  // A table of paths, shapes, dtypes and parameter counts (Keras' summary()).
  std::string summary() const;

 private:
  void track_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, std::vector<const void*>& seen_modules,
               std::vector<const void*>& seen_variables,
               std::vector<std::pair<std::string, Variable>>& out) const;

  std::string name_;
  std::vector<std::pair<std::string, Variable>> variables_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

}  // namespace ef::nn
