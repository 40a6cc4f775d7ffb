"""Optimizers against torch.optim: the same gradient sequence, the same trajectory.

Each case feeds both libraries identical float64 gradients for 30 steps (gradients
that depend on the parameters, so trajectories must agree to keep agreeing) and
compares the parameters after every step. Tolerance: 1e-6 relative in float32 and
1e-12 in float64 (the update rules are the same expressions, so only rounding of the
last bits differs).
"""
import math

import numpy as np
import pytest
import torch

import eagerflow as ef

STEPS = 30
RTOL = {np.float32: 1e-6, np.float64: 1e-12}

# (name, eagerflow factory, torch factory): the same hyperparameters on both sides.
CASES = [
    ("sgd", lambda: ef.optimizers.SGD(0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    ("sgd_momentum", lambda: ef.optimizers.SGD(0.05, momentum=0.9),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
    ("sgd_nesterov", lambda: ef.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)),
    ("adam", lambda: ef.optimizers.Adam(0.01, epsilon=1e-8), lambda p: torch.optim.Adam(p, lr=0.01, eps=1e-8)),
    ("adam_amsgrad", lambda: ef.optimizers.Adam(0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-7, amsgrad=True),
     lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), eps=1e-7, amsgrad=True)),
    ("adamw", lambda: ef.optimizers.AdamW(0.01, weight_decay=0.1, epsilon=1e-8),
     lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1, eps=1e-8)),
    ("rmsprop", lambda: ef.optimizers.RMSprop(0.01, rho=0.9, epsilon=1e-8),
     lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8)),
    ("rmsprop_centered_momentum", lambda: ef.optimizers.RMSprop(0.01, rho=0.95, momentum=0.5, epsilon=1e-6,
                                                               centered=True),
     lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.95, momentum=0.5, eps=1e-6, centered=True)),
    ("adagrad", lambda: ef.optimizers.Adagrad(0.1, initial_accumulator_value=0.1, epsilon=1e-10),
     lambda p: torch.optim.Adagrad(p, lr=0.1, initial_accumulator_value=0.1, eps=1e-10)),
]


