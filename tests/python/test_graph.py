"""Graph mode (ef.Graph, ef.placeholder, ef.Session, ef.gradients) and ef.function."""
import gc
import weakref

import numpy as np
import pytest
import torch

import eagerflow as ef


def test_recitation_graph_mode_program():
    g = ef.Graph()
    with g.as_default():
        in_a = ef.placeholder(dtype=ef.float32, shape=(2,))
        W = ef.Variable(ef.ones(shape=(2, 2)), name="W")
        b = ef.Variable(ef.zeros(shape=(2,)), name="b")
        out_a = W * in_a + b
    with ef.Session(graph=g) as sess:
        sess.run(ef.global_variables_initializer())
        outs = sess.run(out_a, feed_dict={in_a: [1, 0]})
    np.testing.assert_array_equal(outs, [[1, 0], [1, 0]])


def test_partial_shapes_feeds_and_structures():
    g = ef.Graph()
    with g.as_default():
        x = ef.placeholder(ef.float32, shape=(None, 3), name="x")
        y = ef.matmul(x, ef.ones((3, 2)))
        assert y.shape == (None, 2)
        with pytest.raises(ef.errors.InvalidArgumentError, match="matmul"):
            ef.matmul(x, ef.ones((4, 2)))
        s = ef.reduce_sum(y)
    sess = ef.Session(g)
    out = sess.run({"y": y, "both": [y, s]}, feed_dict={x: np.ones((2, 3), np.float32)})
    assert out["y"].shape == (2, 2) and out["both"][1] == 12
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"'x'.*\[2, 2\]"):
        sess.run(y, feed_dict={x: np.ones((2, 2), np.float32)})
    with pytest.raises(ef.errors.InvalidArgumentError, match="placeholder 'x'"):
        sess.run(y)


def test_symbolic_gradients_and_assignments():
    g = ef.Graph()
    with g.as_default():
        w = ef.Variable([1.0, 2.0], name="w")
        x = ef.placeholder(ef.float32, shape=(2,))
        loss = ef.reduce_sum(w * x) + ef.reduce_sum(w * w)
        (dw,) = ef.gradients(loss, [w])
        train = w.assign_sub(0.5 * dw)
        print(g)  # the listing is readable
    with ef.Session(g) as sess:
        sess.run(ef.global_variables_initializer())
        np.testing.assert_allclose(sess.run(dw, {x: [3.0, 4.0]}), [5, 8])
        sess.run(train, {x: [3.0, 4.0]})
    np.testing.assert_allclose(w.numpy(), [1 - 2.5, 2 - 4])
    assert "digraph" in g.as_dot()


def test_function_traces_once_per_signature():
    calls = []

    @ef.function
    def f(x, y, scale=1.0):
        calls.append(1)  # Python side effects happen while tracing
        return ef.tanh(x * y) * scale

    a, b = ef.constant([1.0, 2.0]), ef.constant([0.5, -1.0])
    np.testing.assert_allclose(f(a, b).numpy(), np.tanh([0.5, -2.0]), rtol=1e-6)
    f(b, a)
    assert f.experimental_get_tracing_count() == 1
    f(a, b, scale=2.0)  # a new non-tensor value: a new trace
    f(np.ones(3, np.float32), np.ones(3, np.float32))  # a new shape
    assert f.experimental_get_tracing_count() == 3 and len(calls) == 3


def test_function_input_signature_and_structures():
    @ef.function(input_signature=[ef.TensorSpec(shape=(None, 2), dtype=ef.float32)])
    def stats(x):
        return {"sum": ef.reduce_sum(x, axis=0), "n": ef.shape(x)[0]}

    out = stats(np.ones((3, 2), np.float32))
    np.testing.assert_array_equal(out["sum"].numpy(), [3, 3])
    assert int(out["n"]) == 3
    stats(np.ones((7, 2), np.float32))
    assert stats.experimental_get_tracing_count() == 1
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"float32\[\?, 2\]"):
        stats(np.ones((3, 3), np.float32))
    concrete = stats.get_concrete_function()
    assert "reduce_sum" in concrete.pretty_printed_graph()


