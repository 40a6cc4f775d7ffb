"""ef.nn.conv2d, max_pool2d, avg_pool2d and batch_normalization against PyTorch.

Values and gradients (seeded with a random upstream gradient) over a table of
configurations, float32 and float64. eagerflow is NHWC with HWIO filters and
TensorFlow's padding names; torch is NCHW with OIHW filters, so the torch side
permutes, and writes "SAME" as explicit padding computed by TensorFlow's rule
(out = ceil(in / stride), pad_total = max((out - 1) * stride + k_eff - in, 0), the
smaller half first), padding with -inf for max pooling and dividing by the count of
positions inside the input for average pooling (TensorFlow's SAME average).

Tolerances: the torch reference always runs in float64 on the same values (float32
inputs are exact in float64), so the budget is eagerflow's own rounding. float64:
1e-10 relative, 1e-12 absolute (sums of at most a few hundred products differ from
torch's order by ~n ulp). float32: 2e-5 relative plus an absolute floor of 2e-5 times
the largest magnitude of the reference (a sum of up to ~300 products, each rounded at
eps = 1.2e-7, accumulates ~sqrt(n) * eps of the sum of magnitudes; outputs that cancel
to near zero are judged against the tensor's scale, not their own).
"""
import math
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import eagerflow as ef

torch.set_num_threads(1)

DTYPES = [np.float32, np.float64]


def assert_close(got, ref, dtype, what):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != torch's {ref.shape}"
    if dtype == np.float64:
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12, err_msg=what)
    else:
        scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
        np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5 * scale, err_msg=what)


def same_pads(size, k, stride, dilation):
    """(before, after) padding of TensorFlow's SAME rule for one spatial dimension."""
    k_eff = (k - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + k_eff - size, 0)
    return total // 2, total - total // 2


def torch_pad(x_nchw, padding, ksize, strides, dilations, value=0.0):
    """x padded as TensorFlow pads it (nothing for VALID)."""
    if padding == "VALID":
        return x_nchw
    top, bottom = same_pads(x_nchw.shape[2], ksize[0], strides[0], dilations[0])
    left, right = same_pads(x_nchw.shape[3], ksize[1], strides[1], dilations[1])
    return F.pad(x_nchw, (left, right, top, bottom), value=value)


def nchw(t):
    return t.permute(0, 3, 1, 2)


def nhwc(t):
    return t.permute(0, 2, 3, 1)


def run_both(rng, dtype, arrays, ef_fn, torch_fn):
    """Values and gradients w.r.t. every input, under a random upstream gradient."""
    xs = [ef.constant(a.astype(dtype)) for a in arrays]
    with ef.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = ef_fn(*xs)
    ts = [torch.tensor(a.astype(dtype).astype(np.float64), requires_grad=True) for a in arrays]
    yt = torch_fn(*ts)
    value = np.array(y.numpy())
    assert value.dtype == dtype
    assert_close(value, yt.detach().numpy(), dtype, "value")
    dy = rng.standard_normal(value.shape).astype(dtype)
    grads = tape.gradient(y, xs, output_gradients=ef.constant(dy))
    tgrads = torch.autograd.grad(yt, ts, grad_outputs=torch.tensor(dy.astype(np.float64)))
    for i, (g, tg) in enumerate(zip(grads, tgrads)):
        assert g.dtype == ef.as_dtype(dtype)
        assert_close(g.numpy(), tg.numpy(), dtype, f"gradient of input {i}")