def gradient_of(params, step):
    """A gradient that depends on the parameters (a quadratic's, plus a drifting term)."""
    return [2 * p * (i + 1) + math.sin(step + i) for i, p in enumerate(params)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name,make_ef,make_torch", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_step_for_step(name, make_ef, make_torch, dtype):
    rng = np.random.default_rng(0)
    initial = [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((5,)).astype(dtype)]
    ef_vars = [ef.Variable(a) for a in initial]
    torch_params = [torch.tensor(a, requires_grad=True) for a in initial]
    ef_opt, torch_opt = make_ef(), make_torch(torch_params)
    for step in range(STEPS):
        grads = gradient_of([v.numpy().astype(np.float64) for v in ef_vars], step)
        ef_opt.apply_gradients(zip([g.astype(dtype) for g in grads], ef_vars))
        for p, g in zip(torch_params, grads):
            p.grad = torch.tensor(g.astype(dtype))
        torch_opt.step()
        for v, p in zip(ef_vars, torch_params):
            np.testing.assert_allclose(v.numpy(), p.detach().numpy(), rtol=RTOL[dtype], atol=RTOL[dtype],
                                       err_msg=f"{name}, step {step}")
        # Continue both from eagerflow's parameters, so the comparison stays per step.
        with torch.no_grad():
            for v, p in zip(ef_vars, torch_params):
                p.copy_(torch.tensor(v.numpy()))


def test_schedules_match_torch():
    # ExponentialDecay(decay_steps=1) is torch's ExponentialLR; CosineDecay with alpha is
    # CosineAnnealingLR with eta_min = alpha * initial.
    p = [torch.zeros(1, requires_grad=True)]
    cases = [(ef.optimizers.schedules.ExponentialDecay(0.1, 1, 0.9),
              torch.optim.lr_scheduler.ExponentialLR(torch.optim.SGD(p, lr=0.1), gamma=0.9)),
             (ef.optimizers.schedules.CosineDecay(0.1, 20, alpha=0.1),
              torch.optim.lr_scheduler.CosineAnnealingLR(torch.optim.SGD(p, lr=0.1), T_max=20, eta_min=0.01))]
    for schedule, torch_schedule in cases:
        for step in range(20):
            assert schedule(step) == pytest.approx(torch_schedule.get_last_lr()[0], rel=1e-12)
            torch_schedule.optimizer.step()
            torch_schedule.step()


def test_schedule_drives_the_optimizer_and_python_callables_work():
    w = ef.Variable(0.0)
    opt = ef.optimizers.SGD(learning_rate=lambda step: 1.0 / (step + 1))
    for _ in range(3):
        opt.apply_gradients([(ef.constant(1.0), w)])
    assert float(w.numpy()) == pytest.approx(-(1 + 1 / 2 + 1 / 3))
    assert opt.iterations == 3 and opt.learning_rate == pytest.approx(0.25)


def test_minimize_slots_and_errors():
    w = ef.Variable([3.0, -2.0], name="w")
    opt = ef.optimizers.Adam(learning_rate=0.1)
    first = float(opt.minimize(lambda: ef.reduce_sum(ef.square(w)), var_list=[w]))
    for _ in range(200):
        last = float(opt.minimize(lambda: ef.reduce_sum(ef.square(w)), var_list=[w]))
    assert last < 1e-3 * first
    assert opt.get_slot(w, "m").name == "w/m"
    assert [v.name for v in opt.variables()] == ["w/m", "w/v"]
    with pytest.raises(ef.errors.InvalidArgumentError, match="shape"):
        opt.apply_gradients([(ef.constant([1.0]), w)])
    with pytest.raises(ef.errors.NotFoundError):
        opt.get_slot(w, "nope")
    unused = ef.Variable([1.0], name="unused")
    before = w.numpy().copy()
    opt.apply_gradients([(ef.constant([0.5, 0.5]), w), (None, unused)])  # no gradient: skipped
    assert not np.array_equal(w.numpy(), before) and unused.numpy()[0] == 1.0
    with pytest.raises(ef.errors.InvalidArgumentError, match="no gradient for any variable"):
        opt.apply_gradients([(None, w)])  # a step that would do nothing is an error, as in TensorFlow


def test_minimize_without_var_list_trains_the_variables_the_loss_reads():
    # The seed's `optimizer.minimize(lambda: loss_function(model, x, y))`, as TF's eager optimizers.
    w = ef.Variable([3.0, -2.0], name="w")
    frozen = ef.Variable([1.0, 1.0], name="frozen", trainable=False)
    opt = ef.optimizers.SGD(learning_rate=0.25)
    loss = opt.minimize(lambda: ef.reduce_sum(ef.square(w) * frozen))
    assert float(loss) == 13.0
    np.testing.assert_allclose(w.numpy(), [1.5, -1.0])  # w - 0.25 * 2w
    np.testing.assert_array_equal(frozen.numpy(), [1.0, 1.0])
    with pytest.raises(ef.errors.InvalidArgumentError, match="read no trainable variables"):
        opt.minimize(lambda: ef.reduce_sum(frozen))


def test_clipping():
    clipped, norm = ef.clip_by_global_norm([ef.constant([3.0]), None, ef.constant([4.0])], 1.0)
    assert float(norm) == 5.0 and clipped[1] is None
    np.testing.assert_allclose(clipped[0].numpy(), [0.6])
    np.testing.assert_allclose(ef.clip_by_norm([3.0, 4.0], 2.5).numpy(), [1.5, 2.0])
    w = ef.Variable([0.0, 0.0])
    ef.optimizers.SGD(1.0, clipnorm=1.0).apply_gradients([(ef.constant([3.0, 4.0]), w)])
    np.testing.assert_allclose(w.numpy(), [-0.6, -0.8])


def test_clipping_options_are_keyword_only_exclusive_and_zero_is_off():
    # Keras' SGD(0.1, 0.9, False, 1e-4) passes weight_decay=1e-4; here it was clipnorm=1e-4.
    with pytest.raises(TypeError):
        ef.optimizers.SGD(0.1, 0.9, False, 1e-4)
    with pytest.raises(TypeError):
        ef.optimizers.Adam(0.1, 0.9, 0.999, 1e-7, False, 0.01)
    # Keras 3 refuses two; TensorFlow 2 clipped by value before norm, eagerflow the other way.
    with pytest.raises(ef.errors.InvalidArgumentError, match="only one of clipnorm"):
        ef.optimizers.SGD(1.0, clipnorm=1.0, clipvalue=1.0)
    for option in ("clipnorm", "global_clipnorm", "clipvalue"):  # 0 is off, as in Keras
        w = ef.Variable([0.0, 0.0])
        opt = ef.optimizers.SGD(1.0, **{option: 0.0})
        opt.apply_gradients([(ef.constant([0.0, 0.0]), w)])  # clipnorm=0 made this NaN
        opt.apply_gradients([(ef.constant([3.0, 4.0]), w)])
        np.testing.assert_array_equal(w.numpy(), [-3.0, -4.0])


def test_clip_by_global_norm_returns_the_norm_in_the_tensors_dtype():
    # TensorFlow: global_norm has the tensors' dtype; the scale is still computed from the
    # float64 norm, so each clipped value is within float32 rounding of the exact one.
    rng = np.random.default_rng(7)
    values = [rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(5,)).astype(np.float32)]
    clipped, norm = ef.clip_by_global_norm([values[0], None, values[1]], 0.5)
    assert norm.dtype == ef.float32 and norm.shape == ()
    expected_norm = torch.linalg.vector_norm(torch.cat([torch.tensor(v, dtype=torch.float64).flatten()
                                                        for v in values])).item()
    np.testing.assert_allclose(norm.numpy(), expected_norm, rtol=1e-7)  # float32 rounding
    for c, v in zip([clipped[0], clipped[2]], values):
        assert c.dtype == ef.float32
        np.testing.assert_allclose(c.numpy(), v * (0.5 / expected_norm), rtol=2e-7)
    _, norm64 = ef.clip_by_global_norm([np.array([3.0, 4.0])], 1.0)
    assert norm64.dtype == ef.float64 and float(norm64) == 5.0
    _, half = ef.clip_by_global_norm([ef.constant([3.0, 4.0], ef.float16)], 1.0)
    assert half.dtype == ef.float16 and float(half) == 5.0
    _, none = ef.clip_by_global_norm([None], 1.0)
    assert none.dtype == ef.float32 and float(none) == 0.0


