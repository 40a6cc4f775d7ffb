"""Data-parallel training across processes on MPI: the process group, its collectives,
and the ways to train replicas as one model.

    # mpirun -np 2 python3 train.py
    import eagerflow as ef
    strategy = ef.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = make_model()
        model.compile(...)
    model.fit(x, y, batch_size=64)            # each rank trains on its share of x, y

Custom loops use strategy.run(train_step) (gradients summed over the replicas, as in
TensorFlow), DataParallel(model) (averaged, as PyTorch's DistributedDataParallel), or
GradientSync(variables) directly; all three all-reduce the gradients in buckets while
the backward pass runs. docs/guides/distributed.md tells the whole story.

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
import threading

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


def broadcast_variables(variables, root=0):
    """Assigns every variable rank root's value (replicas that start as one); every rank
    passes the same variables in the same order."""
    _group().broadcast_variables(list(variables), root)


def barrier():
    """Returns once every rank has called it."""
    _group().barrier()


# Set once a MultiWorkerMirroredStrategy or DataParallel exists in a group of several
# processes: they then hold replicas of one model, and checkpoints are written by rank 0.
_replicated = False


def _replicas_share_variables():
    return _replicated and is_initialized() and size() > 1


def _note_replicas():
    global _replicated
    _replicated = True


# The strategies whose run() is executing, per thread, innermost last.
_replica = threading.local()


def in_replica_context():
    """Whether the caller runs inside MultiWorkerMirroredStrategy.run (a replica's step)."""
    return bool(getattr(_replica, "strategies", None))


class GradientSync:
    """Gradients of variables all-reduced in buckets while the backward pass runs.

    While it is open, every tape.gradient call that asks for one of `variables` returns
    that variable's gradient reduced over the ranks (op "mean" or "sum"), the
    all-reduces of finished gradients running while the rest of the backward pass is
    computed (PyTorch DistributedDataParallel's buckets of bucket_cap_mb megabytes).
    Without variables it covers every variable differentiated on this thread. A context
    manager; close() ends it.

        with ef.distribute.GradientSync(model.trainable_variables):
            for x, y in my_shard:
                with ef.GradientTape() as tape:
                    loss = loss_fn(model(x), y)
                grads = tape.gradient(loss, model.trainable_variables)  # averaged
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

    last_stats() says what the last synchronized call cost: buckets, bytes, and the
    seconds spent all-reducing (communication_seconds), of which the backward pass did
    not hide exposed_seconds.
    """

    def __init__(self, variables=None, op="mean", bucket_cap_mb=25.0):
        if op not in ("mean", "sum"):
            raise errors.InvalidArgumentError(f"GradientSync: op must be 'mean' or 'sum', got {op!r}")
        self._sync = _group().GradientSync(None if variables is None else list(variables), op, float(bucket_cap_mb))

    def close(self):
        self._sync.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def last_stats(self):
        return self._sync.last_stats()


class DataParallel:
    """A model whose replicas, one per process, train as one (torch.nn.parallel.DistributedDataParallel).

        model = ef.distribute.DataParallel(make_model())
        for x, y in my_shard:
            with ef.GradientTape() as tape:
                loss = loss_fn(model(x), y)
            grads = tape.gradient(loss, model.trainable_variables)   # averaged over the ranks
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

    The module's variables start from rank 0's values (those it creates in its first
    call too), and their gradients are averaged over the ranks in buckets of
    bucket_cap_mb megabytes while the backward pass runs, so every rank takes the same
    step. Other attributes are the module's.
    """

    def __init__(self, module, bucket_cap_mb=25.0):
        init()
        _note_replicas()
        self.module = module
        self._bucket_cap_mb = float(bucket_cap_mb)
        self._sync = None
        self._synced = []
        broadcast_variables(self._variables())
        self._resync()

    def _variables(self):
        return list(getattr(self.module, "variables", getattr(self.module, "trainable_variables", [])))

    def _resync(self):
        trainable = list(self.module.trainable_variables)
        if [v._key for v in trainable] == [v._key for v in self._synced]:
            return
        if self._sync is not None:
            self._sync.close()
        self._sync = GradientSync(trainable, "mean", self._bucket_cap_mb) if trainable else None
        self._synced = trainable

    def __call__(self, *args, **kwargs):
        # Variables a lazily built module creates now start as rank 0's.
        with _group().MirroredScope():
            out = self.module(*args, **kwargs)
        self._resync()
        return out

    @property
    def trainable_variables(self):
        return self.module.trainable_variables

    def last_stats(self):
        """GradientSync.last_stats of the module's gradients."""
        return self._sync.last_stats() if self._sync is not None else {}

    def __getattr__(self, name):
        if name == "module":  # not set yet: never recurse
            raise AttributeError(name)
        return getattr(self.module, name)


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
        _note_replicas()

    @property
    def num_replicas_in_sync(self):
        """The number of replicas: one per process."""
        return size()

    def scope(self):
        """A context manager: variables created inside start with rank 0's values on every
        rank, and Keras models compiled inside train their replicas as one in fit."""
        return _StrategyScope(self)

    def run(self, fn, args=(), kwargs=None):
        """Runs fn(*args, **kwargs) as this process's replica and returns its result.

        As in TensorFlow, the gradients that fn's tapes compute for variables are summed
        over the replicas, so an optimizer applies the same update on every replica:
        scale the loss by the global batch size (ef.nn.compute_average_loss) for the
        mean. The sum runs in buckets while the backward pass goes on (GradientSync).
        """
        strategies = _replica.__dict__.setdefault("strategies", [])
        strategies.append(self)
        try:
            with _group().GradientSync(None, "sum"):
                return fn(*args, **(kwargs or {}))
        finally:
            strategies.pop()

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


def _current_strategy():
    """The strategy whose scope() is innermost on this thread, or None."""
    scopes = getattr(_replica, "scopes", None)
    return scopes[-1] if scopes else None


class _StrategyScope:
    def __init__(self, strategy):
        self._strategy, self._mirrored = strategy, None

    def __enter__(self):
        self._mirrored = _group().MirroredScope()
        self._mirrored.__enter__()
        _replica.__dict__.setdefault("scopes", []).append(self._strategy)
        return self._strategy

    def __exit__(self, *exc):
        _replica.scopes.pop()
        self._mirrored.__exit__(*exc)
        return False


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
