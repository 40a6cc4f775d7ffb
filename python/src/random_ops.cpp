// Random ops (ef.random), with TensorFlow's argument names and seeds.
#include "bindings.h"
#include "convert.h"

namespace efpy {
namespace {

using namespace pybind11::literals;
constexpr ef::CallSite kPython{};

}  // namespace

void bind_random_ops(py::module_& m) {
  // ---- random ----
  m.def(
      "set_seed", [](py::handle seed) { ef::random::set_seed(seed_of(seed)); },
      R"doc(Sets the global random seed and restarts every random stream.

As in TensorFlow 2: after set_seed, the program's sequence of random ops (and
seeded initializers and dropout) repeats; ops given their own seed use the
(global seed, op seed) pair. None clears the global seed, making unseeded ops
nondeterministic again.

>>> ef.random.set_seed(7); a = ef.random.uniform([2])
>>> ef.random.set_seed(7); b = ef.random.uniform([2])
>>> bool(ef.reduce_all(ef.equal(a, b)))
True

Args:
  seed: An int, or None.
)doc",
      "seed"_a);
  m.def(
      "random_uniform",
      [](ShapeArg shape, py::handle minval, py::handle maxval, DTypeArg dtype, py::handle seed, py::handle) {
        std::optional<ef::TensorOrScalar> hi;
        if (!maxval.is_none()) hi = to_operand(maxval);
        return ef::random::uniform(shape, to_operand(minval), hi, dtype.value.value_or(ef::DType::Float32),
                                   seed_of(seed), kPython);
      },
      R"doc(Draws uniformly distributed values in [minval, maxval).

Float dtypes: maxval defaults to 1. Integer dtypes: maxval is required and
excluded. Numbers come from Philox; element i depends only on the seeds, the
stream position and i, never on the thread count.

>>> x = ef.random.uniform([2, 3], 0, 10, dtype=ef.int32, seed=3)
>>> x.shape, x.dtype
(TensorShape([2, 3]), ef.int32)

Args:
  shape: A list or tuple of non-negative ints (or a 1-D integer tensor).
  minval: The lower bound, a number or 0-d tensor (default 0).
  maxval: The upper bound (excluded); None means 1 for float dtypes.
  dtype: A float dtype (default float32), int32 or int64.
  seed: None, or an int op seed (see ef.random.set_seed).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`.

Raises:
  InvalidArgumentError: maxval missing for an integer dtype, minval >= maxval
    for integers (minval > maxval for floats), a bound not finite or not
    fitting the dtype, or a bad shape.
)doc",
      "shape"_a, "minval"_a = 0, "maxval"_a = py::none(), "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
  m.def(
      "random_normal",
      [](ShapeArg shape, double mean, double stddev, DTypeArg dtype, py::handle seed, py::handle) {
        return ef::random::normal(shape, mean, stddev, dtype.value.value_or(ef::DType::Float32),
                                  seed_of(seed), kPython);
      },
      R"doc(Draws normally distributed values with the given mean and standard deviation.

>>> x = ef.random.normal([2, 3], mean=1., stddev=0.5, seed=1)
>>> x.shape, x.dtype
(TensorShape([2, 3]), ef.float32)

Args:
  shape: A list or tuple of non-negative ints (or a 1-D integer tensor).
  mean: A Python float (default 0).
  stddev: A finite, non-negative Python float (default 1).
  dtype: A float dtype (default float32).
  seed: None, or an int op seed (see ef.random.set_seed).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`.

Raises:
  InvalidArgumentError: a non-float dtype, a negative or non-finite stddev, or a
    bad shape.
)doc",
      "shape"_a, "mean"_a = 0.0, "stddev"_a = 1.0, "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
  m.def(
      "truncated_normal",
      [](ShapeArg shape, double mean, double stddev, DTypeArg dtype, py::handle seed, py::handle) {
        return ef::random::truncated_normal(shape, mean, stddev, dtype.value.value_or(ef::DType::Float32),
                                            seed_of(seed), kPython);
      },
      R"doc(Draws normal values, redrawing those more than 2 stddev from the mean.

As TensorFlow's truncated_normal: every value lies within [mean - 2 * stddev,
mean + 2 * stddev].

>>> x = ef.random.truncated_normal([1000], stddev=2., seed=1)
>>> bool(ef.reduce_max(ef.abs(x)) <= 4.)
True

Args:
  shape: A list or tuple of non-negative ints (or a 1-D integer tensor).
  mean: A Python float (default 0).
  stddev: A finite, non-negative Python float (default 1).
  dtype: A float dtype (default float32).
  seed: None, or an int op seed (see ef.random.set_seed).
  name: Ignored (TensorFlow compatibility).

Returns:
  A Tensor of `dtype` and `shape`.

Raises:
  InvalidArgumentError: a non-float dtype, a negative or non-finite stddev, or a
    bad shape.
)doc",
      "shape"_a, "mean"_a = 0.0, "stddev"_a = 1.0, "dtype"_a = py::none(), "seed"_a = py::none(),
      "name"_a = py::none());
}

}  // namespace efpy
