// A config round trip for layer tests: get_config -> layer_from_config gives a layer of
// the same config that, with the same weights, computes the same outputs.
#pragma once

#include <memory>
#include <string>

#include "test_util.h"

namespace ef::testing {

inline void expect_config_round_trip(nn::Layer& layer, const Tensor& x, bool training = false) {
  const Tensor y = layer(x, training);
  const nn::Config config = layer.get_config();
  std::shared_ptr<nn::Layer> again = nn::layer_from_config(layer.class_name(), config);
  EXPECT_EQ(again->class_name(), layer.class_name());
  EXPECT_EQ(nn::to_json(again->get_config()), nn::to_json(config));
  (*again)(x, training);
  std::vector<Variable> mine = again->variables();
  const std::vector<Variable> theirs = layer.variables();
  ASSERT_EQ(mine.size(), theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    ASSERT_EQ(mine[i].shape(), theirs[i].shape());
    mine[i].assign(theirs[i].value());
  }
  expect_values((*again)(x, training), y.to_vector<double>(), 0);
}

}  // namespace ef::testing
