#!/usr/bin/env bash
# The Python half of scripts/gpu_check.sh (run by `gpu_check.sh --python`): the GPU
# machine's python3 may be another version than the one build/ was made for, so this
# compiles the extension eagerflow._core there, for that python3, against the carried
# build/libeagerflow.so (pybind11 and Python's headers come with the machine's Python,
# DLPack's header in .gpu-deps/), then runs the Python tests that use a GPU.
# Writes python_build.log and python_tests.log next to the report.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report_dir=${OUT:-$root/build}
build_log=$report_dir/python_build.log
package=/tmp/ef-python/eagerflow
objects=/tmp/ef-python/objects
rm -rf /tmp/ef-python
mkdir -p "$package" "$objects"
cp -r python/eagerflow/. "$package/"

python_include=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
pybind11_include=$(python3 -c "import pybind11; print(pybind11.get_include())" 2>/dev/null) ||
  { echo "python: skipped (no pybind11 for $(python3 --version))"; exit 0; }
suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
flags=(-std=c++20 -O1 -fPIC -fvisibility=hidden -w -Iinclude -Isrc -I"$python_include" -I"$pybind11_include"
  -I/tmp/ef-gpu-deps/usr/include "-DEF_VERSION=\"$(cat VERSION)\"")

start=$(date +%s)
: >"$build_log"
compile_failed=0
for source in python/src/*.cpp; do
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || compile_failed=1; done
  g++ "${flags[@]}" -c "$source" -o "$objects/$(basename "$source" .cpp).o" 2>>"$build_log" &
done
while (($(jobs -rp | wc -l) > 0)); do wait -n || compile_failed=1; done
# A shared library links with undefined symbols, so a failed compile must stop here.
if ((compile_failed)) || ! g++ -shared "$objects"/*.o -Lbuild -leagerflow -Wl,-rpath,"$root/build" -o "$package/_core$suffix" \
  2>>"$build_log"; then
  echo "python: BUILD FAILED for $(python3 --version) (see python_build.log)"
  tail -20 "$build_log"
  exit 1
fi
echo "python: extension built for $(python3 --version) in $(($(date +%s) - start)) s"

cd tests/python
PYTHONPATH=/tmp/ef-python python3 -m pytest -q -p no:cacheprovider test_devices.py \
  >"$report_dir/python_tests.log" 2>&1
rc=$?
echo "python tests: $(tail -1 "$report_dir/python_tests.log")"
exit $rc