# (input NHWC, filter HWIO, strides, padding, dilations)
CONV_CASES = [
    ((2, 8, 8, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 8, 7, 3), (3, 3, 3, 4), (2, 2), "SAME", (1, 1)),
    ((1, 9, 9, 2), (3, 2, 2, 3), (2, 1), "VALID", (1, 1)),
    ((2, 9, 8, 2), (3, 3, 2, 2), (1, 1), "SAME", (2, 2)),
    ((1, 10, 9, 3), (2, 3, 3, 2), (3, 2), "VALID", (2, 1)),
    ((3, 6, 6, 5), (1, 1, 5, 4), (1, 1), "VALID", (1, 1)),   # pointwise: a plain GEMM
    ((2, 7, 7, 4), (1, 1, 4, 3), (2, 2), "SAME", (1, 1)),
    ((1, 5, 6, 1), (5, 5, 1, 2), (1, 1), "SAME", (1, 1)),    # window larger than half the image
    ((20, 12, 12, 2), (3, 3, 2, 8), (1, 1), "SAME", (1, 1)),  # several GEMM chunks
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONV_CASES, ids=[str(c) for c in CONV_CASES])
def test_conv2d(case, dtype):
    in_shape, f_shape, strides, padding, dilations = case
    rng = np.random.default_rng(zlib.crc32(repr((case, dtype.__name__)).encode()))
    x, w = rng.standard_normal(in_shape), rng.standard_normal(f_shape)

    def torch_fn(xt, wt):
        xp = torch_pad(nchw(xt), padding, f_shape[:2], strides, dilations)
        return nhwc(F.conv2d(xp, wt.permute(3, 2, 0, 1), stride=strides, dilation=dilations))

    run_both(rng, dtype, [x, w], lambda a, b: ef.nn.conv2d(a, b, list(strides), padding, dilations=list(dilations)),
             torch_fn)


def test_conv2d_transpose_matches_torch():
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 4, 4, 3)), rng.standard_normal((3, 3, 2, 3))  # w: [KH, KW, out C, in C]
    y = ef.nn.conv2d_transpose(ef.constant(x), ef.constant(w), [2, 8, 8, 2], strides=2, padding="SAME")
    # TensorFlow's SAME for 8 -> 4 with k=3, s=2 pads (0, 1): torch's padding=0 with
    # output_padding covering the extra row / column, then crop nothing.
    yt = F.conv_transpose2d(nchw(torch.tensor(x)), torch.tensor(w).permute(3, 2, 0, 1), stride=2, padding=0)
    assert_close(y.numpy(), nhwc(yt)[:, :8, :8, :].numpy(), np.float64, "conv2d_transpose")


def test_conv2d_second_order_matches_torch():
    """d/dx and d/dw of <d(sum conv(x, w)^2)/dx, v>, by nested tapes and by torch."""
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 6, 6, 2)), rng.standard_normal((3, 3, 2, 3))
    v = rng.standard_normal(x.shape)
    xe, we = ef.constant(x), ef.constant(w)
    with ef.GradientTape() as outer:
        outer.watch([xe, we])
        with ef.GradientTape() as inner:
            inner.watch(xe)
            y = ef.nn.conv2d(xe, we, 2, "SAME")
            loss = ef.reduce_sum(y * y)
        gx = inner.gradient(loss, xe)
        z = ef.reduce_sum(gx * ef.constant(v))
    hx, hw = outer.gradient(z, [xe, we])
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    yt = nhwc(F.conv2d(torch_pad(nchw(xt), "SAME", (3, 3), (2, 2), (1, 1)), wt.permute(3, 2, 0, 1), stride=2))
    (gxt,) = torch.autograd.grad((yt * yt).sum(), xt, create_graph=True)
    hxt, hwt = torch.autograd.grad((gxt * torch.tensor(v)).sum(), [xt, wt])
    assert_close(hx.numpy(), hxt.numpy(), np.float64, "d2/dx")
    assert_close(hw.numpy(), hwt.numpy(), np.float64, "d2/dw")


