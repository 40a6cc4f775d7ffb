"""ef.keras: layers, models, initializers, losses, metrics and optimizers with Keras'
names and defaults, over eagerflow's C++ nn/ and optim/.

    model = ef.keras.Sequential([
        ef.keras.layers.Flatten(),
        ef.keras.layers.Dense(256, activation="relu"),
        ef.keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam",
                  loss=ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(images, labels, epochs=5, validation_split=0.1)

or a training loop of your own:

    loss_fn = ef.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with ef.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
"""
from eagerflow import datasets, optimizers  # noqa: F401
from eagerflow.keras import callbacks, initializers, layers, losses, metrics, mixed_precision, utils  # noqa: F401
from eagerflow.keras import models  # noqa: F401
from eagerflow.keras.models import Functional, Model, Sequential, load_model, register_keras_serializable  # noqa: F401
from eagerflow.keras._functional import Input, KerasTensor  # noqa: F401

saving = models  # keras.saving.register_keras_serializable, keras.saving.load_model
