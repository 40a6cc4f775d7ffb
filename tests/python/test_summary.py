"""ef.summary: TensorBoard event files from Python, read back with read_event_file
(every record's CRC checked), and Keras' TensorBoard callback. The format itself is
checked byte by byte in tests/cpp/io/summary_test.cpp."""
import os
import struct
import zlib

import numpy as np
import pytest

import eagerflow as ef


def _events(folder):
    files = os.listdir(folder)
    assert len(files) == 1 and files[0].startswith("events.out.tfevents.")
    return ef.summary.read_event_file(os.path.join(folder, files[0]))


def _png_pixels(png, height, width, channels):
    """Decodes a PNG written with one IDAT and filter 0 on every row."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (width, height)
    (length,) = struct.unpack(">I", png[33:37])
    assert png[37:41] == b"IDAT"
    raw = np.frombuffer(zlib.decompress(png[41:41 + length]), np.uint8).reshape(height, 1 + width * channels)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(height, width, channels)


def test_scalars_histograms_images_and_text(tmp_path):
    writer = ef.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=5):
        assert ef.summary.scalar("loss", ef.constant(0.25))
        assert ef.summary.scalar("lr", 0.1, step=6, description="learning rate")
        data = np.random.default_rng(0).standard_normal(1000)
        assert ef.summary.histogram("weights", data, buckets=10)
        images = np.random.default_rng(1).random((4, 3, 5, 3)).astype(np.float32)
        assert ef.summary.image("inputs", images, max_outputs=2)
        assert ef.summary.text("notes", "*markdown*")
    assert not ef.summary.scalar("loss", 1.0, step=0)  # no default writer: nothing written
    writer.flush()
    events = _events(str(tmp_path))
    assert events[0]["file_version"] == "brain.Event:2"
    loss, lr, weights, inputs, notes = (e["values"][0] for e in events[1:])
    assert [e["step"] for e in events[1:]] == [5, 6, 5, 5, 5]
    assert (loss["tag"], loss["plugin_name"], float(loss["tensor"])) == ("loss", "scalars", 0.25)
    assert lr["description"] == "learning rate" and lr["tensor"] == np.float32(0.1)

    # Against NumPy's equal-width histogram over [min, max] (the last bucket closed).
    counts, edges = np.histogram(data, bins=10)
    table = weights["tensor"]
    assert table.shape == (10, 3) and weights["plugin_name"] == "histograms"
    np.testing.assert_allclose(table[:, 0], edges[:-1], rtol=1e-12)
    np.testing.assert_allclose(table[:, 1], edges[1:], rtol=1e-12)
    np.testing.assert_array_equal(table[:, 2], counts)

    assert inputs["plugin_name"] == "images" and inputs["shape"] == (4,)
    assert inputs["strings"][:2] == [b"5", b"3"]  # width, height
    for k in range(2):
        expected = np.clip(images[k] * 255.5, 0, 255).astype(np.uint8)  # convert_image_dtype's rule
        np.testing.assert_array_equal(_png_pixels(inputs["strings"][2 + k], 3, 5, 3), expected)
    assert notes["strings"] == [b"*markdown*"] and notes["plugin_name"] == "text"


def test_steps_and_errors(tmp_path):
    writer = ef.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ef.errors.InvalidArgumentError, match="no step"):
            ef.summary.scalar("loss", 1.0)
        ef.summary.experimental.set_step(3)
        assert ef.summary.experimental.get_step() == 3
        assert ef.summary.scalar("loss", 1.0)
        ef.summary.experimental.set_step(None)
        with pytest.raises(ef.errors.InvalidArgumentError, match="rank 0"):
            ef.summary.scalar("loss", [1.0, 2.0], step=0)
        with pytest.raises(ef.errors.InvalidArgumentError, match="non-finite"):
            ef.summary.histogram("h", [1.0, float("nan")], step=0)
        with pytest.raises(ef.errors.InvalidArgumentError, match="channels"):
            ef.summary.image("i", np.zeros((1, 2, 2, 2), np.float32), step=0)
    writer.close()
    assert writer.closed
    with writer.as_default(step=0):
        with pytest.raises(ef.errors.FailedPreconditionError, match="closed"):
            ef.summary.scalar("loss", 1.0)
    damaged = tmp_path / "damaged"
    content = bytearray(open(writer.path, "rb").read())
    content[-3] ^= 1
    damaged.write_bytes(bytes(content))
    with pytest.raises(ef.errors.DataLossError, match="CRC"):
        ef.summary.read_event_file(str(damaged))


def test_graph_of_a_traced_function(tmp_path):
    @ef.function
    def affine(x):
        return ef.matmul(x, ef.ones([2, 3])) + 1.0

    writer = ef.summary.create_file_writer(str(tmp_path))
    ef.summary.trace_on(graph=True)
    affine(ef.ones([4, 2]))
    with writer.as_default():
        assert ef.summary.trace_export("affine_trace", step=0)
    writer.flush()
    graph = _events(str(tmp_path))[1]["graph"]
    ops = {node["op"] for node in graph}
    assert {"placeholder", "matmul", "add"} <= ops
    assert all(node["name"].startswith("affine") for node in graph)


def test_keras_tensorboard_callback(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-1.0], [2.0]], np.float32)
    ef.random.set_seed(1)
    model = ef.keras.Sequential([ef.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    board = ef.keras.callbacks.TensorBoard(log_dir=tmp_path, histogram_freq=1, update_freq="batch")
    history = model.fit(x, y, batch_size=16, epochs=2, validation_split=0.25, callbacks=[board], verbose=0)

    train = _events(str(tmp_path / "train"))
    scalars = {(v["tag"], e["step"]): float(v["tensor"]) for e in train for v in e["values"]
               if v["plugin_name"] == "scalars"}
    for epoch in range(2):
        assert scalars[("epoch_loss", epoch)] == pytest.approx(history.history["loss"][epoch], rel=1e-6)
        assert scalars[("epoch_mae", epoch)] == pytest.approx(history.history["mae"][epoch], rel=1e-6)
        assert ("epoch_learning_rate", epoch) in scalars
    assert sum(tag == "batch_loss" for tag, _ in scalars) == 6  # 3 batches per epoch
    assert {v["tag"] for e in train for v in e["values"] if v["plugin_name"] == "histograms"} == {
        "dense/kernel", "dense/bias"}
    assert any(e.get("graph") for e in train)

    validation = _events(str(tmp_path / "validation"))
    val = {(v["tag"], e["step"]): float(v["tensor"]) for e in validation for v in e["values"]}
    assert val[("epoch_loss", 1)] == pytest.approx(history.history["val_loss"][1], rel=1e-6)
    with pytest.raises(ef.errors.InvalidArgumentError, match="update_freq"):
        ef.keras.callbacks.TensorBoard(update_freq="sometimes")
