"""TensorShape: what ``Tensor.shape`` returns (a tuple, as TensorFlow's shapes compare)."""


class TensorShape(tuple):
    """The dimensions of a tensor; ``None`` for a dimension not known yet (graph mode).

    It is a tuple, so ``t.shape == (2, 3)`` and ``t.shape[0]`` work, plus the
    TensorFlow methods ``as_list()``, ``rank`` and ``num_elements()``.
    """

    def __new__(cls, dims=()):
        return super().__new__(cls, (None if d is None else int(d) for d in dims))

    @property
    def rank(self):
        """The number of dimensions."""
        return len(self)

    @property
    def ndims(self):
        """The number of dimensions (the same as rank)."""
        return len(self)

    def as_list(self):
        """Returns the dimensions as a list of ints, None for an unknown one.

        >>> ef.zeros([2, 3]).shape.as_list()
        [2, 3]
        """
        return list(self)

    def num_elements(self):
        """Returns the number of elements, the product of the dimensions.

        None when a dimension is unknown.
        """
        n = 1
        for d in self:
            if d is None:
                return None
            n *= d
        return n

    def is_fully_defined(self):
        """Returns whether every dimension is known.

        Always True eagerly; graph tensors may have unknown (None) dimensions.
        """
        return all(d is not None for d in self)

    def __repr__(self):
        return "TensorShape(%s)" % list(self)
