"""Checkpoint files in the safetensors format, readable by Hugging Face's ``safetensors``
and everything built on it (and theirs by us). Writes are atomic and every tensor
carries a CRC32C; a damaged file raises ``ef.errors.DataLossError`` naming the file
and the field.

    ef.io.save_safetensors("w.safetensors", {"kernel": w, "step": 3})
    tensors = ef.io.load_safetensors("w.safetensors")      # {"kernel": Tensor, ...}
"""
import os

from eagerflow import _core


def save_safetensors(path, tensors, metadata=None):
    """Writes ``tensors`` (a dict of name -> tensor-like) and the string dict ``metadata``
    to ``path`` atomically (the old file or the new one, never a broken one)."""
    _core._save_safetensors(os.fspath(path), dict(tensors), dict(metadata or {}))


def load_safetensors(path, with_metadata=False):
    """Reads and validates ``path``: a dict of name -> Tensor, and with ``with_metadata``
    a pair (tensors, metadata)."""
    tensors, metadata = _core._load_safetensors(os.fspath(path))
    return (tensors, metadata) if with_metadata else tensors
