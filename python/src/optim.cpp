// ef.optimizers: the optimizers, learning-rate schedules and clipping (Keras' names).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "py_layer.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
namespace optim = ef::optim;
constexpr ef::CallSite kPython{};

// A float, a bound schedule, or any Python callable of the step.
optim::LearningRate learning_rate_of(py::handle lr) {
  if (py::isinstance<optim::ExponentialDecay>(lr)) return lr.cast<optim::ExponentialDecay>();
  if (py::isinstance<optim::CosineDecay>(lr)) return lr.cast<optim::CosineDecay>();
  if (py::isinstance<optim::PiecewiseConstantDecay>(lr)) return lr.cast<optim::PiecewiseConstantDecay>();
  if (py::isinstance<optim::PolynomialDecay>(lr)) return lr.cast<optim::PolynomialDecay>();
  if (py::isinstance<optim::InverseTimeDecay>(lr)) return lr.cast<optim::InverseTimeDecay>();
  if (py::isinstance<optim::CosineDecayRestarts>(lr)) return lr.cast<optim::CosineDecayRestarts>();
  if (PyFloat_Check(lr.ptr()) || PyLong_Check(lr.ptr())) return lr.cast<double>();
  // NumPy scalars and 0-d tensors, as Keras takes them: their value. (A Variable is
  // refused below rather than frozen at its value: assigning it later would change nothing.)
  if (py::isinstance(lr, py::module_::import("numpy").attr("number")))
    return py::float_(py::reinterpret_borrow<py::object>(lr)).cast<double>();
  if (py::isinstance<ef::Tensor>(lr) && lr.cast<ef::Tensor>().rank() == 0)
    return py::float_(py::reinterpret_borrow<py::object>(lr)).cast<double>();
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

// Keyword-only: Keras puts weight_decay (which these optimizers do not take) before them,
// so a Keras call passing it by position would otherwise set clipnorm.
#define EFPY_CLIPPING_ARGS \
  py::kw_only(), "clipnorm"_a = py::none(), "global_clipnorm"_a = py::none(), "clipvalue"_a = py::none()

}  // namespace

