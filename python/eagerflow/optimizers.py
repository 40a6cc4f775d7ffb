"""ef.optimizers: Keras' optimizers with PyTorch's update rules (they match torch.optim
step for step given the same hyperparameters), learning-rate schedules, clipping.

    opt = ef.optimizers.Adam(learning_rate=1e-3)
    opt.apply_gradients(zip(grads, variables))
    opt.minimize(lambda: loss(model), var_list=variables)

L-BFGS takes its variables up front and a closure returning the loss at each step (it
computes the gradients itself), as torch.optim.LBFGS does:

    lbfgs = ef.optimizers.LBFGS(variables, history_size=10, line_search_fn="strong_wolfe")
    lbfgs.step(lambda: loss(model))
"""
import types

from eagerflow._core import (  # noqa: F401
    LBFGS, SGD, Adagrad, Adam, AdamW, CosineDecay, CosineDecayRestarts, ExponentialDecay, InverseTimeDecay, Optimizer,
    PiecewiseConstantDecay, PolynomialDecay, RMSprop)

schedules = types.SimpleNamespace(
    ExponentialDecay=ExponentialDecay, CosineDecay=CosineDecay, PiecewiseConstantDecay=PiecewiseConstantDecay,
    PolynomialDecay=PolynomialDecay, InverseTimeDecay=InverseTimeDecay, CosineDecayRestarts=CosineDecayRestarts)
