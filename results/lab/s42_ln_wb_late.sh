#!/usr/bin/env bash
# LayerNorm's split rungs (12, 14, 15) with w and b issued after x instead of with it; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s42_ln_wb_late.sh        (GIT_REV=<commit>)

Session 42 sampled rung 14 and Liger's kernel at LayerNorm bf16 64x4096 (results/lab/s42_liger_sampling.sh): per
launch ours holds 1731 warp samples against Liger's 1532, +94 before the first 16-byte load (constant-cache and
short-scoreboard waits of the w and b pointers' loads) and +139 between the loads and the barrier (long-scoreboard:
x, w, b and the shift's scalar load in flight at once, Liger issues only x's before the first use), -35 after the
barrier. results/lab/s42_ln_wb_late.patch issues w and b after x is summed, before the barrier (-DV_WB_MID, Liger's
order) or after it (-DV_WB_LATE), in launches without PDL (the chained order is unchanged). Builds LayerNorm and both
copies, checks them (--check, every dtype, a few shapes, memcheck), then times rungs 14 and 15 at the cold latency
points where the peers lead, a hot one, and rung 12 at 1x65536 and 1024x65536 (a grid in waves), fp32 and bf16,
best block size, two rounds; $OUT/times.txt, a table last.
H
exit 0 ;;
"") ;;
*) echo "s42_ln_wb_late: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s42_ln_wb_late
make -j16 layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 &
lab_variant layernorm_forward s42_ln_wb_late.patch ln_wb_mid -DV_WB_MID &
lab_variant layernorm_forward s42_ln_wb_late.patch ln_wb_late -DV_WB_LATE &
wait
for b in ./layernorm_forward build/x/ln_wb_mid build/x/ln_wb_late; do
    [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }
done
el built
for v in mid late; do
    for a in "12,14,15 --dtype bf16 -N 64 -C 4096" "12,14,15 --dtype fp32 -N 3 -C 8192" "12,14,15 --dtype fp16 -N 5 -C 4104" \
             "12 --dtype bf16 -N 300 -C 65536" "14 --dtype bf16 -N 4 -C 4096 --input-mean 1000 --input-std 0.01"; do
        echo "check $v $a: $(build/x/ln_wb_$v $a --check 2>&1 | grep -cE '\| OK') OK, $(build/x/ln_wb_$v $a --check 2>&1 | grep -c FAIL) FAIL"
    done
    echo "memcheck $v: $(compute-sanitizer --tool memcheck build/x/ln_wb_$v 14 --dtype bf16 -N 64 -C 4096 --check 2>&1 | grep 'ERROR SUMMARY')"
done
el checked
for round in 1 2; do
    for dt in bf16 fp32; do
        for spec in "14 1 4096" "15 1 4096" "14 16 4096" "15 16 4096" "14 64 4096" "15 64 4096" "14 128 4096" \
                    "15 128 4096" "15 1 8192" "15 16 4096 --hot" "12 1 65536" "12 1024 65536"; do
            set -- $spec
            pt="$dt rung $1 $2x$3${4:+ hot}"
            for v in base mid late; do
                b=build/x/ln_wb_$v; [ $v = base ] && b=./layernorm_forward
                lab_best "$pt" $v $b $1 --dtype $dt -N $2 -C $3 ${4:-}
            done
        done
    done
done
el done
lab_table
