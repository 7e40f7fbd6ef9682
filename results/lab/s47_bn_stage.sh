#!/usr/bin/env bash
# BatchNorm kernels 10-14's stage (after the grid sync) with its loads made before the sync; --help says more.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s47_bn_stage.sh        (GIT_REV=<commit>)

s46_bn_stamps timed the stage of kernels 10-14 (after the grid sync: each block reads its channels' K pairs of
sums, stages scale and shift, takes the ticket) at 1.5-2.0 us on the H200, 7-9% of bf16 [N, C] 65536x256 (22.7 us).
Its critical path is three round trips one after the other: the sums (L2), then x's shift row, gamma, beta and, in
the blocks of row 0, the running statistics (DRAM after the flush: none depends on the sums, but they are loaded
after them), then the ticket's atomic, whose value every thread waits for (a barrier) before the normalize starts.
s47_bn_stage.patch (-DV_STAGE) loads the channel's x[c], gamma, beta and running statistics before the grid sync
and reads the ticket's value only at the block's end, where the last block zeroes the sums.
Prediction: the stage falls to one L2 round trip (~0.5 us), so bf16 [N, C] and NHWC gain ~1 us (4-5%), fp32 ~1 us
(2-3%), on both GPUs; the 128x64x112x112 images (150-300 us) under 1%.
One call: builds the program and the variant; --check of the variant at every channels-contiguous rung (10, 11, 12,
14) and dtype, an odd shape, --input-mean 1000, a small block; memcheck, racecheck, synccheck. Then times the
dispatcher's rungs (11 in fp32, 14 in bf16) and 12, program and variant at their best block, two rounds, at the
channels-contiguous training points of the standard set. Writes $OUT/times.txt; a table last.
H
    exit 0 ;;
"") ;;
*) echo "s47_bn_stage: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s47_bn_stage
make -j16 batchnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 &
lab_variant batchnorm_forward s47_bn_stage.patch bn_stage -DV_STAGE &
wait
for b in ./batchnorm_forward build/x/bn_stage; do [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }; done
el built
NHWC56="--layout nhwc -N 32 -C 256 --height 56 --width 56"
NHWC112="--layout nhwc -N 128 -C 64 --height 112 --width 112"
for k in 10 11 12 14; do
    for a in "--dtype bf16 -N 65536 -C 256" "--dtype fp16 -N 16384 -C 1024" "--dtype fp32 -N 4096 -C 4096" \
             "--dtype bf16 $NHWC56" "--dtype fp32 -N 1031 -C 1000"; do
        lab_check "bn_stage $k $a" build/x/bn_stage $k $a
    done
done
lab_check "bn_stage 14 --dtype bf16 -N 7001 -C 2056 --block-size 96" build/x/bn_stage 14 --dtype bf16 -N 7001 -C 2056 --block-size 96
lab_check "bn_stage 14 --input-mean 1000" build/x/bn_stage 14 --dtype bf16 -N 65536 -C 256 --input-mean 1000
lab_check "bn_stage 11 --input-mean 1000" build/x/bn_stage 11 --dtype fp32 -N 16384 -C 1024 --input-mean 1000
for tool in memcheck racecheck synccheck; do
    lab_sanitize $tool bn_stage build/x/bn_stage 14 --dtype bf16 -N 4096 -C 256 --block-size 256
done
lab_sanitize memcheck "bn_stage 11" build/x/bn_stage 11 --dtype fp32 -N 1031 -C 1000 --block-size 512
el checked
for round in 1 2; do
    for pt in "-N 65536 -C 256" "-N 16384 -C 1024" "-N 4096 -C 4096" "$NHWC56" "$NHWC112"; do
        for kd in "11 fp32" "14 bf16" "12 bf16"; do
            set -- $kd
            lab_best "$2 $pt" "rung $1" ./batchnorm_forward $1 --dtype $2 $pt
            lab_best "$2 $pt" "rung $1, early stage" build/x/bn_stage $1 --dtype $2 $pt
        done
    done
done
el timed
lab_table