# ---- Inside ef.function and graphs (Note [optimizer state lives in variables]) ----

def _quadratic_step(opt, w, x):
    with ef.GradientTape() as tape:
        loss = ef.reduce_sum(ef.square(w * x - 1.0))
    opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
    return loss


@pytest.mark.parametrize("name,make_ef,make_torch", CASES, ids=[c[0] for c in CASES])
def test_a_traced_training_step_matches_eager_steps_from_the_first_call(name, make_ef, make_torch):
    x = ef.constant([0.5, -1.5, 2.0], dtype=ef.float64)
    eager_w, traced_w = (ef.Variable(np.array([1.0, -2.0, 0.5])) for _ in range(2))
    eager_opt, traced_opt = make_ef(), make_ef()
    step = ef.function(lambda data: _quadratic_step(traced_opt, traced_w, data))
    for i in range(6):
        expected = _quadratic_step(eager_opt, eager_w, x)
        np.testing.assert_allclose(step(x).numpy(), expected.numpy(), rtol=1e-12, err_msg=f"{name}, step {i}")
        np.testing.assert_allclose(traced_w.numpy(), eager_w.numpy(), rtol=1e-12, err_msg=f"{name}, step {i}")
    assert step.trace_count == 1
    assert int(traced_opt.iterations) == 6


def test_schedules_and_the_step_counter_follow_each_call_of_a_function():
    x = ef.constant([1.0], dtype=ef.float64)
    for schedule in (ef.optimizers.schedules.ExponentialDecay(0.5, 1, 0.5),
                     lambda step: 1.0 / (ef.cast(step, ef.float64) + 1.0)):  # ops on the step tensor
        eager_w, traced_w = ef.Variable(np.array([1.0])), ef.Variable(np.array([1.0]))
        eager_opt, traced_opt = ef.optimizers.SGD(schedule), ef.optimizers.SGD(schedule)

        @ef.function
        def step(data):
            _quadratic_step(traced_opt, traced_w, data)
            return traced_opt.iterations.value()  # read when the call runs

        for i in range(4):
            _quadratic_step(eager_opt, eager_w, x)
            assert int(step(x)) == i + 1
        np.testing.assert_allclose(traced_w.numpy(), eager_w.numpy(), rtol=1e-12)
        assert traced_opt.learning_rate == pytest.approx(eager_opt.learning_rate)
    # A schedule that only works on numbers fails loudly inside a function.
    opt = ef.optimizers.SGD(lambda step: 0.1 * math.cos(step))
    w = ef.Variable(np.array([1.0]))
    with pytest.raises(ef.errors.FailedPreconditionError, match="symbolic"):  # math.cos asks for float(step)
        ef.function(lambda data: _quadratic_step(opt, w, data))(x)


