"""The programs of the seed documents, translated only as far as the module name and
spelling require (tf → ef, tfe → ef)."""
import numpy as np

import eagerflow as ef


def test_matmul_print(capsys):
    x = [[2.]]
    m = ef.matmul(x, x)
    print(m)
    assert capsys.readouterr().out == "Tensor([[4.]], shape=(1, 1), dtype=float32)\n"


def test_loop_with_a_tensor_valued_break():
    ef.random.set_seed(1)
    a = ef.random.uniform((10,))
    b = ef.random.uniform((10,))
    for i in range(100):
        a = a * a
        if a[0] > b[0]:
            break
    # a[0] shrinks towards 0 by squaring: the loop breaks exactly when it first exceeds b[0].
    assert (i < 99) == bool(a[0] > b[0])


def test_factorial_by_nested_gradients_function():
    # Exactly as the seed writes it: each gradients_function returns a list, and the next
    # one differentiates through that list (the sum of its entries, TensorFlow's rule).
    def factorial(n):
        def f(x):
            return ef.pow(x, n)
        for i in range(n):
            f = ef.gradients_function(f)
        return f(1.)

    expected = 1
    for n in range(1, 7):
        expected *= n
        assert float(factorial(n)[0]) == expected


def test_second_derivative_by_nested_gradients_function():
    # The announcement: the same gradients_function call gives square's second derivative.
    def square(x):
        return ef.multiply(x, x)

    assert float(ef.gradients_function(square)(3.)[0]) == 6.0
    assert float(ef.gradients_function(ef.gradients_function(square))(3.)[0]) == 2.0
    # The third derivative is 0 everywhere: square'' does not depend on x at all, so it
    # is unconnected (None), or zeros when asked for.
    third = ef.gradients_function(ef.gradients_function(ef.gradients_function(square)))
    assert third(3.) == [None]
    zero = ef.UnconnectedGradients.ZERO
    third_or_zero = ef.gradients_function(
        ef.gradients_function(ef.gradients_function(square)), unconnected_gradients=zero)
    assert float(third_or_zero(3.)[0]) == 0.0


def test_gradient_of_square():
    def square(x):
        return ef.multiply(x, x)

    grad = ef.gradients_function(square)
    assert float(grad(3.)[0]) == 6.0


def test_w_times_w():
    w = ef.Variable([[1.0]])
    with ef.GradientTape() as tape:
        loss = w * w
    grad = tape.gradient(loss, w)
    assert str(grad) == "Tensor([[2.]], shape=(1, 1), dtype=float32)"


def test_noisy_square_trains_with_noisy_gradients():
    @ef.custom_gradient
    def noisy_square(x):
        def grad(b):
            true_grad = 2 * b * x
            return true_grad + ef.random.uniform(())
        return (x * x), grad

    grad = ef.gradients_function(noisy_square)
    x = 2.
    points = []
    for i in range(20):
        x -= .9 * grad(x)[0]
        points.append(float(x))
    # Each step is x -> -0.8 x - 0.9 u with u in [0, 1): it stays near -0.25.
    assert all(np.isfinite(points)) and abs(points[-1] + 0.25) < 0.5 + 1e-3
    assert len(set(points)) == 20


def test_kfac_matmul_whitens_the_weight_gradient():
    rng = np.random.default_rng(0)
    m1 = ef.constant(rng.standard_normal((3, 3)))
    m2 = ef.constant(rng.standard_normal((4, 4)))

    @ef.custom_gradient
    def kfac_matmul(W, A):
        def grad(B):
            true_grad1 = B @ ef.transpose(A)
            true_grad2 = ef.transpose(W) @ B
            return [m1 @ true_grad1 @ m2, true_grad2]
        return W @ A, grad

    W = ef.constant(rng.standard_normal((3, 4)))
    A = ef.constant(rng.standard_normal((4, 2)))
    with ef.GradientTape() as tape:
        tape.watch([W, A])
        loss = ef.reduce_sum(kfac_matmul(W, A))
    dW, dA = tape.gradient(loss, [W, A])
    ones = np.ones((3, 2))
    np.testing.assert_allclose(dW.numpy(), m1.numpy() @ ones @ A.numpy().T @ m2.numpy(), rtol=1e-12)
    np.testing.assert_allclose(dA.numpy(), W.numpy().T @ ones, rtol=1e-12)


