#!/usr/bin/env bash
# BatchNorm rung 12's 16-bit first pass with all its loads in flight (more registers a thread); --help says more.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s43_bn_loads.sh        (GIT_REV=<commit>)

Rung 12's comment: its 16-bit first pass runs at 78% of the read probe, and its fp32 first pass at the probe. In the sm_90
SASS (cuobjdump, session 43) the fp32 loop issues its 8 loads of 16 bytes back to back. The bf16 loop (K5_LOADS = 6)
waits on its first load after issuing 2, and on later ones after 2-4. Its kept-rows loop waits on each load at once,
because the kept copy's store follows each load. The cause is 64 registers (__launch_bounds__(512, 2)): 16 sums,
8 shift values and 24 registers of raw packs do not fit beside the addresses.
s43_bn_loads.patch: -DV_LBT=N bounds rung 12 at N threads and 2 blocks an SM, and -DV_U16=U sets the 16-bit loads.
- V_LBT=384: 80 registers, no spills; all 6 loads in flight in both loops.
- V_LBT=256 with V_U16=8: 126 registers; 8 loads in flight.
Bytes in flight an SM: stock 1024 threads x ~2 loads x 16 B = ~32 KB; 384: 768 x 6 x 16 = 72 KB; 256/8: 64 KB.
Prediction: the bf16 first pass near the read probe (session 30: loop 16.4 us against 14.4). Whole kernel at bf16
65536x256: 29.7 -> ~27.7 us (62% -> ~67% of the copy). fp32 unchanged.
One call: builds the stock program and both variants; --check at every layout and dtype, an odd shape and
--input-mean 1000; memcheck and racecheck. Then times rung 12 (each at its best block, two rounds) and cuDNN (kernel
0, once) at the training points of bf16 and fp32; `--phases` of the stock dispatcher at bf16 65536x256. Writes
$OUT/times.txt; a table last.
H
    exit 0 ;;
"") ;;
*) echo "s43_bn_loads: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s43_bn_loads
make -j16 batchnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 &
lab_variant batchnorm_forward s43_bn_loads.patch bn_lb384 -DV_LBT=384 &
lab_variant batchnorm_forward s43_bn_loads.patch bn_lb256u8 -DV_LBT=256 -DV_U16=8 &
wait
for b in ./batchnorm_forward build/x/bn_lb384 build/x/bn_lb256u8; do [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }; done
el built
NHWC56="--layout nhwc -N 32 -C 256 --height 56 --width 56"
for v in bn_lb384 bn_lb256u8; do
    for a in "--dtype bf16 -N 65536 -C 256" "--dtype fp16 -N 16384 -C 1024" "--dtype fp32 -N 4096 -C 4096" \
             "--dtype bf16 $NHWC56" "--dtype bf16 -N 1031 -C 1000" "--dtype bf16 -N 65536 -C 256 --input-mean 1000"; do
        lab_check "$v $a" build/x/$v 12 $a
    done
    for tool in memcheck racecheck; do
        lab_sanitize $tool $v build/x/$v 12 --dtype bf16 -N 4096 -C 256 --block-size 256
    done
done
el checked
./batchnorm_forward 14 --dtype bf16 -N 65536 -C 256 --phases > "$OUT/phases.txt" 2>&1
grep -iE "probe|phase|read|write" "$OUT/phases.txt" | head -n 6
for round in 1 2; do
    for dt in bf16 fp32; do
        for pt in "-N 65536 -C 256" "-N 16384 -C 1024" "-N 4096 -C 4096" "$NHWC56" \
                  "--layout nhwc -N 128 -C 64 --height 112 --width 112"; do
            [ $dt = fp32 ] && [ "$pt" != "-N 65536 -C 256" ] && [ "$pt" != "$NHWC56" ] && continue
            lab_best "$dt $pt" "12 stock" ./batchnorm_forward 12 --dtype $dt $pt
            lab_best "$dt $pt" "12 at 384, 6 loads" build/x/bn_lb384 12 --dtype $dt $pt
            lab_best "$dt $pt" "12 at 256, 8 loads" build/x/bn_lb256u8 12 --dtype $dt $pt
            [ $round = 1 ] && lab_best "$dt $pt" "cuDNN" ./batchnorm_forward 0 --dtype $dt $pt
        done
    done
done
el timed
lab_table
