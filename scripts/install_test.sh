#!/usr/bin/env bash
# Installs the library from an existing build directory into a temporary prefix, then
# configures, builds and runs tests/install (a separate CMake project that uses
# find_package(eagerflow)) against it, and checks what it prints.
#   scripts/install_test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/ef-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "install-test: installing $build_dir into $work/prefix"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
echo "install-test: building tests/install against it"
cmake -S tests/install -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

expected='Tensor([[4.]], shape=(1, 1), dtype=float32)'
got=$("$work/build/app")
if [[ "$got" != "$expected" ]]; then
  echo "install-test: FAILED: expected '$expected', got '$got'" >&2
  exit 1
fi
echo "install-test: OK: $got"