def test_function_variables_by_reference_and_tape_gradients():
    w = ef.Variable([1.0, -2.0])
    counter = ef.Variable(0, trainable=False)

    @ef.function
    def loss(x):
        counter.assign_add(1)
        return ef.reduce_sum(w * w * x)

    with ef.GradientTape() as tape:
        value = loss(ef.constant([3.0, 4.0]))
    np.testing.assert_allclose(tape.gradient(value, w).numpy(), [6, -16])
    w.assign([2.0, 2.0])
    np.testing.assert_allclose(loss(ef.constant([1.0, 1.0])).numpy(), 8)
    assert int(counter.numpy()) == 2


def test_gradients_through_the_value_an_assignment_returns_match_eager():
    """Eagerly `v.assign(value)` returns `value` itself, so a tape differentiates
    through it; in a function the assignment node stopped gradients: d/dx of
    v.assign(2 x) * x at x = 3 was 6 (only the factor x) instead of 4 x = 12."""
    def body(x, v, kind):
        return getattr(v, kind)(x * 2.0) * x

    def tape_inside(x, v, kind):
        with ef.GradientTape() as tape:
            tape.watch(x)
            y = body(x, v, kind)
        return tape.gradient(y, x)

    for kind, expected in [("assign", 12.0), ("assign_add", 14.0)]:  # (v + 2 x) x: v + 4 x
        results = []
        for traced in (False, True):
            v = ef.Variable(2.0, trainable=False)
            f = ef.function(lambda x: body(x, v, kind)) if traced else (lambda x: body(x, v, kind))
            x = ef.constant(3.0)
            with ef.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            results.append(float(tape.gradient(y, x)))
            v = ef.Variable(2.0, trainable=False)
            inside = ef.function(lambda x: tape_inside(x, v, kind)) if traced else (lambda x: tape_inside(x, v, kind))
            results.append(float(inside(x)))
        assert results == [expected] * 4, kind


def test_function_second_order():
    f = ef.function(lambda x: x * x * x)
    x = ef.constant(2.0)
    with ef.GradientTape() as outer:
        outer.watch(x)
        with ef.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
    assert float(dy) == pytest.approx(12.0)
    assert float(outer.gradient(dy, x)) == pytest.approx(12.0)


def test_bool_of_symbolic_tensor_names_cond():
    @ef.function
    def f(x):
        if ef.reduce_sum(x) > 0:
            return x
        return -x

    with pytest.raises(ef.errors.FailedPreconditionError, match="cond"):
        f(ef.constant([1.0]))



