#!/usr/bin/env bash
# LayerNorm's rung 14 (lean_split) measured at every set, its table derived, the dispatcher measured; then the
# sanitizers on both new rungs. --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s38_ln.sh        (GIT_REV=<commit>)

run_all --kernels 14 layernorm (every set), tune_dispatch layernorm --write, a rebuild, run_all --kernels 15
layernorm (every set), dispatch_check on this GPU's folder (80 s at most); then compute-sanitizer (memcheck,
racecheck, synccheck) on LayerNorm rung 14 and RMSNorm rung 12, one block a row and a cluster of 16.
$OUT/res.tgz holds this GPU's layernorm CSV, its dispatch_check.csv and layernorm_forward.cu.
H
exit 0 ;;
"") ;;
*) echo "s38_ln: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s38_ln
make -j16 layernorm_forward rmsnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
python3 scripts/run_all.py --kernels 14 layernorm 2> "$OUT/r14.progress"; el "rung 14: exit $?"
python3 scripts/tune_dispatch.py layernorm --write > "$OUT/tune.txt" 2>&1; echo "tune_dispatch: exit $?"
make -j16 layernorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
python3 scripts/run_all.py --kernels 15 layernorm 2> "$OUT/r15.progress"; el "dispatcher: exit $?"
D=results/$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import run_all; print(run_all.slugify(run_all.gpus()[0][1]))')
tar czf "$OUT/res.tgz" "$D/layernorm.csv" layernorm_forward.cu
timeout 80 python3 scripts/dispatch_check.py "$D" layernorm > "$OUT/dcheck.txt" 2>&1; echo "dispatch_check: exit $?"
tail -n 4 "$OUT/dcheck.txt"
tar czf "$OUT/res.tgz" "$D/layernorm.csv" "$D/dispatch_check.csv" layernorm_forward.cu
for tool in memcheck racecheck synccheck; do
    for run in "layernorm_forward 14 --dtype bf16 -N 3 -C 4104" "layernorm_forward 14 --dtype fp32 -N 2 -C 65536" \
               "rmsnorm_forward 12 --dtype bf16 -N 3 -C 4104" "rmsnorm_forward 12 --dtype fp32 -N 2 -C 65536"; do
        set -- $run
        out=$(compute-sanitizer --tool $tool --error-exitcode 9 ./"$@" --check 2>&1); rc=$?
        echo "$out" >> "$OUT/sanitize.log"
        echo "$tool $run: exit $rc, $(echo "$out" | grep -c "| OK") OK, $(echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -n 1)"
    done
done
el done
