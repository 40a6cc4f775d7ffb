"""eagerflow: eager execution, gradient tapes, graphs and traced functions — over a C++ runtime.

    import eagerflow as ef
    x = ef.constant([[2.]])
    print(ef.matmul(x, x))          # Tensor([[4.]], shape=(1, 1), dtype=float32)

Names and arguments follow TensorFlow's: common ops at the top level, and the
modules ef.math, ef.nn, ef.linalg, ef.random; errors in ef.errors; layers, losses
and metrics in ef.keras; ef.Module for models written by subclassing.
"""
from eagerflow import _core
from eagerflow import (  # noqa: F401
    autograph, config, data, datasets, errors, io, keras, linalg, math, nn, optimizers, profiler, random,
    image, onnx, saved_model, signal, summary, train,
)
from eagerflow import distribute  # noqa: F401  (ef.distribute: collectives on MPI)
from eagerflow.config import device  # noqa: F401
from eagerflow.module import Module  # noqa: F401
from eagerflow._core import (  # noqa: F401
    DType, Tensor, Variable, as_dtype, bfloat16, bool, float16, float32, float64, int32, int64,
    int8, uint8, int16, uint16, uint32, complex64, complex128, complex,
    # creation
    constant, convert_to_tensor, eye, fill, linspace, ones, ones_like, range, zeros, zeros_like,
    from_dlpack,
    # array
    argsort, broadcast_to, concat, expand_dims, gather, gather_nd, identity, one_hot, pad, rank,
    reshape, reverse, scatter_nd, shape, size, slice, sort, split, squeeze, stack, strided_slice,
    tensor_scatter_nd_add, tile, transpose, unstack, where,
    boolean_mask, dynamic_partition, dynamic_stitch, meshgrid, repeat, roll, searchsorted, unique, unique_with_counts,
    tensor_scatter_nd_max, tensor_scatter_nd_min, tensor_scatter_nd_sub, tensor_scatter_nd_update,
    # math (also in ef.math)
    abs, add, argmax, argmin, cast, clip_by_value, cos, cumprod, cumsum, divide, equal, exp,
    floor, greater, greater_equal, less, less_equal, log, logical_and, logical_not, logical_or,
    maximum, minimum, multiply, negative, not_equal, pow, reduce_all, reduce_any,
    reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_std, reduce_sum,
    reduce_variance, round, sigmoid, sign, sin, sqrt, square, squared_difference, subtract, tanh,
    acosh, asinh, atan2, atanh, truncatediv, truncatemod,
    histogram_fixed_width,
    # linalg
    einsum, matmul, norm, tensordot,
    # clipping
    clip_by_global_norm, clip_by_norm,
)
from eagerflow._shape import TensorShape
from eagerflow.control_flow import cond, while_loop  # noqa: F401
from eagerflow.printing import print  # noqa: F401,A001
from eagerflow.function import ConcreteFunction, Function, TensorSpec, function, init_scope  # noqa: F401
from eagerflow.graph import (  # noqa: F401
    Graph, Operation, Session, get_default_graph, global_variables, global_variables_initializer, gradients, group,
    placeholder,
)
from eagerflow._core import GraphOptimizerOptions, graph_optimizer_options, set_graph_optimizer_options  # noqa: F401
from eagerflow._core import compile_fused_kernels, set_compile_fused_kernels  # noqa: F401
from eagerflow.autodiff import (  # noqa: F401
    GradientTape, UnconnectedGradients, custom_gradient, grad, gradients_function,
    implicit_gradients, implicit_value_and_gradients, jvp, linearize, recompute_grad, stop_gradient,
    value_and_gradients_function,
)
from eagerflow.vectorization import hessians, vectorized_map, vmap  # noqa: F401

__version__ = _core.__version__  # from VERSION, through CMake

# Tensor.shape as a TensorShape (a tuple with TensorFlow's methods).
Tensor.shape = property(lambda self: TensorShape(self._shape_tuple),
                        doc="The dimensions, as a TensorShape (a tuple).")


def _forward_to_value(name):
    def method(self, *args):
        return getattr(self.value(), name)(*args)

    method.__name__ = name
    return method


# A Variable is usable wherever a tensor is: its operators read its value (so tapes
# see the read), as TensorFlow's variables do; == and != compare elementwise, and a
# variable still hashes by identity.
for _name in ("__eq__", "__ne__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
              "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__",
              "__gt__", "__ge__", "__getitem__", "__bool__", "__float__", "__int__", "__index__",
              "__len__", "__iter__", "__array__", "__and__", "__or__", "__xor__", "__invert__"):
    setattr(Variable, _name, _forward_to_value(_name))
Variable.shape = property(lambda self: self.value().shape, doc="The dimensions, as a TensorShape (a tuple).")
Variable.ndim = property(lambda self: self.value().ndim, doc="The number of axes (0 for a scalar).")
Variable.device = property(lambda self: self.value().device, doc="The device holding the value, as Tensor.device.")
del _name

__all__ = [n for n in dir() if not n.startswith("_")]
