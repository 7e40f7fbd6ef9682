#!/usr/bin/env bash
# The odd-rows rungs (RMSNorm 9, LayerNorm 13) with w (and fp32 b) loaded after the sum where the grid is more
# than the GPU holds at once; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s41_odd_late.sh        (GIT_REV=<commit>)

Since session 40 the odd-rows rungs load w (LayerNorm fp32: w and b) with x, before the sum: faster at a few rows,
but held through the sum it costs registers (RMSNorm bf16 62 -> 96) and 1.1-1.2x the time at thousands of long
rows. s41_rms_odd_late.patch and s41_ln_odd_late.patch keep that where the GPU holds the whole grid at once and
otherwise launch an instance that loads them after the sum (the rule of LayerNorm rung 12's packed form). Builds
both programs and both patched copies; checks and memcheck/racecheck of the late instances (one block a row and a
cluster); then rung 9 / 13 of each build at odd rows, many (late) and few (unchanged: early), fp32 and bf16, best
block size, two rounds. $OUT/times.txt, $OUT/san.txt; a table last.
H
exit 0 ;;
"") ;;
*) echo "s41_odd_late: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s41_odd_late
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 &
lab_variant rmsnorm_forward s41_rms_odd_late.patch rms_late &
lab_variant layernorm_forward s41_ln_odd_late.patch ln_late &
wait
for b in ./rmsnorm_forward ./layernorm_forward build/x/rms_late build/x/ln_late; do
    [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }
done
el built
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for spec in "build/x/rms_late 9 bf16 1031 16385" "build/x/rms_late 9 fp32 300 65537" \
            "build/x/ln_late 13 fp32 1031 16385" "build/x/ln_late 13 fp32 300 65537"; do
    set -- $spec
    out=$($1 $2 --dtype $3 -N $4 -C $5 --check 2>&1); rc=$?
    echo "check $spec: exit $rc, $(echo "$out" | grep -o 'path [^|]*' | sort | uniq -c | tr '\n' ';')" | tee -a "$OUT/san.txt"
    for tool in memcheck racecheck; do
        $SAN --tool $tool --error-exitcode 9 $1 $2 --dtype $3 -N $4 -C $5 --check --block-size 512 > "$OUT/san_tmp.txt" 2>&1
        echo "$tool $spec: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_tmp.txt" | tr '\n' ' ')" | tee -a "$OUT/san.txt"
    done
done
el checked
for round in 1 2; do
    for dt in bf16 fp32; do
        for nc in "4096 16385" "1024 65537" "16384 4097" "64 16385" "4 65537"; do
            set -- $nc
            lab_best "rms $dt $1x$2" base ./rmsnorm_forward 9 --dtype $dt -N $1 -C $2
            lab_best "rms $dt $1x$2" late build/x/rms_late 9 --dtype $dt -N $1 -C $2
            [ $dt = fp32 ] || continue  # LayerNorm's 16-bit instances load w and b after the sum already
            lab_best "ln $dt $1x$2" base ./layernorm_forward 13 --dtype $dt -N $1 -C $2
            lab_best "ln $dt $1x$2" late build/x/ln_late 13 --dtype $dt -N $1 -C $2
        done
    done
done
el done
lab_table
