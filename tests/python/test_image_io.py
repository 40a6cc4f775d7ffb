"""Image files: ef.io.read_file / write_file, decode_png / decode_jpeg / decode_image and
encode_png, against Pillow (the reference decoder and encoder) and TensorFlow's rules
for channels and bit depths (eagerflow/io/image.h)."""
import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

import eagerflow as ef


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def encoded(image, fmt, **options):
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return ef.constant(np.frombuffer(out.getvalue(), np.uint8))


def adam7_png(pixels):
    """An interlaced (Adam7) 8-bit RGB PNG of `pixels`, written by hand: Pillow writes none."""
    height, width, _ = pixels.shape
    passes = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)]
    raw = b""
    for y0, x0, dy, dx in passes:
        sub = pixels[y0::dy, x0::dx]
        if sub.size:
            raw += b"".join(b"\0" + row.tobytes() for row in sub)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 1)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.mark.parametrize("mode,shape", [("L", (5, 7)), ("LA", (4, 6, 2)), ("RGB", (6, 5, 3)), ("RGBA", (3, 9, 4))])
def test_png_decodes_as_pillow_in_its_own_channels(mode, shape, rng):
    pixels = rng.integers(0, 256, shape, dtype=np.uint8)
    image = ef.io.decode_png(encoded(Image.fromarray(pixels, mode), "PNG"))
    assert image.dtype == ef.uint8
    np.testing.assert_array_equal(image.numpy(), pixels.reshape(shape[0], shape[1], -1))


def test_palette_one_bit_sixteen_bit_and_interlaced_pngs(rng):
    rgb = Image.fromarray(rng.integers(0, 256, (6, 7, 3), dtype=np.uint8))
    palette = rgb.convert("P", palette=Image.ADAPTIVE, colors=5)
    np.testing.assert_array_equal(ef.io.decode_png(encoded(palette, "PNG")).numpy(),
                                  np.asarray(palette.convert("RGB")))
    # With a transparent palette entry: RGBA, as TensorFlow gives.
    transparent = encoded(palette, "PNG", transparency=2)
    reference = Image.open(io.BytesIO(transparent.numpy().tobytes())).convert("RGBA")
    np.testing.assert_array_equal(ef.io.decode_png(transparent).numpy(), np.asarray(reference))
    bits = rng.integers(0, 2, (5, 11)).astype(bool)
    np.testing.assert_array_equal(ef.io.decode_png(encoded(Image.fromarray(bits), "PNG")).numpy()[..., 0],
                                  bits * 255)
    wide = rng.integers(0, 65536, (4, 3), dtype=np.uint16)
    png16 = encoded(Image.fromarray(wide), "PNG")
    np.testing.assert_array_equal(ef.io.decode_png(png16, dtype=ef.uint16).numpy()[..., 0], wide)
    np.testing.assert_array_equal(ef.io.decode_png(png16).numpy()[..., 0], wide >> 8)  # the high byte
    pixels = rng.integers(0, 256, (13, 10, 3), dtype=np.uint8)
    interlaced = ef.constant(np.frombuffer(adam7_png(pixels), np.uint8))
    np.testing.assert_array_equal(ef.io.decode_png(interlaced).numpy(), pixels)
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(adam7_png(pixels)))), pixels)  # the writer is right


def test_png_channel_conversions_follow_tensorflow(rng):
    rgba = rng.integers(0, 256, (4, 5, 4), dtype=np.uint8)
    data = encoded(Image.fromarray(rgba, "RGBA"), "PNG")
    np.testing.assert_array_equal(ef.io.decode_png(data, channels=3).numpy(), rgba[..., :3])
    gray = ef.io.decode_png(data, channels=1).numpy()[..., 0].astype(np.int64)
    expected = rgba[..., 0] * 0.299 + rgba[..., 1] * 0.587 + rgba[..., 2] * 0.114
    assert np.abs(gray - expected).max() <= 1  # libpng's fixed-point weights
    gray_image = rng.integers(0, 256, (3, 4), dtype=np.uint8)
    as_rgba = ef.io.decode_png(encoded(Image.fromarray(gray_image), "PNG"), channels=4).numpy()
    np.testing.assert_array_equal(as_rgba[..., :3], np.repeat(gray_image[..., None], 3, axis=2))
    np.testing.assert_array_equal(as_rgba[..., 3], 255)  # an opaque alpha added
    as16 = ef.io.decode_png(encoded(Image.fromarray(gray_image), "PNG"), dtype=ef.uint16)
    np.testing.assert_array_equal(as16.numpy()[..., 0], gray_image.astype(np.uint16) * 257)


@pytest.mark.parametrize("channels,dtype", [(1, np.uint8), (3, np.uint8), (4, np.uint8), (2, np.uint16),
                                            (3, np.uint16)])
def test_encode_png_round_trips_and_pillow_reads_it(channels, dtype, rng, tmp_path):
    pixels = rng.integers(0, np.iinfo(dtype).max + 1, (6, 5, channels), dtype=dtype)
    data = ef.io.encode_png(ef.constant(pixels), compression=9)
    assert data.dtype == ef.uint8 and data.shape.rank == 1
    back = ef.io.decode_png(data, dtype=ef.as_dtype(dtype))
    np.testing.assert_array_equal(back.numpy(), pixels)
    if dtype == np.uint8:
        ours = np.asarray(Image.open(io.BytesIO(data.numpy().tobytes())))
        np.testing.assert_array_equal(ours.reshape(pixels.shape), pixels)
    path = tmp_path / "x.png"
    ef.io.write_file(path, data)
    np.testing.assert_array_equal(ef.io.read_file(path).numpy(), data.numpy())


