#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time (`make fuzz` runs each of them).
#   scripts/fuzz.sh <fuzzer binary> [seconds=90] [jobs=1] [seed corpus=tests/fuzz/corpus]
#                   [saved crashes=tests/fuzz/regressions]
# First replays every saved crash and the seed corpus, then fuzzes, growing a scratch
# copy of the corpus (<build>/fuzz/<fuzzer>/corpus) so the committed seeds stay small.
# tests/fuzz/<fuzzer>.dict, when present, is the libFuzzer dictionary. A crash leaves
# its input in <build>/fuzz/<fuzzer>/findings/; copy it into the saved-crashes folder once
# fixed so the target's replay ctest replays it forever.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzzer=$1
seconds=${2:-90}
jobs=${3:-1}
seeds=${4:-tests/fuzz/corpus}
regressions=${5:-tests/fuzz/regressions}
name=$(basename "$fuzzer")

# Valid-but-huge allocations fail cleanly (ResourceExhaustedError) instead of aborting.
export ASAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1:max_allocation_size_mb=2048:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
flags=(-rss_limit_mb=4096 -malloc_limit_mb=3072 -timeout=20 -max_len=4096 -print_final_stats=1)

[[ -f "tests/fuzz/$name.dict" ]] && flags+=(-dict="tests/fuzz/$name.dict")

# The fuzzer's build tree (<build>/tests/fuzz/<name>) holds its scratch folder.
work=$(dirname "$(dirname "$(dirname "$fuzzer")")")/fuzz/$name
mkdir -p "$work/corpus" "$work/findings"
cp -n "$seeds"/* "$work/corpus/" 2>/dev/null || true

saved=()
for f in "$regressions"/* "$seeds"/*; do [[ -f "$f" ]] && saved+=("$f"); done
echo "fuzz: $name: replaying ${#saved[@]} saved inputs"
"$fuzzer" "${flags[@]}" "${saved[@]}" >"$work/replay.log" 2>&1 || {
  cat "$work/replay.log"
  echo "fuzz: FAILED on a saved input (the last 'Running:' line above)" >&2
  exit 1
}

echo "fuzz: $name: fuzzing for ${seconds}s with $jobs worker(s)"
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
echo "fuzz: $name: no findings"