def collatz_steps(n):
    def body(n, steps):
        n = ef.cond(ef.equal(n % 2, 0), lambda: n // 2, lambda: 3 * n + 1)
        return n, steps + 1
    return ef.while_loop(lambda n, steps: n > 1, body, (n, 0))[1]


def test_cond_and_while_loop_eager_and_traced():
    assert int(collatz_steps(ef.constant(27))) == 111
    traced = ef.function(collatz_steps)
    assert int(traced(ef.constant(27))) == 111
    assert int(traced(ef.constant(6))) == 8
    assert traced.experimental_get_tracing_count() == 1

    @ef.function
    def relu_like(x):
        return ef.cond(ef.reduce_sum(x) > 0, lambda: x * 2.0, lambda: {"neg": -x}["neg"])

    np.testing.assert_allclose(relu_like(ef.constant([1.0, 2.0])).numpy(), [2, 4])
    np.testing.assert_allclose(relu_like(ef.constant([-1.0, -2.0])).numpy(), [1, 2])
    x = ef.constant(2.0)
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = ef.function(lambda x: ef.cond(x > 0, lambda: x * x, lambda: -x))(x)
    assert float(tape.gradient(y, x)) == pytest.approx(4.0)


# ---- Variables created by functions (Note [variables created by functions]) ----

def test_a_keras_training_step_is_a_function_from_its_first_call():
    ef.random.set_seed(1)
    model = ef.keras.Sequential([ef.keras.layers.Dense(4, activation="relu"), ef.keras.layers.Dense(1)])
    opt = ef.optimizers.Adam(0.01)

    @ef.function
    def train_step(x, y):
        with ef.GradientTape() as tape:
            loss = ef.reduce_mean(ef.square(model(x) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    x, y = ef.ones([8, 3]), ef.ones([8, 1])  # a target the output bias alone can reach: the loss must fall
    first = float(train_step(x, y))  # builds the layers and the optimizer's slots
    assert len(model.trainable_variables) == 4 and len(opt.variables()) == 8
    for _ in range(20):
        last = float(train_step(x, y))
    train_step(x[:5], y[:5])  # a new batch size retraces and reuses every variable
    ef.random.set_seed(None)
    assert last < first and train_step.trace_count == 2 and len(opt.variables()) == 8


def test_only_the_first_trace_may_create_variables():
    made = []

    @ef.function
    def f(x):
        made.append(ef.Variable(lambda: ef.zeros([]), name="made"))  # a callable initial value is lifted
        return x * 2.0

    assert float(f(ef.constant(1.0))) == 2.0
    with pytest.raises(ef.errors.FailedPreconditionError, match="'made'.*'f'.*first trace"):
        f(ef.constant([1.0, 2.0]))
    assert len(made) == 1
    with pytest.raises(ef.errors.FailedPreconditionError, match="init scope"):
        ef.function(lambda x: ef.Variable(x * 2.0).value())(ef.constant(1.0))


def test_init_scope_computes_state_outside_the_trace():
    state = {}

    @ef.function
    def count(x):
        if "n" not in state:
            with ef.init_scope():
                start = ef.zeros([])  # an op: run now, not added to the trace
                state["eager"] = not start.is_symbolic
                state["n"] = ef.Variable(start, trainable=False)
        state["n"].assign_add(ef.reduce_sum(x))
        return state["n"].value()

    assert float(count(ef.constant([1.0, 2.0]))) == 3.0
    assert float(count(ef.constant([1.0, 2.0]))) == 6.0
    assert state["eager"] and count.trace_count == 1


def test_each_instance_of_a_class_gets_its_own_function_for_a_method():
    class Scaler(ef.Module):
        def __init__(self):
            super().__init__()
            self.scale = None

        @ef.function
        def __call__(self, x):
            if self.scale is None:
                self.scale = ef.Variable(lambda: ef.ones([]) * 3.0)
            return x * self.scale

    a, b = Scaler(), Scaler()
    assert float(a(ef.constant(2.0))) == 6.0
    assert float(b(ef.constant(1.0))) == 3.0  # its own first trace: it may create its variable
    assert a.scale is not b.scale


def test_arguments_named_by_their_address_are_kept_while_their_traces_are():
    """A Variable argument is part of the signature by identity, and so is any object
    whose repr shows its address (a function, a plain object). A new object at a freed
    one's address reused that object's trace: 199 of 200 fresh Variables read the first
    one's value, and fn(x) ran the first lambda for every later one."""
    @ef.function
    def read(v):
        return v.read_value() * 2.0

    for k in range(50):
        assert float(read(ef.Variable(float(k)))) == 2.0 * k  # the Variable goes right after the call

    @ef.function
    def apply(x, fn):
        return fn(x)

    class Config:
        def __init__(self, factor):
            self.factor = factor

    @ef.function
    def scale(x, config):
        return x * config.factor

    for k in range(20):
        assert float(apply(ef.constant(1.0), lambda x: x * float(k))) == k
        assert float(scale(ef.constant(1.0), Config(float(k)))) == k

    # A method's instance is no such argument: its Function goes with it.
    class Scaled:
        def __init__(self, factor):
            self.factor = factor

        @ef.function
        def __call__(self, x):
            return x * self.factor

    alive = []
    for k in range(5):
        s = Scaled(float(k))
        assert float(s(ef.constant(1.0))) == k
        alive.append(weakref.ref(s))
        del s
    gc.collect()
    assert not any(r() for r in alive)


@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize("axis", [-1, 0, 1, [0, 2], None])
def test_mean_like_reductions_with_unknown_dimensions_match_numpy(axis, keepdims):
    # With unknown dimensions the count of a mean is itself a reduction; it once had
    # the wrong shape under keepdims, so sum / count broadcast into a square.
    ops = {"reduce_mean": np.mean, "reduce_variance": np.var, "reduce_std": np.std}
    for name, reference in ops.items():
        op = getattr(ef, name)

        @ef.function(input_signature=[ef.TensorSpec([None, None, 4], ef.float64)])
        def reduce(t):
            return op(t, axis=axis, keepdims=keepdims)

        for batch in (3, 4):
            x = np.random.default_rng(batch).standard_normal((batch, 3, 4))
            expected = reference(x, axis=None if axis is None else tuple(np.atleast_1d(axis)), keepdims=keepdims)
            got = reduce(x)
            assert got.shape == expected.shape, (name, batch)
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, err_msg=name)


def test_gradients_of_broadcasts_over_unknown_dimensions_match_eager():
    # An unknown size may be 1 when the function runs, against a larger size: x [None]
    # times w [3] with x of shape [1] broadcasts x, so its gradient sums to shape [1]
    # (it once came back with the broadcast shape [3]: the static shapes said nothing
    # was broadcast).
    @ef.function(input_signature=[ef.TensorSpec([None, None], ef.float64)] * 2)
    def grads(a, b):
        with ef.GradientTape() as tape:
            tape.watch([a, b])
            loss = ef.reduce_sum(a * b * b + ef.maximum(a, b) - ef.squared_difference(b, a))
        return tape.gradient(loss, [a, b])

    rng = np.random.default_rng(0)
    for shape_a, shape_b in [((1, 1), (2, 3)), ((2, 1), (1, 3)), ((2, 3), (2, 3)), ((1, 3), (4, 1)), ((2, 3), (1, 1))]:
        a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        (ta * tb * tb + torch.maximum(ta, tb) - (tb - ta) ** 2).sum().backward()
        got = grads(a, b)
        for g, expected in zip(got, (ta.grad, tb.grad)):
            assert g.shape == tuple(expected.shape), (shape_a, shape_b)
            np.testing.assert_allclose(g.numpy(), expected.numpy(), rtol=1e-12, err_msg=str((shape_a, shape_b)))


_LOSSES = [
    ("mean_squared_error", ef.keras.losses.MeanSquaredError, torch.nn.functional.mse_loss),
    ("mean_absolute_error", ef.keras.losses.MeanAbsoluteError, torch.nn.functional.l1_loss),
    ("binary_crossentropy", ef.keras.losses.BinaryCrossentropy, None),
    ("categorical_crossentropy", ef.keras.losses.CategoricalCrossentropy, None),
    ("huber", ef.keras.losses.Huber, lambda p, t: torch.nn.functional.huber_loss(p, t, delta=1.0)),
    ("kl_divergence", ef.keras.losses.KLDivergence, None),
    ("poisson", ef.keras.losses.Poisson, None),
    ("log_cosh", ef.keras.losses.LogCosh, None),
    ("cosine_similarity", ef.keras.losses.CosineSimilarity, None),
]


@pytest.mark.parametrize("name,loss_class,torch_loss", _LOSSES, ids=[case[0] for case in _LOSSES])
def test_traced_losses_check_the_shapes_they_run_with(name, loss_class, torch_loss):
    # With [None, None] specs the static shapes match; y_true [4, 1] and y_pred [1, 4]
    # then broadcast to [4, 4] in the loss's arithmetic, which returned a number where
    # eager raises. The check now runs with the shapes the function is called with.
    loss = loss_class()

    @ef.function(input_signature=[ef.TensorSpec([None, None], ef.float64)] * 2)
    def traced(y_true, y_pred):
        return loss(y_true, y_pred)

    rng = np.random.default_rng(1)
    y_true, y_pred = rng.uniform(0.1, 0.9, (4, 1)), rng.uniform(0.1, 0.9, (1, 4))
    message = rf"{name}: y_true and y_pred must have the same shape, got \[4, 1\] and \[1, 4\]"
    with pytest.raises(ef.errors.InvalidArgumentError, match=message):
        loss(y_true, y_pred)
    with pytest.raises(ef.errors.InvalidArgumentError, match=message):
        traced(y_true, y_pred)
    for shape in [(4, 1), (1, 4), (3, 5)]:
        y_true, y_pred = rng.uniform(0.1, 0.9, shape), rng.uniform(0.1, 0.9, shape)
        got = traced(y_true, y_pred).numpy()
        np.testing.assert_allclose(got, loss(y_true, y_pred).numpy(), rtol=1e-12, err_msg=str(shape))
        if torch_loss is not None:
            expected = torch_loss(torch.tensor(y_pred), torch.tensor(y_true)).item()
            np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=str(shape))


def test_traced_loss_weights_must_broadcast_to_the_losses():
    loss = ef.keras.losses.MeanSquaredError()

    @ef.function(input_signature=[ef.TensorSpec([None, None], ef.float64)] * 2 + [ef.TensorSpec([None], ef.float64)])
    def traced(y_true, y_pred, weight):
        return loss(y_true, y_pred, sample_weight=weight)

    y = np.ones((1, 2))
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"sample_weight must broadcast.*\[3\] and \[1\]"):
        traced(y, y, np.ones(3))
    x = np.arange(6.0).reshape(3, 2)
    for weight in (np.array([1.0, 2.0, 3.0]), np.array([2.0])):
        np.testing.assert_allclose(traced(x, 2 * x, weight).numpy(), loss(x, 2 * x, sample_weight=weight).numpy())


