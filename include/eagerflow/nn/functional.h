// The functional API (Keras' keras.Input / keras.Model(inputs, outputs)): layers called
// on symbolic inputs record a graph of layer calls, and a Functional model runs it.
//
//   ef::nn::KerasTensor image = ef::nn::Input({28, 28}, ef::DType::Float32, "image");
//   auto flatten = std::make_shared<ef::nn::Flatten>();
//   auto hidden = std::make_shared<ef::nn::Dense>(128, ef::nn::DenseOptions{.activation = "relu"});
//   auto logits = std::make_shared<ef::nn::Dense>(10);
//   ef::nn::KerasTensor h = (*hidden)((*flatten)(image));
//   auto model = std::make_shared<ef::nn::Functional>(std::vector{image}, std::vector{(*logits)(h)});
//   model->compile(...); model->fit(x, y);            // a Model like any other
//
// Note [symbolic layer calls]: calling a layer on KerasTensors builds it (its variables
// are real and initialized at once, as in Keras) and traces its call() once in a
// function over inputs of unknown batch size, which gives the outputs' dtypes and shapes
// and checks that the layer can run inside functions (fit's default). Nothing is
// computed. A layer may be called many times (shared weights); each call is one node.
// A layer that needs sizes the inputs leave unknown (keras.Input(shape=(None, 8)) into
// a recurrent layer or attention) is traced with them made known instead (Note [probing
// unknown sizes] in functional.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "eagerflow/nn/model.h"

namespace ef::nn {

struct LayerCall;

// A symbolic tensor of a functional model: dtype, shape (the batch dimension unknown),
// and the layer call that gives it. Copies refer to the same tensor.
class KerasTensor {
 public:
  KerasTensor(std::shared_ptr<const LayerCall> call, size_t output_index);

  DType dtype() const;
  const Shape& shape() const;
  // "<layer name>" for a layer's only output, "<layer name>:<i>" otherwise.
  std::string name() const;
  // The call that gives this tensor, and which of its outputs it is.
  const std::shared_ptr<const LayerCall>& call() const { return call_; }
  size_t output_index() const { return output_index_; }

  bool operator==(const KerasTensor& other) const {
    return call_ == other.call_ && output_index_ == other.output_index_;
  }

 private:
  std::shared_ptr<const LayerCall> call_;
  size_t output_index_;
};

// One call of a layer in the graph: the layer, the tensors it took, and the dtypes and
// shapes of what it gave. An Input is a call of an InputLayer with no inputs.
struct LayerCall {
  std::shared_ptr<Layer> layer;
  std::vector<KerasTensor> inputs;
  std::vector<TensorSpec> outputs;
};

// The layer behind keras.Input: a model input of a fixed dtype and shape (batch
// dimension excluded). Calling it checks a value against that spec.
class InputLayer : public Layer {
 public:
  InputLayer(Shape shape, DType dtype = DType::Float32, std::string name = "input_layer");
  const Shape& input_shape() const { return shape_; }  // without the batch dimension
  DType input_dtype() const { return input_dtype_; }
  std::string class_name() const override { return "InputLayer"; }
  Config get_config() const override;
  // Not in the layer registry: its "dtype" is the input's, not a dtype policy.
  static std::shared_ptr<InputLayer> from_config(const Config& config);
  // `inputs` when it is a batch of the input's dtype and shape; InvalidArgumentError
  // naming the input and both shapes otherwise.
  const Tensor& check(const Tensor& inputs) const;

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  Shape shape_;
  DType input_dtype_;
};

// A model input: batches of `shape` (kUnknownDim where any size goes) of `dtype`.
// Names default to "input_layer", "input_layer_1", ... (unique in the process).
KerasTensor Input(const Shape& shape, DType dtype = DType::Float32, const std::string& name = "",
                  CallSite where = CallSite::current());

// A model made of the layer calls between `inputs` and `outputs`. Its layers are
// tracked under their names (made unique with "_1", "_2"), in the order of the calls,
// so checkpoints and saved files key on them. Throws InvalidArgumentError when an
// output depends on an Input that is not among `inputs`, or a tensor is not symbolic.
class Functional : public Model {
 public:
  Functional(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs, std::string name = "model",
             CallSite where = CallSite::current());

  const std::vector<KerasTensor>& inputs() const { return inputs_; }
  const std::vector<KerasTensor>& outputs() const { return outputs_; }
  // The layer calls in the order they run (every input's first).
  const std::vector<std::shared_ptr<const LayerCall>>& calls() const { return calls_; }
  // Each layer once, in the order of its first call.
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }

  std::string class_name() const override { return "Functional"; }
  size_t input_count() const override { return inputs_.size(); }
  size_t output_count() const override { return outputs_.size(); }
  // The names of the layers that give the outputs ("<name>_1", ... for repeats).
  std::vector<std::string> output_names() const override;
  // The layers' configs and the graph of calls (Note [functional configs]).
  Config get_config() const override;
  // The model `config` describes, its layers made by layer_from_config.
  static std::shared_ptr<Functional> from_config(const Config& config);

  // The output shape of `layer`'s first call, for summary().
  std::optional<Shape> output_shape_of(const Layer& layer) const;

 protected:
  Tensor call(const Tensor& inputs, bool training) override;
  std::vector<Tensor> call_inputs(const std::vector<Tensor>& inputs, bool training) override;

 private:
  std::vector<KerasTensor> inputs_, outputs_;
  std::vector<std::shared_ptr<const LayerCall>> calls_;
  // Per call, the (call, output) positions of its arguments; the model's outputs too.
  std::vector<std::vector<std::pair<size_t, size_t>>> arguments_;
  std::vector<std::pair<size_t, size_t>> results_;
  std::vector<std::shared_ptr<Layer>> layers_;
};

}  // namespace ef::nn
