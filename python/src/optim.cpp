// ef.optimizers: the optimizers, learning-rate schedules and clipping (Keras' names).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace optim = ef::optim;
constexpr ef::CallSite kPython{};

// A float, a bound schedule, or any Python callable of the step.
optim::LearningRate learning_rate_of(py::handle lr) {
  if (py::isinstance<optim::ExponentialDecay>(lr)) return lr.cast<optim::ExponentialDecay>();
  if (py::isinstance<optim::CosineDecay>(lr)) return lr.cast<optim::CosineDecay>();
  if (PyFloat_Check(lr.ptr()) || PyLong_Check(lr.ptr())) return lr.cast<double>();
  if (PyCallable_Check(lr.ptr())) {
    // Called with a Python int eagerly, and with the int64 step tensor inside a graph or
    // function (TensorFlow's LearningRateSchedule), where it must use ops on it.
    auto f = std::make_shared<PyRef>(py::reinterpret_borrow<py::object>(lr));
    return optim::LearningRate(
        [f](int64_t step) {
          py::gil_scoped_acquire gil;
          return py::float_(f->object(step)).cast<double>();
        },
        [f](const ef::Tensor& step) {
          py::gil_scoped_acquire gil;
          return to_tensor(f->object(step));
        });
  }
  throw py::type_error("learning_rate must be a number, a schedule, or a function of the step");
}

optim::Clipping clipping_of(std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                            std::optional<double> clipvalue) {
  optim::Clipping c;
  c.clipnorm = clipnorm;
  c.global_clipnorm = global_clipnorm;
  c.clipvalue = clipvalue;
  return c;
}

// Keras' apply_gradients: an iterable of (gradient, variable) pairs; None skips. Graph
// mode returns the training operation for Session.run, eager mode None.
py::object apply_gradients(optim::Optimizer& opt, py::iterable grads_and_vars) {
  std::vector<ef::Tensor> grads;
  std::vector<ef::Variable> vars;
  for (py::handle pair : grads_and_vars) {
    py::tuple gv = py::reinterpret_borrow<py::object>(pair).cast<py::tuple>();
    if (gv.size() != 2) throw py::type_error("apply_gradients: expected (gradient, variable) pairs");
    grads.push_back(gv[0].is_none() ? ef::Tensor() : to_tensor(gv[0]));
    vars.push_back(gv[1].cast<ef::Variable>());
  }
  ef::Operation train = opt.apply_gradients(grads, vars, kPython);
  return train.defined() ? py::cast(train) : py::none();
}

#define EFPY_CLIPPING_ARGS "clipnorm"_a = py::none(), "global_clipnorm"_a = py::none(), "clipvalue"_a = py::none()

}  // namespace

