"""Files: checkpoints in the safetensors format, and image files as tf.io has them.

Safetensors files are readable by Hugging Face's ``safetensors`` and everything built
on it (and theirs by us). Writes are atomic and every tensor carries a CRC32C; a
damaged file raises ``ef.errors.DataLossError`` naming the file and the field.

    ef.io.save_safetensors("w.safetensors", {"kernel": w, "step": 3})
    tensors = ef.io.load_safetensors("w.safetensors")      # {"kernel": Tensor, ...}

A file's bytes are a 1-D uint8 tensor (TensorFlow keeps them in a string tensor), so
images read as in TensorFlow:

    image = ef.io.decode_png(ef.io.read_file("cat.png"))   # uint8 [height, width, 3]
    ef.io.write_file("copy.png", ef.io.encode_png(image))
"""
import os

from eagerflow import _core

_read_file, _write_file = _core.read_file, _core.write_file
decode_png, decode_jpeg, decode_image, encode_png = (_core.decode_png, _core.decode_jpeg, _core.decode_image,
                                                     _core.encode_png)


def read_file(filename, name=None):
    """Reads the whole file ``filename`` into a 1-D uint8 tensor of its bytes.

    ``decode_png``, ``decode_jpeg`` and ``decode_image`` take that tensor. Raises
    NotFoundError for a missing file.
    """
    return _read_file(os.fspath(filename))


def write_file(filename, contents, name=None):
    """Writes the bytes in ``contents``, a 1-D uint8 tensor, to ``filename``.

    The write is atomic: the file holds its old content or the complete new one.
    """
    _write_file(os.fspath(filename), contents)


def save_safetensors(path, tensors, metadata=None):
    """Writes ``tensors`` (a dict of name -> tensor-like) and the string dict ``metadata``
    to ``path`` atomically (the old file or the new one, never a broken one)."""
    _core._save_safetensors(os.fspath(path), dict(tensors), dict(metadata or {}))


def load_safetensors(path, with_metadata=False):
    """Reads and validates ``path``: a dict of name -> Tensor, and with ``with_metadata``
    a pair (tensors, metadata)."""
    tensors, metadata = _core._load_safetensors(os.fspath(path))
    return (tensors, metadata) if with_metadata else tensors
