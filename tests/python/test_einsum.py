"""ef.einsum against torch.einsum: values (float32, float64, int32), gradients of both
orders (float64), inside ef.function with unknown dimensions, and bad equations."""
import numpy as np
import pytest
import torch

import eagerflow as ef
from test_ops_vs_torch import FLOAT_IDS, FLOATS, check, check_second_order, rand, rng  # noqa: F401

# (equation, operand shapes): each part of the grammar, the shapes small enough for
# float64 gradients to stay cheap.
CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ji,jk->ik", [(4, 3), (4, 5)]),
    ("ij,j->i", [(3, 4), (4,)]),  # matrix-vector
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # attention scores
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),  # attention output
    ("bhqd,hbkd->bhqk", [(2, 3, 4, 5), (3, 2, 6, 5)]),  # batch labels in another order
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # ellipses of different ranks broadcast
    ("...i,...i->...", [(5, 1, 3), (2, 3)]),
    ("i...->...", [(3, 2, 4)]),
    ("...i->i", [(2, 3, 4)]),  # an ellipsis summed away, as torch
    ("ii", [(4, 4)]),  # trace
    ("ii->i", [(4, 4)]),  # diagonal
    ("bii->bi", [(2, 3, 3)]),
    ("iij->ij", [(3, 3, 2)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("i,j->ij", [(3,), (4,)]),  # outer product
    ("i,i->", [(5,), (5,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 6)]),
    ("ab,bc,ca->", [(3, 4), (4, 5), (5, 3)]),  # a closed chain
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),  # bilinear form
    (" b i d , b j d -> b i j ", [(2, 3, 4), (2, 5, 4)]),  # spaces
    ("ba,Ab", [(2, 3), (4, 2)]),  # implicit order: upper case first
    ("ij,jk->ik", [(3, 1), (4, 5)]),  # a size-1 label broadcasts
    ("i,->i", [(3,), ()]),  # a scalar operand
]
CASE_IDS = [f"{eq.replace(' ', '')}-{len(shapes)}" for eq, shapes in CASES]

# float32 contractions of up to ~20 terms of magnitude <= 4 each: a few ulp of the sum.
F32_ATOL = 1e-4


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("equation,shapes", CASES, ids=CASE_IDS)
def test_einsum_matches_torch(rng, equation, shapes, dtype):
    arrays = [rand(rng, shape, dtype) for shape in shapes]
    check(rng, lambda *xs: ef.einsum(equation, *xs), lambda *ts: torch.einsum(equation, *ts), *arrays,
          grad=dtype == np.float64, value_atol=F32_ATOL if dtype == np.float32 else None)


@pytest.mark.parametrize("equation,shapes", CASES[::3], ids=CASE_IDS[::3])
def test_einsum_second_order(rng, equation, shapes):
    arrays = [rand(rng, shape, np.float64) for shape in shapes]
    check_second_order(rng, lambda *xs: ef.einsum(equation, *xs), lambda *ts: torch.einsum(equation, *ts), *arrays)


INT_CASES = [0, 5, 6, 9, 14, 15, 22, 24, 28, 29, 31]


@pytest.mark.parametrize("equation,shapes", [CASES[i] for i in INT_CASES], ids=[CASE_IDS[i] for i in INT_CASES])
def test_einsum_int32(rng, equation, shapes):
    arrays = [rng.integers(-5, 5, size=shape).astype(np.int32) for shape in shapes]
    got = ef.einsum(equation, *arrays)
    assert got.dtype == ef.int32
    want = torch.einsum(equation, *[torch.from_numpy(a.astype(np.int64)) for a in arrays]).numpy()
    np.testing.assert_array_equal(got.numpy(), want)