# (input NHWC, ksize, strides, padding)
POOL_CASES = [
    ((2, 8, 8, 3), (2, 2), (2, 2), "VALID"),
    ((2, 7, 7, 3), (2, 2), (2, 2), "SAME"),
    ((1, 9, 8, 4), (3, 3), (2, 2), "SAME"),
    ((2, 6, 7, 2), (3, 2), (1, 1), "SAME"),
    ((1, 9, 9, 2), (3, 3), (3, 2), "VALID"),
    ((1, 5, 5, 1), (5, 5), (1, 1), "SAME"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", POOL_CASES, ids=[str(c) for c in POOL_CASES])
def test_max_pool2d(case, dtype):
    in_shape, ksize, strides, padding = case
    rng = np.random.default_rng(zlib.crc32(repr(("max", case, dtype.__name__)).encode()))
    x = rng.standard_normal(in_shape)  # distinct values: no ties

    def torch_fn(xt):
        xp = torch_pad(nchw(xt), padding, ksize, strides, (1, 1), value=-math.inf)
        return nhwc(F.max_pool2d(xp, ksize, strides))

    run_both(rng, dtype, [x], lambda a: ef.nn.max_pool2d(a, list(ksize), list(strides), padding), torch_fn)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", POOL_CASES, ids=[str(c) for c in POOL_CASES])
def test_avg_pool2d(case, dtype):
    in_shape, ksize, strides, padding = case
    rng = np.random.default_rng(zlib.crc32(repr(("avg", case, dtype.__name__)).encode()))
    x = rng.standard_normal(in_shape)

    def torch_fn(xt):
        xp = torch_pad(nchw(xt), padding, ksize, strides, (1, 1))
        ones = torch_pad(torch.ones_like(nchw(xt)), padding, ksize, strides, (1, 1))
        # TensorFlow's SAME average: divided by the positions inside the input.
        return nhwc(F.avg_pool2d(xp, ksize, strides) / F.avg_pool2d(ones, ksize, strides))

    run_both(rng, dtype, [x], lambda a: ef.nn.avg_pool2d(a, list(ksize), list(strides), padding), torch_fn)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("training", [True, False])
def test_batch_normalization(dtype, training):
    rng = np.random.default_rng(11 + training)
    x = rng.standard_normal((4, 5, 5, 3)) * 2 + 1
    scale, offset = rng.uniform(0.5, 1.5, 3), rng.standard_normal(3)
    mean, var = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    eps = 1e-3

    if training:  # statistics of the batch (population variance, as torch's training mode normalizes)
        def ef_fn(a, s, o):
            m, v = ef.nn.moments(a, [0, 1, 2])
            return ef.nn.batch_normalization(a, m, v, o, s, eps)

        def torch_fn(a, s, o):
            return nhwc(F.batch_norm(nchw(a), None, None, s, o, training=True, eps=eps))
    else:
        def ef_fn(a, s, o):
            return ef.nn.batch_normalization(a, ef.constant(mean.astype(dtype)), ef.constant(var.astype(dtype)), o, s,
                                             eps)

        def torch_fn(a, s, o):
            return nhwc(F.batch_norm(nchw(a), torch.tensor(mean.astype(dtype).astype(np.float64)),
                                     torch.tensor(var.astype(dtype).astype(np.float64)), s, o, training=False,
                                     eps=eps))

    run_both(rng, dtype, [x, scale, offset], ef_fn, torch_fn)


def test_errors():
    x, w = ef.zeros([1, 4, 4, 3]), ef.zeros([3, 3, 2, 2])
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"conv2d.*\[1, 4, 4, 3\].*\[3, 3, 2, 2\]"):
        ef.nn.conv2d(x, w, 1, "SAME")
    with pytest.raises(ef.errors.InvalidArgumentError, match="padding"):
        ef.nn.max_pool2d(x, 2, 2, "valid")
    with pytest.raises(ef.errors.InvalidArgumentError, match="strides"):
        ef.nn.avg_pool2d(x, 2, 0, "VALID")
    with pytest.raises(ef.errors.UnimplementedError, match="NHWC"):
        ef.nn.conv2d(x, ef.zeros([3, 3, 3, 2]), 1, "SAME", data_format="NCHW")


@pytest.mark.parametrize("strides,dilations,padding", [(1, 1, "VALID"), ([2, 1, 2], 1, "SAME"),
                                                        ([1, 1, 2, 1, 1], [1, 2, 1, 1, 1], "SAME"),
                                                        (1, [2, 1, 1], "VALID")])
def test_conv3d_and_its_gradients_match_torch(strides, dilations, padding):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 6, 5, 7, 3))
    w = rng.standard_normal((3, 2, 3, 3, 4))
    ex, ew = ef.constant(x), ef.constant(w)
    with ef.GradientTape() as tape:
        tape.watch([ex, ew])
        y = ef.nn.conv3d(ex, ew, strides, padding, dilations=dilations)
        g = np.cos(np.arange(np.prod(y.shape)).reshape(y.shape))
        loss = ef.reduce_sum(y * g)
    dx, dw = tape.gradient(loss, [ex, ew])
    s = [strides] * 3 if isinstance(strides, int) else strides[-3:] if len(strides) == 3 else strides[1:4]
    d = [dilations] * 3 if isinstance(dilations, int) else dilations if len(dilations) == 3 else dilations[1:4]
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    nc = tx.permute(0, 4, 1, 2, 3)
    if padding == "SAME":  # TensorFlow's split: the smaller half first
        pads = []
        for size, stride, dil, k in reversed(list(zip(x.shape[1:4], s, d, w.shape[:3]))):
            total = max((math.ceil(size / stride) - 1) * stride + (k - 1) * dil + 1 - size, 0)
            pads += [total // 2, total - total // 2]
        nc = F.pad(nc, pads)
    ty = F.conv3d(nc, tw.permute(4, 3, 0, 1, 2), stride=s, dilation=d).permute(0, 2, 3, 4, 1)
    (ty * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dx.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dw.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_conv1d_matches_torch():
    rng = np.random.default_rng(12)
    x, w = rng.standard_normal((3, 11, 2)), rng.standard_normal((4, 2, 5))
    y = ef.nn.conv1d(x, w, stride=[1, 2, 1], padding="VALID", dilations=2).numpy()
    expected = F.conv1d(torch.tensor(x).permute(0, 2, 1), torch.tensor(w).permute(2, 1, 0), stride=2, dilation=2)
    np.testing.assert_allclose(y, expected.permute(0, 2, 1).numpy(), rtol=1e-12, atol=1e-12)


def test_conv3d_empty_shapes_and_clear_errors():
    x = np.ones((1, 4, 5, 6, 3), np.float32)
    assert ef.nn.conv3d(np.ones((1, 0, 5, 6, 3), np.float32), np.ones((2, 3, 3, 3, 4), np.float32), 1,
                        "SAME").shape == (1, 0, 5, 6, 4)
    assert ef.nn.conv3d(x, np.ones((2, 3, 3, 3, 0), np.float32), 1, "SAME").shape == (1, 4, 5, 6, 0)
    zero_in = ef.nn.conv3d(np.ones((1, 4, 5, 6, 0), np.float32), np.ones((2, 3, 3, 0, 4), np.float32), 1, "SAME")
    assert zero_in.shape == (1, 4, 5, 6, 4) and float(ef.reduce_max(ef.abs(zero_in))) == 0
    with pytest.raises(ef.errors.InvalidArgumentError, match="conv3d.*empty window"):
        ef.nn.conv3d(x, np.zeros((0, 3, 3, 3, 4), np.float32), 1, "SAME")
    fn = ef.function(lambda v: ef.nn.conv3d(v, np.ones((2, 2, 2, 3, 1), np.float32), 1, "VALID"),
                     input_signature=[ef.TensorSpec([2, 4, 5, 6, None], ef.float32)])
    with pytest.raises(ef.errors.InvalidArgumentError, match="conv3d: needs known"):
        fn(np.ones((2, 4, 5, 6, 3), np.float32))
    with pytest.raises(ef.errors.InvalidArgumentError, match="conv1d.*'stride'"):
        ef.nn.conv1d(np.ones((1, 5, 2), np.float32), np.ones((2, 2, 1), np.float32), 0, "SAME")
    with pytest.raises(ef.errors.InvalidArgumentError, match="conv1d.*channels"):
        ef.nn.conv1d(np.ones((1, 5, 2), np.float32), np.ones((2, 3, 1), np.float32), 1, "SAME")
