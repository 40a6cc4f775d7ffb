// GroupNormalization (eagerflow/nn/normalization_layers.h): moments over a grouped view
// of the input, then batch_normalization's arithmetic, so the gradients are the ops'.
#include "eagerflow/nn/normalization_layers.h"

#include "eagerflow/ops/array.h"
#include "eagerflow/ops/conv.h"
#include "eagerflow/ops/operators.h"
#include "nn/normalization_params.h"

namespace ef::nn {

GroupNormalization::GroupNormalization(int64_t groups, GroupNormalizationOptions options)
    : Layer(options.name), groups_(groups), options_(std::move(options)) {
  if (groups == 0 || groups < -1)
    fail("GroupNormalization: argument 'groups' must be positive or -1 (one per channel), got ", groups);
  detail::check_epsilon("GroupNormalization", options_.epsilon);
}

Variable GroupNormalization::gamma() const { return built_variable(gamma_, "gamma"); }
Variable GroupNormalization::beta() const { return built_variable(beta_, "beta"); }

void GroupNormalization::build(const Shape& input_shape) {
  const int64_t rank = input_shape.rank();
  const int64_t axis = options_.axis < 0 ? options_.axis + rank : options_.axis;
  if (axis == 0)
    fail("layer '", name(), "' (GroupNormalization): axis ", options_.axis,
         " is the batch axis; give the channel axis of inputs of shape ", input_shape);
  if (axis > 0 && axis < rank) {
    const int64_t channels = input_shape[axis];
    const int64_t groups = groups_ == -1 ? channels : groups_;
    if (channels < 0)
      fail("layer '", name(), "' (GroupNormalization) needs a known channel count on axis ", options_.axis,
           ", got shape ", input_shape);
    if (groups > channels || channels % groups != 0)
      fail("layer '", name(), "' (GroupNormalization): the ", channels, " channels on axis ", options_.axis,
           " of inputs of shape ", input_shape, " do not split into 'groups' = ", groups, " equal groups");
  }
  // Validates the axis (out of range: an error naming the layer) and adds gamma, beta.
  detail::NormalizationParams params =
      detail::build_normalization_params(*this, "GroupNormalization", input_shape, options_);
  axis_ = params.axis;
  channels_ = input_shape[axis_];
  gamma_ = params.gamma;
  beta_ = params.beta;
}

Tensor GroupNormalization::call(const Tensor& inputs, bool) {
  const Shape& s = inputs.shape();
  if (inputs.rank() <= axis_ || s[axis_] != channels_)
    fail("layer '", name(), "' (GroupNormalization) was built for ", channels_, " channels on axis ", axis_,
         ", got inputs of shape ", s);
  const int64_t groups = groups_ == -1 ? channels_ : groups_;
  // [..., C, ...] viewed as [..., groups, C / groups, ...]: statistics over every axis
  // but the batch and the group axis.
  Dims grouped;
  for (int d = 0; d < inputs.rank(); ++d) {
    if (d == axis_) {
      grouped.push_back(groups);
      grouped.push_back(channels_ / groups);
    } else {
      grouped.push_back(d == 0 && s[0] == kUnknownDim ? -1 : s[d]);
    }
  }
  const Tensor x = reshape(inputs, Shape(grouped));
  std::vector<int64_t> axes;
  for (int d = 1; d < x.rank(); ++d)
    if (d != axis_) axes.push_back(d);
  auto [mean, variance] = moments(x, axes, /*keepdims=*/true);
  Dims original(s.dims());
  if (original[0] == kUnknownDim) original[0] = -1;
  Tensor y =
      reshape(batch_normalization(x, mean, variance, Tensor(), Tensor(), options_.epsilon), Shape(original));
  const Shape broadcast = detail::broadcast_along(inputs, axis_);
  if (gamma_) y = y * reshape(*gamma_, broadcast);
  if (beta_) y = y + reshape(*beta_, broadcast);
  return y;
}

}  // namespace ef::nn
