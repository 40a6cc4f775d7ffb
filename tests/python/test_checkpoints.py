"""ef.io safetensors files and ef.train checkpoints.

Interoperability is checked against an independent reader/writer written from the
format's specification (safetensors_reference.py; Debian has no python3-safetensors):
our files parse there, with our checksums verified, and its files load here.
"""
import os

import numpy as np
import pytest

import eagerflow as ef
import safetensors_reference as ref

ARRAYS = {
    "f32": np.array([[1.5, -0.0, np.inf], [np.nan, -np.inf, 3e-38]], np.float32),
    "f64": np.array([1e300, -2.5, 5e-324]),
    "i32": np.array([-2**31, 0, 2**31 - 1], np.int32),
    "i64": np.array([-2**63, -1, 2**63 - 1], np.int64),
    "bool": np.array([True, False, True]),
    "scalar": np.array(42.0),
    "empty": np.zeros((3, 0, 2), np.int32),
    "layer/kernel": np.arange(24, dtype=np.float32).reshape(2, 3, 4),
}


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def test_round_trip_every_dtype(tmp_path):
    path = tmp_path / "a.safetensors"
    ef.io.save_safetensors(path, {k: ef.constant(v) for k, v in ARRAYS.items()}, {"note": "ünïcode"})
    tensors, metadata = ef.io.load_safetensors(path, with_metadata=True)
    assert metadata == {"note": "ünïcode"}
    assert sorted(tensors) == sorted(ARRAYS)
    for name, expected in ARRAYS.items():
        assert isinstance(tensors[name], ef.Tensor)
        assert_same(tensors[name].numpy(), expected)
    assert os.listdir(tmp_path) == ["a.safetensors"]


def test_our_files_parse_with_an_independent_reader(tmp_path):
    path = tmp_path / "ours.safetensors"
    ef.io.save_safetensors(path, ARRAYS, {"step": "7"})   # NumPy arrays are accepted too
    tensors, metadata = ref.read(path)                    # also verifies every checksum
    assert metadata == {"step": "7"}
    for name, expected in ARRAYS.items():
        assert_same(tensors[name], expected)


def test_files_of_other_tools_load(tmp_path):
    path = tmp_path / "theirs.safetensors"
    ref.write(path, ARRAYS, {"format": "pt"})
    tensors, metadata = ef.io.load_safetensors(path, with_metadata=True)
    assert metadata == {"format": "pt"}
    for name, expected in ARRAYS.items():
        assert_same(tensors[name].numpy(), expected)
    small = {"u8": np.array([0, 255], np.uint8), "i8": np.array([-128, 7], np.int8),
             "i16": np.array([-32768], np.int16), "u16": np.array([65535], np.uint16),
             "u32": np.array([4294967295], np.uint32)}
    ref.write(tmp_path / "small.safetensors", small)
    loaded = ef.io.load_safetensors(tmp_path / "small.safetensors")
    for name, expected in small.items():
        assert_same(loaded[name].numpy(), expected)
    ref.write(tmp_path / "wide.safetensors", {"h": np.ones(2, np.uint64)})
    with pytest.raises(ef.errors.UnimplementedError, match="U64"):
        ef.io.load_safetensors(tmp_path / "wide.safetensors")


def test_damaged_files_raise_data_loss_naming_file_and_field(tmp_path):
    path = tmp_path / "d.safetensors"
    ef.io.save_safetensors(path, {"w": np.arange(10, dtype=np.float32)})
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 0x01
    path.write_bytes(bytes(blob))
    with pytest.raises(ef.errors.DataLossError, match=r"d\.safetensors.*'w' field 'crc32c'"):
        ef.io.load_safetensors(path)
    path.write_bytes(bytes(blob[:20]))
    with pytest.raises(ef.errors.DataLossError, match="header length"):
        ef.io.load_safetensors(path)
    with pytest.raises(ef.errors.NotFoundError, match="missing.safetensors"):
        ef.io.load_safetensors(tmp_path / "missing.safetensors")


class Model:
    """A model defined in Python: anything with named_variables() can be checkpointed."""

    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.w = ef.Variable(rng.standard_normal((4, 3)).astype(np.float32), name="w")
        self.b = ef.Variable(np.zeros(3, np.float32), name="b")

    def named_variables(self):
        return [("dense/kernel", self.w), ("dense/bias", self.b)]

    def __call__(self, x):
        return ef.tanh(ef.matmul(x, self.w) + self.b)


X = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
Y = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)


def train(model, opt, steps):
    for _ in range(steps):
        opt.minimize(lambda: ef.reduce_mean(ef.square(model(X) - Y)), var_list=[model.w, model.b])


@pytest.mark.parametrize("make_opt", [lambda: ef.optimizers.Adam(0.01),
                                      lambda: ef.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
                                      lambda: ef.optimizers.RMSprop(0.01, centered=True, momentum=0.5)])
def test_restored_training_continues_bitwise(tmp_path, make_opt):
    a, opt_a = Model(5), make_opt()
    train(a, opt_a, 6)

    b, opt_b = Model(5), make_opt()
    train(b, opt_b, 3)
    ckpt = ef.train.Checkpoint(model=b, optimizer=opt_b)
    ckpt.save(tmp_path / "step3.safetensors")

    c, opt_c = Model(99), make_opt()          # other weights, no slots yet
    ef.train.Checkpoint(model=c, optimizer=opt_c).restore(tmp_path / "step3.safetensors")
    assert opt_c.iterations == 3
    train(c, opt_c, 3)
    assert_same(c.w.numpy(), a.w.numpy())
    assert_same(c.b.numpy(), a.b.numpy())
    assert opt_c.iterations == 6
    keys = sorted(ef.train.Checkpoint(model=c, optimizer=opt_c).state())
    assert "model/dense/kernel" in keys and "optimizer/iterations" in keys
    assert "optimizer/steps/model/dense/kernel" in keys


def test_keras_model_checkpoint_continues_bitwise(tmp_path):
    def make():
        model = ef.keras.Sequential([ef.keras.layers.Dense(5, activation="tanh"), ef.keras.layers.Dense(3)])
        model(X)   # layers build on their first call: before a restore
        return model, ef.optimizers.Adam(0.01)

    def fit(model, opt, steps):
        for _ in range(steps):
            with ef.GradientTape() as tape:
                loss = ef.reduce_mean(ef.square(model(X) - Y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))

    a, opt_a = make()
    ef.train.Checkpoint(model=a).save(tmp_path / "init.safetensors")
    fit(a, opt_a, 6)
    b, opt_b = make()
    ef.train.Checkpoint(model=b).restore(tmp_path / "init.safetensors")
    fit(b, opt_b, 3)
    manager = ef.train.CheckpointManager(ef.train.Checkpoint(model=b, optimizer=opt_b), tmp_path / "run")
    manager.save()
    c, opt_c = make()
    ef.train.Checkpoint(model=c, optimizer=opt_c).restore(manager.latest_checkpoint)
    fit(c, opt_c, 3)
    for va, vc in zip(a.variables, c.variables):
        assert_same(va.numpy(), vc.numpy())
    keys = ef.train.Checkpoint(model=c).state().keys()
    assert all(k.startswith("model/") for k in keys) and len(keys) == 4


def test_restore_errors_change_nothing(tmp_path):
    m, opt = Model(1), ef.optimizers.Adam(0.01)
    train(m, opt, 2)
    path = tmp_path / "c.safetensors"
    ef.train.Checkpoint(model=m, optimizer=opt).save(path)

    other, other_opt = Model(2), ef.optimizers.Adam(0.01)
    train(other, other_opt, 1)
    before = other.w.numpy().copy()
    extra = ef.Variable([1.0, 2.0])
    with pytest.raises(ef.errors.NotFoundError, match="'extra'"):
        ef.train.Checkpoint(model=other, optimizer=other_opt, extra=extra).restore(path)
    with pytest.raises(ef.errors.InvalidArgumentError, match="optimizer/iterations"):
        ef.train.Checkpoint(model=other).restore(path)
    assert_same(other.w.numpy(), before)
    assert other_opt.iterations == 1
    with pytest.raises(TypeError, match="named_variables"):
        ef.train.Checkpoint(model=object())


def test_checkpoint_manager(tmp_path):
    v = ef.Variable(0.0)
    ckpt = ef.train.Checkpoint(v=v)
    manager = ef.train.CheckpointManager(ckpt, tmp_path / "run", max_to_keep=2)
    assert manager.latest_checkpoint is None
    for i in range(1, 5):
        v.assign(float(i))
        path = manager.save()
        assert path.endswith(f"ckpt-{i}.safetensors")
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-3.safetensors", "ckpt-4.safetensors"]
    v.assign(0.0)
    ckpt.restore(manager.latest_checkpoint)
    assert float(v.numpy()) == 4.0
    with pytest.raises(ef.errors.InvalidArgumentError, match="max_to_keep"):
        ef.train.CheckpointManager(ckpt, tmp_path / "run", max_to_keep=-1)


