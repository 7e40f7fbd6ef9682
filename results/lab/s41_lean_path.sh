#!/usr/bin/env bash
# LayerNorm's split rungs (12, 14, 15): a shorter path from the loads to the sum's barrier and from it to y; --help.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s41_lean_path.sh        (GIT_REV=<commit>)

Liger's LayerNorm kernel runs the same grid and block as rung 14 at bf16 64x4096 (one row a block of 256 threads,
2 packs a thread) 0.16 us faster cold; under ncu our warps execute 343 instructions after the first load lands,
Liger's 278 (results/NOTES.md, session 41). Two of ours sit on that path, in latency_split_row (rungs 12, 14, 15):
each thread's sums are a chain of 8 dependent adds a pack (V_TREE: a tree, depth 1 + log2 of the pack), and the
mean and variance divide by C after the barrier (two IEEE divisions and a 64-bit conversion; V_RCP: 1/C taken
while the loads are in flight, multiplies after). Builds LayerNorm and three copies with
results/lab/s41_lean_path.patch (-DV_RCP, -DV_TREE, both), then times rungs 14 and 15 of each at latency points
(cold; 16x4096 also hot) and rung 12 at 1x65536, fp32 and bf16, best block size, two rounds; $OUT/times.txt and a
table last.
H
exit 0 ;;
"") ;;
*) echo "s41_lean_path: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s41_lean_path
make -j16 layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 &
lab_variant layernorm_forward s41_lean_path.patch ln_rcp -DV_RCP &
lab_variant layernorm_forward s41_lean_path.patch ln_tree -DV_TREE &
lab_variant layernorm_forward s41_lean_path.patch ln_both -DV_RCP -DV_TREE &
wait
for b in ./layernorm_forward build/x/ln_rcp build/x/ln_tree build/x/ln_both; do
    [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }
done
el built
for round in 1 2; do
    for dt in bf16 fp32; do
        for spec in "14 1 4096" "15 1 4096" "14 16 4096" "15 16 4096" "14 64 4096" "15 64 4096" "14 128 4096" \
                    "15 1 8192" "15 16 4096 --hot" "12 1 65536"; do
            set -- $spec
            pt="$dt rung $1 $2x$3${4:+ hot}"
            for b in ./layernorm_forward build/x/ln_rcp build/x/ln_tree build/x/ln_both; do
                lab_best "$pt" "$(basename $b)" $b $1 --dtype $dt -N $2 -C $3 ${4:-}
            done
        done
    done
done
el done
lab_table
