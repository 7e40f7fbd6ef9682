#!/usr/bin/env bash
# Second of two calls on one warm H200 machine; --help says what it does.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s36_h200_dispatch.sh     (GIT_REV=<commit>)

After results/lab/s36_h200_sweep.sh on the same machine: restores its tables and results from build/stash,
rebuilds, re-measures both dispatchers on every set (RMSNorm 12, LayerNorm 14) and runs dispatch_check on the
H200's folder (150 s at most). $OUT/res_c.tgz holds the H200's results and both sources. Exit 3 on another GPU,
4 without the stash.
H
exit 0 ;;
"") ;;
*) echo "s36_h200_dispatch: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s36_h200_dispatch
case "$GPU" in *H200*) ;; *) echo "s36_h200_dispatch: not an H200" >&2; exit 3 ;; esac
[ -f build/stash/results.tar ] || { echo "s36_h200_dispatch: no build/stash (run s36_h200_sweep.sh first)" >&2; exit 4; }
cp build/stash/rmsnorm_forward.cu build/stash/layernorm_forward.cu . && tar xf build/stash/results.tar
make -j16 all GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
python3 scripts/run_all.py --kernels 12 rmsnorm 2> "$OUT/r12.progress"; el "rmsnorm 12: exit $?"
python3 scripts/run_all.py --kernels 14 layernorm 2> "$OUT/l14.progress"; el "layernorm 14: exit $?"
tar czf "$OUT/res_c.tgz" results/h200 rmsnorm_forward.cu layernorm_forward.cu
timeout 150 python3 scripts/dispatch_check.py results/h200 rmsnorm layernorm > "$OUT/dispatch_check.txt" 2>&1
echo "dispatch_check: exit $?"
tar czf "$OUT/res_c.tgz" results/h200 rmsnorm_forward.cu layernorm_forward.cu
tail -n 15 "$OUT/dispatch_check.txt"
el done
