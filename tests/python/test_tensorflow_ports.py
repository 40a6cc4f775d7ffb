"""Short TensorFlow programs, written as one writes them for TensorFlow 2 and run with
`tf` bound to eagerflow (the README's promise: rename the module and they run), each
checked against PyTorch or NumPy computing the same thing."""
import itertools
import linecache
import textwrap

import numpy as np
import pytest
import torch
from PIL import Image

import eagerflow


_programs = itertools.count()


def run_tensorflow_program(source, **values):
    """Runs `source` as `import tensorflow as tf` would, with eagerflow under that name;
    returns its namespace. The source is registered as a file, as a module's would be,
    so that tf.function can read it (autograph converts Python control flow)."""
    source = textwrap.dedent(source)
    filename = f"<tensorflow program {next(_programs)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"tf": eagerflow, "np": np, "__name__": "tensorflow_program", **values}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 (the test's own programs)
    return namespace


def test_least_squares_with_lstsq():
    ns = run_tensorflow_program("""
        tf.random.set_seed(1)
        A = tf.random.normal([50, 3], dtype=tf.float64)
        x_true = tf.constant([[1.0], [-2.0], [0.5]], dtype=tf.float64)
        b = tf.matmul(A, x_true) + 0.01 * tf.random.normal([50, 1], dtype=tf.float64)
        x = tf.linalg.lstsq(A, b)
        residual = tf.norm(tf.matmul(A, x) - b)
    """)
    expected = np.linalg.lstsq(ns["A"].numpy(), ns["b"].numpy(), rcond=None)[0]
    np.testing.assert_allclose(ns["x"].numpy(), expected, rtol=1e-10)
    assert float(ns["residual"]) < 0.2


def test_gaussian_process_log_likelihood_and_its_gradient():
    ns = run_tensorflow_program("""
        X = tf.constant(np.linspace(0.0, 1.0, 20)[:, None])
        y = tf.sin(6.0 * X)
        log_lengthscale = tf.Variable(np.log(0.3))
        with tf.GradientTape() as tape:
            lengthscale = tf.exp(log_lengthscale)
            sq_dist = tf.reduce_sum(tf.square(X[:, None, :] - X[None, :, :]), axis=-1)
            K = tf.exp(-0.5 * sq_dist / lengthscale**2) + 1e-6 * tf.eye(20, dtype=tf.float64)
            L = tf.linalg.cholesky(K)
            alpha = tf.linalg.cholesky_solve(L, y)
            nll = (0.5 * tf.reduce_sum(y * alpha) + tf.reduce_sum(tf.math.log(tf.linalg.diag_part(L)))
                   + 10.0 * np.log(2.0 * np.pi))
        grad = tape.gradient(nll, log_lengthscale)
    """)
    X = torch.tensor(np.linspace(0.0, 1.0, 20)[:, None])
    y = torch.sin(6.0 * X)
    log_ls = torch.tensor(np.log(0.3), requires_grad=True)
    K = torch.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / torch.exp(log_ls) ** 2)
    L = torch.linalg.cholesky(K + 1e-6 * torch.eye(20, dtype=torch.float64))
    nll = (0.5 * (y * torch.cholesky_solve(y, L)).sum() + torch.log(torch.diagonal(L)).sum()
           + 10.0 * np.log(2.0 * np.pi))
    nll.backward()
    np.testing.assert_allclose(float(ns["nll"]), nll.item(), rtol=1e-9)
    np.testing.assert_allclose(float(ns["grad"]), log_ls.grad.item(), rtol=1e-7)


