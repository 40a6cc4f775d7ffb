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

from eagerflow import _core, errors


def _written_once(write, number_of=lambda result: 0):
    """Runs write() on this process, or, where the processes of ef.distribute hold replicas
    of one model (MultiWorkerMirroredStrategy, DataParallel), on rank 0 only while the
    others wait for it: one file, never several ranks writing it at once. Returns what
    write() returned and number_of(it), which every rank learns from rank 0 (write()'s
    result is None on the others); every rank raises if rank 0's write failed."""
    from eagerflow import distribute
    if not distribute._replicas_share_variables():
        result = write()
        return result, number_of(result)
    result, failure, number = None, None, 0
    if distribute.rank() == 0:
        try:
            result = write()
            number = number_of(result)
        except Exception as e:  # every rank must learn of it, not wait forever
            failure = e
    told = distribute.broadcast(_core.constant([0 if failure is None else 1, number], dtype=_core.int64), root=0)
    if failure is not None:
        raise failure
    failed, number = (int(v) for v in told.numpy())
    if failed:
        raise errors.FailedPreconditionError("checkpoint: rank 0 could not write the checkpoint (its error says why)")
    return result, number


class Checkpoint:
    """Saves and restores the variables of named objects, as TensorFlow's tf.train.Checkpoint.

    Files are safetensors, written atomically with a CRC32C per tensor; keys are
    paths such as "model/dense/kernel" and "optimizer/slots/model/dense/kernel/m".
    Each object is then available as an attribute (``ckpt.model``).

    >>> v = ef.Variable([1., 2.])
    >>> ckpt = ef.train.Checkpoint(v=v)
    >>> sorted(ckpt.state())
    ['v']

    Args:
      **objects: Variables, optimizers (L-BFGS too), ef.Module / Keras models, or
        anything with a ``named_variables()`` method returning (path, Variable)
        pairs, by name.

    Raises:
      TypeError: an object of another kind.
    """

    def __init__(self, **objects):
        self._impl = _core._Checkpoint(list(objects.items()))
        self._objects = objects
        for name, obj in objects.items():
            if not hasattr(type(self), name):   # ckpt.model, but never hiding a method
                setattr(self, name, obj)

    def save(self, path):
        """Writes every object's state to ``path`` atomically (the old file or the new one, never a broken one).

        Args:
          path: A str or path-like.

        Returns:
          The path written, a str.
        """
        path = os.fspath(path)
        _written_once(lambda: self._impl.save(path))
        return path

    def restore(self, path, convert_dtypes=False):
        """Restores every object from ``path`` now, in eager and graph mode alike; on any
        error nothing changes. A tensor whose float dtype differs from its variable's is
        an error unless ``convert_dtypes`` (then it is cast). Returns a status with
        TensorFlow's methods (``run_restore_ops(session)``, ``assert_consumed()``, ...)."""
        self._impl.restore(os.fspath(path), convert_dtypes=convert_dtypes)
        return CheckpointLoadStatus(self)

    def state(self):
        """Returns the state save() would write now.

        A dict of key ("model/dense/kernel", ...) -> Tensor.
        """
        return self._impl.state()


class CheckpointLoadStatus:
    """What ``Checkpoint.restore`` returns. The restore has already happened, with every
    key of the file matched to an object and every object's variables found in the file
    (anything else raises), so these methods, kept for programs written for TensorFlow,
    have nothing left to do or check."""

    def __init__(self, checkpoint):
        self._checkpoint = checkpoint

    def run_restore_ops(self, session=None):
        """TensorFlow 1's graph-mode step; the values are already in the variables that
        the session's graph reads."""
        return self

    def initialize_or_restore(self, session=None):
        """Nothing left to do: the restore has happened. Returns self."""
        return self

    def assert_consumed(self):
        """Nothing left to check: every key was matched. Returns self."""
        return self

    def assert_existing_objects_matched(self):
        """Nothing left to check: every object was matched. Returns self."""
        return self

    def assert_nontrivial_match(self):
        """Nothing left to check. Returns self."""
        return self

    def expect_partial(self):
        """Accepted for TensorFlow programs; a partial restore is an error here. Returns self."""
        return self


class Saver:
    """TensorFlow 1's ``tf.train.Saver``: saves and restores variables by name.

        saver = ef.train.Saver()          # every variable of the default graph
        saver.save(sess, "model.safetensors")
        saver.restore(sess, "model.safetensors")

    ``var_list`` is a list of variables or a dict of name -> variable; by default the
    variables created in the default graph. Repeated names get TensorFlow's suffixes
    (``w``, ``w_1``, ...), in the order the list gives. The session is accepted for
    TensorFlow's call style: the values go straight into the variables its graph reads.
    """

    def __init__(self, var_list=None):
        if var_list is None:
            from eagerflow.graph import global_variables
            var_list = global_variables()
        if isinstance(var_list, dict):
            named = list(var_list.items())
        else:
            named, seen = [], {}
            for v in var_list:
                if not isinstance(v, _core.Variable):
                    raise TypeError("Saver: var_list must hold Variables, got %s" % type(v).__name__)
                count = seen.get(v.name, 0)
                seen[v.name] = count + 1
                named.append((v.name if count == 0 else "%s_%d" % (v.name, count), v))
        if not named:
            raise ValueError("Saver: no variables to save")
        self._checkpoint = Checkpoint(variables=_NamedVariables(named))

    def save(self, sess, save_path, global_step=None):
        """Writes the variables to ``save_path`` (``save_path-<global_step>`` when given);
        returns the path written."""
        path = os.fspath(save_path)
        if global_step is not None:
            path = "%s-%d" % (path, int(global_step))
        return self._checkpoint.save(path)

    def restore(self, sess, save_path):
        """Restores every variable from ``save_path``; on any error nothing changes."""
        self._checkpoint.restore(save_path)


class _NamedVariables:
    def __init__(self, named):
        self._named = named

    def named_variables(self):
        return list(self._named)


def _checkpoint_number(path):
    """n of "<directory>/ckpt-<n>.safetensors"."""
    return int(os.path.basename(path)[len("ckpt-"):-len(".safetensors")])


class CheckpointManager:
    """Numbered checkpoints ``<directory>/ckpt-<n>.safetensors``, the newest
    ``max_to_keep`` kept (``None`` or 0 keeps all)."""

    def __init__(self, checkpoint, directory, max_to_keep=5):
        self.checkpoint = checkpoint
        self._impl = _core._CheckpointManager(checkpoint._impl, os.fspath(directory), max_to_keep or 0)

    def save(self):
        """Saves the next numbered checkpoint, deletes the oldest beyond max_to_keep,
        returns the new file's path. Where processes hold replicas of one model
        (ef.distribute), rank 0 writes and every rank returns the path."""
        path, number = _written_once(self._impl.save, _checkpoint_number)
        return path if path is not None else os.path.join(self.directory, f"ckpt-{number}.safetensors")

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
        """The directory the checkpoints are written to."""
        return self._impl.directory
