#!/usr/bin/env bash
# Rungs measured again after a change to their code, then the tables and the dispatchers; --help says more.
set -u
usage() {
    cat <<'H'
usage: results/lab/remeasure.sh rungs|dispatchers OP[:K,K...] ...        (GIT_REV=<commit>, SETS="S ...")

  rungs        run_all --kernels K,K OP (every set) for each OP:K,K (e.g. rmsnorm:9 layernorm:13)
  dispatchers  tune_dispatch OP --write for each OP (the tree must hold the rows of the rungs call: bring
               $OUT/res.tgz home and untar it in the tree first), a rebuild, run_all of each OP's dispatcher (its
               last kernel) at every set, then dispatch_check on this GPU's folder (TIMEOUT seconds, default 150)
SETS="latency odd" (scripts/shapes.py's sets): only those sets' points, the others' rows kept (every set by
default): for a table change whose rows all lie in those sets.
$OUT/res.tgz holds this GPU's CSVs and logs of the OPs (after dispatchers also the OPs' sources and
dispatch_check.csv), $OUT/logs.tgz the build log, tune_dispatch's output and run_all's progress, $OUT/dcheck.txt
dispatch_check's report; a line a step, with the time.
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
done
sets=""
for s in ${SETS:-}; do
    case "$s" in standard | latency | odd | tune) sets="$sets --set $s" ;;
    *) echo "remeasure: unknown set '$s' in SETS: standard, latency, odd or tune" >&2; exit 2 ;; esac
done
. results/lab/lab.sh
lab_start remeasure
make -j16 all GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
D=results/$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import run_all; print(run_all.slugify(run_all.gpus()[0][1]))')
files=""
if [ $phase = rungs ]; then
    for spec in "$@"; do
        op=${spec%%:*}
        python3 scripts/run_all.py --kernels "${spec#*:}" $sets $op 2> "$OUT/$op.progress"; el "$spec: exit $?"
        files="$files $D/$op.csv $D/$op.log"
    done
else
    for spec in "$@"; do
        op=${spec%%:*}
        python3 scripts/tune_dispatch.py $op --write > "$OUT/tune_$op.txt" 2>&1; echo "tune_dispatch $op: exit $?"
    done
    make -j16 all GIT_REV="$REV" >> "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
    ops=""
    for spec in "$@"; do
        op=${spec%%:*}
        k=$(./${op}_forward --list | tail -n 1 | awk '{print $1}')
        python3 scripts/run_all.py --kernels $k $sets $op 2> "$OUT/${op}_dispatch.progress"; el "$op dispatcher ($k): exit $?"
        files="$files $D/$op.csv $D/$op.log ${op}_forward.cu"
        [ $op = batchnorm ] || ops="$ops $op"
    done
    if [ -n "$ops" ]; then
        timeout "${TIMEOUT:-150}" python3 scripts/dispatch_check.py "$D" $ops > "$OUT/dcheck.txt" 2>&1
        echo "dispatch_check: exit $?"; tail -n 8 "$OUT/dcheck.txt"
        files="$files $D/dispatch_check.csv"
    fi
fi
tar czf "$OUT/res.tgz" $files
# The device brings back at most 8 files of $OUT: the logs travel as one archive beside res.tgz and dcheck.txt.
(cd "$OUT" && logs=$(ls build.log tune_*.txt ./*.progress 2> /dev/null) && tar czf logs.tgz $logs && rm -f $logs)
el done
