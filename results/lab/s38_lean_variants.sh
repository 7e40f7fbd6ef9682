#!/usr/bin/env bash
# The lean rungs (RMSNorm 12, LayerNorm 14) against two variants of themselves at the latency points where the
# peers still lead; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s38_lean_variants.sh        (GIT_REV=<commit>)

Builds two variants of RMSNorm and LayerNorm: results/lab/s38_<op>_one_pack.patch (LEAN_PACKS 1: the row over
twice the threads, fp32 rows up to 32768) and s38_<op>_lane_sum.patch (a block alone adds its warps' partials with
a lane each and one warp_sum, where block_sum_once loops over the warps: RMSNorm bf16 392 SASS lines against 480).
Times the lean rung of each build at cold latency points of 4096-8192 elements (and hot at 64 x 4096), fp32 and
bf16, best block size, two rounds. $OUT/times.txt holds the times; a table is printed last.
H
exit 0 ;;
"") ;;
*) echo "s38_lean_variants: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s38_lean_variants
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
for op in rmsnorm layernorm; do
    for v in one_pack lane_sum; do lab_variant ${op}_forward s38_${op}_$v.patch ${op}_$v & done
done
wait
for b in rmsnorm_one_pack rmsnorm_lane_sum layernorm_one_pack layernorm_lane_sum; do [ -x build/x/$b ] || exit 1; done
el built
for round in 1 2; do
    for dt in fp32 bf16; do
        for nc in "1 4096" "16 4096" "128 4096" "1 8192" "128 8192" "64 4096 --hot"; do
            set -- $nc
            pt="$dt $1x$2${3:+ hot}"
            for op in rmsnorm layernorm; do
                k=12; [ $op = layernorm ] && k=14
                lab_best "$pt" "$op $k" ./${op}_forward $k --dtype $dt -N $1 -C $2 ${3:-}
                for v in one_pack lane_sum; do
                    lab_best "$pt" "$op $v" build/x/${op}_$v $k --dtype $dt -N $1 -C $2 ${3:-}
                done
            done
        done
    done
done
el done
lab_table
