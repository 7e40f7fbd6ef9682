#!/usr/bin/env bash
# The split rungs of LayerNorm (12, 14, 15) and RMSNorm (8, 12): a shorter path from the loads to the sum's
# barrier and from it to y; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s41_lean_path.sh [layernorm|rmsnorm|both]        (default both; GIT_REV=<commit>)

Liger's LayerNorm kernel runs the same grid and block as rung 14 at bf16 64x4096 (one row a block of 256 threads,
2 packs a thread) 0.16 us faster cold; under ncu our warps execute 343 instructions after the first load lands,
Liger's 278 (results/NOTES.md, session 41). Two of ours sit on that path, in latency_split_row (LayerNorm rungs 12,
14, 15; RMSNorm's has them too, rungs 8 and 12, behind Liger at 64-128 rows of 4096): each thread's sums are a chain
of dependent adds (V_TREE: a tree a pack, depth 1 + log2 of the pack), and the statistics divide by C after the
barrier (IEEE divisions after a 64-bit conversion; V_RCP: 1/C taken while the loads are in flight, multiplies
after). Builds each program and three copies with results/lab/s41_lean_path.patch or s41_rms_lean_path.patch
(-DV_RCP, -DV_TREE, both), then times the rungs of each at the cold latency points where the peers lead (and a
hot one; LayerNorm rung 12 at 1x65536), fp32 and bf16, best block size, two rounds; $OUT/times.txt, a table last.
H
exit 0 ;;
"" | layernorm | rmsnorm | both) ;;
*) echo "s41_lean_path: give layernorm, rmsnorm or both (see --help)" >&2; exit 2 ;;
esac
which=${1:-both}
ops=""
[ $which = rmsnorm ] || ops="layernorm"
[ $which = layernorm ] || ops="$ops rmsnorm"
. results/lab/lab.sh
lab_start s41_lean_path
for op in $ops; do
    prog=${op}_forward
    patch=s41_lean_path.patch; tag=ln
    [ $op = rmsnorm ] && patch=s41_rms_lean_path.patch && tag=rms
    make -j16 $prog GIT_REV="$REV" >> "$OUT/build.log" 2>&1 &
    lab_variant $prog $patch ${tag}_rcp -DV_RCP &
    lab_variant $prog $patch ${tag}_tree -DV_TREE &
    lab_variant $prog $patch ${tag}_both -DV_RCP -DV_TREE &
done
wait
for op in $ops; do
    tag=ln; [ $op = rmsnorm ] && tag=rms
    for b in ./${op}_forward build/x/${tag}_rcp build/x/${tag}_tree build/x/${tag}_both; do
        [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }
    done
done
el built
for round in 1 2; do
    for op in $ops; do
        if [ $op = layernorm ]; then
            tag=ln
            specs=("14 1 4096" "15 1 4096" "14 16 4096" "15 16 4096" "14 64 4096" "15 64 4096" "14 128 4096"
                   "15 1 8192" "15 16 4096 --hot" "12 1 65536")
        else
            tag=rms
            specs=("12 4 4096" "12 16 4096" "8 64 4096" "12 64 4096" "8 128 4096" "12 128 4096" "12 16 4096 --hot")
        fi
        for dt in bf16 fp32; do
            for spec in "${specs[@]}"; do
                set -- $spec
                pt="$op $dt rung $1 $2x$3${4:+ hot}"
                for v in base rcp tree both; do
                    b=build/x/${tag}_$v; [ $v = base ] && b=./${op}_forward
                    lab_best "$pt" $v $b $1 --dtype $dt -N $2 -C $3 ${4:-}
                done
            done
        done
    done
done
el done
lab_table
