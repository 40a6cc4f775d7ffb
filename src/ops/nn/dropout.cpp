// dropout: a composite over random::uniform, a comparison, cast and multiply (as
// TensorFlow's tf.nn.dropout), so graph mode and gradients need nothing of its own.
#include <cmath>

#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/random.h"
#include "eagerflow/runtime/context.h"

namespace ef {

Tensor dropout(const Tensor& x, double rate, std::optional<int64_t> seed, const std::optional<Shape>& noise_shape,
               CallSite where) {
  try {
    if (!is_floating(x.dtype()))
      fail("dropout: argument 'x' must be float32 or float64, got ", x.dtype());
    if (!(rate >= 0 && rate < 1)) fail("dropout: argument 'rate' must be in [0, 1), got ", rate);
    Shape mask_shape = x.shape();
    if (noise_shape) {
      // Each mask entry is shared along the dimensions where noise_shape is 1, so the
      // mask must broadcast to exactly x's shape.
      validate_shape(*noise_shape, "dropout", "noise_shape");
      bool ok = noise_shape->rank() == x.rank();
      for (int d = 0; ok && d < x.rank(); ++d)
        ok = (*noise_shape)[d] == x.shape()[d] || (*noise_shape)[d] == 1;
      if (!ok)
        fail("dropout: argument 'noise_shape' ", *noise_shape,
             " must have x's rank and, in each dimension, x's size or 1; x has shape ", x.shape());
      mask_shape = *noise_shape;
    }
    if (rate == 0) return x;  // keeps everything; consumes no random numbers
    // keep where u >= rate, which has probability 1 - rate for u uniform in [0, 1).
    const DeviceScope on_input(x.device());  // the mask is made where x is
    Tensor u = random::uniform(mask_shape, 0, 1.0, x.dtype(), seed, where);
    Tensor keep = cast(greater_equal(u, rate, where), x.dtype(), where);
    return x * keep * (1.0 / (1.0 - rate));
  } catch (Error& e) {
    e.add_call_site(where);
    throw;
  }
}

}  // namespace ef
