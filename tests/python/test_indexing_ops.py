"""roll, repeat, boolean_mask, one-argument where, searchsorted, meshgrid, unique,
dynamic_partition and the segment reductions against PyTorch (values, and gradients
against torch autograd with a random upstream gradient, first and second order), plus
graphs (ef.function) whose sizes depend on values, and bad inputs."""
import numpy as np
import pytest

import eagerflow as ef

torch = pytest.importorskip("torch")


def _rng(seed):
    return np.random.default_rng(seed)


def _grads(ef_fn, torch_fn, x, seed=0):
    """Values, first-order and second-order (Hessian-vector) gradients of both, for a
    float64 input x and random directions."""
    rng = _rng(seed)
    xe = ef.constant(x)
    with ef.GradientTape() as outer:
        outer.watch(xe)
        with ef.GradientTape() as inner:
            inner.watch(xe)
            y = ef_fn(xe)
        dy = rng.normal(size=tuple(y.shape))
        g = inner.gradient(y, xe, output_gradients=ef.constant(dy))
        v = rng.normal(size=x.shape)
        s = ef.reduce_sum(g * ef.constant(v))
    h = outer.gradient(s, xe)
    xt = torch.tensor(x, requires_grad=True)
    yt = torch_fn(xt)
    (gt,) = torch.autograd.grad(yt, xt, grad_outputs=torch.tensor(dy), create_graph=True)
    (ht,) = torch.autograd.grad((gt * torch.tensor(v)).sum(), xt, allow_unused=True)
    ht = torch.zeros_like(xt) if ht is None else ht
    np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(g.numpy(), gt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-10, atol=1e-12)


def test_roll_matches_torch():
    x = _rng(1).normal(size=(3, 4, 5))
    for shift, axis in [(2, 0), (-1, 2), ([1, 7], [1, 2]), ([1, 1], [0, 0])]:
        dims = axis if isinstance(axis, list) else [axis]
        shifts = shift if isinstance(shift, list) else [shift]
        _grads(lambda t: ef.roll(t * t, shift, axis), lambda t: torch.roll(t * t, shifts, dims), x)
    for dtype in (np.int32, np.int64, np.bool_, np.float32):
        a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
        np.testing.assert_array_equal(ef.roll(a, [1, -2], [0, 1]).numpy(), np.roll(a, (1, -2), (0, 1)))
    np.testing.assert_array_equal(ef.roll(np.zeros((0, 2)), 1, 0).numpy(), np.zeros((0, 2)))
    with pytest.raises(ef.errors.InvalidArgumentError, match="roll.*axis"):
        ef.roll([1, 2], 1, 3)
    with pytest.raises(ef.errors.InvalidArgumentError, match="same length"):
        ef.roll([1, 2], [1, 2], 0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="scalar"):
        ef.roll(1.0, 1, 0)


def test_repeat_matches_torch():
    x = _rng(2).normal(size=(3, 2))
    _grads(lambda t: ef.repeat(t * t, [2, 0, 3], axis=0),
           lambda t: torch.repeat_interleave(t * t, torch.tensor([2, 0, 3]), dim=0), x)
    _grads(lambda t: ef.repeat(t * t, 2), lambda t: torch.repeat_interleave(t * t, 2), x)
    np.testing.assert_array_equal(ef.repeat([[1, 2], [3, 4]], 3, axis=1).numpy(),
                                  np.repeat([[1, 2], [3, 4]], 3, axis=1))
    with pytest.raises(ef.errors.InvalidArgumentError, match="repeats"):
        ef.repeat([1, 2], [1, 2, 3], axis=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="non-negative"):
        ef.repeat([1, 2], -1)
    with pytest.raises(ef.errors.InvalidArgumentError, match="axis"):
        ef.repeat([1, 2], 2, axis=1)


def test_boolean_mask_and_where_match_torch():
    x = _rng(3).normal(size=(3, 4))
    mask = _rng(4).random((3, 4)) > 0.5
    _grads(lambda t: ef.boolean_mask(t * t, mask), lambda t: (t * t)[torch.tensor(mask)], x)
    rows = np.array([True, False, True])
    _grads(lambda t: ef.boolean_mask(t * t, rows), lambda t: (t * t)[torch.tensor(rows)], x)
    cols = np.array([False, True, True, False])
    _grads(lambda t: ef.boolean_mask(t * t, cols, axis=1), lambda t: (t * t)[:, torch.tensor(cols)], x)
    # where(condition) alone: the coordinates of the true elements, as torch.nonzero.
    np.testing.assert_array_equal(ef.where(mask).numpy(), torch.nonzero(torch.tensor(mask)).numpy())
    assert ef.boolean_mask(x, np.zeros(3, bool)).shape == (0, 4)
    with pytest.raises(ef.errors.InvalidArgumentError, match="bool"):
        ef.boolean_mask(x, [1, 0, 1])
    with pytest.raises(ef.errors.InvalidArgumentError, match="must match"):
        ef.boolean_mask(x, [True, False])
    with pytest.raises(ef.errors.InvalidArgumentError, match="scalar"):
        ef.boolean_mask(x, True)


