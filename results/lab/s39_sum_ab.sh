#!/usr/bin/env bash
# block_sum_once by lanes against the loop over the warps, the same rungs in one call; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s39_sum_ab.sh        (GIT_REV=<commit>)

Builds LayerNorm and RMSNorm as they are (block_sum_once by lanes) and again from a copy of the tree with
results/lab/s39_block_sum_loop.patch applied to harness/device_helpers.h (the loop over the warps), then times both
builds' rungs at the points where the stored rows moved most: LayerNorm 13 (odd_rows, one block a row: 7-10% slower
in the stored rows), 14 and 11, RMSNorm 9, cold, best block, three rounds interleaved. $OUT/times.txt holds the
times; a table is printed last.
It runs on a tree whose helper is the lane form (commit c297c47 of session 39); since the helper went back to the
loop, s39_sum_groups.sh makes the same comparison (and a third form).
H
exit 0 ;;
"") ;;
*) echo "s39_sum_ab: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s39_sum_ab
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
lab_tree_variant old s39_block_sum_loop.patch || exit 1
old=build/x/old
el built
for round in 1 2 3; do
    for pt in "fp32 1 4096" "fp32 16 4097" "fp32 512 4096" "bf16 1 4096" "bf16 64 4097" "bf16 128 8192"; do
        set -- $pt
        for k in 13 14 11; do
            lab_best "$1 $2x$3" "LN $k lanes" ./layernorm_forward $k --dtype $1 -N $2 -C $3
            lab_best "$1 $2x$3" "LN $k loop" $old/layernorm_forward $k --dtype $1 -N $2 -C $3
        done
        lab_best "$1 $2x$3" "RMS 9 lanes" ./rmsnorm_forward 9 --dtype $1 -N $2 -C $3
        lab_best "$1 $2x$3" "RMS 9 loop" $old/rmsnorm_forward 9 --dtype $1 -N $2 -C $3
    done
done
el done
lab_table
