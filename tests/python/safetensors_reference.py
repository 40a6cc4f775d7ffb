"""An independent safetensors reader and writer (struct + json + NumPy), written from the
format's specification and sharing no code with eagerflow, to check that our files are
readable by other tools and theirs by us. Also verifies eagerflow's checksums:
"crc32c/<name>" = CRC32C of "<name>\\0<DTYPE>[d0,d1,...]" then the tensor's bytes (format
version 2, "eagerflow.format": "2"; version 1 files lack the name and the entry), and
"crc32c/__metadata__" = CRC32C of "<key>\\0<value>\\0" over the other entries in key order,
the format entry included. `read` returns the user metadata without those entries.
"""
import json
import struct

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "I32": np.int32, "I64": np.int64, "BOOL": np.bool_,
          "F16": np.float16, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16,
          "U32": np.uint32, "U64": np.uint64}


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c(data, crc=0):
    """CRC32C (Castagnoli), continuing from `crc`."""
    c = crc ^ 0xFFFFFFFF
    for b in bytes(data):
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def read(path):
    """Returns ({name: ndarray}, metadata) and checks eagerflow's checksums when present."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    metadata = header.pop("__metadata__", {})
    version = int(metadata.get("eagerflow.format", "1"))
    tensors = {}
    for name, desc in header.items():
        begin, end = desc["data_offsets"]
        dtype = np.dtype(DTYPES[desc["dtype"]]).newbyteorder("<")
        tensors[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(desc["shape"])
        key = "crc32c/" + name
        if key in metadata:
            described = desc["dtype"] + "[" + ",".join(str(d) for d in desc["shape"]) + "]"
            if version >= 2:
                described = name + "\0" + described
            assert int(metadata[key], 16) == crc32c(data[begin:end], crc32c(described.encode())), name
    user = {k: v for k, v in metadata.items() if not k.startswith("crc32c/")}
    if "crc32c/__metadata__" in metadata:
        c = 0
        for k in sorted(user):
            c = crc32c(k.encode() + b"\0" + user[k].encode() + b"\0", c)
        assert int(metadata["crc32c/__metadata__"], 16) == c
    user.pop("eagerflow.format", None)
    return tensors, user


def write(path, tensors, metadata=None):
    """Writes a file as other tools do: no checksums, tensors in the given order."""
    codes = {np.dtype(v): k for k, v in DTYPES.items()}
    header, chunks, offset = {}, [], 0
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": codes[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))