def test_searchsorted_matches_torch():
    rng = _rng(5)
    seq = np.sort(rng.integers(0, 6, size=(3, 8)).astype(np.float64), axis=-1)
    values = rng.integers(-1, 7, size=(3, 5)).astype(np.float64)
    for side in ("left", "right"):
        want = torch.searchsorted(torch.tensor(seq), torch.tensor(values), right=side == "right").numpy()
        got = ef.searchsorted(seq, values, side=side, out_type=ef.int64)
        assert got.dtype == ef.int64
        np.testing.assert_array_equal(got.numpy(), want)
    ints = ef.searchsorted(np.array([1, 3, 5], np.int32), np.array([0, 3, 6], np.int32))
    np.testing.assert_array_equal(ints.numpy(), [0, 1, 3])
    with pytest.raises(ef.errors.InvalidArgumentError, match="side"):
        ef.searchsorted(seq, values, side="up")
    with pytest.raises(ef.errors.InvalidArgumentError, match="leading axes"):
        ef.searchsorted(seq, values[:2])
    with pytest.raises(ef.errors.InvalidArgumentError, match="out_type"):
        ef.searchsorted(seq, values, out_type=ef.float32)


def test_meshgrid_matches_torch():
    a, b, c = np.arange(3.0), np.arange(2.0) + 10, np.arange(4.0) - 5
    for indexing in ("xy", "ij"):
        got = ef.meshgrid(a, b, c, indexing=indexing)
        want = torch.meshgrid(torch.tensor(a), torch.tensor(b), torch.tensor(c), indexing=indexing)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    x = _rng(6).normal(size=3)
    _grads(lambda t: ef.meshgrid(t * t, ef.constant(b), indexing="xy")[0] * 2.0,
           lambda t: torch.meshgrid(t * t, torch.tensor(b), indexing="xy")[0] * 2.0, x)
    with pytest.raises(ef.errors.InvalidArgumentError, match="indexing"):
        ef.meshgrid(a, b, indexing="yx")