void bind_optim(py::module_& m) {
  py::class_<optim::ExponentialDecay>(m, "ExponentialDecay")
      .def(py::init([](double initial, int64_t decay_steps, double decay_rate, bool staircase) {
             optim::ExponentialDecay s{initial, decay_steps, decay_rate, staircase};
             (void)optim::LearningRate(s);  // validates
             return s;
           }),
           "initial_learning_rate"_a, "decay_steps"_a, "decay_rate"_a, "staircase"_a = false)
      .def("__call__", py::overload_cast<int64_t>(&optim::ExponentialDecay::operator(), py::const_),
           "step"_a);
  py::class_<optim::CosineDecay>(m, "CosineDecay")
      .def(py::init([](double initial, int64_t decay_steps, double alpha) {
             optim::CosineDecay s{initial, decay_steps, alpha};
             (void)optim::LearningRate(s);
             return s;
           }),
           "initial_learning_rate"_a, "decay_steps"_a, "alpha"_a = 0.0)
      .def("__call__", py::overload_cast<int64_t>(&optim::CosineDecay::operator(), py::const_), "step"_a);

  py::class_<optim::Optimizer, std::shared_ptr<optim::Optimizer>>(m, "Optimizer")
      .def("apply_gradients", &apply_gradients, "grads_and_vars"_a)
      .def(
          "minimize",
          // Without var_list: every trainable variable the loss reads, as TensorFlow's eager optimizers.
          [](optim::Optimizer& opt, py::function loss, std::optional<std::vector<ef::Variable>> var_list) {
            if (!var_list) return opt.minimize([&] { return to_tensor(loss()); }, kPython);
            return opt.minimize([&] { return to_tensor(loss()); }, *var_list, kPython);
          },
          "loss"_a, "var_list"_a = py::none())
      // A variable, as TensorFlow's: inside ef.function it is read when the function runs.
      .def_property_readonly("iterations", &optim::Optimizer::iterations_variable)
      .def_property("learning_rate", &optim::Optimizer::current_learning_rate,
                    &optim::Optimizer::set_learning_rate)
      .def_property_readonly("name", &optim::Optimizer::name)
      .def(
          "get_slot",
          [](const optim::Optimizer& opt, const ef::Variable& v, const std::string& name) {
            return opt.slot(v, name);
          },
          "var"_a, "slot_name"_a)
      .def("variables", &optim::Optimizer::slot_variables)
      // Dynamic loss scaling (Note [dynamic loss scaling]); TensorFlow's LossScaleOptimizer
      // surface: ef.keras.mixed_precision.LossScaleOptimizer turns it on.
      .def("_enable_loss_scaling",
           [](optim::Optimizer& opt, double initial_scale, int64_t growth_steps) {
             opt.enable_loss_scaling({initial_scale, growth_steps});
           })
      .def_property_readonly("dynamic", &optim::Optimizer::loss_scaling)
      .def_property_readonly("inner_optimizer", [](py::object self) { return self; })
      .def_property_readonly("loss_scale", &optim::Optimizer::loss_scale)
      .def_property_readonly("dynamic_counter",
                             [](const optim::Optimizer& opt) {
                               auto state = opt.loss_scale_state();
                               return state ? state->good_steps : int64_t{0};
                             })
      .def(
          "get_scaled_loss",
          [](const optim::Optimizer& opt, TensorArg loss) { return opt.get_scaled_loss(loss.value); },
          "loss"_a)
      .def(
          "get_unscaled_gradients",
          [](const optim::Optimizer& opt, py::iterable grads) {
            std::vector<ef::Tensor> in;
            for (py::handle g : grads) in.push_back(g.is_none() ? ef::Tensor() : to_tensor(g));
            py::list out;
            for (const ef::Tensor& g : opt.get_unscaled_gradients(in))
              out.append(g.defined() ? py::cast(g) : py::none());
            return out;
          },
          "grads"_a);

  py::class_<optim::SGD, optim::Optimizer, std::shared_ptr<optim::SGD>>(m, "SGD").def(
      py::init([](py::handle lr, double momentum, bool nesterov, std::optional<double> clipnorm,
                  std::optional<double> global_clipnorm, std::optional<double> clipvalue) {
        return new optim::SGD(learning_rate_of(lr), momentum, nesterov, clipping_of(clipnorm, global_clipnorm, clipvalue));
      }),
      "learning_rate"_a = 0.01, "momentum"_a = 0.0, "nesterov"_a = false, EFPY_CLIPPING_ARGS);
  py::class_<optim::Adam, optim::Optimizer, std::shared_ptr<optim::Adam>>(m, "Adam").def(
      py::init([](py::handle lr, double beta_1, double beta_2, double epsilon, bool amsgrad,
                  std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                  std::optional<double> clipvalue) {
        return new optim::Adam(learning_rate_of(lr), beta_1, beta_2, epsilon, amsgrad,
                               clipping_of(clipnorm, global_clipnorm, clipvalue));
      }),
      "learning_rate"_a = 0.001, "beta_1"_a = 0.9, "beta_2"_a = 0.999, "epsilon"_a = 1e-7,
      "amsgrad"_a = false, EFPY_CLIPPING_ARGS);
  py::class_<optim::AdamW, optim::Adam, std::shared_ptr<optim::AdamW>>(m, "AdamW")
      .def(py::init([](py::handle lr, double weight_decay, double beta_1, double beta_2, double epsilon,
                       bool amsgrad, std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                       std::optional<double> clipvalue) {
             return new optim::AdamW(learning_rate_of(lr), weight_decay, beta_1, beta_2, epsilon, amsgrad,
                                     clipping_of(clipnorm, global_clipnorm, clipvalue));
           }),
           "learning_rate"_a = 0.001, "weight_decay"_a = 0.004, "beta_1"_a = 0.9, "beta_2"_a = 0.999,
           "epsilon"_a = 1e-7, "amsgrad"_a = false, EFPY_CLIPPING_ARGS);
  py::class_<optim::RMSprop, optim::Optimizer, std::shared_ptr<optim::RMSprop>>(m, "RMSprop")
      .def(py::init([](py::handle lr, double rho, double momentum, double epsilon, bool centered,
                       std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                       std::optional<double> clipvalue) {
             return new optim::RMSprop(learning_rate_of(lr), rho, momentum, epsilon, centered,
                                       clipping_of(clipnorm, global_clipnorm, clipvalue));
           }),
           "learning_rate"_a = 0.001, "rho"_a = 0.9, "momentum"_a = 0.0, "epsilon"_a = 1e-7,
           "centered"_a = false, EFPY_CLIPPING_ARGS);
  py::class_<optim::Adagrad, optim::Optimizer, std::shared_ptr<optim::Adagrad>>(m, "Adagrad")
      .def(py::init([](py::handle lr, double initial_accumulator_value, double epsilon,
                       std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                       std::optional<double> clipvalue) {
             return new optim::Adagrad(learning_rate_of(lr), initial_accumulator_value, epsilon,
                                       clipping_of(clipnorm, global_clipnorm, clipvalue));
           }),
           "learning_rate"_a = 0.001, "initial_accumulator_value"_a = 0.1, "epsilon"_a = 1e-7,
           EFPY_CLIPPING_ARGS);

  // torch.optim.LBFGS' options under their PyTorch names, except learning_rate (lr).
  py::class_<optim::LBFGS>(m, "LBFGS")
      .def(py::init([](std::vector<ef::Variable> var_list, double lr, int64_t max_iter, std::optional<int64_t> max_eval,
                       double tolerance_grad, double tolerance_change, int64_t history_size,
                       std::optional<std::string> line_search_fn) {
             optim::LBFGSOptions o;
             o.learning_rate = lr;
             o.max_iter = max_iter;
             o.max_eval = max_eval;
             o.tolerance_grad = tolerance_grad;
             o.tolerance_change = tolerance_change;
             o.history_size = history_size;
             o.line_search_fn = line_search_fn.value_or("");
             return new optim::LBFGS(std::move(var_list), o, kPython);
           }),
           "var_list"_a, "learning_rate"_a = 1.0, "max_iter"_a = 20, "max_eval"_a = py::none(),
           "tolerance_grad"_a = 1e-7, "tolerance_change"_a = 1e-9, "history_size"_a = 100,
           "line_search_fn"_a = py::none())
      .def(
          "step",
          [](optim::LBFGS& lbfgs, py::function closure) {
            return lbfgs.step([&] { return to_tensor(closure()); }, kPython);
          },
          "closure"_a)
      .def_property_readonly("iterations", &optim::LBFGS::iterations)
      .def_property_readonly("function_evaluations", &optim::LBFGS::function_evaluations)
      .def_property_readonly("history_length", &optim::LBFGS::history_length)
      .def_property_readonly("variables", &optim::LBFGS::variables)
      .def("state", &optim::LBFGS::state)  // Note [LBFGS state]
      .def(
          "restore_state",
          [](optim::LBFGS& lbfgs, const std::map<std::string, ef::Tensor>& state) {
            lbfgs.restore_state(state, "<state>", kPython);
          },
          "state"_a);

  m.def("clip_by_norm", [](TensorArg t, double clip_norm, py::handle) { return ef::clip_by_norm(t, clip_norm, kPython); },
        "t"_a, "clip_norm"_a, "name"_a = py::none());
  m.def(
      "clip_by_global_norm",
      [](py::iterable t_list, double clip_norm, py::handle) {
        std::vector<ef::Tensor> tensors;
        for (py::handle t : t_list) tensors.push_back(t.is_none() ? ef::Tensor() : to_tensor(t));
        auto [clipped, norm] = ef::clip_by_global_norm(tensors, clip_norm, kPython);
        py::list out;
        for (const ef::Tensor& t : clipped) out.append(t.defined() ? py::cast(t) : py::none());
        return py::make_tuple(out, norm);
      },
      "t_list"_a, "clip_norm"_a, "name"_a = py::none());
}

}  // namespace efpy
