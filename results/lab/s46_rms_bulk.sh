#!/usr/bin/env bash
# RMSNorm rung 10 with each block's slice brought in by bulk copies (TMA) in place of a cp.async a pack; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s46_rms_bulk.sh        (GIT_REV=<commit>)

Rung 10 (cluster_cp_async) copies each block's slice of a long row into shared memory with one 16-byte cp.async a
pack: on the H200 at 1024x65536 it stands at 84-86% of the copy, QuACK 7-13% ahead. s46_rms_bulk.patch (-DV_BULK=B)
has one thread issue the slice as bulk copies of B bytes (cp.async.bulk, the TMA engine) counted by an mbarrier that
every thread waits on; the rest of the kernel is unchanged. Variants: B = 16384 and 65536 (a 64 KB slice in one
copy). Prediction: where results/lab/s46_read_rate.sh finds bulk copies reading faster than 16-byte loads (the H200
question), rung 10 gains about that ratio at 1024x65536 and 2048x32768; on the H100, within 1% (rung 10 is at 95-98%
of the copy there). One call: builds the program and both variants; --check of each at fp32, bf16 and fp16 long rows,
a short row (one block), 8x128256, a cluster given, and memcheck/racecheck/synccheck at bf16 8x32768; then rung 10 and
the variants at their best block, two rounds, at fp32 and bf16 1024x65536, 2048x32768, 8x128256, 4x32768 and
16384x4096. Writes $OUT/times.txt; a table last.
H
exit 0 ;;
"") ;;
*) echo "s46_rms_bulk: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s46_rms_bulk
make -j16 rmsnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 &
lab_variant rmsnorm_forward s46_rms_bulk.patch rms_bulk16k -DV_BULK=16384 &
lab_variant rmsnorm_forward s46_rms_bulk.patch rms_bulk64k -DV_BULK=65536 &
wait
for b in ./rmsnorm_forward build/x/rms_bulk16k build/x/rms_bulk64k; do [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }; done
el built
for v in rms_bulk16k rms_bulk64k; do
    for a in "--dtype fp32 -N 64 -C 65536" "--dtype bf16 -N 64 -C 65536" "--dtype fp16 -N 33 -C 32768" \
             "--dtype bf16 -N 100 -C 4096" "--dtype bf16 -N 8 -C 128256" "--dtype fp32 -N 16 -C 131072 --cluster 4" \
             "--dtype bf16 -N 64 -C 65536 --input-mean 1000"; do
        lab_check "$v $a" build/x/$v 10 $a
    done
    for tool in memcheck racecheck synccheck; do
        lab_sanitize $tool $v build/x/$v 10 --dtype bf16 -N 8 -C 32768 --block-size 256
    done
done
el checked
for round in 1 2; do
    for dt in fp32 bf16; do
        for pt in "-N 1024 -C 65536" "-N 2048 -C 32768" "-N 8 -C 128256" "-N 4 -C 32768" "-N 16384 -C 4096"; do
            lab_best "$dt $pt" "10" ./rmsnorm_forward 10 --dtype $dt $pt
            lab_best "$dt $pt" "10, bulk 16 KB" build/x/rms_bulk16k 10 --dtype $dt $pt
            lab_best "$dt $pt" "10, bulk 64 KB" build/x/rms_bulk64k 10 --dtype $dt $pt
        done
    done
done
el timed
lab_table
