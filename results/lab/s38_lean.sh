#!/usr/bin/env bash
# RMSNorm's rung 12 (lean_split) measured at every set, its table derived, the dispatcher measured; LayerNorm's
# kernel 12 at 2 packs a thread against itself at the cold latency points. --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s38_lean.sh        (GIT_REV=<commit>)

run_all --kernels 12 rmsnorm (every set), tune_dispatch rmsnorm --write, a rebuild, run_all --kernels 13 rmsnorm
(every set), dispatch_check on this GPU's folder (90 s at most); then LayerNorm kernel 12 against the same kernel at
2 packs a thread (results/lab/s38_ln_two_packs.patch) at cold latency points, fp32 and bf16, two rounds.
$OUT/res.tgz holds this GPU's rmsnorm CSV, its dispatch_check.csv and rmsnorm_forward.cu; $OUT/times.txt the
LayerNorm times; a table is printed last.
H
exit 0 ;;
"") ;;
*) echo "s38_lean: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s38_lean
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
lab_variant layernorm_forward s38_ln_two_packs.patch ln_two_packs &
el built
python3 scripts/run_all.py --kernels 12 rmsnorm 2> "$OUT/r12.progress"; el "rung 12: exit $?"
python3 scripts/tune_dispatch.py rmsnorm --write > "$OUT/tune.txt" 2>&1; echo "tune_dispatch: exit $?"
make -j16 rmsnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
python3 scripts/run_all.py --kernels 13 rmsnorm 2> "$OUT/r13.progress"; el "dispatcher: exit $?"
D=results/$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import run_all; print(run_all.slugify(run_all.gpus()[0][1]))')
tar czf "$OUT/res.tgz" "$D/rmsnorm.csv" rmsnorm_forward.cu
timeout 90 python3 scripts/dispatch_check.py "$D" rmsnorm > "$OUT/dcheck.txt" 2>&1; echo "dispatch_check: exit $?"
tail -n 4 "$OUT/dcheck.txt"
tar czf "$OUT/res.tgz" "$D/rmsnorm.csv" "$D/dispatch_check.csv" rmsnorm_forward.cu
wait
for round in 1 2; do
    for dt in bf16 fp32; do
        for nc in "1 4096" "16 4096" "128 4096" "1 8192" "64 8192" "4 32768" "1 65536"; do
            set -- $nc
            lab_best "$dt $1x$2" "kernel 12" ./layernorm_forward 12 --dtype $dt -N $1 -C $2
            lab_best "$dt $1x$2" "2 packs" build/x/ln_two_packs 12 --dtype $dt -N $1 -C $2
        done
    done
done
el "layernorm variants"
lab_table
