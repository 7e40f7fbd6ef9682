#!/usr/bin/env bash
# The project's checks on a GPU machine, from one command: `make test` from a fresh copy of the tree, the GPU
# suite, the benchmark, the Nsight Compute cross-check, the dispatcher check; usage() says what each phase does.
set -u
usage() {
    cat <<'EOF'
usage: scripts/gpu_check.sh [fresh|fresh-build|fresh-test|suite|bench|ncu|dispatch|dense|draw|gaps|all] [OP ...]
       (default: all)

Checks the project on this machine's GPU, one phase a run (all: the suite and the benchmark together):
  fresh            `make test` as a user runs it, in a copy of the tree without build outputs (build/fresh):
                   its log (make_test.log), the failures, the slowest GPU-suite checks and the time it took
  fresh-build      the same copy, then `make test-build` in it (make_test_build.log) ...
  fresh-test       ... and `make test` in that copy later, on the same machine: fresh in two steps, for a
                   machine whose commands are time-limited
The other phases build the programs here (build.log), then:
  suite [OP ...]   the planted-bug builds and the GPU suite (SUITE_OPS=OPs; all programs by default)
  bench [OP ...]   scripts/run_all.py for the OPs (peers too where PyTorch is), then the side-by-side tables
  ncu              scripts/ncu_check.py --standard (the harness against Nsight Compute) into results/<gpu>/
  dispatch [OP ...] scripts/dispatch_check.py on this GPU's results folder: the dispatcher and its best rung
                   re-timed in one process where the stored rows say it lost (TIMEOUT=S stops it after S s,
                   keeping the points done)
  dense [OP ...]   scripts/dispatch_sweep.py --set dense --resume --plans: the dense sets a dispatcher's rule is
                   derived from, measured on where results/<gpu>/sweeps stops, each rung at its plan too (BUDGET=S:
                   at most S seconds an op; MATCH=REGEX: only the points whose dtype:label it matches)
  draw  [OP ...]   scripts/dispatch_sweep.py --set random --targets: each dispatcher against its rungs on a fresh
                   random draw (its seed printed; COUNT=K points an op, default 70), and against the better of
                   cuDNN and torch.compile at the first PEERS=K of them (default 25, about 60 points of the
                   three ops: torch.compile has no PDL launch); PLANS=1: each rung at its plan too (--plans,
                   about 1.4 s more a point); exit 1 past a target. In parts (an op a run, SEED=S RESUME=1 after the
                   first): scripts/dispatch_sweep.py --report --seed S --targets judges the whole draw
  gaps  [OP ...]   scripts/peer_gaps.py --seed SEED: Nsight Compute at the points of the draw of SEED (in
                   results/<gpu>/sweeps) where cuDNN or torch.compile leads the dispatcher by more than 3%
  all   [OP ...]   suite and bench
Settings (environment):
  OUT=DIR          where logs and results.tgz go (default build/out)
  GIT_REV=<hash>   the commit written into the CSV rows, where the tree has no .git
  KERNELS=0,8      re-measure only these kernels (run_all --kernels)
  RESUME=1         continue a bench cut short (run_all --resume, which runs no peers: scripts/peers.py after it); draw:
                   go on with the draw of SEED where a run cut short (by BUDGET=S seconds an op) stopped
The logs, and results.tgz with the CSVs and logs of results/, land in OUT; a short table is printed last.
EOF
}
# The phase is checked before anything runs: a typo must not start a build.
phase=${1:-all}
case "$phase" in
-h | --help) usage; exit 0 ;;
fresh | fresh-build | fresh-test | suite | bench | ncu | dispatch | dense | draw | gaps | all) ;;
*) echo "gpu_check: unknown phase '$phase': fresh, fresh-build, fresh-test, suite, bench, ncu, dispatch, dense, draw, gaps or all" \
        "(see --help)" >&2; exit 2 ;;
esac
shift || true
if [ "$phase" = gaps ] && [ -z "${SEED:-}" ]; then
    echo "gpu_check: gaps needs SEED=S, the seed of a draw in results/<gpu>/sweeps (see --help)" >&2; exit 2
fi
cd "$(dirname "$0")/.." || exit 2
dir=build/fresh  # fresh*: in the tree's ignored build/, where fresh-test finds what fresh-build left
if [ "$phase" = fresh-test ] && [ ! -f "$dir/Makefile" ]; then
    echo "gpu_check: no $dir here: run fresh-build first, on the same machine" >&2; exit 2
