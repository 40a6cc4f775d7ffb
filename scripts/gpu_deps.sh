#!/usr/bin/env bash
# Fetches, on a Debian machine with apt, what scripts/gpu_check.sh needs on a GPU
# machine that reaches no package registry: the shared libraries a build made here
# links against (OpenBLAS, oneDNN, libpng, libjpeg and their runtimes), as .deb files in .gpu-deps/
# (ignored by git; about 20 MB). gpu_check.sh unpacks them there with dpkg -x.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-deps
cd .gpu-deps
apt-get update -qq >/dev/null 2>&1 || true
apt-get download -qq libopenblas0-pthread libgfortran5 libquadmath0 ocl-icd-libopencl1 libgomp1 libdnnl2 libprotobuf32 \
  libpng16-16 libjpeg62-turbo \
  libdlpack-dev  # the header, for gpu_python_check.sh
ls -la