def test_log1pexp_custom_gradient_is_finite_where_the_plain_one_is_nan():
    def loglpexp_plain(x):
        return ef.math.log(1 + ef.exp(x))

    @ef.custom_gradient
    def loglpexp(x):
        e = ef.exp(x)
        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return ef.math.log(1 + e), grad

    def grad_of(fn, x):
        with ef.GradientTape() as tape:
            tape.watch(x)
            value = fn(x)
        return tape.gradient(value, x)

    # The recitation's figures: 0.5 at 0 for both; at 100 nan, then 1.0 with the custom gradient.
    assert grad_of(loglpexp_plain, ef.constant(0.)).numpy() == 0.5
    assert grad_of(loglpexp, ef.constant(0.)).numpy() == 0.5
    assert np.isnan(grad_of(loglpexp_plain, ef.constant(100.)).numpy())
    assert grad_of(loglpexp, ef.constant(100.)).numpy() == 1.0


def test_line_search_step_dynamic_model():
    def line_search_step(fn, init_x, rate=1.0):
        with ef.GradientTape() as tape:
            tape.watch(init_x)
            value = fn(init_x)
        grad = tape.gradient(value, init_x)
        grad_norm = ef.reduce_sum(grad * grad)  # noqa: F841 (as in the seed)
        init_value = value - 1
        while value > init_value:
            x = init_x - rate * grad
            value = fn(x)
            rate /= 2.0
        return x, value

    x, value = line_search_step(lambda x: ef.reduce_sum(x * x), ef.constant([3.0, 4.0]))
    # grad = (6, 8); rate 1 overshoots to (-3, -4) = 25, rate 0.5 lands on 0.
    np.testing.assert_array_equal(x.numpy(), [0.0, 0.0])
    assert float(value) == 0.0


def test_fizzbuzz(capsys):
    def fizzbuzz(max_num):
        counter = ef.constant(0)
        max_num = ef.convert_to_tensor(max_num)
        for num in range(1, max_num.numpy() + 1):
            num = ef.constant(num)
            if int(num % 3) == 0 and int(num % 5) == 0:
                print('FizzBuzz')
            elif int(num % 3) == 0:
                print('Fizz')
            elif int(num % 5) == 0:
                print('Buzz')
            else:
                print(num.numpy())
            counter += 1
        return counter

    assert int(fizzbuzz(15)) == 15
    assert capsys.readouterr().out.split() == [
        "1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz", "Buzz", "11", "Fizz", "13", "14", "FizzBuzz"]


def test_collatz(capsys):
    a = ef.constant(12)
    counter = 0
    while not ef.equal(a, 1):
        if ef.equal(a % 2, 0):
            a = a / 2
        else:
            a = 3 * a + 1
        print(a.numpy())
        counter += 1
    assert counter == 9
    assert [float(v) for v in capsys.readouterr().out.split()] == [6, 3, 10, 5, 16, 8, 4, 2, 1]


def test_eager_model_w_times_x_plus_b():
    W = ef.Variable(ef.ones(shape=(2, 2)), name="W")
    b = ef.Variable(ef.zeros(shape=(2)), name="b")

    def forward(x):
        return W * x + b

    out_a = forward([1, 0])
    np.testing.assert_array_equal(out_a.numpy(), [[1, 0], [1, 0]])


class MNISTModel(ef.keras.Model):
    """The announcement's two-layer model (tfe.Network with tracked tf.layers.Dense)."""

    def __init__(self):
        super(MNISTModel, self).__init__()
        self.layer1 = ef.keras.layers.Dense(units=10)
        self.layer2 = ef.keras.layers.Dense(units=10)

    def call(self, input):  # noqa: A002 (the seed's name)
        result = self.layer1(input)
        result = self.layer2(result)
        return result


