#!/usr/bin/env bash
# The pip-installable package: builds a wheel (python3 -m build) and installs it, then
# `pip install .`, each into a fresh virtual environment that sees Debian's NumPy
# (--system-site-packages); imports eagerflow from outside the source tree, runs a
# gradient, checks the version, and checks that `pip uninstall` leaves nothing behind.
#   scripts/pip_install_test.sh [cmake-build-dir]    (reused: CMake only relinks)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=$(realpath "${1:-build}")
work=$(mktemp -d "${TMPDIR:-/tmp}/ef-pip-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export EF_CMAKE_BUILD_DIR="$build_dir"
version=$(cat VERSION)

check_venv() {  # $1: the venv
  local got site
  got=$(cd "$work" && "$1/bin/python" -c '
import eagerflow as ef
w = ef.Variable([[1.0]])
with ef.GradientTape() as tape:
    loss = w * w
print(ef.__version__, ef.__file__.startswith("'"$1"'"), tape.gradient(loss, w))')
  if [[ "$got" != "$version True Tensor([[2.]], shape=(1, 1), dtype=float32)" ]]; then
    echo "pip-install-test: FAILED: got '$got'" >&2
    exit 1
  fi
  "$1/bin/pip" uninstall -y -q eagerflow
  site=$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  if compgen -G "$site/eagerflow*" >/dev/null; then
    echo "pip-install-test: FAILED: pip uninstall left $(ls -d "$site"/eagerflow*)" >&2
    exit 1
  fi
}

echo "pip-install-test: python3 -m build --wheel"
/usr/bin/python3 -m build --wheel --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
/usr/bin/python3 -m venv --system-site-packages "$work/wheel-env"
"$work/wheel-env/bin/pip" install -q --no-index "$work"/dist/eagerflow-"$version"-*.whl
check_venv "$work/wheel-env"
echo "pip-install-test: OK (wheel $(basename "$work"/dist/*.whl))"

/usr/bin/python3 -m venv --system-site-packages "$work/source-env"
"$work/source-env/bin/pip" install -q --no-index --no-build-isolation . >"$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; exit 1; }
check_venv "$work/source-env"
echo "pip-install-test: OK (pip install .)"
