#!/usr/bin/env bash
# Runs the libFuzzer op fuzzer for a bounded time (`make fuzz`).
#   scripts/fuzz.sh <op_fuzzer binary> [seconds=90] [jobs=1]
# First replays every saved crash (tests/fuzz/regressions) and the seed corpus, then
# fuzzes, growing a scratch copy of the corpus (build-fuzz/corpus) so the committed
# seeds stay small. A crash leaves its input in build-fuzz/findings/; copy it into
# tests/fuzz/regressions/ once fixed so `fuzz_regressions` replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzzer=$1
seconds=${2:-90}
jobs=${3:-1}

# Valid-but-huge allocations fail cleanly (ResourceExhaustedError) instead of aborting.
export ASAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1:max_allocation_size_mb=2048:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
flags=(-rss_limit_mb=4096 -malloc_limit_mb=3072 -timeout=20 -max_len=4096 -print_final_stats=1)

work=build-fuzz
mkdir -p "$work/corpus" "$work/findings"
cp -n tests/fuzz/corpus/* "$work/corpus/" 2>/dev/null || true

saved=()
for f in tests/fuzz/regressions/* tests/fuzz/corpus/*; do [[ -f "$f" ]] && saved+=("$f"); done
echo "fuzz: replaying ${#saved[@]} saved inputs"
"$fuzzer" "${flags[@]}" "${saved[@]}" >"$work/replay.log" 2>&1 || {
  cat "$work/replay.log"
  echo "fuzz: FAILED on a saved input (the last 'Running:' line above)" >&2
  exit 1
}

echo "fuzz: fuzzing for ${seconds}s with $jobs worker(s)"
rm -f "$work/findings"/*
fork=(); (( jobs > 1 )) && fork=(-fork="$jobs")   # worker processes sharing the corpus
status=0
"$fuzzer" "${flags[@]}" "${fork[@]}" -max_total_time="$seconds" -artifact_prefix="$work/findings/" \
  "$work/corpus" >"$work/fuzz.log" 2>&1 || status=$?
grep -vE '^#[0-9]+.*(NEW|REDUCE|pulse)|^INFO:|^\[|NEW_FUNC|# Uses:|recommended dictionary' "$work/fuzz.log" | tail -60 || true
if (( status != 0 )) || compgen -G "$work/findings/*" >/dev/null; then
  echo "fuzz: FINDINGS (exit status $status); inputs in $work/findings/, log in $work/fuzz.log:" >&2
  ls -l "$work/findings" >&2
  exit 1
fi
echo "fuzz: no findings"
