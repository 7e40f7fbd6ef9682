#!/usr/bin/env bash
# BatchNorm's tuning sweep, dispatcher and bound on an H200 in one call; --help says what it does.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s37_h200_bn.sh        (GIT_REV=<commit>, FALLBACK=fresh)

On an H200: sweeps BatchNorm's rungs 4-12 at the tune set (run_all --kernels 4,...,12 --set tune), rewrites the
dispatcher's table from every GPU's results (tune_dispatch batchnorm --write), rebuilds, measures the dispatcher
at every set (run_all --kernels 14) and runs results/lab/s37_bn_bound.sh. $OUT/res.tgz holds results/h200 and
batchnorm_forward.cu. On another GPU: exit 3, or with FALLBACK=fresh `make test` from a fresh tree
(device_session.sh fresh).
H
exit 0 ;;
"") ;;
*) echo "s37_h200_bn: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s37_h200_bn
lab_need_h200
make -j16 all GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
python3 scripts/run_all.py --kernels 4,5,6,7,8,9,10,11,12 --set tune batchnorm 2> "$OUT/tune.progress"
el "tune sweep: exit $?"
python3 scripts/tune_dispatch.py batchnorm --write > "$OUT/tune_bn.txt" 2>&1; echo "tune_dispatch: exit $?"
make -j16 batchnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
python3 scripts/run_all.py --kernels 14 batchnorm 2> "$OUT/k14.progress"; el "dispatcher: exit $?"
tar czf "$OUT/res.tgz" results/h200 batchnorm_forward.cu
OUT=$OUT GIT_REV=$REV bash results/lab/s37_bn_bound.sh > "$OUT/bound.txt" 2>&1; tail -n 16 "$OUT/bound.txt"
el done