def test_graph_mode_training_runs_the_operation_apply_gradients_returns():
    x = ef.constant([2.0, 3.0], dtype=ef.float64)
    eager_w, graph_w = ef.Variable(np.array([1.0, -2.0])), ef.Variable(np.array([1.0, -2.0]))
    eager_opt, graph_opt = ef.optimizers.Adam(0.1), ef.optimizers.Adam(0.1)
    g = ef.Graph()
    with g.as_default():
        loss = ef.reduce_sum(ef.square(graph_w * x - 1.0))
        train = graph_opt.apply_gradients(zip(ef.gradients(loss, [graph_w]), [graph_w]))
        with pytest.raises(ef.errors.FailedPreconditionError, match="apply_gradients returns"):
            graph_opt.minimize(lambda: loss, var_list=[graph_w])
    assert isinstance(train, ef.Operation)
    sess = ef.Session(g)  # not a with block: the eager steps beside it stay eager
    sess.run(ef.global_variables_initializer(g))
    for _ in range(3):
        _quadratic_step(eager_opt, eager_w, x)
        sess.run(train)
        np.testing.assert_allclose(graph_w.numpy(), eager_w.numpy(), rtol=1e-12)
    assert graph_opt.iterations == 3
    assert eager_opt.apply_gradients([(ef.constant([0.0, 0.0], dtype=ef.float64), eager_w)]) is None


def _torch_rates(make_scheduler, lr, steps):
    """The learning rate PyTorch's scheduler gives at steps 0..steps-1."""
    import torch
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=lr)
    scheduler = make_scheduler(opt)
    rates = []
    for _ in range(steps):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return rates


def test_schedules_match_pytorch_schedulers():
    import torch.optim.lr_scheduler as sched
    s = ef.optimizers.schedules
    restarts = s.CosineDecayRestarts(0.5, first_decay_steps=5, t_mul=2.0, alpha=0.2)
    want = _torch_rates(lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.1), 0.5, 40)
    np.testing.assert_allclose([restarts(i) for i in range(40)], want, rtol=1e-12, atol=1e-15)
    poly = s.PolynomialDecay(0.3, decay_steps=10, end_learning_rate=0.0, power=2.0)
    want = _torch_rates(lambda o: sched.PolynomialLR(o, total_iters=10, power=2.0), 0.3, 15)
    np.testing.assert_allclose([poly(i) for i in range(15)], want, rtol=1e-12, atol=1e-15)
    # TensorFlow changes value after a boundary; MultiStepLR at its milestone.
    piecewise = s.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.25])
    want = _torch_rates(lambda o: sched.MultiStepLR(o, milestones=[11, 21], gamma=0.5), 1.0, 30)
    np.testing.assert_allclose([piecewise(i) for i in range(30)], want, rtol=1e-12)
    inverse = s.InverseTimeDecay(0.5, decay_steps=4, decay_rate=2.0, staircase=True)
    assert [inverse(i) for i in (0, 3, 4, 9)] == [0.5, 0.5, 0.5 / 3, 0.5 / 5]
    warm = s.CosineDecay(0.0, decay_steps=10, warmup_target=1.0, warmup_steps=4)
    assert [warm(i) for i in (0, 2, 4, 9, 14)] == pytest.approx([0.0, 0.5, 1.0, 0.5, 0.0], abs=1e-12)
    with pytest.raises(ef.errors.InvalidArgumentError, match="one more value"):
        s.PiecewiseConstantDecay([10], [1.0])


@pytest.mark.parametrize("name", ["PiecewiseConstantDecay", "PolynomialDecay", "CosineDecayRestarts"])
def test_schedules_inside_a_traced_training_step(name):
    s = ef.optimizers.schedules
    schedule = {"PiecewiseConstantDecay": lambda: s.PiecewiseConstantDecay([2, 5], [0.5, 0.25, 0.125]),
                "PolynomialDecay": lambda: s.PolynomialDecay(0.5, decay_steps=6, power=1.5, cycle=True),
                "CosineDecayRestarts": lambda: s.CosineDecayRestarts(0.5, first_decay_steps=3, m_mul=0.5)}[name]()
    v = ef.Variable([0.0])
    opt = ef.optimizers.SGD(schedule)

    @ef.function
    def step():
        opt.apply_gradients([(ef.constant([1.0]), v)])  # v -= lr(step) on every call

    for _ in range(12):
        step()
    assert step.trace_count == 1
    assert float(v.numpy()[0]) == pytest.approx(-sum(schedule(i) for i in range(12)), rel=1e-6)


def test_learning_rate_takes_numpy_scalars_and_scalar_tensors():
    # Keras takes them; each gives the same steps as the Python float.
    for lr in (np.float32(0.5), np.float64(0.5), ef.constant(0.5), np.int64(1)):
        w = ef.Variable(np.array([1.0, 2.0]))
        ef.optimizers.SGD(lr).apply_gradients([(np.array([1.0, 1.0]), w)])
        np.testing.assert_allclose(w.numpy(), np.array([1.0, 2.0]) - float(lr))
    for bad in (ef.Variable(0.5), np.array([0.1, 0.2]), ef.constant([0.1])):
        with pytest.raises(TypeError, match="learning_rate must be"):
            ef.optimizers.SGD(bad)
