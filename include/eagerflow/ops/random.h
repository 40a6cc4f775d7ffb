// Random tensors, with TensorFlow 2's seed semantics.
//
//   ef::random::set_seed(42);                   // the whole program is now reproducible
//   ef::Tensor w = ef::random::normal({784, 10}, 0.0, 0.05);
//   ef::Tensor u = ef::random::uniform({3}, 0, 10, ef::DType::Int32, /*seed=*/7);
//
// Note [random seeds]: every random op draws from the stream of a (global seed, op
// seed) pair, as in TensorFlow:
//   - global seed set, no op seed: the op seed is taken from a counter that
//     set_seed resets, so a program's sequence of random ops repeats after set_seed;
//   - op seed given, no global seed: the global seed is a fixed default;
//   - neither: both seeds are drawn nondeterministically;
//   - calling an op again with the same pair continues that pair's stream (new
//     values), and set_seed restarts every stream.
// Numbers come from Philox4x32-10 (src/core/philox.h); element i of an output depends
// only on the resolved key, the stream position and i, never on the thread count.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "eagerflow/core/tensor.h"
#include "eagerflow/ops/scalar.h"

namespace ef::random {

// Sets the global seed and restarts every random stream (Note [random seeds]);
// std::nullopt clears it, making unseeded ops nondeterministic again.
void set_seed(std::optional<int64_t> seed);

// Uniform values in [minval, maxval). Float dtypes: maxval defaults to 1. Int32/int64:
// maxval is required and exclusive. Throws InvalidArgumentError if minval >= maxval
// (for ints), a bound is not finite or does not fit the dtype, or the shape is invalid.
Tensor uniform(const Shape& shape, const TensorOrScalar& minval = 0,
               const std::optional<TensorOrScalar>& maxval = std::nullopt, DType dtype = DType::Float32,
               std::optional<int64_t> seed = std::nullopt, CallSite where = CallSite::current());

// Normally distributed values (float32/float64). stddev must be >= 0 and finite.
Tensor normal(const Shape& shape, double mean = 0.0, double stddev = 1.0, DType dtype = DType::Float32,
              std::optional<int64_t> seed = std::nullopt, CallSite where = CallSite::current());

// Normal values whose magnitude is at most 2 stddev from the mean: draws beyond are
// redrawn (TensorFlow's truncated_normal). Same arguments and errors as normal.
Tensor truncated_normal(const Shape& shape, double mean = 0.0, double stddev = 1.0,
                        DType dtype = DType::Float32, std::optional<int64_t> seed = std::nullopt,
                        CallSite where = CallSite::current());

// ---- Stateless variants (tf.random.stateless_*) ----
// The values depend only on `seed`, the shape and the other arguments: every call with
// the same arguments returns the same tensor, whatever set_seed says. Arguments and
// errors as the stateful ops above.
using StatelessSeed = std::array<int64_t, 2>;
Tensor stateless_uniform(const Shape& shape, StatelessSeed seed, const TensorOrScalar& minval = 0,
                         const std::optional<TensorOrScalar>& maxval = std::nullopt, DType dtype = DType::Float32,
                         CallSite where = CallSite::current());
Tensor stateless_normal(const Shape& shape, StatelessSeed seed, double mean = 0.0, double stddev = 1.0,
                        DType dtype = DType::Float32, CallSite where = CallSite::current());
Tensor stateless_truncated_normal(const Shape& shape, StatelessSeed seed, double mean = 0.0, double stddev = 1.0,
                                  DType dtype = DType::Float32, CallSite where = CallSite::current());

}  // namespace ef::random