def _edit_header(path, change):
    """Rewrites a safetensors file's JSON header with `change(header)` (data kept)."""
    import json
    import struct
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    text = change(header)
    text = (text if isinstance(text, str) else json.dumps(header)).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + blob[8 + n:])


def _adam_checkpoint(tmp_path):
    bias = ef.Variable([1.0, 2.0], name="bias")
    opt = ef.optimizers.Adam(0.1)
    for _ in range(3):
        opt.minimize(lambda: ef.reduce_sum(ef.square(bias - [5.0, -3.0])), var_list=[bias])
    ckpt = ef.train.Checkpoint(bias=bias, optimizer=opt)
    return ckpt, ckpt.save(tmp_path / "adam.safetensors")


def test_checkpoints_that_cannot_be_fooled(tmp_path):
    ckpt, path = _adam_checkpoint(tmp_path)
    good = open(path, "rb").read()
    before = {k: v.numpy().copy() for k, v in ckpt.state().items()}

    def rejected(change, error, match):
        open(path, "wb").write(good)
        _edit_header(path, change)
        with pytest.raises(error, match=match):
            ckpt.restore(path)
        for key, value in ckpt.state().items():   # bit-identical after every rejected restore
            assert_same(value.numpy(), before[key])

    # 1. Checksums stripped, a data byte flipped: eagerflow's own files must carry them.
    def strip(h):
        h["__metadata__"] = {k: v for k, v in h["__metadata__"].items() if not k.startswith("crc32c/")}
    open(path, "wb").write(good)
    _edit_header(path, strip)
    blob = bytearray(open(path, "rb").read())
    blob[-1] ^= 0x40
    open(path, "wb").write(bytes(blob))
    with pytest.raises(ef.errors.DataLossError, match="written by eagerflow but carries no checksums"):
        ckpt.restore(path)
    # 2. Adam's m and v of one variable swapped, offsets and checksums together.
    m_key, v_key = "optimizer/slots/bias/m", "optimizer/slots/bias/v"

    def swap(h):
        h[m_key]["data_offsets"], h[v_key]["data_offsets"] = h[v_key]["data_offsets"], h[m_key]["data_offsets"]
        md = h["__metadata__"]
        md["crc32c/" + m_key], md["crc32c/" + v_key] = md["crc32c/" + v_key], md["crc32c/" + m_key]
    rejected(swap, ef.errors.DataLossError, "checksum")
    # 3. A repeated key: the last would win.
    rejected(lambda h: '{"bias": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, ' +
             __import__("json").dumps(h)[1:], ef.errors.DataLossError, 'key "bias" appears more than once')
    open(path, "wb").write(good)
    ckpt.restore(path)


def test_files_of_other_tools_restore_with_a_warning(tmp_path, capfd):
    v = ef.Variable([0.0, 0.0], name="v")
    ref.write(tmp_path / "theirs.safetensors", {"v": np.array([3.0, 4.0], np.float32)})
    ef.train.Checkpoint(v=v).restore(tmp_path / "theirs.safetensors")
    assert v.numpy().tolist() == [3.0, 4.0]
    assert "has no checksums" in capfd.readouterr().err


def test_save_and_restore_paths_that_cannot_hang_or_clobber(tmp_path):
    v = ef.Variable([1.0], name="v")
    ckpt = ef.train.Checkpoint(v=v)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ef.errors.InvalidArgumentError, match="not a regular file"):
        ckpt.restore(fifo)                     # would block forever if opened for reading
    with pytest.raises(ef.errors.FailedPreconditionError, match="exists and is a FIFO"):
        ckpt.save(fifo)
    with pytest.raises(ef.errors.FailedPreconditionError, match="character device"):
        ckpt.save("/dev/null")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    # A killed save's temporary file (a writer that is gone) is removed by the next save
    # or restore in the folder, whatever its target.
    stale = tmp_path / ".other.safetensors.tmp-4194305-12-0"
    stale.write_bytes(b"x" * 1000)
    path = ckpt.save(tmp_path / "v.safetensors")
    assert not stale.exists()
    stale.write_bytes(b"x")
    ckpt.restore(path)
    assert sorted(os.listdir(tmp_path)) == ["pipe", "v.safetensors"]
