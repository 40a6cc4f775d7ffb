"""Object-based checkpoints, as TensorFlow's ``tf.train``.

    ckpt = ef.train.Checkpoint(model=model, optimizer=optimizer)
    manager = ef.train.CheckpointManager(ckpt, "run", max_to_keep=3)
    if manager.latest_checkpoint:
        ckpt.restore(manager.latest_checkpoint)   # weights, optimizer slots and steps
    ...
    manager.save()                                # run/ckpt-<n>.safetensors

Objects are Variables, optimizers, and models (anything with ``named_variables()``,
returning (path, Variable) pairs); keys are paths such as "model/dense/kernel" and
"optimizer/slots/model/dense/kernel/m". Lazily built layers must be built (called once)
before a restore. A restore that fails (missing, extra or mismatched keys, a damaged
file) changes nothing.
"""
import os

from eagerflow import _core


class Checkpoint:
    """Saves and restores the named objects by path (``Checkpoint(model=m, optimizer=o)``)."""

    def __init__(self, **objects):
        self._impl = _core._Checkpoint(list(objects.items()))
        self._objects = objects
        for name, obj in objects.items():
            if not hasattr(type(self), name):   # ckpt.model, but never hiding a method
                setattr(self, name, obj)

    def save(self, path):
        """Writes every object's state to ``path`` atomically; returns the path."""
        path = os.fspath(path)
        self._impl.save(path)
        return path

    def restore(self, path):
        """Restores every object from ``path``; on any error nothing changes."""
        self._impl.restore(os.fspath(path))
        return self

    def state(self):
        """The dict of key -> Tensor that save() writes."""
        return self._impl.state()


class CheckpointManager:
    """Numbered checkpoints ``<directory>/ckpt-<n>.safetensors``, the newest
    ``max_to_keep`` kept (``None`` or 0 keeps all)."""

    def __init__(self, checkpoint, directory, max_to_keep=5):
        self.checkpoint = checkpoint
        self._impl = _core._CheckpointManager(checkpoint._impl, os.fspath(directory), max_to_keep or 0)

    def save(self):
        """Saves the next numbered checkpoint, deletes the oldest beyond max_to_keep,
        returns the new file's path."""
        return self._impl.save()

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's path, or None."""
        return self._impl.latest_checkpoint

    @property
    def checkpoints(self):
        """Every checkpoint's path, oldest first."""
        return self._impl.checkpoints

    @property
    def directory(self):
        return self._impl.directory
