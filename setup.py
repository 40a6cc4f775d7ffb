"""Builds the eagerflow Python package with CMake (pyproject.toml names setuptools as the
build backend; Debian packages it, unlike scikit-build-core).

    pip install --no-build-isolation .                 # build and install
    python3 -m build --wheel --no-isolation            # a wheel in dist/ (python3-build)

The CMake build goes to build-pip/ (EF_CMAKE_BUILD_DIR chooses another, e.g. an existing
`build` to reuse it); EF_CMAKE_ARGS adds configure flags. The wheel holds the package,
its extension, and libeagerflow beside them; the library's own dependencies (OpenBLAS,
oneDNN, protobuf) are the system's, installed by scripts/setup.sh.
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def read_version():
    with open(os.path.join(ROOT, "VERSION")) as f:
        return f.read().strip()


class CMakeBuild(build_ext):
    """Builds and installs the CMake project into a staging prefix, then copies the
    package (with the install-time rpath, $ORIGIN) into the wheel's tree."""

    def build_extension(self, ext):
        build_dir = os.path.abspath(os.environ.get("EF_CMAKE_BUILD_DIR", os.path.join(ROOT, "build-pip")))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DEF_BUILD_TESTS=OFF",
                         f"-DPython3_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
            subprocess.check_call(configure + shlex.split(os.environ.get("EF_CMAKE_ARGS", "")))
        jobs = os.environ.get("JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs, "--target", "eagerflow_python"])
        stage = os.path.join(self.build_temp, "stage")
        shutil.rmtree(stage, ignore_errors=True)
        subprocess.check_call(["cmake", "--install", build_dir, "--prefix", stage], stdout=subprocess.DEVNULL)
        package = os.path.join(os.path.abspath(self.build_lib), "eagerflow")
        shutil.rmtree(package, ignore_errors=True)
        shutil.copytree(os.path.join(stage, "lib", "python3", "dist-packages", "eagerflow"), package)
        # Only the name the extension links by (its SONAME, libeagerflow.so.0): wheels hold
        # no symbolic links, so the other names would be further full copies.
        sonames = glob.glob(os.path.join(stage, "lib", "libeagerflow.so.[0-9]"))
        if len(sonames) != 1:
            raise RuntimeError(f"setup.py: expected one libeagerflow.so.<major> in {stage}/lib, got {sonames}")
        shutil.copy2(sonames[0], package)  # the file behind the link
        # ef.distribute's library, where MPI was found at build time.
        for distribute in glob.glob(os.path.join(stage, "lib", "libeagerflow_distribute.so.[0-9]")):
            shutil.copy2(distribute, package)
        # ef.onnx's library, where libonnx was found at build time (eagerflow._onnx loads it).
        for exporter in glob.glob(os.path.join(stage, "lib", "libeagerflow_onnx.so.[0-9]")):
            shutil.copy2(exporter, package)
        # setuptools expects the extension at this path: it is the copied one.
        assert os.path.exists(self.get_ext_fullpath(ext.name)), self.get_ext_fullpath(ext.name)


os.makedirs(os.path.join(ROOT, "build-setuptools"), exist_ok=True)  # egg_base must exist
setup(
    version=read_version(),
    packages=[],  # the package comes from CMake's install, copied by CMakeBuild
    ext_modules=[Extension("eagerflow._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-setuptools"}, "egg_info": {"egg_base": "build-setuptools"}},
    zip_safe=False,
)