fi
OUT=${OUT:-build/out}
mkdir -p "$OUT"
OPS="$*"
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
# slowest LOG: the GPU suite's 8 slowest checks, from its log's "### [T s]" lines (T when each check finished)
slowest() {
    [ -s "$1" ] || return 0
    echo "slowest GPU-suite checks (s):"
    grep -E '^### \[[0-9]+ s\] ' "$1" | awk '{t = substr($2, 2) + 0; d = t - p; p = t; $1 = $2 = $3 = ""; print d "\t" substr($0, 4)}' |
        sort -rn | head -n 8
}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
if [ "$phase" = fresh ] || [ "$phase" = fresh-build ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    tar cf - --exclude=./build --exclude=./.venv --exclude='./*_forward' --exclude=./.git . | tar xf - -C "$dir"
fi
if [ "$phase" = fresh-build ]; then
    ( cd "$dir" && make test-build GIT_REV="${GIT_REV:-unknown}" ) > "$OUT/make_test_build.log" 2>&1
    rc=$?
    el "fresh make test-build: exit $rc"
    [ $rc -eq 0 ] || tail -n 20 "$OUT/make_test_build.log"
    exit $rc
fi
if [ "$phase" = fresh ] || [ "$phase" = fresh-test ]; then
    log=$(cd "$OUT" && pwd)/gpu_suite.log
    ( cd "$dir" && SUITE_LOG="$log" make test GIT_REV="${GIT_REV:-unknown}" ) > "$OUT/make_test.log" 2>&1
    rc=$?
    grep -E "^FAIL" "$OUT/make_test.log" | head -n 40
    slowest "$log"
    el "fresh make test: exit $rc, $(tail -n 1 "$OUT/make_test.log")"
    exit $rc
fi
make -j16 all GIT_REV="${GIT_REV:-unknown}" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
rc=0
if [ "$phase" = suite ] || [ "$phase" = all ]; then
    make -j16 plant build/test_gpu_inputs GIT_REV="${GIT_REV:-unknown}" >> "$OUT/build.log" 2>&1
    SUITE_OPS="$OPS" SUITE_LOG="$OUT/gpu_suite.log" bash tests/gpu_suite.sh > "$OUT/gpu_suite.out" 2>&1 || rc=1
    grep -E "^FAIL" "$OUT/gpu_suite.out" | head -n 40
    slowest "$OUT/gpu_suite.log"
    el "suite: $(tail -n 1 "$OUT/gpu_suite.out")"
fi
if [ "$phase" = bench ] || [ "$phase" = all ]; then
    python3 scripts/run_all.py ${KERNELS:+--kernels "$KERNELS"} ${RESUME:+--resume} $OPS 2> "$OUT/run_all.progress" || rc=1
    el "bench done"
    tar czf "$OUT/results.tgz" --exclude='*.png' results
    for d in results/*/; do  # the GPU folders
        ls "$d"*.csv > /dev/null 2>&1 && python3 scripts/side_by_side.py "$d" $OPS
    done
fi
if [ "$phase" = ncu ]; then
    python3 scripts/ncu_check.py --standard 2> "$OUT/ncu_check.err" | tee "$OUT/ncu_check.txt" || rc=1
    tar czf "$OUT/results.tgz" results/*/ncu_check.csv
    el "ncu done"
fi
# this GPU's results folder (results/<slug>), or exit 1 where it has none
results_folder() {
    local gpu
    gpu=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import run_all
g = run_all.gpus(); print(run_all.slugify(g[0][1]) if g else "")')
    if [ -z "$gpu" ] || [ ! -d "results/$gpu" ]; then
        echo "gpu_check: no results folder for this GPU ('${gpu:-none found}')" >&2; exit 1
    fi
    echo "results/$gpu"
}
if [ "$phase" = dispatch ]; then
    folder=$(results_folder) || exit 1
    timeout "${TIMEOUT:-0}" python3 scripts/dispatch_check.py "$folder" $OPS 2>&1 | tee "$OUT/dispatch_check.txt"
    rc=${PIPESTATUS[0]}
    cp "$folder/dispatch_check.csv" "$OUT/" 2>/dev/null
    el "dispatch_check done (exit $rc)"
fi
if [ "$phase" = dense ]; then
    python3 scripts/dispatch_sweep.py --set dense --resume --plans ${BUDGET:+--budget "$BUDGET"} ${MATCH:+--match "$MATCH"} $OPS \
        2> "$OUT/dense.progress" | tee "$OUT/dense.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    tar czf "$OUT/sweeps.tgz" results/*/sweeps
    el "dense done (exit $rc)"
fi
if [ "$phase" = draw ]; then
    python3 scripts/dispatch_sweep.py --set random --count "${COUNT:-70}" --peers "${PEERS:-25}" --targets \
        ${PLANS:+--plans} ${RESUME:+--resume} ${BUDGET:+--budget "$BUDGET"} \
        ${SEED:+--seed "$SEED"} $OPS 2> "$OUT/draw.progress" | tee "$OUT/draw.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    tar czf "$OUT/sweeps.tgz" results/*/sweeps
    el "draw done (exit $rc)"
fi
if [ "$phase" = gaps ]; then
    folder=$(results_folder) || exit 1
    python3 scripts/peer_gaps.py --seed "$SEED" --sweeps "$folder/sweeps" $OPS 2>&1 | tee "$OUT/gaps.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    el "gaps done (exit $rc)"
fi
exit $rc
