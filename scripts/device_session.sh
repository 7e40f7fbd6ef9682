#!/usr/bin/env bash
# One call on a GPU machine (the `device` entry of the library); usage() says what it does.
set -u
usage() {
    cat <<'EOF'
usage: scripts/device_session.sh [suite|bench|ncu|all] [OP ...]      (default: all)

Builds the programs, then
  suite [OP ...]   the planted-bug builds and the GPU suite (SUITE_OPS=OPs; all programs by default)
  bench [OP ...]   scripts/run_all.py for the OPs (peers too where PyTorch is), then the side-by-side tables
  ncu              scripts/ncu_check.py --standard (the harness against Nsight Compute) into results/<gpu>/
  all   [OP ...]   suite and bench
Pass GIT_REV=<hash> (.git does not travel), KERNELS=0,8 to re-measure only some kernels (run_all --kernels),
RESUME=1 to continue a bench cut short by a call's time limit (run_all --resume, which runs no peers:
scripts/peers.py after it).
Everything lands in $OUT (default build/out) as few files (the device returns a limited number): logs, and
results.tgz with the CSVs and logs of results/; a short table is printed last.
EOF
}
# The phase is checked before anything runs: a typo must not start a build.
phase=${1:-all}
case "$phase" in
-h | --help) usage; exit 0 ;;
suite | bench | ncu | all) ;;
*) echo "device_session: unknown phase '$phase': suite, bench, ncu or all (see --help)" >&2; exit 2 ;;
esac
shift || true
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-build/out}
mkdir -p "$OUT"
OPS="$*"
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
make -j16 all GIT_REV="${GIT_REV:-unknown}" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
rc=0
if [ "$phase" = suite ] || [ "$phase" = all ]; then
    make -j16 plant build/test_gpu_inputs GIT_REV="${GIT_REV:-unknown}" >> "$OUT/build.log" 2>&1
    SUITE_OPS="$OPS" SUITE_LOG="$OUT/gpu_suite.log" bash tests/gpu_suite.sh > "$OUT/gpu_suite.out" 2>&1 || rc=1
    grep -E "^FAIL" "$OUT/gpu_suite.out" | head -n 40
    el "suite: $(tail -n 1 "$OUT/gpu_suite.out")"
fi
if [ "$phase" = bench ] || [ "$phase" = all ]; then
    python3 scripts/run_all.py ${KERNELS:+--kernels "$KERNELS"} ${RESUME:+--resume} $OPS 2> "$OUT/run_all.progress" || rc=1
    el "bench done"
    tar czf "$OUT/results.tgz" --exclude='*.png' results
    for d in results/*/; do python3 scripts/side_by_side.py "$d" $OPS; done
fi
if [ "$phase" = ncu ]; then
    python3 scripts/ncu_check.py --standard 2> "$OUT/ncu_check.err" | tee "$OUT/ncu_check.txt" || rc=1
    tar czf "$OUT/results.tgz" results/*/ncu_check.csv
    el "ncu done"
fi
exit $rc
