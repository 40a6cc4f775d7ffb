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
        return len(self)

    @property
    def ndims(self):
        return len(self)

    def as_list(self):
        return list(self)

    def num_elements(self):
        n = 1
        for d in self:
            if d is None:
                return None
            n *= d
        return n

    def is_fully_defined(self):
        return all(d is not None for d in self)

    def __repr__(self):
        return "TensorShape(%s)" % list(self)