void bind_optim(py::module_& m) {
  py::class_<optim::ExponentialDecay>(
      m, "ExponentialDecay", R"doc(A learning rate that decays exponentially with the optimizer's step.

lr(step) = initial_learning_rate * decay_rate ** (step / decay_steps), the
exponent rounded down when `staircase`. Pass it as an optimizer's learning_rate
(the step is its iterations count); calling it gives the rate at a step.

>>> schedule = ef.optimizers.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
>>> schedule(0), schedule(10)
(0.1, 0.05)

Args:
  initial_learning_rate: The rate at step 0, a float.
  decay_steps: A positive int.
  decay_rate: The factor per decay_steps steps, a float.
  staircase: If True, decay in discrete steps (integer exponent).

Raises:
  InvalidArgumentError: decay_steps <= 0.
)doc")
      .def(py::init([](double initial, int64_t decay_steps, double decay_rate, bool staircase) {
             optim::ExponentialDecay s{initial, decay_steps, decay_rate, staircase};
             (void)optim::LearningRate(s);  // validates
             return s;
           }),
           "initial_learning_rate"_a, "decay_steps"_a, "decay_rate"_a, "staircase"_a = false)
      .def("__call__", py::overload_cast<int64_t>(&optim::ExponentialDecay::operator(), py::const_),
           "The learning rate (a float) at optimizer step `step` (an int).", "step"_a);
  py::class_<optim::CosineDecay>(
      m, "CosineDecay",
      R"doc(A learning rate that follows a cosine from its initial value down to alpha times it.

lr(step) = initial * ((1 - alpha) * (1 + cos(pi * min(step, decay_steps) /
decay_steps)) / 2 + alpha): flat at alpha * initial after decay_steps. Pass it as
an optimizer's learning_rate; calling it gives the rate at a step.

>>> schedule = ef.optimizers.CosineDecay(1.0, decay_steps=10, alpha=0.1)
>>> schedule(0), schedule(5), schedule(20)
(1.0, 0.55, 0.1)

Args:
  initial_learning_rate: The rate at step 0, a float.
  decay_steps: A positive int.
  alpha: The final rate as a fraction of the initial one (default 0).
  warmup_target: With warmup_steps, the rate first rises linearly from
    initial_learning_rate to warmup_target over warmup_steps, then the cosine
    decays from warmup_target (Keras 3's warmup). None: no warmup.
  warmup_steps: The warmup's length in steps (default 0).

Raises:
  InvalidArgumentError: decay_steps <= 0 or warmup_steps < 0.
)doc")
      .def(py::init([](double initial, int64_t decay_steps, double alpha, std::optional<double> warmup_target,
                       int64_t warmup_steps) {
             optim::CosineDecay s{initial, decay_steps, alpha, warmup_target, warmup_steps};
             (void)optim::LearningRate(s);
             return s;
           }),
           "initial_learning_rate"_a, "decay_steps"_a, "alpha"_a = 0.0, "warmup_target"_a = py::none(),
           "warmup_steps"_a = 0)
      .def("__call__", py::overload_cast<int64_t>(&optim::CosineDecay::operator(), py::const_),
           "The learning rate (a float) at optimizer step `step` (an int).", "step"_a);
  py::class_<optim::PiecewiseConstantDecay>(m, "PiecewiseConstantDecay",
                                            R"doc(A learning rate constant between step boundaries.

values[0] while step <= boundaries[0], values[i] while boundaries[i-1] < step <=
boundaries[i], values[-1] after the last boundary (Keras' PiecewiseConstantDecay).

>>> schedule = ef.optimizers.schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
>>> schedule(10), schedule(11), schedule(50)
(1.0, 0.5, 0.1)

Args:
  boundaries: Increasing ints (steps).
  values: Floats, one more than boundaries.

Raises:
  InvalidArgumentError: the wrong number of values, or boundaries that do not increase.
)doc")
      .def(py::init([](std::vector<int64_t> boundaries, std::vector<double> values) {
             optim::PiecewiseConstantDecay s{std::move(boundaries), std::move(values)};
             (void)optim::LearningRate(s);
             return s;
           }),
           "boundaries"_a, "values"_a)
      .def("__call__", py::overload_cast<int64_t>(&optim::PiecewiseConstantDecay::operator(), py::const_),
           "The learning rate (a float) at optimizer step `step` (an int).", "step"_a);
  py::class_<optim::PolynomialDecay>(m, "PolynomialDecay",
                                     R"doc(A learning rate that falls polynomially to an end value.

lr(step) = (initial - end) * (1 - s / decay_steps) ** power + end with
s = min(step, decay_steps); with cycle=True, decay_steps grows to the first
multiple of itself at or after the step instead (Keras' PolynomialDecay).

>>> schedule = ef.optimizers.schedules.PolynomialDecay(0.1, decay_steps=10, end_learning_rate=0.0)
>>> round(schedule(5), 6), schedule(20)
(0.05, 0.0)

Args:
  initial_learning_rate: The rate at step 0.
  decay_steps: A positive int.
  end_learning_rate: The rate from decay_steps on (default 1e-4).
  power: The polynomial's power (default 1: linear).
  cycle: Restart the decay every decay_steps.

Raises:
  InvalidArgumentError: decay_steps <= 0.
)doc")
      .def(py::init([](double initial, int64_t decay_steps, double end, double power, bool cycle) {
             optim::PolynomialDecay s{initial, decay_steps, end, power, cycle};
             (void)optim::LearningRate(s);
             return s;
           }),
           "initial_learning_rate"_a, "decay_steps"_a, "end_learning_rate"_a = 1e-4, "power"_a = 1.0,
           "cycle"_a = false)
      .def("__call__", py::overload_cast<int64_t>(&optim::PolynomialDecay::operator(), py::const_),
           "The learning rate (a float) at optimizer step `step` (an int).", "step"_a);
  py::class_<optim::InverseTimeDecay>(m, "InverseTimeDecay",
                                      R"doc(A learning rate inversely proportional to time.

lr(step) = initial / (1 + decay_rate * step / decay_steps), the quotient rounded
down when `staircase` (Keras' InverseTimeDecay).

>>> schedule = ef.optimizers.schedules.InverseTimeDecay(0.5, decay_steps=4, decay_rate=2.0)
>>> schedule(0), schedule(4)
(0.5, 0.16666666666666666)

Args:
  initial_learning_rate: The rate at step 0.
  decay_steps: A positive int.
  decay_rate: A float.
  staircase: Decay in discrete steps.

Raises:
  InvalidArgumentError: decay_steps <= 0.
)doc")
      .def(py::init([](double initial, int64_t decay_steps, double decay_rate, bool staircase) {
             optim::InverseTimeDecay s{initial, decay_steps, decay_rate, staircase};
             (void)optim::LearningRate(s);
             return s;
           }),
           "initial_learning_rate"_a, "decay_steps"_a, "decay_rate"_a, "staircase"_a = false)
      .def("__call__", py::overload_cast<int64_t>(&optim::InverseTimeDecay::operator(), py::const_),
           "The learning rate (a float) at optimizer step `step` (an int).", "step"_a);
  py::class_<optim::CosineDecayRestarts>(m, "CosineDecayRestarts",
                                         R"doc(Cosine decay with warm restarts (SGDR).

A cosine from the initial rate down to alpha times it over first_decay_steps,
then again over t_mul times as many steps, each period's peak m_mul times the
previous one's (Keras' CosineDecayRestarts; PyTorch's CosineAnnealingWarmRestarts
with eta_min = alpha * initial when m_mul is 1).

>>> schedule = ef.optimizers.schedules.CosineDecayRestarts(1.0, first_decay_steps=4)
>>> schedule(0), schedule(2), schedule(4)
(1.0, 0.5, 1.0)

Args:
  initial_learning_rate: The rate at step 0.
  first_decay_steps: The first period's length, a positive int.
  t_mul: How much longer each period is than the one before (default 2).
  m_mul: How much lower each period's peak is than the one before (default 1).
  alpha: The lowest rate as a fraction of the initial one (default 0).

Raises:
  InvalidArgumentError: first_decay_steps <= 0 or t_mul <= 0.
)doc")
      .def(py::init([](double initial, int64_t first, double t_mul, double m_mul, double alpha) {
             optim::CosineDecayRestarts s{initial, first, t_mul, m_mul, alpha};
             (void)optim::LearningRate(s);
             return s;
           }),
           "initial_learning_rate"_a, "first_decay_steps"_a, "t_mul"_a = 2.0, "m_mul"_a = 1.0,
           "alpha"_a = 0.0)
      .def("__call__", py::overload_cast<int64_t>(&optim::CosineDecayRestarts::operator(), py::const_),
           "The learning rate (a float) at optimizer step `step` (an int).", "step"_a);

  py::class_<optim::Optimizer, std::shared_ptr<optim::Optimizer>>(
      m, "Optimizer", R"doc(The base class of the optimizers (SGD, Adam, AdamW, RMSprop, Adagrad).

Keras' interface with PyTorch's update rules, so a run matches torch.optim step
for step given the same hyperparameters. Per-variable state lives in slot
variables (Adam's "m" and "v"), created at a variable's first update; the step
count, the slots and a constant learning rate are variables, so a training step
traced by ef.function reads and advances them on every call. It cannot be
constructed itself: make one of its subclasses.

>>> v = ef.Variable([1., 2.])
>>> opt = ef.optimizers.SGD(learning_rate=0.1)
>>> opt.apply_gradients([(ef.constant([1., 1.]), v)])
>>> v.numpy()
array([0.9, 1.9], dtype=float32)
)doc")
      .def("apply_gradients", &apply_gradients,
           R"doc(Applies one update step to the variables from their gradients.

Gradients are clipped first when the optimizer was made with clipnorm,
global_clipnorm or clipvalue (keyword arguments; at most one of them, as in
Keras; 0 means no clipping).

Args:
  grads_and_vars: An iterable of (gradient, Variable) pairs, e.g.
    zip(grads, variables); a None gradient skips its variable.

Returns:
  None eagerly (the step is done); in graph mode the training Operation, for
  Session.run.

Raises:
  InvalidArgumentError: a gradient whose dtype or shape differs from its
    variable's, or no variable has a gradient (checked before anything changes).
)doc",
           "grads_and_vars"_a)
      .def(
          "minimize",
          // Without var_list: every trainable variable the loss reads, as TensorFlow's eager optimizers.
          [](optim::Optimizer& opt, py::function loss, std::optional<std::vector<ef::Variable>> var_list) {
            if (!var_list) return opt.minimize([&] { return to_tensor(loss()); }, kPython);
            return opt.minimize([&] { return to_tensor(loss()); }, *var_list, kPython);
          },
          R"doc(Computes loss() under a GradientTape and applies the gradients to var_list.

>>> v = ef.Variable([1., 2.])
>>> ef.optimizers.SGD(0.5).minimize(lambda: ef.reduce_sum(v * v), var_list=[v]).numpy()
array(5., dtype=float32)
>>> v.numpy()
array([0., 0.], dtype=float32)

Args:
  loss: A function of no arguments returning the loss tensor.
  var_list: The Variables to train; None means every trainable variable loss()
    reads (as TensorFlow's eager optimizers).

Returns:
  The loss tensor, computed before the update.

Raises:
  InvalidArgumentError: no variable gets a gradient.
  FailedPreconditionError: in graph mode (use apply_gradients and Session.run).
)doc",
          "loss"_a, "var_list"_a = py::none())
      // A variable, as TensorFlow's: inside ef.function it is read when the function runs.
      .def(
          "get_config", [](const optim::Optimizer& self) { return dict_of_config(self.get_config()); },
          "The hyperparameters, as Keras' get_config (learning_rate only when it is a constant; "
          "saved models keep them).")
      .def_property_readonly("iterations", &optim::Optimizer::iterations_variable,
                             "The number of updates applied so far: an int64 scalar Variable (read it "
                             "inside functions, where it advances on every call).")
      .def_property("learning_rate", &optim::Optimizer::current_learning_rate,
                    &optim::Optimizer::set_learning_rate,
                    "The learning rate the next update uses, a float. Assignable when the optimizer was made "
                    "with a constant rate (InvalidArgumentError for a schedule); functions already traced "
                    "see the new value.")
      .def_property_readonly("name", &optim::Optimizer::name,
                             "The optimizer's name (\"SGD\", \"Adam\", ...).")
      .def(
          "get_slot",
          [](const optim::Optimizer& opt, const ef::Variable& v, const std::string& name) {
            return opt.slot(v, name);
          },
          R"doc(Returns the slot variable `slot_name` of `var` (e.g. Adam's "m" or "v").

Slots: SGD "momentum" (with momentum); Adam and AdamW "m", "v" (and "vhat"
with amsgrad); RMSprop "rms" (and "mg" when centered, "momentum" with momentum);
Adagrad "accumulator".

Args:
  var: A Variable this optimizer has updated.
  slot_name: The slot's name.

Returns:
  A Variable of var's dtype and shape.

Raises:
  NotFoundError: var has no such slot (yet).
)doc",
          "var"_a, "slot_name"_a)
      .def("variables", &optim::Optimizer::slot_variables,
           "The slot variables created so far, in creation order (named \"<variable>/<slot>\").")
      // Dynamic loss scaling (Note [dynamic loss scaling]); TensorFlow's LossScaleOptimizer
      // surface: ef.keras.mixed_precision.LossScaleOptimizer turns it on.
      .def("_enable_loss_scaling",
           [](optim::Optimizer& opt, double initial_scale, int64_t growth_steps) {
             opt.enable_loss_scaling({initial_scale, growth_steps});
           })
      .def_property_readonly(
          "dynamic", &optim::Optimizer::loss_scaling,
          "True when dynamic loss scaling is on (keras.mixed_precision.LossScaleOptimizer).")
      .def_property_readonly(
          "inner_optimizer", [](py::object self) { return self; },
          "The optimizer itself (LossScaleOptimizer turns loss scaling on in place).")
      .def_property_readonly("loss_scale", &optim::Optimizer::loss_scale,
                             "The current loss scale, a float (1.0 without loss scaling).")
      .def_property_readonly(
          "dynamic_counter",
          [](const optim::Optimizer& opt) {
            auto state = opt.loss_scale_state();
            return state ? state->good_steps : int64_t{0};
          },
          "Finite steps in a row since the loss scale last changed (0 without loss scaling).")
      .def(
          "get_scaled_loss",
          [](const optim::Optimizer& opt, TensorArg loss) { return opt.get_scaled_loss(loss.value); },
          R"doc(Returns loss * loss_scale (computed in float32 at least); the loss itself without loss scaling.

Args:
  loss: A float tensor-like.

Returns:
  A Tensor.
)doc",
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
          R"doc(Returns each gradient divided by loss_scale (in its own dtype); None stays None.

Without loss scaling the gradients are returned as they are.

Args:
  grads: An iterable of gradient tensors (or None).

Returns:
  A list of Tensors (or None).
)doc",
          "grads"_a);

  py::class_<optim::SGD, optim::Optimizer, std::shared_ptr<optim::SGD>>(
      m, "SGD", R"doc(Gradient descent with optional (Nesterov) momentum, PyTorch's update rule.

buf = momentum * buf + g; p -= lr * (g + momentum * buf if nesterov else buf)
(without momentum: p -= lr * g).

>>> opt = ef.optimizers.SGD(learning_rate=0.1, momentum=0.9)

Args:
  learning_rate: A float, a schedule (ExponentialDecay, CosineDecay), or a
    Python function of the step (an int eagerly; an int64 tensor inside graphs
    and functions, where it must use ops).
  momentum: A float >= 0 (default 0).
  nesterov: Whether to use Nesterov momentum (default False).
  clipnorm: None, or clip each gradient to this L2 norm before the update.
  global_clipnorm: None, or clip all gradients together to this global L2 norm.
  clipvalue: None, or clip each gradient element to [-clipvalue, clipvalue].
)doc")
      .def(py::init([](py::handle lr, double momentum, bool nesterov, std::optional<double> clipnorm,
                       std::optional<double> global_clipnorm, std::optional<double> clipvalue) {
             return new optim::SGD(learning_rate_of(lr), momentum, nesterov,
                                   clipping_of(clipnorm, global_clipnorm, clipvalue));
           }),
           "learning_rate"_a = 0.01, "momentum"_a = 0.0, "nesterov"_a = false, EFPY_CLIPPING_ARGS);
  py::class_<optim::Adam, optim::Optimizer, std::shared_ptr<optim::Adam>>(
      m, "Adam", R"doc(The Adam optimizer (Kingma and Ba), PyTorch's update rule with Keras' defaults.

m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2 (amsgrad: the running maximum of
v); p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + epsilon).

>>> opt = ef.optimizers.Adam(learning_rate=1e-3)

Args:
  learning_rate: A float, a schedule (ExponentialDecay, CosineDecay), or a
    Python function of the step (an int eagerly; an int64 tensor inside graphs
    and functions, where it must use ops).
  beta_1: Decay of the first moment (default 0.9).
  beta_2: Decay of the second moment (default 0.999).
  epsilon: Added to the denominator (default 1e-7).
  amsgrad: Whether to use the AMSGrad variant (default False).
  clipnorm: None, or clip each gradient to this L2 norm before the update.
  global_clipnorm: None, or clip all gradients together to this global L2 norm.
  clipvalue: None, or clip each gradient element to [-clipvalue, clipvalue].
)doc")
      .def(py::init([](py::handle lr, double beta_1, double beta_2, double epsilon, bool amsgrad,
                       std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                       std::optional<double> clipvalue) {
             return new optim::Adam(learning_rate_of(lr), beta_1, beta_2, epsilon, amsgrad,
                                    clipping_of(clipnorm, global_clipnorm, clipvalue));
           }),
           "learning_rate"_a = 0.001, "beta_1"_a = 0.9, "beta_2"_a = 0.999, "epsilon"_a = 1e-7,
           "amsgrad"_a = false, EFPY_CLIPPING_ARGS);
  py::class_<optim::AdamW, optim::Adam, std::shared_ptr<optim::AdamW>>(
      m, "AdamW", R"doc(Adam with decoupled weight decay: p *= 1 - lr * weight_decay, then Adam's update.

>>> opt = ef.optimizers.AdamW(learning_rate=1e-3, weight_decay=0.01)

Args:
  learning_rate: A float, a schedule (ExponentialDecay, CosineDecay), or a
    Python function of the step (an int eagerly; an int64 tensor inside graphs
    and functions, where it must use ops).
  weight_decay: The decay factor per unit learning rate (default 0.004).
  beta_1: Decay of the first moment (default 0.9).
  beta_2: Decay of the second moment (default 0.999).
  epsilon: Added to the denominator (default 1e-7).
  amsgrad: Whether to use the AMSGrad variant (default False).
  clipnorm: None, or clip each gradient to this L2 norm before the update.
  global_clipnorm: None, or clip all gradients together to this global L2 norm.
  clipvalue: None, or clip each gradient element to [-clipvalue, clipvalue].
)doc")
      .def(py::init([](py::handle lr, double weight_decay, double beta_1, double beta_2, double epsilon,
                       bool amsgrad, std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                       std::optional<double> clipvalue) {
             return new optim::AdamW(learning_rate_of(lr), weight_decay, beta_1, beta_2, epsilon, amsgrad,
                                     clipping_of(clipnorm, global_clipnorm, clipvalue));
           }),
           "learning_rate"_a = 0.001, "weight_decay"_a = 0.004, "beta_1"_a = 0.9, "beta_2"_a = 0.999,
           "epsilon"_a = 1e-7, "amsgrad"_a = false, EFPY_CLIPPING_ARGS);
  py::class_<optim::RMSprop, optim::Optimizer, std::shared_ptr<optim::RMSprop>>(
      m, "RMSprop", R"doc(The RMSprop optimizer, PyTorch's update rule with Keras' defaults.

v = rho v + (1 - rho) g^2; the denominator is sqrt(v) + epsilon, or, when
centered, sqrt(v - a^2) + epsilon with a = rho a + (1 - rho) g. With momentum:
buf = momentum buf + g / denominator, p -= lr buf; else p -= lr g / denominator.

>>> opt = ef.optimizers.RMSprop(learning_rate=1e-3, centered=True)

Args:
  learning_rate: A float, a schedule (ExponentialDecay, CosineDecay), or a
    Python function of the step (an int eagerly; an int64 tensor inside graphs
    and functions, where it must use ops).
  rho: Decay of the squared-gradient average (default 0.9).
  momentum: A float >= 0 (default 0).
  epsilon: Added to the denominator (default 1e-7).
  centered: Whether to normalize by the gradient's estimated variance.
  clipnorm: None, or clip each gradient to this L2 norm before the update.
  global_clipnorm: None, or clip all gradients together to this global L2 norm.
  clipvalue: None, or clip each gradient element to [-clipvalue, clipvalue].
)doc")
      .def(py::init([](py::handle lr, double rho, double momentum, double epsilon, bool centered,
                       std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                       std::optional<double> clipvalue) {
             return new optim::RMSprop(learning_rate_of(lr), rho, momentum, epsilon, centered,
                                       clipping_of(clipnorm, global_clipnorm, clipvalue));
           }),
           "learning_rate"_a = 0.001, "rho"_a = 0.9, "momentum"_a = 0.0, "epsilon"_a = 1e-7,
           "centered"_a = false, EFPY_CLIPPING_ARGS);
  py::class_<optim::Adagrad, optim::Optimizer, std::shared_ptr<optim::Adagrad>>(
      m, "Adagrad",
      R"doc(The Adagrad optimizer: per-element rates shrinking with the accumulated squared gradients.

sum = initial_accumulator_value + sum of g^2; p -= lr * g / (sqrt(sum) + epsilon).

>>> opt = ef.optimizers.Adagrad(learning_rate=0.01)

Args:
  learning_rate: A float, a schedule (ExponentialDecay, CosineDecay), or a
    Python function of the step (an int eagerly; an int64 tensor inside graphs
    and functions, where it must use ops).
  initial_accumulator_value: The accumulator's start (default 0.1).
  epsilon: Added to the denominator (default 1e-7).
  clipnorm: None, or clip each gradient to this L2 norm before the update.
  global_clipnorm: None, or clip all gradients together to this global L2 norm.
  clipvalue: None, or clip each gradient element to [-clipvalue, clipvalue].
)doc")
      .def(py::init([](py::handle lr, double initial_accumulator_value, double epsilon,
                       std::optional<double> clipnorm, std::optional<double> global_clipnorm,
                       std::optional<double> clipvalue) {
             return new optim::Adagrad(learning_rate_of(lr), initial_accumulator_value, epsilon,
                                       clipping_of(clipnorm, global_clipnorm, clipvalue));
           }),
           "learning_rate"_a = 0.001, "initial_accumulator_value"_a = 0.1, "epsilon"_a = 1e-7,
           EFPY_CLIPPING_ARGS);

  // torch.optim.LBFGS' options under their PyTorch names, except learning_rate (lr).
  py::class_<optim::LBFGS>(m, "LBFGS",
                           R"doc(Limited-memory BFGS over a fixed list of variables, as torch.optim.LBFGS.

Same options, algorithm and carried state as PyTorch's (in float64 the iterates
agree to rounding). step() takes a closure returning the loss and computes the
gradients itself; ef.train.Checkpoint saves its state, history included.