def loss_function(model, x, y):
    y_ = model(x)
    return ef.nn.softmax_cross_entropy_with_logits(labels=y, logits=y_)


def _mnist_like_batches(seed, count=8, batch=32):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        x = rng.standard_normal((batch, 784)).astype(np.float32)
        labels = (x[:, :10].argmax(axis=1))  # learnable: the largest of the first ten pixels
        yield ef.constant(x), ef.one_hot(labels, 10)


def test_announcement_mnist_model_trains_with_implicit_gradients_and_minimize():
    ef.random.set_seed(0)
    model = MNISTModel()
    batch = ef.zeros([1, 1, 784])
    assert batch.shape == (1, 1, 784)
    result = model(batch)
    assert result.shape == (1, 1, 10)
    np.testing.assert_array_equal(result.numpy(), np.zeros((1, 1, 10)))  # zero input, zero bias

    optimizer = ef.optimizers.SGD(learning_rate=0.001)  # the seed's GradientDescentOptimizer(0.001)
    x0, y0 = next(_mnist_like_batches(1))
    first = float(ef.reduce_mean(loss_function(model, x0, y0)))
    for (x, y) in _mnist_like_batches(2):
        grads = ef.implicit_gradients(loss_function)(model, x, y)
        # The loss is a vector (one entry per example): its gradients are those of its sum.
        assert [v.name for _, v in grads] == [v.name for v in model.trainable_variables]
        with ef.GradientTape() as tape:
            summed = ef.reduce_sum(loss_function(model, x, y))
        for (g, v), expected in zip(grads, tape.gradient(summed, model.trainable_variables)):
            np.testing.assert_allclose(g.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
        optimizer.apply_gradients(grads)
    for (x, y) in _mnist_like_batches(3):
        optimizer.minimize(lambda: loss_function(model, x, y))  # no var_list, as in the seed
    assert float(ef.reduce_mean(loss_function(model, x0, y0))) < 0.95 * first


def test_announcement_checkpoint_moves_between_eager_and_graph(tmp_path):
    # Train eagerly, save; build the same model code in a graph, restore, run in a Session.
    ef.random.set_seed(0)
    model = MNISTModel()
    x, y = next(_mnist_like_batches(4))
    optimizer = ef.optimizers.SGD(learning_rate=0.001)
    for _ in range(3):
        optimizer.minimize(lambda: loss_function(model, x, y))
    eager_logits = model(x).numpy()
    path = ef.train.Checkpoint(model=model).save(tmp_path / "eager.safetensors")

    graph = ef.Graph()
    with graph.as_default():
        graph_model = MNISTModel()
        inputs = ef.placeholder(ef.float32, shape=(None, 784))
        logits = graph_model(inputs)
        checkpoint = ef.train.Checkpoint(model=graph_model)
    with ef.Session(graph=graph) as sess:
        sess.run(ef.global_variables_initializer())
        fresh = sess.run(logits, feed_dict={inputs: x.numpy()})
        assert not np.allclose(fresh, eager_logits)
        checkpoint.restore(path).run_restore_ops(sess)   # TensorFlow 1's call style
        np.testing.assert_allclose(sess.run(logits, feed_dict={inputs: x.numpy()}), eager_logits, rtol=1e-6)
        kernel = graph_model.layer1.kernel
        np.testing.assert_array_equal(sess.run(kernel), model.layer1.kernel.numpy())  # fetch a Variable
        # And back: save from the session (TensorFlow 1's Saver), restore into an eager model.
        saved = ef.train.Saver().save(sess, tmp_path / "graph.safetensors")

    eager_again = MNISTModel()
    eager_again(x)  # build the lazily created layers
    ef.train.Saver(eager_again.variables).restore(None, saved)
    np.testing.assert_allclose(eager_again(x).numpy(), eager_logits, rtol=1e-6)
