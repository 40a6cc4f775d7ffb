"""ef.optimizers: Keras' optimizers with PyTorch's update rules (they match torch.optim
step for step given the same hyperparameters), learning-rate schedules, clipping.

    opt = ef.optimizers.Adam(learning_rate=1e-3)
    opt.apply_gradients(zip(grads, variables))
    opt.minimize(lambda: loss(model), var_list=variables)
"""
import types

from eagerflow._core import SGD, Adagrad, Adam, AdamW, CosineDecay, ExponentialDecay, Optimizer, RMSprop  # noqa: F401

schedules = types.SimpleNamespace(ExponentialDecay=ExponentialDecay, CosineDecay=CosineDecay)