@pytest.mark.parametrize("mode,progressive", [("RGB", False), ("RGB", True), ("L", False)])
def test_jpeg_decodes_as_pillow(mode, progressive, rng):
    shape = (19, 23, 3) if mode == "RGB" else (19, 23)
    source = Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode)
    data = encoded(source, "JPEG", quality=85, progressive=progressive)
    reference = np.asarray(Image.open(io.BytesIO(data.numpy().tobytes())))
    accurate = ef.io.decode_jpeg(data, dct_method="INTEGER_ACCURATE").numpy()  # Pillow's islow
    np.testing.assert_array_equal(accurate.reshape(reference.shape), reference)
    fast = ef.io.decode_jpeg(data).numpy()  # TensorFlow's default, ifast: a few levels off at most
    assert np.abs(fast.reshape(reference.shape).astype(int) - reference).max() <= 8
    assert ef.io.decode_image(data).shape == accurate.shape


def test_decode_image_sniffs_and_converts_to_float(rng):
    pixels = rng.integers(0, 256, (3, 4, 3), dtype=np.uint8)
    png = encoded(Image.fromarray(pixels), "PNG")
    as_float = ef.io.decode_image(png, dtype=ef.float32)
    assert as_float.dtype == ef.float32
    np.testing.assert_allclose(as_float.numpy(), pixels / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(ef.image.decode_image(png).numpy(), pixels)
    wide = rng.integers(0, 65536, (4, 3), dtype=np.uint16)  # 16-bit files keep their precision
    png16 = encoded(Image.fromarray(wide), "PNG")
    np.testing.assert_allclose(ef.io.decode_image(png16, dtype=ef.float32).numpy()[..., 0], wide / 65535.0, rtol=1e-6)


def test_bad_files_are_typed_errors(rng, tmp_path):
    pixels = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
    png = encoded(Image.fromarray(pixels), "PNG").numpy()
    jpeg = encoded(Image.fromarray(pixels), "JPEG").numpy()
    for cut in (8, 20, 40, len(png) - 13, len(png) - 1):
        with pytest.raises(ef.errors.DataLossError, match="decode_png: not a valid PNG file"):
            ef.io.decode_png(png[:cut])
    for cut in (3, 100, len(jpeg) // 2, len(jpeg) - 2):
        with pytest.raises(ef.errors.DataLossError, match="decode_jpeg: not a valid JPEG file"):
            ef.io.decode_jpeg(jpeg[:cut])
    damaged = png.copy()
    damaged[40] ^= 0xFF  # inside the compressed pixels: the CRC no longer matches
    with pytest.raises(ef.errors.DataLossError, match="PNG"):
        ef.io.decode_png(damaged)
    with pytest.raises(ef.errors.InvalidArgumentError, match="not a PNG or JPEG"):
        ef.io.decode_image(np.frombuffer(b"hello world", np.uint8))
    with pytest.raises(ef.errors.InvalidArgumentError, match="1-D uint8"):
        ef.io.decode_png(ef.constant(png.astype(np.int32)))
    with pytest.raises(ef.errors.InvalidArgumentError, match="channels"):
        ef.io.decode_jpeg(jpeg, channels=4)
    cmyk = encoded(Image.fromarray(pixels).convert("CMYK"), "JPEG")
    with pytest.raises(ef.errors.UnimplementedError, match="CMYK"):
        ef.io.decode_jpeg(cmyk)
    with pytest.raises(ef.errors.NotFoundError, match="read_file"):
        ef.io.read_file(tmp_path / "missing.png")
    with pytest.raises(ef.errors.FailedPreconditionError, match="not a regular file"):
        ef.io.read_file(tmp_path)
    with pytest.raises(ef.errors.InvalidArgumentError, match="uint8 or uint16"):
        ef.io.encode_png(ef.constant(pixels.astype(np.float32)))


def test_a_huge_claimed_size_is_refused_before_allocating():
    # A valid header claiming 60000 x 60000 pixels over a few bytes of data.
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 100))
    with pytest.raises(ef.errors.DataLossError, match="claims 60000 x 60000"):
        ef.io.decode_png(np.frombuffer(png, np.uint8))


def test_a_jpeg_claiming_a_large_size_over_little_data_is_a_data_loss():
    # A baseline JPEG's frame header (SOF0) patched to claim 16000 x 16000 pixels: the
    # rows are decoded into a buffer that grows as they arrive, so the file fails at its
    # end of data with what it decoded allocated, not the 768 MB its header claims.
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 30, 90)).save(buffer, "JPEG")
    data = bytearray(buffer.getvalue())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 16000, 16000)
    with pytest.raises(ef.errors.DataLossError, match="JPEG"):
        ef.io.decode_jpeg(np.frombuffer(bytes(data), np.uint8))


def test_an_image_pipeline(rng, tmp_path):
    """Decode PNGs to uint8, resize, standardise: what input pipelines do first."""
    paths = []
    for i in range(3):
        paths.append(tmp_path / f"{i}.png")
        Image.fromarray(rng.integers(0, 256, (10 + i, 12, 3), dtype=np.uint8)).save(paths[-1])

    def load(index):
        image = ef.io.decode_png(ef.io.read_file(paths[int(index)]), channels=3)
        image = ef.image.resize(ef.image.convert_image_dtype(image, ef.float32), [8, 8])
        return ef.image.per_image_standardization(image)

    batch = next(iter(ef.data.Dataset.range(3).map(load).batch(3)))
    assert batch.shape == (3, 8, 8, 3) and batch.dtype == ef.float32
    np.testing.assert_allclose(batch.numpy().mean(axis=(1, 2, 3)), 0, atol=1e-5)
    np.testing.assert_allclose(batch.numpy().std(axis=(1, 2, 3)), 1, rtol=1e-4)