def test_einsum_large_attention_float32(rng):
    q, k = rand(rng, (2, 4, 64, 32), np.float32), rand(rng, (2, 4, 48, 32), np.float32)
    got = ef.einsum("bhqd,bhkd->bhqk", q, k).numpy()
    want = torch.einsum("bhqd,bhkd->bhqk", torch.from_numpy(q).double(), torch.from_numpy(k).double()).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_einsum_in_function_with_unknown_dimensions(rng):
    spec = [ef.TensorSpec([None, 3, 4], ef.float64), ef.TensorSpec([None, 4, None], ef.float64)]

    @ef.function(input_signature=spec)
    def scores_and_gradients(a, b):
        with ef.GradientTape() as tape:
            tape.watch([a, b])
            y = ef.einsum("bij,bjk->bik", a, b)
            loss = ef.reduce_sum(y * y)
        return y, tape.gradient(loss, [a, b])

    for batch, n in [(2, 5), (3, 1)]:
        a, b = rand(rng, (batch, 3, 4), np.float64), rand(rng, (4, n), np.float64)
        b = np.broadcast_to(b, (batch, 4, n)).copy()
        y, (ga, gb) = scores_and_gradients(a, b)
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        ty = torch.einsum("bij,bjk->bik", ta, tb)
        tga, tgb = torch.autograd.grad((ty * ty).sum(), [ta, tb])
        np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(ga.numpy(), tga.numpy(), rtol=1e-10)
        np.testing.assert_allclose(gb.numpy(), tgb.numpy(), rtol=1e-10)


def test_einsum_in_function_with_known_shapes(rng):
    @ef.function
    def chain(a, b, c):
        return ef.einsum("ij,jk,kl->il", a, b, c)

    arrays = [rand(rng, shape, np.float32) for shape in [(3, 4), (4, 5), (5, 2)]]
    want = torch.einsum("ij,jk,kl->il", *[torch.from_numpy(a).double() for a in arrays]).numpy()
    np.testing.assert_allclose(chain(*arrays).numpy(), want, rtol=1e-5, atol=1e-5)


def test_einsum_diagonal_of_unknown_size_is_a_clear_error():
    @ef.function(input_signature=[ef.TensorSpec([None, None], ef.float32)])
    def diagonal(x):
        return ef.einsum("ii->i", x)

    with pytest.raises(ef.errors.UnimplementedError, match="einsum.*diagonal"):
        diagonal(np.ones((3, 3), np.float32))


@pytest.mark.parametrize("equation,shapes,dtypes,match", [
    ("ij,jk->ik", [(2, 3)], None, r"einsum.*2 input terms but 1 operands.*\[2, 3\]"),
    ("ijk,jk->ik", [(2, 3), (3, 4)], None, r"einsum.*operand 0.*names 3.*\[2, 3\]"),
    ("ij,kj->ik", [(2, 3), (3, 4)], None, r"einsum.*'j' has size 3.*size 4.*\[2, 3\], \[3, 4\]"),
    ("ii->i", [(2, 3)], None, r"einsum.*'i' repeats.*\[2, 3\]"),
    ("ij,j%->i", [(2, 3), (3, 4)], None, r"einsum.*equation.*'%'"),
    ("ij->ik", [(2, 3)], None, r"einsum.*'k'.*no input"),
    ("ij->ii", [(2, 3)], None, r"einsum.*repeats 'i'"),
    ("ij->i->j", [(2, 3)], None, r"einsum.*more than one '->'"),
    ("ij,jk", [(2, 3), (3, 4)], [np.float32, np.float64], r"einsum.*operand 1.*float64.*float32.*\[3, 4\]"),
    ("i", [(2,)], [np.bool_], r"einsum.*bool.*\[2\]"),
])
def test_einsum_bad_input(equation, shapes, dtypes, match):
    dtypes = dtypes or [np.float32] * len(shapes)
    operands = [np.zeros(shape, dtype) for shape, dtype in zip(shapes, dtypes)]
    with pytest.raises(ef.errors.InvalidArgumentError, match=match):
        ef.einsum(equation, *operands)


def test_einsum_is_in_linalg_and_takes_name():
    assert ef.linalg.einsum is ef.einsum
    np.testing.assert_allclose(ef.einsum("i,i", [1., 2.], [3., 4.], name="dot").numpy(), 11.)
