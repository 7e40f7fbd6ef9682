#!/usr/bin/env bash
# RMSNorm rung 8 measured again after a change, its table derived again, the dispatcher measured; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s37_rms8.sh        (GIT_REV=<commit>)

run_all --kernels 8 rmsnorm (every set), tune_dispatch rmsnorm --write, a rebuild, run_all --kernels 12 rmsnorm
(every set), then dispatch_check on this GPU's folder (100 s at most). $OUT/res.tgz holds this GPU's rmsnorm CSV,
its dispatch_check.csv and rmsnorm_forward.cu.
H
exit 0 ;;
"") ;;
*) echo "s37_rms8: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s37_rms8
make -j16 rmsnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
python3 scripts/run_all.py --kernels 8 rmsnorm 2> "$OUT/r8.progress"; el "rung 8: exit $?"
python3 scripts/tune_dispatch.py rmsnorm --write > "$OUT/tune.txt" 2>&1; echo "tune_dispatch: exit $?"
make -j16 rmsnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
python3 scripts/run_all.py --kernels 12 rmsnorm 2> "$OUT/r12.progress"; el "dispatcher: exit $?"
D=results/$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import run_all; print(run_all.slugify(run_all.gpus()[0][1]))')
tar czf "$OUT/res.tgz" "$D/rmsnorm.csv" rmsnorm_forward.cu
timeout 100 python3 scripts/dispatch_check.py "$D" rmsnorm > "$OUT/dcheck.txt" 2>&1; echo "dispatch_check: exit $?"
tail -n 4 "$OUT/dcheck.txt"
tar czf "$OUT/res.tgz" "$D/rmsnorm.csv" "$D/dispatch_check.csv" rmsnorm_forward.cu
el done
