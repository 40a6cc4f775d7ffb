"""Fashion-MNIST with an LSTM: each image is a sequence of its 28 rows (28 features
each), read by an LSTM(128), then Dense(10). Keras' compile / fit, with the training
step as an ef.function (the 28 steps unroll into one graph).

    PYTHONPATH=build/python python3 examples/python/fashion_mnist_lstm.py [--epochs 5] ...
"""
import sys

import eagerflow as ef
from eagerflow import keras
from fashion_mnist_training import load_data, parse_flags


def main(flags):
    train, test = load_data(flags)
    n = min(flags.train_examples, train.images.shape[0])
    ef.random.set_seed(flags.seed)
    model = keras.Sequential([keras.layers.LSTM(128), keras.layers.Dense(10)])
    model.compile(optimizer=ef.optimizers.Adam(flags.learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(train.images[:n], train.labels[:n], batch_size=flags.batch_size, epochs=flags.epochs, seed=flags.seed)
    _, accuracy = model.evaluate(test.images, test.labels, batch_size=1000)
    print(f"test accuracy {accuracy:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(parse_flags(__doc__.splitlines()[0], "checkpoints/fashion_mnist_lstm")))