_METRICS = [
    ("accuracy", ef.keras.metrics.Accuracy),
    ("binary_accuracy", ef.keras.metrics.BinaryAccuracy),
    ("categorical_accuracy", ef.keras.metrics.CategoricalAccuracy),
    ("mean_squared_error", ef.keras.metrics.MeanSquaredError),
    ("mean_absolute_error", ef.keras.metrics.MeanAbsoluteError),
    ("auc", ef.keras.metrics.AUC),
    ("precision", ef.keras.metrics.Precision),
]


@pytest.mark.parametrize("name,metric_class", _METRICS, ids=[case[0] for case in _METRICS])
def test_traced_metric_updates_check_the_shapes_they_run_with(name, metric_class):
    traced_metric, eager_metric = metric_class(), metric_class()

    @ef.function(input_signature=[ef.TensorSpec([None, None], ef.float32)] * 2)
    def update(y_true, y_pred):
        traced_metric.update_state(y_true, y_pred)
        return traced_metric.result()

    rng = np.random.default_rng(2)
    with pytest.raises(ef.errors.InvalidArgumentError, match=r"same shape, got \[4, 1\] and \[1, 4\]"):
        update(np.ones((4, 1), np.float32), np.ones((1, 4), np.float32))
    # Updates at several batch sizes accumulate as eagerly (counting the elements fed).
    for batch in (1, 3, 5):
        y_true = rng.integers(0, 2, (batch, 3)).astype(np.float32)
        y_pred = rng.uniform(0, 1, (batch, 3)).astype(np.float32)
        if name == "accuracy":
            y_pred = np.round(y_pred)
        eager_metric.update_state(y_true, y_pred)
        np.testing.assert_allclose(update(y_true, y_pred).numpy(), eager_metric.result().numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "name,forward",
    [
        ("x[1:]", lambda x: x[1:]),
        ("x[-1]", lambda x: x[-1]),
        ("x[::-2, 1:]", lambda x: x[::-2, 1:]),
        ("x[:, None, -2]", lambda x: x[:, None, -2]),
        ("slice", lambda x: ef.slice(x, [1, 0], [-1, 1])),
    ],
)
def test_gradients_of_slices_with_unknown_dimensions_match_eager_and_torch(name, forward):
    # The gradient put the slice back with pads sized by the static shape, which failed
    # (or, earlier, came out of the wrong shape) when the sizes were unknown while tracing.
    def loss(x):
        y = forward(x)
        return ef.reduce_sum(y * y * y)

    @ef.function(input_signature=[ef.TensorSpec([None, None], ef.float64)])
    def traced(x):
        with ef.GradientTape() as outer:
            outer.watch(x)
            with ef.GradientTape() as tape:
                tape.watch(x)
                y = loss(x)
            dx = tape.gradient(y, x)
            s = ef.reduce_sum(dx * dx)
        return dx, outer.gradient(s, x)

    torch_forward = {
        "x[1:]": lambda t: t[1:],
        "x[-1]": lambda t: t[-1],
        "x[::-2, 1:]": lambda t: torch.flip(t, [0])[::2, 1:],
        "x[:, None, -2]": lambda t: t[:, None, -2],
        "slice": lambda t: t[1:, :1],
    }[name]
    rng = np.random.default_rng(3)
    for shape in [(2, 3), (3, 2), (5, 4), (4, 2)]:
        x = rng.standard_normal(shape)
        dx, d2x = traced(x)
        t = torch.tensor(x, requires_grad=True)
        (tdx,) = torch.autograd.grad((torch_forward(t) ** 3).sum(), t, create_graph=True)
        (td2x,) = torch.autograd.grad((tdx * tdx).sum(), t)
        assert dx.shape == shape and d2x.shape == shape, (name, shape)
        np.testing.assert_allclose(dx.numpy(), tdx.detach().numpy(), rtol=1e-12, err_msg=str((name, shape)))
        np.testing.assert_allclose(d2x.numpy(), td2x.numpy(), rtol=1e-12, err_msg=str((name, shape)))
        with ef.GradientTape() as tape:
            xe = ef.constant(x)
            tape.watch(xe)
            y = loss(xe)
        np.testing.assert_allclose(dx.numpy(), tape.gradient(y, xe).numpy(), rtol=1e-12)