def test_unique_matches_torch():
    x = _rng(7).integers(0, 5, size=20)
    y, idx, count = ef.unique_with_counts(x, out_idx=ef.int64)
    # torch.unique sorts; eagerflow keeps the order of first appearance (TensorFlow's).
    order = np.argsort(y.numpy())
    ty, tidx, tcount = torch.unique(torch.tensor(x), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(y.numpy()[order], ty.numpy())
    np.testing.assert_array_equal(count.numpy()[order], tcount.numpy())
    np.testing.assert_array_equal(y.numpy()[idx.numpy()], x)
    _, first = np.unique(x, return_index=True)
    np.testing.assert_array_equal(y.numpy(), x[np.sort(first)])
    assert idx.dtype == ef.int64
    y2, idx2 = ef.unique(np.array([2.0, -0.0, np.nan, 0.0, np.nan]))
    assert y2.shape == (4,) and idx2.numpy().tolist() == [0, 1, 2, 1, 3]
    with pytest.raises(ef.errors.InvalidArgumentError, match="1-D"):
        ef.unique([[1, 2]])
    with pytest.raises(ef.errors.InvalidArgumentError, match="out_idx"):
        ef.unique([1], out_idx=ef.float32)
    with pytest.raises(ef.errors.InvalidArgumentError, match="1-D"):
        ef.unique_with_counts(1)


def test_dynamic_partition():
    data = _rng(8).normal(size=(5, 2))
    parts = np.array([2, 0, 2, 1, 0])
    got = ef.dynamic_partition(data, parts, 3)
    for p in range(3):
        np.testing.assert_array_equal(got[p].numpy(), data[parts == p])
    x = data
    _grads(lambda t: ef.concat([ef.dynamic_partition(t * t, parts, 3)[2], ef.dynamic_partition(t, parts, 3)[0]], 0),
           lambda t: torch.cat([(t * t)[torch.tensor(parts == 2)], t[torch.tensor(parts == 0)]], 0), x)
    with pytest.raises(ef.errors.InvalidArgumentError, match="num_partitions"):
        ef.dynamic_partition(data, parts, 2)
    with pytest.raises(ef.errors.InvalidArgumentError, match="partitions"):
        ef.dynamic_partition(data, parts.astype(np.float64), 3)
    with pytest.raises(ef.errors.InvalidArgumentError, match="num_partitions"):
        ef.dynamic_partition(data, parts, -1)


def _torch_segment(reduce, data, ids, num, include_empty):
    """torch.scatter_reduce into zeros (or the empty value) of [num] + data.shape[ids.ndim:]."""
    ids = torch.tensor(ids)
    keep = ids >= 0
    flat_ids = ids[keep]
    rows = data[keep] if ids.ndim == 1 else data[keep.reshape(ids.shape)]
    out = torch.zeros((num,) + tuple(data.shape[ids.ndim:]), dtype=data.dtype)
    if reduce in ("amax", "amin") and not include_empty:
        fill = torch.finfo(data.dtype).min if reduce == "amax" else torch.finfo(data.dtype).max
        out = out + fill
    index = flat_ids.reshape((-1,) + (1,) * (rows.ndim - 1)).expand(rows.shape)
    return out.scatter_reduce(0, index, rows, reduce=reduce, include_self=False)


@pytest.mark.parametrize("reduce,ef_name", [("sum", "sum"), ("mean", "mean"), ("amax", "max"), ("amin", "min")])
def test_segment_reductions_match_torch(reduce, ef_name):
    rng = _rng(9)
    data = rng.normal(size=(6, 3))
    ids = np.array([0, 0, 1, 3, 3, 3])
    sorted_fn = getattr(ef.math, "segment_" + ef_name)
    _grads(lambda t: sorted_fn(t * t, ids), lambda t: _torch_segment(reduce, t * t, ids, 4, True), data)
    unsorted_fn = getattr(ef.math, "unsorted_segment_" + ef_name)
    ids_u = np.array([2, -1, 0, 2, 1, 0])
    _grads(lambda t: unsorted_fn(t * t, ids_u, num_segments=3),
           lambda t: _torch_segment(reduce, t * t, ids_u, 3, False), data)
    # ids over the two leading axes, one segment empty.
    cube = rng.normal(size=(2, 3, 2))
    ids2 = np.array([[0, 3, 1], [3, -1, 0]])
    got = unsorted_fn(cube, ids2, num_segments=4).numpy()
    want = _torch_segment(reduce, torch.tensor(cube), ids2, 4, False).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ef.errors.InvalidArgumentError, match="sorted"):
        sorted_fn(data, [0, 1, 0, 1, 2, 2])
    with pytest.raises(ef.errors.InvalidArgumentError, match="num_segments"):
        unsorted_fn(data, ids, num_segments=2)
    with pytest.raises(ef.errors.InvalidArgumentError, match="segment_ids"):
        unsorted_fn(data, [0, 1], num_segments=2)


