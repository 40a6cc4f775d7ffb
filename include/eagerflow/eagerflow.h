// eagerflow: eager-first deep learning in C++. Include this one header.
//
//   #include <eagerflow/eagerflow.h>
//   ef::Tensor x = ef::constant({{2.f}});
//   std::cout << ef::matmul(x, x) << "\n";   // Tensor([[4.]], shape=(1, 1), dtype=float32)
#pragma once

#include "eagerflow/core/allocator.h"
#include "eagerflow/core/device.h"
#include "eagerflow/core/dtype.h"
#include "eagerflow/core/error.h"
#include "eagerflow/core/shape.h"
#include "eagerflow/core/tensor.h"
#include "eagerflow/core/threading.h"
#include "eagerflow/autodiff/custom_gradient.h"
#include "eagerflow/autodiff/function_transforms.h"
#include "eagerflow/autodiff/gradient_check.h"
#include "eagerflow/autodiff/gradient_tape.h"
#include "eagerflow/ops/array.h"
#include "eagerflow/ops/axes.h"
#include "eagerflow/ops/creation.h"
#include "eagerflow/ops/linalg.h"
#include "eagerflow/ops/math.h"
#include "eagerflow/ops/nn.h"
#include "eagerflow/ops/operators.h"
#include "eagerflow/ops/random.h"
#include "eagerflow/ops/reduction.h"
#include "eagerflow/optim/clipping.h"
#include "eagerflow/optim/lbfgs.h"
#include "eagerflow/optim/optimizers.h"
#include "eagerflow/optim/schedules.h"
#include "eagerflow/runtime/context.h"
#include "eagerflow/runtime/dispatch.h"
#include "eagerflow/runtime/op_def.h"
#include "eagerflow/runtime/variable.h"
