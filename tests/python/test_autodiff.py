"""GradientTape, Variable, the function transforms and custom_gradient from Python."""
import numpy as np
import pytest

import eagerflow as ef


def test_tape_watches_tensors_and_variables():
    x = ef.constant(3.0)
    w = ef.Variable(2.0, name="w")
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = x * x * w
    dx, dw = tape.gradient(y, [x, w])
    assert float(dx) == 12.0 and float(dw) == 9.0
    assert [v.name for v in tape.watched_variables()] == ["w"]


def test_gradient_keeps_the_structure_of_sources():
    a, b = ef.constant(1.0), ef.constant(2.0)
    with ef.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * b
    grads = tape.gradient(y, {"first": a, "rest": (b,)})
    assert float(grads["first"]) == 2.0 and float(grads["rest"][0]) == 1.0
    assert tape.gradient(y, ef.constant(5.0)) is None  # unconnected
    assert float(tape.gradient(y, ef.constant(5.0), unconnected_gradients="zero")) == 0.0
    assert float(tape.gradient(y, ef.constant(5.0),
                               unconnected_gradients=ef.UnconnectedGradients.ZERO)) == 0.0


def test_non_scalar_targets_and_output_gradients():
    x = ef.constant([1.0, 2.0, 3.0])
    with ef.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2, 4, 6])
    np.testing.assert_array_equal(tape.gradient(y, x, output_gradients=[1.0, 0.0, 2.0]).numpy(), [2, 0, 12])


def test_recording_stops_when_the_block_ends_and_resumes_when_reentered():
    x = ef.constant(2.0)
    tape = ef.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        y = x * x
    z = y * 10  # outside the block: not recorded
    assert tape.gradient(z, x) is None
    with tape:
        z = y * 10
    assert float(tape.gradient(z, x)) == 40.0


def test_stop_recording_and_reset():
    x = ef.constant(3.0)
    with ef.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            hidden = x * x
        seen = x * 2
    assert tape.gradient(hidden, x) is None
    assert float(tape.gradient(seen, x)) == 2.0
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        y = x * 5
    assert float(tape.gradient(y, x)) == 5.0


def test_nested_tapes_give_higher_order_derivatives():
    x = ef.constant(2.0)
    with ef.GradientTape() as outer:
        outer.watch(x)
        with ef.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
        dy = inner.gradient(y, x)
    assert float(dy) == 12.0
    assert float(outer.gradient(dy, x)) == 12.0  # 6x


def test_jacobian_and_batch_jacobian():
    x = ef.constant([[1.0, 2.0], [3.0, 4.0]])
    with ef.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    j = tape.jacobian(y, x)
    assert j.shape == (2, 2, 2, 2)
    bj = tape.batch_jacobian(y, x)
    np.testing.assert_array_equal(bj.numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])


def test_integer_sources_are_rejected_clearly():
    with ef.GradientTape() as tape:
        i = ef.constant(3)
        with pytest.raises(ef.errors.InvalidArgumentError, match="watch"):
            tape.watch(i)


