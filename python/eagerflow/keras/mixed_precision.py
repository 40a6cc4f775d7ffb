"""Mixed precision (Keras' keras.mixed_precision): policies and loss scaling.

    ef.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    model = ef.keras.Sequential([...])    # computes in bfloat16, keeps float32 weights
    model.layers[-1].dtype_policy = "float32"  # e.g. a softmax output, before the first call

Under "mixed_float16", `compile` gives the optimizer dynamic loss scaling; in a custom
training loop wrap it yourself and scale the loss:

    opt = ef.keras.mixed_precision.LossScaleOptimizer(ef.keras.optimizers.Adam())
    with ef.GradientTape() as tape:
        loss = loss_fn(y, model(x))
        scaled = opt.get_scaled_loss(loss)
    grads = opt.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    opt.apply_gradients(zip(grads, model.trainable_variables))  # skips non-finite steps
"""
from eagerflow._core.keras.mixed_precision import Policy, global_policy, set_global_policy  # noqa: F401


def LossScaleOptimizer(inner_optimizer, dynamic=True, initial_scale=2.0 ** 15, dynamic_growth_steps=2000):
    """`inner_optimizer` with dynamic loss scaling turned on (TensorFlow's defaults), returned.

    It is the same optimizer object: its learning rate, iterations and slots are the
    inner optimizer's, and checkpoints keep the scale beside them.
    """
    if not dynamic:
        raise ValueError("LossScaleOptimizer: only dynamic loss scaling is supported (dynamic=True); "
                         "a fixed scale would not skip overflowing steps")
    inner_optimizer._enable_loss_scaling(float(initial_scale), int(dynamic_growth_steps))
    return inner_optimizer