>>> w = ef.Variable([3., -2.])
>>> lbfgs = ef.optimizers.LBFGS([w], line_search_fn="strong_wolfe")
>>> _ = lbfgs.step(lambda: ef.reduce_sum(ef.square(w - 1.)))
>>> np.allclose(w.numpy(), [1., 1.])
True

Args:
  var_list: The Variables to optimize, all of one float dtype.
  learning_rate: The step length (PyTorch's lr; default 1).
  max_iter: Iterations per step() (default 20).
  max_eval: Loss evaluations per step(); None means max_iter * 5 / 4.
  tolerance_grad: Stop when max |gradient| <= this (default 1e-7).
  tolerance_change: Stop when the step or the loss changes less (default 1e-9).
  history_size: Curvature pairs kept (default 100).
  line_search_fn: None (fixed steps) or "strong_wolfe".

Raises:
  InvalidArgumentError: an empty or repeated variable, variables of different or
    non-float dtypes, or an option out of range.
)doc")
      .def(py::init([](std::vector<ef::Variable> var_list, double lr, int64_t max_iter,
                       std::optional<int64_t> max_eval, double tolerance_grad, double tolerance_change,
                       int64_t history_size, std::optional<std::string> line_search_fn) {
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
          R"doc(Runs up to max_iter L-BFGS iterations (fewer when a stopping test holds).

Args:
  closure: A function of no arguments returning the loss, a one-element float
    tensor; it is called for every evaluation (and differentiated here).

Returns:
  The loss of the first evaluation, at the variables' values on entry (as torch).

Raises:
  InvalidArgumentError: the loss is not a one-element float tensor. An error in
    the first evaluation leaves everything unchanged.
)doc",
          "closure"_a)
      .def_property_readonly("iterations", &optim::LBFGS::iterations,
                             "L-BFGS iterations over all step() calls so far.")
      .def_property_readonly("function_evaluations", &optim::LBFGS::function_evaluations,
                             "Loss evaluations over all step() calls so far.")
      .def_property_readonly("history_length", &optim::LBFGS::history_length,
                             "Curvature pairs held now (at most history_size).")
      .def_property_readonly("variables", &optim::LBFGS::variables, "The Variables being optimized.")
      .def("state", &optim::LBFGS::state,  // Note [LBFGS state]
           "Everything step() carries to the next call, as a dict of name -> Tensor (what checkpoints save).")
      .def(
          "restore_state",
          [](optim::LBFGS& lbfgs, const std::map<std::string, ef::Tensor>& state) {
            lbfgs.restore_state(state, "<state>", kPython);
          },
          R"doc(Replaces the carried state (not the variables' values) with `state`, from state().

Args:
  state: A dict of name -> Tensor as state() returns.

Raises:
  InvalidArgumentError: a key of the wrong dtype or shape, an unknown key, or
    more pairs than history_size (nothing changes).
  NotFoundError: a key is missing.
)doc",
          "state"_a);

  m.def(
      "clip_by_norm",
      [](TensorArg t, double clip_norm, py::handle) { return ef::clip_by_norm(t, clip_norm, kPython); },
      R"doc(Scales t down so that its L2 norm is at most clip_norm (unchanged when it already is).

>>> ef.clip_by_norm([3., 4.], 1.).numpy()
array([0.6, 0.8], dtype=float32)

Args:
  t: A tensor-like of a float dtype.
  clip_norm: A float >= 0, the largest norm.
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of t's dtype and shape.

Raises:
  InvalidArgumentError: a negative clip_norm or a non-float t.
)doc",
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
      R"doc(Scales a list of tensors by clip_norm / max(global_norm, clip_norm).

global_norm is the L2 norm of all the tensors together, so they keep their
relative sizes: what clipping gradients by their global norm needs.

>>> clipped, norm = ef.clip_by_global_norm([[3., 4.], None, [0.]], 1.)
>>> clipped[0].numpy(), clipped[1], norm.numpy()
(array([0.6, 0.8], dtype=float32), None, array(5., dtype=float32))

Args:
  t_list: An iterable of float tensor-likes; None entries (no gradient) stay
    None and do not count.
  clip_norm: A float >= 0.
  name: Ignored (TensorFlow compatibility).

Returns:
  A tuple (list of clipped tensors, global_norm). global_norm is a scalar of
  the tensors' dtype, as TensorFlow (the wider one when they differ; float32
  when every entry is None); the norm and the scale are computed in float64.

Raises:
  InvalidArgumentError: a negative clip_norm or a non-float tensor.
)doc",
      "t_list"_a, "clip_norm"_a, "name"_a = py::none());
}

}  // namespace efpy
