"""The README's Python examples run as written."""
import importlib.util
import pathlib
import re

import eagerflow as ef


def test_readme_python_blocks_run(capsys, tmp_path, monkeypatch):
    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    monkeypatch.chdir(tmp_path)  # the blocks write files (a saved model, logs)
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks
    for block in blocks:
        if "ef.distribute" in block and getattr(ef._core, "distribute", None) is None:
            continue  # built without MPI (test_distribute.py says so)
        if "ef.onnx" in block and importlib.util.find_spec("eagerflow._onnx") is None:
            continue  # built without libonnx (test_onnx_export.py says so)
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "Tensor([[4.]], shape=(1, 1), dtype=float32)" in out
    assert "Tensor([[2.]], shape=(1, 1), dtype=float32)" in out
    assert "200 1\n" in out  # the training step traced once, its optimizer stepped every call
    assert re.search(r"accuracy (0\.9\d|1\.00)", out)  # the Keras fit example learned
    assert "<dtype: 'bfloat16'> <dtype: 'float32'>" in out  # mixed precision
    assert "<dtype: 'uint8'> (24, 24, 3)" in out  # the image example
    assert "Calls" in out and "matmul" in out  # the profiler table of the TensorBoard example
    assert (tmp_path / "scaler" / "saved_model.pb").exists()
