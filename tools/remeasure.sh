#!/usr/bin/env bash
# Rungs measured again after a change to their code, then the dispatch tables and the dispatchers; --help says more.
set -u
usage() {
    cat <<'H'
usage: tools/remeasure.sh rungs|dispatchers OP[:K,K...] ...      (env: SETS="S ...", GIT_REV=<commit>, TIMEOUT=S)

A rung whose code changed has stale rows in results/<gpu>/, and the dispatch tables derived from them are stale
too. On a GPU machine, from any directory (it works in the repository it belongs to):
  rungs OP:K[,K...] ...  build, then scripts/run_all.py --kernels K,K OP for each (e.g. rmsnorm:9 layernorm:13,14):
                         those rungs at every point, their rows in this GPU's folder replaced
  dispatchers OP ...     scripts/tune_dispatch.py OP --write for each OP (from the rows of every GPU folder, this
                         GPU's new ones among them), a rebuild, scripts/run_all.py of each OP's dispatcher (the last
                         kernel of its --list), then scripts/dispatch_check.py on this GPU's folder for layernorm
                         and rmsnorm (stopped after TIMEOUT seconds, default 150, keeping the points done)
  SETS="latency odd"     only those sets' points (scripts/shapes.py: standard, latency, odd, tune), the other rows
                         kept; every set by default
  GIT_REV=<commit>       the commit the rows record, where the tree has no .git
Run rungs first, then dispatchers. One line a step, with the seconds since the start; the build log,
tune_dispatch's output, run_all's progress and dispatch_check's report go to build/remeasure/.
H
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
rungs | dispatchers) phase=$1; shift ;;
*) echo "remeasure: give rungs or dispatchers, then OP[:K,K] ... (see --help)" >&2; exit 2 ;;
esac
[ $# -gt 0 ] || { echo "remeasure: no OP given (see --help)" >&2; exit 2; }
for spec in "$@"; do
    case "${spec%%:*}" in rmsnorm | layernorm | batchnorm) ;; *) echo "remeasure: unknown op in '$spec'" >&2; exit 2 ;; esac
    if [ $phase = rungs ] && ! [[ "$spec" =~ ^[a-z]+:[0-9]+(,[0-9]+)*$ ]]; then
        echo "remeasure: rungs wants OP:K[,K...], got '$spec'" >&2; exit 2
    fi
    if [ $phase = dispatchers ] && [ "$spec" != "${spec%%:*}" ]; then
        echo "remeasure: dispatchers wants OP alone, got '$spec'" >&2; exit 2
    fi
done
sets=""
for s in ${SETS:-}; do
    case "$s" in standard | latency | odd | tune) sets="$sets --set $s" ;;
    *) echo "remeasure: unknown set '$s' in SETS: standard, latency, odd or tune" >&2; exit 2 ;; esac
done
cd "$(dirname "$0")/.." || exit 2
logs=build/remeasure
mkdir -p "$logs"
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
build() {
    make -j16 all ${GIT_REV:+GIT_REV="$GIT_REV"} >> "$logs/build.log" 2>&1 || { tail -n 20 "$logs/build.log"; exit 1; }
}
: > "$logs/build.log"
build
el built
D=results/$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import run_all
g = run_all.gpus(); print(run_all.slugify(g[0][1]) if g else "")')
[ "$D" != results/ ] || { echo "remeasure: no GPU found" >&2; exit 1; }
rc=0
if [ $phase = rungs ]; then
    for spec in "$@"; do
        op=${spec%%:*}
        python3 scripts/run_all.py --kernels "${spec#*:}" $sets $op 2> "$logs/$op.progress"; st=$?
        [ $st -eq 0 ] || rc=1
        el "$spec: exit $st ($D/$op.csv)"
    done
else
    for spec in "$@"; do
        python3 scripts/tune_dispatch.py $spec --write > "$logs/tune_$spec.txt" 2>&1; st=$?
        [ $st -eq 0 ] || rc=1
        el "tune_dispatch $spec: exit $st ($logs/tune_$spec.txt)"
    done
    build
    el rebuilt
    ops=""
    for op in "$@"; do
        k=$(./${op}_forward --list | tail -n 1 | awk '{print $1}')
        python3 scripts/run_all.py --kernels "$k" $sets $op 2> "$logs/${op}_dispatch.progress"; st=$?
        [ $st -eq 0 ] || rc=1
        el "$op dispatcher ($k): exit $st ($D/$op.csv)"
        [ $op = batchnorm ] || ops="$ops $op"
    done
    if [ -n "$ops" ]; then
        timeout "${TIMEOUT:-150}" python3 scripts/dispatch_check.py "$D" $ops > "$logs/dispatch_check.txt" 2>&1
        el "dispatch_check: exit $? ($logs/dispatch_check.txt)"
        tail -n 8 "$logs/dispatch_check.txt"
    fi
fi
el done
exit $rc
