#!/usr/bin/env bash
# The split rungs of LayerNorm (12, 14, 15) and RMSNorm (8, 12) with x loaded first and alone, w (and b) after it;
# --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s42_wb_late.sh [layernorm|rmsnorm|both]        (default both; GIT_REV=<commit>)

Session 42 sampled rung 14 and Liger's kernel at LayerNorm bf16 64x4096 (results/lab/s42_liger_sampling.sh): per
launch ours holds 1731 warp samples against Liger's 1532, +94 before the first 16-byte load (constant-cache and
short-scoreboard waits of the w and b pointers' loads) and +139 between the loads and the barrier (long-scoreboard:
x, w, b and the shift's scalar load in flight at once, Liger issues only x's before the first use), -35 after the
barrier. s42_ln_wb_late.patch (LayerNorm's latency_split_row) and s42_rms_wb_late.patch (RMSNorm's) issue w (and b)
after x is summed, before the barrier (-DV_WB_MID, Liger's order) or after it (-DV_WB_LATE), in launches without
PDL (the chained order is unchanged). Builds each program and both copies, checks them (--check, every dtype, a few
shapes, memcheck), then times the split rungs at the cold latency points where the peers lead, a hot one, and one
grid in waves (1024x65536), fp32 and bf16, best block size, two rounds; $OUT/times.txt, a table last (~270 s a
program).
H
exit 0 ;;
"" | layernorm | rmsnorm | both) ;;
*) echo "s42_wb_late: give layernorm, rmsnorm or both (see --help)" >&2; exit 2 ;;
esac
which=${1:-both}
ops=""
[ $which = rmsnorm ] || ops="layernorm"
[ $which = layernorm ] || ops="$ops rmsnorm"
. results/lab/lab.sh
lab_start s42_wb_late
for op in $ops; do
    tag=ln; [ $op = rmsnorm ] && tag=rms
    make -j16 ${op}_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 &
    lab_variant ${op}_forward s42_${tag}_wb_late.patch ${tag}_wb_mid -DV_WB_MID &
    lab_variant ${op}_forward s42_${tag}_wb_late.patch ${tag}_wb_late -DV_WB_LATE &
done
wait
for op in $ops; do
    tag=ln; [ $op = rmsnorm ] && tag=rms
    for b in ./${op}_forward build/x/${tag}_wb_mid build/x/${tag}_wb_late; do
        [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }
    done
done
el built
for op in $ops; do
    tag=ln; ks=12,14,15; k1=14; [ $op = rmsnorm ] && tag=rms && ks=8,12 && k1=12
    for v in mid late; do
        for a in "$ks --dtype bf16 -N 64 -C 4096" "$ks --dtype fp32 -N 3 -C 8192" "$ks --dtype fp16 -N 5 -C 4104" \
                 "$ks --dtype bf16 -N 300 -C 65536" "$k1 --dtype bf16 -N 4 -C 4096 --input-mean 1000 --input-std 0.01"; do
            out=$(build/x/${tag}_wb_$v $a --check 2>&1)
            echo "check $tag $v $a: exit $?, $(echo "$out" | grep -c FAIL) FAIL"
        done
        echo "memcheck $tag $v: $(compute-sanitizer --tool memcheck build/x/${tag}_wb_$v $k1 --dtype bf16 -N 64 -C 4096 --check 2>&1 | grep 'ERROR SUMMARY')"
    done
done
el checked
for round in 1 2; do
    for op in $ops; do
        if [ $op = layernorm ]; then
            tag=ln
            specs=("14 1 4096" "15 1 4096" "14 16 4096" "15 16 4096" "14 64 4096" "15 64 4096" "14 128 4096"
                   "15 128 4096" "15 1 8192" "15 16 4096 --hot" "12 1 65536" "12 1024 65536")
        else
            tag=rms
            specs=("12 4 4096" "12 16 4096" "8 64 4096" "12 64 4096" "8 128 4096" "12 128 4096" "12 16 4096 --hot"
                   "8 1024 65536")
        fi
        for dt in bf16 fp32; do
            for spec in "${specs[@]}"; do
                set -- $spec
                pt="$op $dt rung $1 $2x$3${4:+ hot}"
                for v in base mid late; do
                    b=build/x/${tag}_wb_$v; [ $v = base ] && b=./${op}_forward
                    lab_best "$pt" $v $b $1 --dtype $dt -N $2 -C $3 ${4:-}
                done
            done
        done
    done
done
el done
lab_table
