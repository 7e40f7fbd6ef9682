#!/usr/bin/env bash
# First of two calls on one warm H200 machine; --help says what it does.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s36_h200_sweep.sh        (GIT_REV=<commit>, FALLBACK=fresh)

On an H200: re-sweeps RMSNorm rung 6 and LayerNorm kernel 7 (run_all --kernels, every set), rewrites both
dispatchers' tuned tables from every GPU's results (tune_dispatch --write), and stashes the tables and results
under build/stash for results/lab/s36_h200_dispatch.sh, the next call on the same machine. $OUT/res_b.tgz holds
them. On another GPU: exit 3, or with FALLBACK=fresh `make test` from a fresh tree (device_session.sh fresh).
H
exit 0 ;;
"") ;;
*) echo "s36_h200_sweep: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s36_h200_sweep
lab_need_h200
make -j16 all GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
python3 scripts/run_all.py --kernels 6 rmsnorm 2> "$OUT/r6.progress"; el "rmsnorm 6: exit $?"
python3 scripts/run_all.py --kernels 7 layernorm 2> "$OUT/l7.progress"; el "layernorm 7: exit $?"
python3 scripts/tune_dispatch.py rmsnorm --write > "$OUT/tune_rms.txt" 2>&1; echo "tune rmsnorm: exit $?"
python3 scripts/tune_dispatch.py layernorm --write > "$OUT/tune_ln.txt" 2>&1; echo "tune layernorm: exit $?"
mkdir -p build/stash && cp -p rmsnorm_forward.cu layernorm_forward.cu build/stash/ && tar cf build/stash/results.tar results
tar czf "$OUT/res_b.tgz" results/h200 rmsnorm_forward.cu layernorm_forward.cu
el done
