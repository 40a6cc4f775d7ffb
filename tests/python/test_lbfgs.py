"""ef.optimizers.LBFGS against torch.optim.LBFGS: the same problems in float64, the same
options, several step() calls; the variables after every step must agree to 1e-10
relative (both follow the same algorithm, so only the rounding of dot products differs).

The problems and option sets are chosen so that the comparison means something: for each,
PyTorch run from a start perturbed by 1e-15 stays within 1e-11 of its unperturbed run.
(Fixed unit steps on Rosenbrock's function with a long history are chaotic: there the
perturbed PyTorch run is 1e-8 away after two steps of 20 iterations, so that case runs
one step.)
"""
import numpy as np
import pytest
import torch

import eagerflow as ef

RTOL = 1e-10
STEPS = 3


def rosenbrock(xs, lib):
    """Rosenbrock's function in 5 dimensions, split over two variables (a: 2, b: 3)."""
    x = lib["cat"](xs)
    return lib["sum"](100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def logistic(xs, lib, data=np.random.RandomState(0)):
    """Mean logistic loss of a linear model (weights [4], bias []) on 40 fixed examples."""
    if not hasattr(logistic, "X"):
        logistic.X = data.randn(40, 4)
        logistic.y = (logistic.X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * data.randn(40) > 0).astype(np.float64)
    w, b = xs
    z = lib["matvec"](lib["const"](logistic.X), w) + b
    return lib["mean_bce_logits"](lib["const"](logistic.y), z)


def least_squares(xs, lib, data=np.random.RandomState(1)):
    """0.5 |A W - B|^2 for a [3, 2] matrix W, A [12, 3] and B [12, 2] fixed."""
    if not hasattr(least_squares, "A"):
        least_squares.A = data.randn(12, 3) * np.array([1.0, 3.0, 0.5])
        least_squares.B = data.randn(12, 2)
    (W,) = xs
    r = lib["matmul"](lib["const"](least_squares.A), W) - lib["const"](least_squares.B)
    return 0.5 * lib["sum"](r * r)


EF = {
    "cat": lambda xs: ef.concat([ef.reshape(x, [-1]) for x in xs], 0),
    "sum": ef.reduce_sum,
    "const": ef.constant,
    "matvec": lambda a, w: ef.reshape(ef.matmul(a, ef.reshape(w, [-1, 1])), [-1]),
    "matmul": ef.matmul,
    "mean_bce_logits": lambda y, z: ef.reduce_mean(ef.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z)),
}
TORCH = {
    "cat": lambda xs: torch.cat([x.reshape(-1) for x in xs]),
    "sum": torch.sum,
    "const": torch.from_numpy,
    "matvec": torch.mv,
    "matmul": torch.matmul,
    "mean_bce_logits": lambda y, z: torch.nn.functional.binary_cross_entropy_with_logits(z, y),
}

PROBLEMS = {
    "rosenbrock": (rosenbrock, [np.array([-1.2, 1.0]), np.array([-0.5, 0.8, 1.3])]),
    "logistic": (logistic, [np.array([0.1, -0.2, 0.3, 0.4]), np.array(0.2)]),
    "least_squares": (least_squares, [np.ones((3, 2))]),
}


def run_both(problem, steps=STEPS, lr=1.0, **options):
    """Runs `steps` step() calls of both optimizers; yields the losses they return and
    both variable lists after each."""
    fn, init = PROBLEMS[problem]
    ef_vars = [ef.Variable(v.copy()) for v in init]
    torch_vars = [torch.tensor(v.copy(), requires_grad=True) for v in init]
    ours = ef.optimizers.LBFGS(ef_vars, learning_rate=lr, **options)
    theirs = torch.optim.LBFGS(torch_vars, lr=lr, **options)

    def torch_closure():
        theirs.zero_grad()
        loss = fn(torch_vars, TORCH)
        loss.backward()
        return loss

    for _ in range(steps):
        ef_loss = ours.step(lambda: fn(ef_vars, EF))
        torch_loss = theirs.step(torch_closure)
        yield ef_loss, torch_loss, ef_vars, torch_vars


