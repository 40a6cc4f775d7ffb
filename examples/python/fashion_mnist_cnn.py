"""Fashion-MNIST with a small convnet: two 3x3 convolutions (32 and 64 filters) with
max pooling, then 128 hidden units; Adam, 5 epochs. Reaches about 91% test accuracy.

    PYTHONPATH=build/python python3 examples/python/fashion_mnist_cnn.py [--epochs 5] ...
"""
import sys

from eagerflow import keras
from fashion_mnist_training import parse_flags, train_and_evaluate


def make_model():
    return keras.Sequential([
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10),
    ])


if __name__ == "__main__":
    flags = parse_flags(__doc__.splitlines()[0], "checkpoints_cnn")
    sys.exit(train_and_evaluate("Fashion-MNIST CNN", make_model, flags, channels_last=True))
