#!/usr/bin/env bash
# Checks eagerflow on a GPU machine in one go: the CUDA test suite (tests/cpp/cuda,
# every CUDA kernel against the CPU) and a short report. The machine may reach no
# package registry, so the libraries a build needs come along in .gpu-deps/ (made by
# scripts/gpu_deps.sh on a Debian machine) and are unpacked into a prefix here.
#
#   scripts/gpu_check.sh            uses build/ when it holds a built test binary
#                                   (made on another machine), else builds one here
#   scripts/gpu_check.sh --bench    the benchmarks only
#   scripts/gpu_check.sh --python   also builds the Python extension for the machine's
#                                   python3 and runs the GPU Python tests (a few minutes)
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

say "== eagerflow GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
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

# Each test in its own process, so that a crash loses one test, not the rest; a crash
# is reported with a backtrace (cuda-gdb debugs host code too).
start=$(date +%s)
passed=0 failed=0 skipped=0 failures=()
if [[ ${1:-} != --bench ]]; then
: >"$log"
for test in $($tests --gtest_list_tests --gtest_filter='Cuda*' | awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}'); do
  timeout 300 $tests --gtest_filter="$test" >"$log.one" 2>&1
  rc=$?
  cat "$log.one" >>"$log"
  if [[ $rc -ne 0 ]]; then
    failed=$((failed + 1)) failures+=("$test (exit $rc)")
    if [[ $rc -gt 128 && ${#failures[@]} -le 2 ]] && command -v cuda-gdb >/dev/null; then
      echo "---- backtrace of $test" >>"$log"
      timeout 90 cuda-gdb -batch -ex run -ex bt --args $tests --gtest_filter="$test" 2>&1 | tail -40 >>"$log"
    fi
  elif grep -q "\[  SKIPPED \]" "$log.one"; then skipped=$((skipped + 1))
  else passed=$((passed + 1)); fi
done
say "CUDA tests: $passed passed, $failed failed, $skipped skipped in $(( $(date +%s) - start )) s"
for f in "${failures[@]}"; do say "FAILED: $f"; done
grep -B2 -A12 "Failure\|what()\|backtrace of" "$log" | head -200 >>"$report"
fi

python_failed=0
if [[ " $* " == *" --python "* ]]; then
  scripts/gpu_python_check.sh 2>&1 | tee -a "$report"
  python_failed=${PIPESTATUS[0]}
fi

# Benchmarks, PyTorch on the same GPU beside them (bench/cuda; the binary is built with
# the line at the top of bench/cuda/ops_bench.cpp).
if [[ -x build/cuda_ops_bench ]] && python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  build/cuda_ops_bench >"$report_dir/ef_bench.txt" 2>&1
  python3 bench/cuda/torch_ops_bench.py >"$report_dir/torch_bench.txt" 2>&1
  say "benchmarks: median ms, eagerflow vs PyTorch $(python3 -c 'import torch; print(torch.__version__)') (ratio > 1: eagerflow faster)"
  join <(sort "$report_dir/ef_bench.txt") <(sort "$report_dir/torch_bench.txt") |
    awk '{ printf "  %-28s %10.3f %10.3f  %5.2fx\n", $1, $2, $3, $3 / $2 }' | tee -a "$report"
fi
[[ $failed -eq 0 && $python_failed -eq 0 ]]
