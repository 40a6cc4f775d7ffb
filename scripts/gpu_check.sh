#!/usr/bin/env bash
# Checks eagerflow on a GPU machine in one go: the CUDA test suite (tests/cpp/cuda,
# every CUDA kernel against the CPU) and a short report. The machine may reach no
# package registry, so the libraries a build needs come along in .gpu-deps/ (made by
# scripts/gpu_deps.sh on a Debian machine) and are unpacked into a prefix here.
#
#   scripts/gpu_check.sh            uses build/ when it holds a built test binary
#                                   (made on another machine), else builds one here
# The report goes to $OUT/gpu_report.txt when OUT is set, else build/gpu_report.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report_dir=${OUT:-$root/build}
mkdir -p "$report_dir"
report=$report_dir/gpu_report.txt
log=$report_dir/gpu_tests.log
: >"$report"
say() { echo "$*" | tee -a "$report"; }

say "== eagerflow GPU check, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$report"

# Libraries of a build made on Debian, unpacked into a private prefix.
prefix=/tmp/ef-gpu-deps
if compgen -G ".gpu-deps/*.deb" >/dev/null; then
  mkdir -p $prefix
  for deb in .gpu-deps/*.deb; do dpkg -x "$deb" $prefix; done
  export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib/x86_64-linux-gnu/openblas-pthread:$prefix/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
# NVRTC and cuBLAS: the toolkit's, or the ones PyTorch's wheels bring.
for dir in /usr/local/cuda/lib64 $(ls -d /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib /usr/local/lib/python3*/dist-packages/nvidia/*/lib 2>/dev/null); do
  [[ -d $dir ]] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$dir
done
say "nvrtc: $(ls /usr/local/cuda/lib64/libnvrtc.so* 2>/dev/null | head -1)"
export EF_CUDA_CACHE_DIR=/tmp/ef-cuda-cache

tests=build/tests/cpp/eagerflow_tests
if [[ ! -x $tests ]]; then
  say "building (no prebuilt build/ came along)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >"$report_dir/build.log" 2>&1 &&
    cmake --build build -j"$(nproc)" --target eagerflow_tests >>"$report_dir/build.log" 2>&1 ||
    { say "BUILD FAILED (see build.log)"; tail -30 "$report_dir/build.log"; exit 1; }
fi
export LD_LIBRARY_PATH=$root/build:$LD_LIBRARY_PATH
missing=$(ldd $tests | grep "not found")
[[ -n $missing ]] && say "missing libraries: $missing"

start=$(date +%s)
timeout 400 $tests --gtest_filter='Cuda*' --gtest_brief=0 >"$log" 2>&1
rc=$?
say "CUDA tests: exit $rc in $(( $(date +%s) - start )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|^\[  FAILED  \]|tests? ran" "$log" | tee -a "$report"
grep -B2 -A12 "Failure\|what()" "$log" | head -150 >>"$report"
exit $rc
