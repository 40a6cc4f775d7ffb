"""Fashion-MNIST the Keras way: a Sequential MLP with compile / fit (validation split,
the best epoch saved by ModelCheckpoint, EarlyStopping), then a fresh model restored
from the best checkpoint scores the best epoch's validation accuracy, and the whole
model saved by model.save comes back from load_model compiled, scoring as it did. The
model is also exported as a saved model (checkpoint_dir/saved_model), which the C++
example classify_saved_model classifies the test set with, without Python.

    PYTHONPATH=build/python python3 examples/python/fashion_mnist_keras.py [--epochs 5] ...
"""
import os
import sys

import eagerflow as ef
from eagerflow import keras
from fashion_mnist_training import load_data, parse_flags


def make_model(learning_rate):
    model = keras.Sequential([
        keras.layers.Flatten(),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(10),
    ])
    model.compile(optimizer=ef.optimizers.Adam(learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def main(flags):
    train, test = load_data(flags)
    n = min(flags.train_examples, train.images.shape[0])
    images, labels = train.images[:n], train.labels[:n]
    ef.random.set_seed(flags.seed)
    model = make_model(flags.learning_rate)
    os.makedirs(flags.checkpoint_dir, exist_ok=True)
    best = os.path.join(flags.checkpoint_dir, "best.safetensors")
    history = model.fit(images, labels, batch_size=flags.batch_size, epochs=flags.epochs, validation_split=0.1,
                        seed=flags.seed,
                        callbacks=[keras.callbacks.ModelCheckpoint(best, monitor="val_accuracy", save_best_only=True),
                                   keras.callbacks.EarlyStopping(monitor="val_loss", patience=2)])
    model.summary()

    restored = make_model(flags.learning_rate)
    restored(test.images[:1])  # built, so the checkpoint has variables to restore into
    ef.train.Checkpoint(model=restored).restore(best)
    _, accuracy = restored.evaluate(test.images, test.labels, batch_size=1000)
    print(f"restored {best}: test accuracy {accuracy:.4f}")
    held_out = n - int(n * 0.9)
    _, restored_val = restored.evaluate(images[n - held_out:], labels[n - held_out:], batch_size=1000)
    best_val = max(history.history["val_accuracy"])
    same = abs(restored_val - best_val) < 1e-6
    print(f"validation accuracy {restored_val:.4f}, best epoch's {best_val:.4f} ({'the same' if same else 'DIFFERENT'})")

    whole = os.path.join(flags.checkpoint_dir, "model.keras")
    model.save(whole)
    loaded = keras.models.load_model(whole)  # compiled as saved, the optimizer's state included
    _, trained_accuracy = model.evaluate(test.images, test.labels, batch_size=1000)
    _, loaded_accuracy = loaded.evaluate(test.images, test.labels, batch_size=1000)
    print(f"load_model {whole}: test accuracy {loaded_accuracy:.4f} (the trained model's {trained_accuracy:.4f})")
    same = same and loaded_accuracy == trained_accuracy

    exported = os.path.join(flags.checkpoint_dir, "saved_model")
    serve = ef.function(lambda images: model(images), input_signature=[
        ef.TensorSpec([None, 28, 28], ef.float32, name="images")])
    ef.saved_model.save(model, exported, signatures=serve)
    print(f"saved model {exported}: test accuracy {trained_accuracy:.4f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(parse_flags(__doc__.splitlines()[0], "checkpoints/fashion_mnist_keras")))
