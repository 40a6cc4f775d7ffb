"""The training loop shared by the Python Fashion-MNIST examples (the same recipe as
examples/fashion_mnist_training.h): shuffled batches, Adam on sparse categorical
cross-entropy with a progress bar per epoch, test accuracy, and a checkpoint saved
every epoch and restored into a fresh model."""
import argparse
import sys

import eagerflow as ef
from eagerflow import keras


def parse_flags(description, checkpoint_dir):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--train-examples", type=int, default=60000, help="train on a prefix, for quick runs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--checkpoint-dir", default=checkpoint_dir)
    return parser.parse_args()


def evaluate(model, images, labels):
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    for x, y in ef.data.Dataset.from_tensor_slices((images, labels)).batch(1000):
        accuracy.update_state(y, model(x))
    return float(accuracy.result())


def load_data(flags):
    """(train, test); when the dataset is not installed, says so and exits with 77
    ("skipped" for the tests that run the examples)."""
    try:
        return ef.data.datasets.fashion_mnist(flags.data_dir)
    except ef.errors.NotFoundError as e:
        print(e, file=sys.stderr)
        sys.exit(77)


def train_and_evaluate(title, make_model, flags, channels_last):
    train, test = load_data(flags)
    train_images, test_images = train.images, test.images
    if channels_last:
        train_images, test_images = ef.expand_dims(train_images, -1), ef.expand_dims(test_images, -1)
    n = min(flags.train_examples, train_images.shape[0])
    images, labels = train_images[:n], train.labels[:n]

    ef.random.set_seed(flags.seed)
    model = make_model()
    adam = keras.optimizers.Adam(flags.learning_rate)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    mean_loss = keras.metrics.Mean("loss")
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    checkpoint = ef.train.Checkpoint(model=model, optimizer=adam)
    manager = ef.train.CheckpointManager(checkpoint, flags.checkpoint_dir, max_to_keep=2)

    dataset = (ef.data.Dataset.from_tensor_slices((images, labels))
               .shuffle(n, seed=flags.seed).batch(flags.batch_size).prefetch(ef.data.AUTOTUNE))
    steps = (n + flags.batch_size - 1) // flags.batch_size
    print(f"{title}: {n} training images, {test_images.shape[0]} test images, batch {flags.batch_size}, "
          f"Adam({flags.learning_rate:g})")
    for epoch in range(1, flags.epochs + 1):
        print(f"Epoch {epoch}/{flags.epochs}", flush=True)
        bar = keras.utils.Progbar(steps)
        mean_loss.reset_state()
        accuracy.reset_state()
        for step, (x, y) in enumerate(dataset, start=1):
            with ef.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            variables = model.trainable_variables
            adam.apply_gradients(zip(tape.gradient(loss, variables), variables))
            mean_loss.update_state(loss)
            accuracy.update_state(y, logits)
            bar.update(step, [("loss", mean_loss.result()), ("accuracy", accuracy.result())])
        manager.save()

    test_accuracy = evaluate(model, test_images, test.labels)
    print(f"test accuracy: {test_accuracy:.4f}")

    # A fresh model (built by one call) restored from the newest checkpoint predicts the same.
    restored = make_model()
    restored(test_images[:1])
    ef.train.Checkpoint(model=restored, optimizer=keras.optimizers.Adam(flags.learning_rate)).restore(
        manager.latest_checkpoint)
    restored_accuracy = evaluate(restored, test_images, test.labels)
    same = restored_accuracy == test_accuracy
    print(f"restored {manager.latest_checkpoint}: test accuracy {restored_accuracy:.4f} "
          f"({'the same' if same else 'DIFFERENT'})")
    return 0 if same else 1
