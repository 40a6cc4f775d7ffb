"""Exceptions raised by eagerflow ops, as TensorFlow's ``tf.errors``.

Each also derives from the built-in exception a Python programmer would expect to
catch (``InvalidArgumentError`` is a ``ValueError``, ...).
"""


class OpError(Exception):
    """The base class of eagerflow's errors: an op failed.

    The message names the op, the argument and the shapes involved.
    """

    @property
    def message(self):
        """The error's message, as str(error)."""
        return str(self)


class InvalidArgumentError(OpError, ValueError):
    """Bad shapes, dtypes, axes or values."""


class FailedPreconditionError(OpError, RuntimeError):
    """The system is not in a state that allows the call.

    For example a non-persistent tape used twice, or a graph variable read before
    its initializer ran. Also a RuntimeError.
    """


class OutOfRangeError(OpError, IndexError):
    """An index or a value is outside its valid range."""


class UnimplementedError(OpError, NotImplementedError):
    """The operation is not supported yet.

    For example data_format "NCHW" for convolutions, or the gradient of a full
    (full_matrices=True) QR or SVD of a non-square matrix. Also a NotImplementedError.
    """


class ResourceExhaustedError(OpError, MemoryError):
    """A size overflows or memory runs out."""


class NotFoundError(OpError, LookupError):
    """Something looked up by name does not exist."""


class DataLossError(OpError, ValueError):
    """Stored data is unreadable: a truncated, malformed or corrupted file."""


class InternalError(OpError, RuntimeError):
    """A bug in eagerflow: please report it."""
