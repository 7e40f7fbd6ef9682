#!/usr/bin/env bash
# Three forms of block_sum_once timed in one call: the loop over the warps, a lane a warp's partial with a 5-level
# butterfly, and the partials in groups of g lanes with a log2(g)-level butterfly; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s39_sum_groups.sh [cold-hot]        (GIT_REV=<commit>)

Builds RMSNorm and LayerNorm as they are (block_sum_once: every thread loops over the warps' partials), from a copy
of the tree with results/lab/s39_block_sum_loop.patch reversed (lanes: lane i takes warp i's partial, then 5 XOR
shuffles), and from a copy with s39_block_sum_groups.patch (groups: lane l takes warp (l mod g)'s partial, g the
warps rounded up to a power of two, then log2(g) shuffles). Times the three at the points where lanes and loop
differed most in session 39's runs: LayerNorm 13 at few rows (lanes 7-10% slower), 12 and 14 at fp32 8192x768
(blocks of 64-128: lanes 2-3% slower), rungs at 512-1024 threads (lanes 5-12% faster). Best block, two rounds;
$OUT/times.txt, a table last. cold-hot: instead, the points where a form cost ~0.3 us cold (LayerNorm 13, RMSNorm
9, one block a row) timed cold and hot at one block size: a cost that goes when the code is in cache (hot) is the
kernel's instruction fetch at a cold start, not the sum's work.
H
exit 0 ;;
"" | cold-hot) ;;
*) echo "s39_sum_groups: no argument, or cold-hot (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s39_sum_groups
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
lab_tree_variant lanes s39_block_sum_loop.patch -R &
lab_tree_variant groups s39_block_sum_groups.patch &
wait
for v in lanes groups; do [ -x build/x/$v/layernorm_forward ] && [ -x build/x/$v/rmsnorm_forward ] || exit 1; done
el built
t() {  # t ROW PROG KERNEL ARGS...: the three builds, one after another
    local row=$1 prog=$2 k=$3; shift 3
    lab_best "$row" "${prog%%_*} $k loop" ./$prog $k "$@"
    lab_best "$row" "${prog%%_*} $k lanes" build/x/lanes/$prog $k "$@"
    lab_best "$row" "${prog%%_*} $k groups" build/x/groups/$prog $k "$@"
}
if [ "${1:-}" = cold-hot ]; then
    for round in 1 2; do
        for h in "" --hot; do
            t "fp32 1x4096 @256 ${h:-cold}" layernorm_forward 13 -N 1 -C 4096 --block-size 256 $h
            t "bf16 16x4097 @128 ${h:-cold}" layernorm_forward 13 --dtype bf16 -N 16 -C 4097 --block-size 128 $h
            t "fp32 1x4097 @256 ${h:-cold}" rmsnorm_forward 9 -N 1 -C 4097 --block-size 256 $h
        done
    done
    el done
    lab_table
    exit 0
fi
for round in 1 2; do
    t "fp32 1x4096" layernorm_forward 13 -N 1 -C 4096
    t "bf16 16x4097" layernorm_forward 13 --dtype bf16 -N 16 -C 4097
    t "fp32 8192x768" layernorm_forward 12 -N 8192 -C 768
    t "fp32 8192x768" layernorm_forward 14 -N 8192 -C 768
    t "bf16 128x8192" layernorm_forward 14 --dtype bf16 -N 128 -C 8192
    t "fp32 64x4096 hot" layernorm_forward 14 -N 64 -C 4096 --hot
    t "bf16 64x4096 hot" rmsnorm_forward 12 --dtype bf16 -N 64 -C 4096 --hot
    t "bf16 8192x768" rmsnorm_forward 8 --dtype bf16 -N 8192 -C 768
    t "fp32 1x4097" rmsnorm_forward 9 -N 1 -C 4097
    t "bf16 1024x65536 @1024" rmsnorm_forward 10 --dtype bf16 -N 1024 -C 65536 --block-size 1024
    t "fp32 16384x1024" layernorm_forward 12 -N 16384 -C 1024
done
el done
lab_table
