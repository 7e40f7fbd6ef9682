#!/usr/bin/env bash
# The lean split rungs (RMSNorm 12, LayerNorm 14) on an H200, in two calls; --help says what each does.
set -u
usage() {
    cat <<'H'
usage: results/lab/s38_h200_lean.sh rungs|dispatchers        (GIT_REV=<commit>, FALLBACK=fresh)

On an H200, one call each (about 300 s):
  rungs        run_all --kernels 12 rmsnorm and --kernels 14 layernorm (every set); $OUT/res.tgz holds the two
               CSVs of results/h200. Bring them home, then `tune_dispatch.py rmsnorm --write` and `layernorm --write`
               (or let the next phase do it on the device)
  dispatchers  tune_dispatch rmsnorm and layernorm --write from every GPU's results (the tree must hold the H200
               rows of the rungs phase), a rebuild, run_all --kernels 13 rmsnorm and --kernels 15 layernorm (every
               set); $OUT/res.tgz holds both CSVs and both sources
On another GPU: exit 3, or with FALLBACK=fresh `make test` from a fresh tree (device_session.sh fresh).
H
}
case "${1:-}" in
-h | --help) usage; exit 0 ;;
rungs | dispatchers) phase=$1 ;;
*) echo "s38_h200_lean: give rungs or dispatchers (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s38_h200_lean
lab_need_h200
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
if [ "$phase" = rungs ]; then
    python3 scripts/run_all.py --kernels 12 rmsnorm 2> "$OUT/rms12.progress"; el "RMSNorm rung 12: exit $?"
    python3 scripts/run_all.py --kernels 14 layernorm 2> "$OUT/ln14.progress"; el "LayerNorm rung 14: exit $?"
    tar czf "$OUT/res.tgz" results/h200/rmsnorm.csv results/h200/layernorm.csv
else
    for op in rmsnorm layernorm; do
        python3 scripts/tune_dispatch.py $op --write > "$OUT/tune_$op.txt" 2>&1; echo "tune_dispatch $op: exit $?"
    done
    make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
    python3 scripts/run_all.py --kernels 13 rmsnorm 2> "$OUT/rms13.progress"; el "RMSNorm dispatcher: exit $?"
    python3 scripts/run_all.py --kernels 15 layernorm 2> "$OUT/ln15.progress"; el "LayerNorm dispatcher: exit $?"
    tar czf "$OUT/res.tgz" results/h200/rmsnorm.csv results/h200/layernorm.csv rmsnorm_forward.cu layernorm_forward.cu
fi
el done
