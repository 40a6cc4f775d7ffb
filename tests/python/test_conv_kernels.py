"""conv2d's float32 kernels: oneDNN where it measured faster, im2col + BLAS otherwise
(Note [conv2d on oneDNN] in src/ops/nn/conv2d_onednn.cpp). The default run of
test_conv_vs_torch.py covers the automatic choice; here the same tests run again in
fresh interpreters with EF_ONEDNN=0 (im2col only) and EF_ONEDNN=always (oneDNN wherever
it can take a case), so that both kernels of every op meet PyTorch and the numeric
gradients. Without oneDNN in the build, "always" runs im2col as well."""
import os
import subprocess
import sys

import pytest

import eagerflow as ef

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("mode", ["0", "always"])
def test_conv_vs_torch_on_each_kernel(mode):
    # The child imports the same package as this process, whatever the working directory.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ef.__file__)))
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, EF_ONEDNN=mode, PYTHONPATH=path)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          os.path.join(HERE, "test_conv_vs_torch.py")],
                         cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, f"EF_ONEDNN={mode}:\n{run.stdout[-4000:]}"
    assert " passed" in run.stdout and "failed" not in run.stdout