def test_value_dependent_sizes_in_graphs():
    @ef.function
    def f(x, ids, mask):
        y, idx = ef.unique(ids)
        return (ef.boolean_mask(x, mask), ef.math.segment_sum(x, ids), y, idx, ef.where(mask),
                ef.roll(x, 1, 0), ef.repeat(x, 2))

    x = np.array([1.0, 2.0, 3.0])
    masked, seg, y, idx, where, rolled, repeated = f(x, np.array([0, 0, 2]), np.array([True, False, True]))
    np.testing.assert_array_equal(masked.numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(seg.numpy(), [3.0, 0.0, 3.0])
    np.testing.assert_array_equal(y.numpy(), [0, 2])
    np.testing.assert_array_equal(idx.numpy(), [0, 0, 1])
    np.testing.assert_array_equal(where.numpy(), [[0], [2]])
    np.testing.assert_array_equal(rolled.numpy(), [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(repeated.numpy(), [1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
    # Other values, same signature: the sizes follow the values.
    masked, seg, y, *_ = f(x, np.array([1, 1, 1]), np.array([False, False, False]))
    assert masked.shape == (0,)
    np.testing.assert_array_equal(seg.numpy(), [0.0, 6.0])
    np.testing.assert_array_equal(y.numpy(), [1])


@pytest.mark.parametrize("name", ["update", "min", "max", "sub"])
def test_tensor_scatter_nd_matches_torch(name):
    rng = _rng(10)
    t, u = rng.normal(size=(5, 2)), rng.normal(size=(3, 2))
    rows = np.array([3, 0, 4])
    fn = getattr(ef, "tensor_scatter_nd_" + name)

    def reference(x, updates):
        index = torch.tensor(rows).reshape(-1, 1).expand(updates.shape)
        if name == "update":
            return x.index_put((torch.tensor(rows),), updates)
        if name == "sub":
            return x.index_put((torch.tensor(rows),), -updates, accumulate=True)
        return x.scatter_reduce(0, index, updates, reduce="a" + name, include_self=True)

    x = np.concatenate([t.ravel(), u.ravel()])
    def split(v):
        if isinstance(v, torch.Tensor):
            return v[:10].reshape(5, 2), v[10:].reshape(3, 2)
        return ef.reshape(v[:10], [5, 2]), ef.reshape(v[10:], [3, 2])

    _grads(lambda v: fn(split(v)[0] * split(v)[0], rows[:, None], split(v)[1] * 3.0),
           lambda v: reference(split(v)[0] * split(v)[0], split(v)[1] * 3.0), x)
    with pytest.raises(ef.errors.InvalidArgumentError, match="not in"):
        fn(t, [[5]], u[:1])
    with pytest.raises(ef.errors.InvalidArgumentError, match="updates"):
        fn(t, rows[:, None], u[:2])


def test_tensor_scatter_nd_update_duplicates_last_wins():
    x = ef.constant([1.0, 2.0, 3.0])
    v = ef.constant([5.0, 6.0])
    with ef.GradientTape(persistent=True) as tape:
        tape.watch(x)
        tape.watch(v)
        y = ef.tensor_scatter_nd_update(x, [[1], [1]], v) * ef.constant([1.0, 10.0, 100.0])
    np.testing.assert_array_equal(y.numpy(), [1.0, 60.0, 300.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 0.0, 100.0])
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [0.0, 10.0])


def test_bincount_matches_torch():
    rng = _rng(11)
    arr = rng.integers(0, 6, size=12)
    np.testing.assert_array_equal(ef.math.bincount(arr).numpy(), torch.bincount(torch.tensor(arr)).numpy())
    w = rng.normal(size=12)
    _grads(lambda t: ef.math.bincount(arr, weights=t * t, minlength=9),
           # (torch.bincount has no gradient: index_add sums the same way.)
           lambda t: torch.zeros(9, dtype=t.dtype).index_add(0, torch.tensor(arr), t * t), w)
    np.testing.assert_array_equal(ef.math.bincount(arr, maxlength=3).numpy(), np.bincount(arr)[:3])
    assert ef.math.bincount(arr, dtype=ef.float64).dtype == ef.float64
    with pytest.raises(ef.errors.InvalidArgumentError, match="negative"):
        ef.math.bincount([1, -2])
    with pytest.raises(ef.errors.InvalidArgumentError, match="weights"):
        ef.math.bincount([1, 2], weights=[1.0])

    @ef.function
    def counts(a):
        return ef.math.bincount(a)

    np.testing.assert_array_equal(counts(np.array([0, 2, 2])).numpy(), [1, 0, 2])
    np.testing.assert_array_equal(counts(np.array([4, 4, 4])).numpy(), [0, 0, 0, 0, 3])


def test_dynamic_stitch_inverts_dynamic_partition():
    rng = _rng(12)
    data = rng.normal(size=(6, 2))
    parts = np.array([1, 0, 2, 1, 0, 1])
    pieces = ef.dynamic_partition(data, parts, 3)
    positions = ef.dynamic_partition(np.arange(6), parts, 3)
    np.testing.assert_array_equal(ef.dynamic_stitch(positions, pieces).numpy(), data)
    # Gradients against torch's index_put (distinct indices: torch leaves duplicates unordered).
    order = np.array([4, 0, 5, 2, 1, 3])
    _grads(lambda t: ef.dynamic_stitch([order[:2], order[2:]], [(t * t)[:2], t[2:] * 3.0]),
           lambda t: torch.zeros(6, 2, dtype=t.dtype).index_put((torch.tensor(order),),
                                                                 torch.cat([(t * t)[:2], t[2:] * 3.0])), data)
    merged = ef.dynamic_stitch([[0, 1], [1]], [[1.0, 2.0], [9.0]])
    np.testing.assert_array_equal(merged.numpy(), [1.0, 9.0])  # the later pair wins
    with pytest.raises(ef.errors.InvalidArgumentError, match="non-negative"):
        ef.dynamic_stitch([[-1]], [[1.0]])
    with pytest.raises(ef.errors.InvalidArgumentError, match="data"):
        ef.dynamic_stitch([[0], [1]], [[1.0]])
