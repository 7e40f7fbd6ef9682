#!/usr/bin/env bash
# One call on a GPU machine: `suite` (build + make test with the GPU suite) or `bench` (build + standard
# shapes + ncu cross-check), or both. Full logs under $OUT (default build/out); a short table last.
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-build/out}
mkdir -p "$OUT"
phase=${1:-all}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
make -j16 all 2>&1 | tail -n 5
make info
rc=0
if [ "$phase" = suite ] || [ "$phase" = all ]; then
    SUITE_LOG=$OUT/gpu_suite.log make test > "$OUT/make_test.log" 2>&1 || rc=1
    grep -E "^FAIL" "$OUT/make_test.log" | head -n 40
    tail -n 1 "$OUT/make_test.log"
fi
if [ "$phase" = bench ] || [ "$phase" = all ]; then
    python3 scripts/run_all.py layernorm || rc=1
    python3 scripts/ncu_check.py layernorm 10 -N 16384 -C 4096 > "$OUT/ncu_check.txt" 2>&1
    cat "$OUT/ncu_check.txt"
    for f in results/*/layernorm.csv; do python3 scripts/summary.py "$f"; done
    tar czf "$OUT/results.tgz" results
fi
exit $rc
