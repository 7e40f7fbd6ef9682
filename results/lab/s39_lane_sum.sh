#!/usr/bin/env bash
# block_sum_once with a lane per warp partial (harness/device_helpers.h): every rung whose SASS it changed, measured
# again at every set, then the tables and dispatchers. Three calls; --help says what each does.
set -u
usage() {
    cat <<'H'
usage: results/lab/s39_lane_sum.sh rms|ln|dispatchers        (GIT_REV=<commit>)

The rungs whose SASS the lane sum changes (cuobjdump against the loop over the warps): RMSNorm 7, 8, 9, 10, 12;
LayerNorm 11, 12, 13, 14; BatchNorm 9. One call each (each under 600 s on an H100):
  rms          run_all --kernels 7,8,9,10,12 rmsnorm (every set)
  ln           run_all --kernels 11,12,13,14 layernorm (every set) and --kernels 9 batchnorm
  dispatchers  tune_dispatch --write for the three programs (the tree must hold the rows of the two calls before),
               a rebuild, run_all of the three dispatchers (RMSNorm 13, LayerNorm 15, BatchNorm 14), dispatch_check
               (150 s at most)
$OUT/res.tgz holds this GPU's CSVs and logs of the programs measured (and, after dispatchers, the three sources and
dispatch_check.csv). Bring them home before the next call.
H
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
rms | ln | dispatchers) phase=$1 ;;
*) echo "s39_lane_sum: give rms, ln or dispatchers (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s39_lane_sum
make -j16 all GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
D=results/$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import run_all; print(run_all.slugify(run_all.gpus()[0][1]))')
case $phase in
rms)
    python3 scripts/run_all.py --kernels 7,8,9,10,12 rmsnorm 2> "$OUT/rms.progress"; el "RMSNorm rungs: exit $?"
    files="$D/rmsnorm.csv $D/rmsnorm.log" ;;
ln)
    python3 scripts/run_all.py --kernels 11,12,13,14 layernorm 2> "$OUT/ln.progress"; el "LayerNorm rungs: exit $?"
    python3 scripts/run_all.py --kernels 9 batchnorm 2> "$OUT/bn.progress"; el "BatchNorm rung 9: exit $?"
    files="$D/layernorm.csv $D/layernorm.log $D/batchnorm.csv $D/batchnorm.log" ;;
dispatchers)
    for op in rmsnorm layernorm batchnorm; do
        python3 scripts/tune_dispatch.py $op --write > "$OUT/tune_$op.txt" 2>&1; echo "tune_dispatch $op: exit $?"
    done
    make -j16 all GIT_REV="$REV" >> "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
    python3 scripts/run_all.py --kernels 13 rmsnorm 2> "$OUT/rms13.progress"; el "RMSNorm dispatcher: exit $?"
    python3 scripts/run_all.py --kernels 15 layernorm 2> "$OUT/ln15.progress"; el "LayerNorm dispatcher: exit $?"
    python3 scripts/run_all.py --kernels 14 batchnorm 2> "$OUT/bn14.progress"; el "BatchNorm dispatcher: exit $?"
    timeout 150 python3 scripts/dispatch_check.py "$D" rmsnorm layernorm > "$OUT/dcheck.txt" 2>&1
    echo "dispatch_check: exit $?"; tail -n 8 "$OUT/dcheck.txt"
    files="$D/rmsnorm.csv $D/rmsnorm.log $D/layernorm.csv $D/layernorm.log $D/batchnorm.csv $D/batchnorm.log"
    files="$files $D/dispatch_check.csv rmsnorm_forward.cu layernorm_forward.cu batchnorm_forward.cu" ;;
esac
tar czf "$OUT/res.tgz" $files
el done
