"""Fashion-MNIST training curves: a Keras MLP fit with a validation split, its loss and
accuracy drawn by keras.utils.plot_history (needs python3-matplotlib), and the same
run logged for TensorBoard (`tensorboard --logdir <dir>/logs`).

    PYTHONPATH=build/python python3 examples/python/plot_training.py [--epochs 10] [--checkpoint-dir DIR]

Writes DIR/training_curves.png and DIR/logs/{train,validation}/events.out.tfevents.*.
"""
import os
import sys

import eagerflow as ef
from eagerflow import keras
from fashion_mnist_training import load_data, parse_flags


def main(flags):
    train, _ = load_data(flags)
    n = min(flags.train_examples, train.images.shape[0])
    ef.random.set_seed(flags.seed)
    model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile(optimizer=ef.optimizers.Adam(flags.learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    os.makedirs(flags.checkpoint_dir, exist_ok=True)
    board = keras.callbacks.TensorBoard(log_dir=os.path.join(flags.checkpoint_dir, "logs"), histogram_freq=1)
    history = model.fit(train.images[:n], train.labels[:n], batch_size=flags.batch_size, epochs=flags.epochs,
                        validation_split=0.1, seed=flags.seed, callbacks=[board])
    path = keras.utils.plot_history(history, os.path.join(flags.checkpoint_dir, "training_curves.png"),
                                    title=f"Fashion-MNIST MLP ({n} examples, 10% held out for validation)")
    print(f"wrote {path} and {board.log_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(parse_flags(__doc__.splitlines()[0], "checkpoints/plot_training")))