def test_attention_written_with_einsum():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 5, 4, 8)).astype(np.float32) for _ in range(3))
    ns = run_tensorflow_program("""
        scores = tf.einsum("bqhd,bkhd->bhqk", q, k) / tf.sqrt(8.0)
        weights = tf.nn.softmax(scores, axis=-1)
        out = tf.einsum("bhqk,bkhd->bqhd", weights, v)
    """, q=q, k=k, v=v)
    tq, tk, tv = (torch.tensor(a) for a in (q, k, v))
    weights = torch.softmax(torch.einsum("bqhd,bkhd->bhqk", tq, tk) / np.sqrt(8.0), -1)
    np.testing.assert_allclose(ns["out"].numpy(), torch.einsum("bhqk,bkhd->bqhd", weights, tv).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_an_image_pipeline_from_png_files(tmp_path):
    rng = np.random.default_rng(3)
    images = [rng.integers(0, 256, (30 + 4 * i, 40, 3), dtype=np.uint8) for i in range(4)]
    paths = []
    for i, image in enumerate(images):
        paths.append(str(tmp_path / f"{i}.png"))
        Image.fromarray(image).save(paths[-1])
    ns = run_tensorflow_program("""
        def load(path):
            image = tf.io.decode_png(tf.io.read_file(path), channels=3)
            image = tf.image.resize(image, [24, 24], antialias=True)
            return tf.image.per_image_standardization(image)

        # eagerflow has no string tensors yet, so the file names stay in Python (with
        # TensorFlow they could be a Dataset of their own, mapped by load).
        dataset = tf.data.Dataset.from_tensor_slices(tf.stack([load(p) for p in paths])).batch(2)
        batches = [batch for batch in dataset]
    """, paths=paths)
    assert [tuple(b.shape) for b in ns["batches"]] == [(2, 24, 24, 3), (2, 24, 24, 3)]
    for i, image in enumerate(images):
        # PIL's antialiased bilinear is TensorFlow's antialiased "bilinear" (the triangle kernel).
        resized = np.stack([np.asarray(Image.fromarray(image[..., c].astype(np.float32), mode="F")
                                       .resize((24, 24), Image.BILINEAR)) for c in range(3)], -1)
        expected = (resized - resized.mean()) / max(resized.std(), 1 / np.sqrt(resized.size))
        np.testing.assert_allclose(ns["batches"][i // 2][i % 2].numpy(), expected, rtol=1e-3, atol=1e-3)


def test_a_ctc_training_step():
    rng = np.random.default_rng(4)
    logits0 = rng.standard_normal((10, 2, 5)).astype(np.float32)
    labels = np.array([[1, 2, 2], [3, 4, 0]], dtype=np.int32)
    ns = run_tensorflow_program("""
        logits = tf.Variable(logits0)
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.ctc_loss(labels, logits, label_length=[3, 2], logit_length=[10, 8],
                                                 logits_time_major=True, blank_index=0))
        optimizer.apply_gradients([(tape.gradient(loss, logits), logits)])
    """, logits0=logits0, labels=labels)
    t = torch.tensor(logits0, requires_grad=True)
    loss = torch.nn.functional.ctc_loss(t.log_softmax(2), torch.tensor(labels), torch.tensor([10, 8]),
                                        torch.tensor([3, 2]), reduction="none").mean()
    loss.backward()
    np.testing.assert_allclose(float(ns["loss"]), loss.item(), rtol=1e-5)
    np.testing.assert_allclose(ns["logits"].numpy(), logits0 - 0.1 * t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_segments_masks_and_batched_gathers():
    ns = run_tensorflow_program("""
        data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
        totals = tf.math.unsorted_segment_sum(data, [2, 0, 2, 1], num_segments=3)
        means = tf.math.segment_mean(data, [0, 0, 1, 1])
        positive = tf.boolean_mask(tf.constant([3, -1, 4, -1, 5]), tf.constant([3, -1, 4, -1, 5]) > 0)
        picked = tf.gather(tf.reshape(tf.range(12), [2, 6]), [[0, 5], [1, 1]], batch_dims=1)
        values, idx, counts = tf.unique_with_counts(tf.constant([4, 4, 1, 9, 1, 4]))
        top = tf.math.top_k(tf.constant([0.3, 2.0, -1.0, 1.5]), k=2)
    """)
    np.testing.assert_array_equal(ns["totals"].numpy(), [[3, 4], [7, 8], [6, 8]])
    np.testing.assert_array_equal(ns["means"].numpy(), [[2, 3], [6, 7]])
    np.testing.assert_array_equal(ns["positive"].numpy(), [3, 4, 5])
    np.testing.assert_array_equal(ns["picked"].numpy(), [[0, 5], [7, 7]])
    np.testing.assert_array_equal(ns["values"].numpy(), [4, 1, 9])
    np.testing.assert_array_equal(ns["idx"].numpy(), [0, 0, 1, 2, 1, 0])
    np.testing.assert_array_equal(ns["counts"].numpy(), [3, 2, 1])
    np.testing.assert_array_equal(ns["top"].indices.numpy(), [1, 3])


def test_special_functions_and_their_gradients():
    x = np.linspace(0.2, 3.0, 9)
    ns = run_tensorflow_program("""
        x = tf.constant(x_values)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.math.lgamma(x) + tf.math.digamma(x) + tf.math.erfc(x) + tf.math.xlogy(x, x + 1.0)
            y += tf.math.atan2(x, 2.0 - x) + tf.math.log_sigmoid(-x) + tf.math.erfinv(x / 4.0)
        dy = tape.gradient(y, x)
    """, x_values=x)
    t = torch.tensor(x, requires_grad=True)
    y = (torch.lgamma(t) + torch.digamma(t) + torch.erfc(t) + torch.xlogy(t, t + 1.0)
         + torch.atan2(t, 2.0 - t) + torch.nn.functional.logsigmoid(-t) + torch.erfinv(t / 4.0))
    y.sum().backward()
    np.testing.assert_allclose(ns["y"].numpy(), y.detach().numpy(), rtol=1e-12)
    # PyTorch's trigamma (digamma's derivative) is off by up to 5e-10 of the value
    # (against SciPy and mpmath; test_math_ops_more.py has the comparison).
    np.testing.assert_allclose(ns["dy"].numpy(), t.grad.numpy(), rtol=2e-9)


def test_linear_algebra_and_its_gradients():
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    rhs = np.array([[1.0], [2.0], [3.0]])
    ns = run_tensorflow_program("""
        A = tf.Variable(a)
        with tf.GradientTape() as tape:
            x = tf.linalg.solve(A, rhs)
            sign, logdet = tf.linalg.slogdet(A)
            objective = tf.reduce_sum(x) + logdet + tf.linalg.trace(tf.linalg.inv(A))
        dA = tape.gradient(objective, A)
        e, v = tf.linalg.eigh(A)
    """, a=a, rhs=rhs)
    t = torch.tensor(a, requires_grad=True)
    objective = (torch.linalg.solve(t, torch.tensor(rhs)).sum() + torch.linalg.slogdet(t)[1]
                 + torch.trace(torch.linalg.inv(t)))
    objective.backward()
    np.testing.assert_allclose(float(ns["objective"]), objective.item(), rtol=1e-12)
    np.testing.assert_allclose(ns["dA"].numpy(), t.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ns["e"].numpy(), np.linalg.eigh(a)[0], rtol=1e-12)


def test_convolutions_over_sequences_and_channels():
    rng = np.random.default_rng(5)
    signal = rng.standard_normal((2, 16, 3)).astype(np.float32)
    taps = rng.standard_normal((5, 3, 4)).astype(np.float32)
    image = rng.standard_normal((1, 8, 8, 3)).astype(np.float32)
    depthwise = rng.standard_normal((3, 3, 3, 2)).astype(np.float32)
    ns = run_tensorflow_program("""
        y = tf.nn.conv1d(signal, taps, stride=2, padding="SAME")
        z = tf.nn.depthwise_conv2d(image, depthwise, strides=[1, 1, 1, 1], padding="VALID")
    """, signal=signal, taps=taps, image=image, depthwise=depthwise)
    # SAME with stride 2 over 16 samples and 5 taps pads 1 before and 2 after.
    expected = torch.nn.functional.conv1d(torch.nn.functional.pad(torch.tensor(signal).permute(0, 2, 1), (1, 2)),
                                          torch.tensor(taps).permute(2, 1, 0), stride=2).permute(0, 2, 1)
    np.testing.assert_allclose(ns["y"].numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    w = torch.tensor(depthwise).permute(2, 3, 0, 1).reshape(6, 1, 3, 3)
    expected = torch.nn.functional.conv2d(torch.tensor(image).permute(0, 3, 1, 2), w, groups=3).permute(0, 2, 3, 1)
    np.testing.assert_allclose(ns["z"].numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)


def test_a_function_with_a_while_loop():
    ns = run_tensorflow_program("""
        @tf.function
        def collatz_steps(n):
            steps = tf.constant(0)
            while n != 1:
                n = tf.where(n % 2 == 0, n // 2, 3 * n + 1)
                steps += 1
            return steps

        steps = [int(collatz_steps(tf.constant(n))) for n in [1, 6, 27]]
    """)
    assert ns["steps"] == [0, 8, 111]


def test_a_keras_classifier_trains_with_fit():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((256, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    ns = run_tensorflow_program("""
        tf.random.set_seed(0)
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(16, activation="relu"),
            tf.keras.layers.Dense(2),
        ])
        model.compile(optimizer=tf.keras.optimizers.Adam(0.05),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        history = model.fit(x, y, batch_size=32, epochs=10, verbose=0)
        loss, accuracy = model.evaluate(x, y, verbose=0)
    """, x=x, y=y)
    assert ns["accuracy"] > 0.95
    assert ns["history"].history["loss"][-1] < ns["history"].history["loss"][0]


def test_image_crops_and_flips():
    image = np.arange(2 * 6 * 6 * 1, dtype=np.float32).reshape(2, 6, 6, 1)
    ns = run_tensorflow_program("""
        crops = tf.image.crop_and_resize(image, boxes=[[0.0, 0.0, 1.0, 1.0], [0.2, 0.2, 0.6, 0.6]],
                                         box_indices=[1, 0], crop_size=[6, 3])
        flipped = tf.image.flip_left_right(image)
        bytes_image = tf.image.convert_image_dtype(image / 72.0, tf.uint8)
    """, image=image)
    # The whole-image box at full height samples every row and every other half column.
    columns = np.stack([image[1, :, 0, 0], (image[1, :, 2, 0] + image[1, :, 3, 0]) / 2, image[1, :, 5, 0]], -1)
    np.testing.assert_allclose(ns["crops"].numpy()[0, :, :, 0], columns, rtol=1e-6)
    np.testing.assert_array_equal(ns["flipped"].numpy(), image[:, :, ::-1])
    assert ns["bytes_image"].dtype == eagerflow.uint8


def test_a_spectrogram_with_stft_and_its_inverse():
    # A spectrogram as audio pipelines compute it, and its inverse: a 440 Hz tone's
    # energy lands in its frequency bin, and inverse_stft gives the tone back.
    rate = 8000
    tone = np.sin(2 * np.pi * 440 * np.arange(4000) / rate).astype(np.float32)
    ns = run_tensorflow_program("""
        signal = tf.constant(tone)
        stfts = tf.signal.stft(signal, frame_length=256, frame_step=64, fft_length=256)
        spectrogram = tf.abs(stfts)
        log_spectrogram = tf.math.log(spectrogram + 1e-6)
        peak_bin = tf.argmax(tf.reduce_mean(spectrogram, axis=0))
        inverse = tf.signal.inverse_stft(stfts, frame_length=256, frame_step=64, fft_length=256,
                                         window_fn=tf.signal.inverse_stft_window_fn(64))
    """, tone=tone)
    frames = 1 + (4000 - 256) // 64
    assert tuple(ns["spectrogram"].shape) == (frames, 129)
    assert int(ns["peak_bin"]) == round(440 * 256 / rate)
    window = torch.hann_window(256, periodic=True)
    expected = torch.stft(torch.from_numpy(tone), n_fft=256, hop_length=64, window=window, center=False,
                          return_complex=True).abs().T.numpy()
    np.testing.assert_allclose(ns["spectrogram"].numpy(), expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(ns["inverse"].numpy()[256:-256], tone[256:len(ns["inverse"].numpy()) - 256],
                               atol=1e-5)


def test_programs_that_need_what_eagerflow_lacks_fail_clearly():
    # String tensors are not there yet: such a program fails at once, naming what is
    # missing, never with a wrong answer.
    with pytest.raises(TypeError, match="no string dtype"):
        run_tensorflow_program("""
            files = tf.data.Dataset.from_tensor_slices(["a.png", "b.png"])
        """)
