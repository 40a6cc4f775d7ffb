// Optimizers' configs (Keras' get_config / from_config), for whole-model files that
// keep the compile settings (eagerflow/io/model_file.h).
#include "eagerflow/optim/optimizers.h"

namespace ef::optim {

nn::Config Optimizer::get_config() const {
  nn::Config c;
  if (learning_rate_.constant()) c.set("learning_rate", current_learning_rate());
  if (clipping_.clipnorm) c.set("clipnorm", *clipping_.clipnorm);
  if (clipping_.global_clipnorm) c.set("global_clipnorm", *clipping_.global_clipnorm);
  if (clipping_.clipvalue) c.set("clipvalue", *clipping_.clipvalue);
  if (loss_scale_)
    c.set("loss_scale_initial_scale", loss_scale_->options.initial_scale)
        .set("loss_scale_growth_steps", loss_scale_->options.growth_steps);
  return c;
}

nn::Config SGD::get_config() const {
  return Optimizer::get_config().set("momentum", momentum_).set("nesterov", nesterov_);
}

nn::Config Adam::get_config() const {
  return Optimizer::get_config()
      .set("beta_1", beta_1_)
      .set("beta_2", beta_2_)
      .set("epsilon", epsilon_)
      .set("amsgrad", amsgrad_);
}

nn::Config AdamW::get_config() const { return Adam::get_config().set("weight_decay", weight_decay_); }

nn::Config RMSprop::get_config() const {
  return Optimizer::get_config()
      .set("rho", rho_)
      .set("momentum", momentum_)
      .set("epsilon", epsilon_)
      .set("centered", centered_);
}

nn::Config Adagrad::get_config() const {
  return Optimizer::get_config()
      .set("initial_accumulator_value", initial_accumulator_value_)
      .set("epsilon", epsilon_);
}

std::shared_ptr<Optimizer> optimizer_from_config(const std::string& class_name, const nn::Config& c) {
  const std::string who = class_name + " config";
  if (!c.has("learning_rate"))
    fail(who,
         ": no learning_rate (an optimizer with a learning-rate schedule is not saved with its settings)");
  const double lr = c.get<double>("learning_rate", who);
  const Clipping clipping{c.get_optional<double>("clipnorm", who),
                          c.get_optional<double>("global_clipnorm", who),
                          c.get_optional<double>("clipvalue", who)};
  std::shared_ptr<Optimizer> optimizer;
  if (class_name == "SGD") {
    optimizer = std::make_shared<SGD>(lr, c.get<double>("momentum", who, 0.0),
                                      c.get<bool>("nesterov", who, false), clipping);
  } else if (class_name == "Adam" || class_name == "AdamW") {
    const double beta_1 = c.get<double>("beta_1", who, 0.9), beta_2 = c.get<double>("beta_2", who, 0.999);
    const double epsilon = c.get<double>("epsilon", who, 1e-7);
    const bool amsgrad = c.get<bool>("amsgrad", who, false);
    if (class_name == "Adam")
      optimizer = std::make_shared<Adam>(lr, beta_1, beta_2, epsilon, amsgrad, clipping);
    else
      optimizer = std::make_shared<AdamW>(lr, c.get<double>("weight_decay", who, 0.004), beta_1, beta_2,
                                          epsilon, amsgrad, clipping);
  } else if (class_name == "RMSprop") {
    optimizer = std::make_shared<RMSprop>(
        lr, c.get<double>("rho", who, 0.9), c.get<double>("momentum", who, 0.0),
        c.get<double>("epsilon", who, 1e-7), c.get<bool>("centered", who, false), clipping);
  } else if (class_name == "Adagrad") {
    optimizer = std::make_shared<Adagrad>(lr, c.get<double>("initial_accumulator_value", who, 0.1),
                                          c.get<double>("epsilon", who, 1e-7), clipping);
  } else {
    fail("optimizer_from_config: unknown optimizer class \"", class_name,
         "\" (known: SGD, Adam, AdamW, RMSprop, Adagrad)");
  }
  if (c.has("loss_scale_initial_scale"))
    optimizer->enable_loss_scaling(
        {c.get<double>("loss_scale_initial_scale", who), c.get<int64_t>("loss_scale_growth_steps", who)});
  return optimizer;
}

}  // namespace ef::optim
