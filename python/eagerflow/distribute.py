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


def init(timeout=300.0, check_agreement=True):
    """Joins the launcher's process group (mpirun, srun), or forms a group of one without one.

    Args:
      timeout: seconds a collective may wait for the other ranks before the job is ended.
      check_agreement: compare each collective's op, dtype and shape across the ranks first.

    Calls MPI_Init unless MPI is initialized already (mpi4py, say). Idempotent. In a group
    of several ranks, an exception that reaches the top level ends the whole job (after
    printing its traceback), so no rank is left waiting for it.
    """
    group = _group()
    group.init(float(timeout), bool(check_agreement))
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