def test_variables():
    v = ef.Variable([1.0, 2.0], name="v")
    assert v.shape == (2,) and v.dtype == ef.float32 and v.trainable
    v.assign([3.0, 4.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub(ef.constant([0.5, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    np.testing.assert_array_equal((v * 2).numpy(), [7, 9])
    np.testing.assert_array_equal((2 * v).numpy(), [7, 9])
    assert float(v[0]) == 3.5
    with pytest.raises(ef.errors.InvalidArgumentError, match="shape"):
        v.assign([1.0, 2.0, 3.0])
    frozen = ef.Variable(1.0, trainable=False)
    with ef.GradientTape() as tape:
        y = frozen * 3
    assert tape.watched_variables() == ()
    assert "Variable 'v'" in repr(v)


def test_python_values_take_the_dtype_of_the_variable_or_tensor_they_update():
    # TensorFlow converts a Python number or list to the variable's dtype, exactly: 0.1
    # reaches a float64 variable as the double 0.1, not through float32.
    v = ef.Variable(np.zeros(2))
    v.assign_add([0.1, 1])
    v.assign_sub([0.0, 0.5])
    assert v.numpy().tolist() == [0.1, 0.5]
    v.assign([0.3, 2])
    assert v.numpy().tolist() == [0.3, 2.0]
    counts = ef.Variable([1, 2])
    counts.assign_add([1, 1])
    assert counts.numpy().tolist() == [2, 3]
    with pytest.raises(ef.errors.InvalidArgumentError, match="dtype"):
        counts.assign_add([1.5, 1.5])  # never truncated to 1
    with pytest.raises(ef.errors.InvalidArgumentError, match="dtype"):
        v.assign_add(ef.constant([1.0, 1.0]))  # a float32 tensor is not cast either
    base = ef.constant(np.zeros(3))
    assert ef.tensor_scatter_nd_add(base, [[0]], [0.1]).numpy()[0] == 0.1
    assert ef.tensor_scatter_nd_update(base, [[1]], [0.1]).numpy()[1] == 0.1


def test_function_transforms():
    def f(x, y):
        return x * x * y

    dx, dy = ef.gradients_function(f)(3.0, 2.0)
    assert float(dx) == 12.0 and float(dy) == 9.0
    (only_y,) = ef.gradients_function(f, params=[1])(3.0, 2.0)
    assert float(only_y) == 9.0
    value, grads = ef.value_and_gradients_function(f)(3.0, 2.0)
    assert float(value) == 18.0 and len(grads) == 2
    assert float(ef.grad(ef.grad(lambda x: x ** 4))(ef.constant(1.0))) == 12.0


def test_functions_returning_several_tensors_are_differentiated_as_their_sum():
    # TensorFlow's rule for a list, tuple or dict of outputs, in every transform.
    def several(x, y):
        return [x * y, {"sq": x * x, "none": None}, (ef.constant(5.0),)]

    dx, dy = ef.gradients_function(several)(3.0, 2.0)
    assert float(dx) == 2.0 + 6.0 and float(dy) == 3.0
    value, (gx, gy) = ef.value_and_gradients_function(several)(3.0, 2.0)
    assert float(value[0]) == 6.0 and value[1]["none"] is None and float(gx) == 8.0
    assert float(ef.grad(lambda x: (x, x * x))(ef.constant(3.0))) == 7.0
    W = ef.Variable(2.0, name="W")
    value, pairs = ef.implicit_value_and_gradients(lambda: {"a": W * 3.0, "b": W * W})()
    assert set(value) == {"a", "b"} and float(pairs[0][0]) == 3.0 + 4.0
    assert float(ef.implicit_gradients(lambda: (W, W))()[0][0]) == 2.0


def test_unconnected_arguments_of_gradients_function_are_none_or_zero():
    f = lambda x, y: x * 2.0  # noqa: E731
    assert ef.gradients_function(f)(3.0, 4.0)[1] is None
    zero = ef.gradients_function(f, unconnected_gradients=ef.UnconnectedGradients.ZERO)(3.0, 4.0)[1]
    assert float(zero) == 0.0
    assert float(ef.grad(lambda x: ef.constant(1.0))(ef.constant(3.0))) == 0.0  # grad: d(constant) = 0


def test_tape_gradient_of_a_list_of_targets():
    x = ef.constant(3.0)
    with ef.GradientTape(persistent=True) as tape:
        tape.watch(x)
        targets = [x * x, {"twice": x * 2.0}, ef.cast(x, ef.int32)]
    assert float(tape.gradient(targets, x)) == 6.0 + 2.0
    seeded = tape.gradient(targets, x, output_gradients=[ef.constant(10.0), {"twice": None}, None])
    assert float(seeded) == 60.0 + 2.0
    with pytest.raises(ValueError, match="output_gradients has 1 tensors but the target has 3"):
        tape.gradient(targets, x, output_gradients=[ef.constant(1.0)])


def test_sequences_of_tensors_stay_differentiable():
    # A list holding recorded tensors becomes their stack, never a constant copy.
    x = ef.constant(3.0)
    w = ef.Variable(2.0, name="w")
    with ef.GradientTape(persistent=True) as tape:
        tape.watch(x)
        packed = ef.constant([x, x * x, 1])          # the 1 takes x's dtype
        converted = ef.convert_to_tensor([[x, w], [0.5, x]])
        product = x * [x, 2.0]                        # a list operand
    assert packed.dtype == ef.float32 and packed.numpy().tolist() == [3.0, 9.0, 1.0]
    assert float(tape.gradient(packed, x)) == 1.0 + 6.0
    assert float(tape.gradient(converted, x)) == 2.0 and float(tape.gradient(converted, w)) == 1.0
    assert float(tape.gradient(product, x)) == 2 * 3.0 + 2.0
    with pytest.raises(ef.errors.InvalidArgumentError, match="int32 but input 0 has dtype float32"):
        ef.constant([x, ef.constant(1, dtype=ef.int32)])  # never a silent cast


def test_a_variable_read_and_assigned_inside_cond_has_no_silent_gradient():
    v = ef.Variable(2.0, name="v")

    @ef.function
    def step(x):
        def grow():
            y = v * x
            v.assign(y)
            return y
        return ef.cond(x > 0.0, grow, lambda: x)

    with ef.GradientTape() as tape:
        y = step(ef.constant(3.0))
    with pytest.raises(ef.errors.UnimplementedError, match="'v' is both read and assigned inside cond"):
        tape.gradient(y, v)

    @ef.function
    def loop(x):
        def body(i, acc):
            v.assign(v * 1.5)
            return i + 1, acc * v
        return ef.while_loop(lambda i, acc: i < 3, body, (ef.constant(0), x))[1]

    with ef.GradientTape() as tape:
        y = loop(ef.constant(3.0))
    with pytest.raises(ef.errors.UnimplementedError, match="'v' is both read and assigned inside while_loop"):
        tape.gradient(y, v)  # was an unconnected None


def test_implicit_gradients():
    W = ef.Variable(2.0, name="W")
    b = ef.Variable(1.0, name="b")

    def loss(x, y):
        return ef.reduce_sum(ef.square(W * x + b - y))

    pairs = ef.implicit_gradients(loss)(ef.constant([1.0, 2.0]), ef.constant([3.0, 5.0]))
    assert [v.name for _, v in pairs] == ["W", "b"]
    value, _ = ef.implicit_value_and_gradients(loss)(ef.constant([1.0]), ef.constant([3.0]))
    assert float(value) == 0.0
    with pytest.raises(ef.errors.InvalidArgumentError, match="no trainable variables"):
        ef.implicit_gradients(lambda: ef.constant(1.0) * 2)()


def test_custom_gradient_with_variables():
    v = ef.Variable(3.0, name="scale")

    @ef.custom_gradient
    def scaled(x):
        def grad_fn(dy, variables=None):
            assert [u.name for u in variables] == ["scale"]
            return dy * 3.0, [dy * 100.0]
        return x * v, grad_fn

    x = ef.constant(2.0)
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    dx, dv = tape.gradient(y, [x, v])
    assert float(dx) == 3.0 and float(dv) == 100.0

    @ef.custom_gradient
    def forgetful(x):
        return x * v, lambda dy: dy

    with pytest.raises(ef.errors.InvalidArgumentError, match="scale"):
        with ef.GradientTape() as tape:
            tape.watch(x)
            forgetful(x)


def test_custom_gradient_second_order_and_several_inputs():
    @ef.custom_gradient
    def product(a, b):
        return a * b, lambda dy: (dy * b, dy * a)

    a, b = ef.constant(2.0), ef.constant(5.0)
    with ef.GradientTape() as outer:
        outer.watch(a)
        with ef.GradientTape() as inner:
            inner.watch([a, b])
            y = product(a, b) * a  # a^2 b
        da = inner.gradient(y, a)  # 2ab
    assert float(da) == 20.0
    assert float(outer.gradient(da, a)) == 10.0  # 2b


def test_a_custom_gradient_traced_into_a_function_raises_instead_of_the_ordinary_gradient():
    # Traced, f's own ops would give the ordinary gradient [18, 36, 54]: a wrong number.
    @ef.custom_gradient
    def clipped(x):
        return x * 3.0, lambda dy: ef.clip_by_value(dy, -0.1, 0.1)

    f = ef.function(lambda x: ef.reduce_sum(clipped(x) ** 2), input_signature=[ef.TensorSpec([3], ef.float32)])
    x = ef.constant([1.0, 2.0, 3.0])
    assert f(x).numpy() == 126.0
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with pytest.raises(ef.errors.UnimplementedError, match="custom gradient was traced into a graph"):
        tape.gradient(y, x)
    with ef.GradientTape() as tape:
        tape.watch(x)
        y = ef.reduce_sum(clipped(x) ** 2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [0.1, 0.1, 0.1])