def assert_close(ef_vars, torch_vars, rtol=RTOL):
    for ours, theirs in zip(ef_vars, torch_vars):
        got, want = np.asarray(ours.numpy()), theirs.detach().numpy()
        scale = max(1.0, np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("history_size,max_iter", [(100, 20), (10, 10), (3, 5), (1, 7), (5, 1)])
def test_iterates_match_torch(problem, line_search_fn, history_size, max_iter):
    chaotic = problem == "rosenbrock" and line_search_fn is None and history_size == 100
    for ef_loss, torch_loss, ef_vars, torch_vars in run_both(
            problem, steps=1 if chaotic else STEPS, history_size=history_size, max_iter=max_iter,
            line_search_fn=line_search_fn):
        assert float(ef_loss.numpy()) == pytest.approx(float(torch_loss), rel=RTOL, abs=RTOL)
        assert_close(ef_vars, torch_vars)


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_learning_rate_max_eval_and_tolerances_match_torch(problem):
    options = dict(lr=0.5, max_iter=15, max_eval=9, tolerance_grad=1e-5, tolerance_change=1e-7, history_size=4)
    for _, _, ef_vars, torch_vars in run_both(problem, **options):
        assert_close(ef_vars, torch_vars)
    for _, _, ef_vars, torch_vars in run_both(problem, line_search_fn="strong_wolfe", **options):
        assert_close(ef_vars, torch_vars)


def test_counters_and_history():
    w = ef.Variable(np.array([3.0, -1.0]))
    lbfgs = ef.optimizers.LBFGS([w], max_iter=4, history_size=2)
    lbfgs.step(lambda: ef.reduce_sum(ef.constant(np.array([1.0, 5.0])) * w * w))
    assert lbfgs.iterations == 4
    assert lbfgs.function_evaluations == 4  # the last iteration does not re-evaluate
    assert lbfgs.history_length == 2
    assert lbfgs.variables[0] is not None


def test_checkpoint_continues_exactly(tmp_path):
    """A checkpoint holds L-BFGS' history (Note [LBFGS state]): a restored run takes the
    same iterates as the uninterrupted one, bit for bit."""
    start = np.array([-1.2, 1.0, 0.5, -0.3, 0.8])

    def run(variable, lbfgs, steps):
        for _ in range(steps):
            lbfgs.step(lambda: rosenbrock([variable], EF))

    w = ef.Variable(start)
    lbfgs = ef.optimizers.LBFGS([w], max_iter=3, history_size=4)
    run(w, lbfgs, 2)
    path = ef.train.Checkpoint(w=w, lbfgs=lbfgs).save(tmp_path / "lbfgs.safetensors")
    assert set(lbfgs.state()) >= {"old_dirs", "old_stps", "ro", "d", "n_iter"}
    run(w, lbfgs, 3)

    w2 = ef.Variable(np.zeros(5))
    restored = ef.optimizers.LBFGS([w2], max_iter=3, history_size=4)
    ef.train.Checkpoint(w=w2, lbfgs=restored).restore(path)
    run(w2, restored, 3)
    np.testing.assert_array_equal(w2.numpy(), w.numpy())
    assert restored.iterations == lbfgs.iterations

    with pytest.raises(ef.errors.InvalidArgumentError, match="history_size = 2"):
        ef.optimizers.LBFGS([w2], history_size=2).restore_state(lbfgs.state())


def test_bad_arguments():
    w = ef.Variable(np.array([1.0]))
    with pytest.raises(ef.errors.InvalidArgumentError, match="history_size must be >= 1"):
        ef.optimizers.LBFGS([w], history_size=0)
    with pytest.raises(ef.errors.InvalidArgumentError, match="line_search_fn"):
        ef.optimizers.LBFGS([w], line_search_fn="backtracking")
    lbfgs = ef.optimizers.LBFGS([w])
    with pytest.raises(ef.errors.InvalidArgumentError, match="one-element float tensor"):
        lbfgs.step(lambda: w * ef.constant(np.array([1.0, 2.0])))
    with pytest.raises(ZeroDivisionError):  # an exception of the closure passes through
        lbfgs.step(lambda: 1 / 0)
    assert lbfgs.iterations == 0
    np.testing.assert_array_equal(w.numpy(), [1.0])


def load_example():
    """examples/python/autoencoder_lbfgs.py as a module."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "autoencoder_lbfgs.py")
    spec = importlib.util.spec_from_file_location("autoencoder_lbfgs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_ufldl_loss(x, w1, w2, b1, b2, lam=3e-3, rho=0.1, beta=3.0):
    hidden = torch.sigmoid(x @ w1.t() + b1)
    out = torch.sigmoid(hidden @ w2.t() + b2)
    rho_hat = hidden.mean(0)
    kl = rho * torch.log(rho / rho_hat) + (1 - rho) * torch.log((1 - rho) / (1 - rho_hat))
    return 0.5 * ((out - x) ** 2).sum() / x.shape[0] + lam / 2 * ((w1 ** 2).sum() + (w2 ** 2).sum()) + beta * kl.sum()


@pytest.mark.parametrize("model", ["tied", "ufldl"])
def test_autoencoder_example_matches_torch(model):
    """The example's model, data and initialisation trained by both libraries' L-BFGS
    (fixed steps, as the benchmark) in float64: the same losses and weights."""
    example = load_example()
    import os
    data_dir = "/usr/share/datasets/fashion-mnist"
    if not os.path.exists(os.path.join(data_dir, "train-images-idx3-ubyte.gz")):
        pytest.skip("dataset-fashion-mnist is not installed")
    x_np = example.read_images(data_dir, 64)
    np.random.seed(1)
    if model == "tied":
        init = [example.uniform_init((784, 196))]
        ef_loss_fn, torch_loss_fn = example.tied_loss, lambda x, w: torch.mean((torch.sigmoid(
            torch.sigmoid(x @ w) @ w.t()) - x) ** 2)
    else:
        init = [example.uniform_init((196, 784)), example.uniform_init((784, 196)), np.zeros(196), np.zeros(784)]
        ef_loss_fn, torch_loss_fn = example.ufldl_loss, torch_ufldl_loss
    x, xt = ef.constant(x_np), torch.from_numpy(x_np)
    ef_vars = [ef.Variable(v.copy()) for v in init]
    torch_vars = [torch.tensor(v.copy(), requires_grad=True) for v in init]
    ours = ef.optimizers.LBFGS(ef_vars, max_iter=1, history_size=5)
    theirs = torch.optim.LBFGS(torch_vars, max_iter=1, history_size=5)

    def closure():
        theirs.zero_grad()
        loss = torch_loss_fn(xt, *torch_vars)
        loss.backward()
        return loss

    for _ in range(6):
        ef_loss = float(ours.step(lambda: ef_loss_fn(x, *ef_vars)).numpy())
        assert ef_loss == pytest.approx(float(theirs.step(closure)), rel=RTOL)
        assert_close(ef_vars, torch_vars)
