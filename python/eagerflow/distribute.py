"""Data-parallel training across processes on MPI: the process group and its collectives.

    # mpirun -np 2 python3 train.py
    import eagerflow as ef
    ef.distribute.init()                      # rank and size from the launcher
    with ef.GradientTape() as tape:
        loss = loss_fn(model(x_shard), y_shard)
    grads = tape.gradient(loss, model.trainable_variables)
    grads = [ef.distribute.all_reduce(g, op="mean") for g in grads]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

A process started without a launcher is a group of one: nothing touches MPI and every
collective returns its input's values. The collectives are ops: tapes record them,
ef.function traces them, and their gradients are collectives again (all_reduce's is an
all_reduce). Every rank must call the same collectives in the same order with the same
dtypes and shapes; ranks that do not all get an InvalidArgumentError naming each rank's
call. A collective that waits longer than the timeout, or an exception no rank catches,
ends the whole job with a message naming the rank, rather than leaving the others
waiting. See eagerflow/distribute/distribute.h.
"""
import sys

from eagerflow import _core, errors

_d = getattr(_core, "distribute", None)


def _group():
    if _d is None:
        raise errors.UnimplementedError(
            "ef.distribute: this eagerflow was built without MPI (install libopenmpi-dev and openmpi-bin, then "
            "rebuild)")
    return _d


def _end_job_on_uncaught(previous):
    def hook(kind, value, traceback):
        previous(kind, value, traceback)
        _d.abort(f"uncaught {kind.__name__}: {value}")

    return hook


def init(timeout=None, check_agreement=None):
    """Joins the launcher's process group (mpirun, srun), or forms a group of one without one.

    Args:
      timeout: seconds a collective may wait for the other ranks before the job is ended
        (default 300).
      check_agreement: compare each collective's op, dtype and shape across the ranks first
        (default True).

    Calls MPI_Init unless MPI is initialized already (mpi4py, say). Called again, it only
    changes the options it is given. In a group of several ranks, an exception that reaches
    the top level ends the whole job (after printing its traceback), so no rank is left
    waiting for it.
    """
    group = _group()
    if group.initialized():
        timeout = group.timeout() if timeout is None else timeout
        check_agreement = group.check_agreement() if check_agreement is None else check_agreement
    timeout = 300.0 if timeout is None else float(timeout)
    group.init(timeout, True if check_agreement is None else bool(check_agreement))
    if group.size() > 1 and not getattr(sys.excepthook, "_ef_distribute", False):
        sys.excepthook = _end_job_on_uncaught(sys.excepthook)
        sys.excepthook._ef_distribute = True


def is_initialized():
    """Whether init() has run."""
    return _d is not None and _d.initialized()


def rank():
    """This process's rank, in [0, size())."""
    return _group().rank()


def size():
    """The number of processes in the group."""
    return _group().size()


def local_rank():
    """This process's rank among the group's processes on its machine."""
    return _group().local_rank()


def finalize():
    """Leaves the group (MPI_Finalize when init() started MPI); also done at exit."""
    _group().finalize()


def set_timeout(seconds):
    """Changes the collectives' timeout (every rank should set the same)."""
    group = _group()
    group.set_options(float(seconds), group.check_agreement())


def all_reduce(x, op="sum"):
    """Every rank gets the reduction of all ranks' x: op is "sum", "mean", "max" or "min".

    x has the same dtype and shape on every rank (float32, float64, int32, int64; "mean"
    needs a float dtype). The gradient of "sum" and "mean" is the same all_reduce of the
    gradients.
    """
    return _group().all_reduce(x, op)


def all_reduce_many(xs, op="sum"):
    """all_reduce of each tensor in the list xs, fused: those of one dtype travel in one collective.

    Saves a collective's fixed cost per tensor for a model's many small gradients (Horovod's
    tensor fusion). None stays None; every rank must pass the same list. Returns a list.
    """
    return _group().all_reduce_many(list(xs), op)


def broadcast(x, root=0):
    """Every rank gets rank root's x (same dtype and shape on every rank)."""
    return _group().broadcast(x, root)


def all_gather(x):
    """The ranks' x concatenated along axis 0 in rank order ([size * n, ...] for x of shape [n, ...])."""
    return _group().all_gather(x)


def reduce_scatter(x, op="sum"):
    """Reduces the ranks' x and gives rank r the r-th of size() equal slices along axis 0."""
    return _group().reduce_scatter(x, op)


def barrier():
    """Returns once every rank has called it."""
    _group().barrier()


class ReduceOp:
    """How MultiWorkerMirroredStrategy.reduce combines the replicas' values (tf.distribute.ReduceOp)."""
    SUM = "sum"
    MEAN = "mean"


class MultiWorkerMirroredStrategy:
    """Synchronous data parallelism over the processes mpirun starts (tf.distribute.MultiWorkerMirroredStrategy).

    Each process is one replica. Variables created under scope() start with rank 0's values
    on every rank; each replica runs the step on its own shard of the data
    (experimental_distribute_dataset) and averages its gradients with the others
    (all_reduce(g, op="mean")) before applying them, so all replicas take the same step:

        strategy = ef.distribute.MultiWorkerMirroredStrategy()
        with strategy.scope():
            model = make_model()
        for x, y in strategy.experimental_distribute_dataset(dataset):
            loss = strategy.run(train_step, args=(x, y))
            mean_loss = strategy.reduce(ef.distribute.ReduceOp.MEAN, loss)

    Args:
      timeout: seconds a collective may wait for the other ranks (see init; by default
        what init was given, else 300).
    """

    def __init__(self, timeout=None):
        init(timeout=timeout)

    @property
    def num_replicas_in_sync(self):
        """The number of replicas: one per process."""
        return size()

    def scope(self):
        """A context manager: variables created inside start with rank 0's values on every rank."""
        return _group().MirroredScope()

    def run(self, fn, args=(), kwargs=None):
        """Runs fn(*args, **kwargs) as this process's replica and returns its result."""
        return fn(*args, **(kwargs or {}))

    def reduce(self, reduce_op, value, axis=None):
        """Combines the replicas' value: ReduceOp.SUM or ReduceOp.MEAN over the replicas.

        With axis, the value is first reduced along that axis on each replica, and MEAN
        divides by the total number of elements along it across the replicas (the mean
        over the global batch, as TensorFlow's).
        """
        if reduce_op not in (ReduceOp.SUM, ReduceOp.MEAN):
            raise errors.InvalidArgumentError(f"reduce: reduce_op must be ReduceOp.SUM or ReduceOp.MEAN, got "
                                              f"{reduce_op!r}")
        value = _core.convert_to_tensor(value)
        if axis is None:
            return all_reduce(value, reduce_op)
        total = all_reduce(_core.reduce_sum(value, axis=axis), ReduceOp.SUM)
        if reduce_op == ReduceOp.SUM:
            return total
        count = all_reduce(_core.constant(float(value.shape[axis]), dtype=total.dtype), ReduceOp.SUM)
        return total / count

    def experimental_distribute_dataset(self, dataset):
        """This replica's shard of dataset: of each run of num_replicas_in_sync elements
        (batches), the rank-th. A last, incomplete run is dropped on every replica, so all
        replicas take the same number of steps."""
        return _ShardedDataset(dataset, rank(), size())


class _ShardedDataset:
    """Every size-th element of a dataset from rank on, in complete runs of size."""

    def __init__(self, dataset, rank, size):
        self._dataset, self._rank, self._size = dataset, rank, size

    def __iter__(self):
        run = []
        for element in self._dataset:
            run.append(element)
            if len(run) == self._size:
                yield run[self._rank]
                run = []
