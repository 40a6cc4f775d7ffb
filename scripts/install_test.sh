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

# The Python package, installed under <prefix>/lib/python3/dist-packages: import it from
# there (outside the source and build trees) and run a gradient.
site="$work/prefix/lib/python3/dist-packages"
if [[ -d "$site/eagerflow" ]]; then
  got=$(cd "$work" && PYTHONPATH="$site" /usr/bin/python3 -c '
import eagerflow as ef
w = ef.Variable([[1.0]])
with ef.GradientTape() as tape:
    loss = w * w
print(ef.__file__.startswith("'"$site"'"), tape.gradient(loss, w))')
  expected='True Tensor([[2.]], shape=(1, 1), dtype=float32)'
  if [[ "$got" != "$expected" ]]; then
    echo "install-test: FAILED (Python): expected '$expected', got '$got'" >&2
    exit 1
  fi
  echo "install-test: OK (Python): $got"
fi
