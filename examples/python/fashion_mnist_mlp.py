"""Fashion-MNIST with a multilayer perceptron, trained eagerly: 784-256-10, Adam,
5 epochs. Reaches about 88% test accuracy.

    PYTHONPATH=build/python python3 examples/python/fashion_mnist_mlp.py [--epochs 5] ...
"""
import sys

from eagerflow import keras
from fashion_mnist_training import parse_flags, train_and_evaluate


def make_model():
    return keras.Sequential([
        keras.layers.Flatten(),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(10),
    ])


if __name__ == "__main__":
    flags = parse_flags(__doc__.splitlines()[0], "checkpoints")
    sys.exit(train_and_evaluate("Fashion-MNIST MLP 784-256-10", make_model, flags, channels_last=False))
