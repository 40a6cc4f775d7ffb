#!/usr/bin/env bash
# Installs every system dependency eagerflow needs from Debian's apt.
# Idempotent and fast when everything is present: it only calls apt when a
# package is missing. Called by the top-level Makefile; never needed by hand.
#   scripts/setup.sh          build + test dependencies
#   scripts/setup.sh bench    also the PyTorch peer used by `make bench`
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libopenblas-dev
  libdnnl-dev                # oneDNN: float32 conv2d kernels (optional at build time)
  zlib1g-dev                 # gzip-compressed IDX files
  libpng-dev libjpeg62-turbo-dev  # ef.io.decode_png / decode_jpeg / encode_png
  libkissfft-dev             # ef.signal's FFTs (its header-only C++ template)
  dataset-fashion-mnist      # the examples' data (IDX files in /usr/share/datasets)
  nlohmann-json3-dev         # checkpoint headers
  libprotobuf-dev protobuf-compiler  # TensorBoard event files
  libopenmpi-dev openmpi-bin python3-mpi4py  # ef.distribute: collectives on MPI, mpirun
  libonnx-dev python3-onnx   # ONNX export (libeagerflow_onnx) and its checker in the tests
  libgtest-dev libgmock-dev
  clang libclang-rt-14-dev   # libFuzzer + sanitizers for the fuzz target
  # The Python package, for Debian's /usr/bin/python3; PyTorch is the tests' reference.
  python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest python3-torch
  python3-matplotlib         # keras.utils.plot_history (optional for users; tested here)
  python3-pil                # the image codec tests' reference decoder
  python3-venv python3-pip python3-build python3-setuptools python3-wheel  # pip install . / wheels
  python3-sphinx python3-myst-parser  # make docs
)
if [[ "${1:-}" == "bench" ]]; then
  # libtorch-dev: the PyTorch (ATen C++) peer that bench/cpp/torch_bench.cpp links.
  packages+=(libbenchmark-dev libtorch-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ONNX Runtime for the ONNX export tests (tests/python/test_onnx_export.py), from npm:
# its CPU runtime ships inside the package. Into .node/ of the checkout (git ignores it).
ORT_VERSION=1.30.0
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ ! -f "$root/.node/node_modules/onnxruntime-node/package.json" ]] ||
   ! grep -q "\"version\": \"$ORT_VERSION\"" "$root/.node/node_modules/onnxruntime-node/package.json"; then
  if ! command -v npm >/dev/null; then
    echo "setup: installing nodejs npm"
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  echo "setup: installing onnxruntime-node $ORT_VERSION into .node/"
  mkdir -p "$root/.node"
  # A failed download leaves the ONNX Runtime tests skipping (they say why), not the build broken.
  npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$root/.node" "onnxruntime-node@$ORT_VERSION" ||
    echo "setup: could not install onnxruntime-node; the ONNX Runtime tests will skip"
fi
