#!/usr/bin/env bash
# BatchNorm's phases timed inside the kernel (globaltimer stamps a block), beside the --phases probes; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s46_bn_stamps.sh        (GIT_REV=<commit>)

--phases puts a kernel's time beside a read-only and a write-only probe; it does not say where inside the kernel
the time goes. s46_bn_stamps.patch (-DV_STAMPS) has thread 0 of each block of kernels 10, 11, 12 and 14 read
%globaltimer at the start, before and after the grid sync, after the stage and after the normalize, and prints
the last launch's phases at exit: the first pass (median over blocks, and when the last block reached the sync),
the release, the stage and the normalize (median), and when the last block ended, from the first block's start.
At the channels-contiguous training points of the standard set ([N, C] 65536x256, 16384x1024, 4096x4096, NHWC
32x256x56x56 and 128x64x112x112), fp32 (rung 11 at 512) and bf16 (rung 14 at 256), the dispatcher's choices: the
variant with --phases (the stamps of its last timed launch, the probes, its time), and the program itself at the
same rung and block (the stamps' cost). Checks of the variant first (4 shapes). Question for issue 30: how far is
the first pass from the read probe, the normalize from the write probe, and what do the sync and stage cost?
~1 minute. Writes $OUT/stamps.log; a table last.
H
exit 0 ;;
"") ;;
*) echo "s46_bn_stamps: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s46_bn_stamps
make -j16 batchnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 &
lab_variant batchnorm_forward s46_bn_stamps.patch bn_stamps -DV_STAMPS &
wait
for b in ./batchnorm_forward build/x/bn_stamps; do [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }; done
el built
for a in "14 --dtype bf16 -N 65536 -C 256" "11 --dtype fp32 -N 4096 -C 4096" "14 --dtype fp16 -N 1031 -C 1000" \
         "12 --dtype bf16 --layout nhwc -N 32 -C 256 --height 56 --width 56"; do
    lab_check "bn_stamps $a" build/x/bn_stamps $a
done
el checked
: > "$OUT/stamps.log"
for dt in fp32 bf16; do
    if [ $dt = fp32 ]; then k=11; bs=512; else k=14; bs=256; fi
    for pt in "-N 65536 -C 256" "-N 16384 -C 1024" "-N 4096 -C 4096" "--layout nhwc -N 32 -C 256 --height 56 --width 56" \
              "--layout nhwc -N 128 -C 64 --height 112 --width 112"; do
        { echo "### $dt $pt | rung $k block $bs"
          build/x/bn_stamps $k --dtype $dt $pt --block-size $bs --phases 2>&1
          echo "### program"
          ./batchnorm_forward $k --dtype $dt $pt --block-size $bs 2>&1 | grep -E 'block_size +[0-9]+ '; } >> "$OUT/stamps.log"
    done
done
el timed
python3 - "$OUT/stamps.log" <<'PY'
import re, sys
print("| point | rung | us (stamped / program) | read probe | first pass: median, last block at sync | released "
      "| stage | write probe | normalize (median) | last block done |")
print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|")
blocks = open(sys.argv[1]).read().split("### ")[1:]
for blk, prog in zip(blocks[0::2], blocks[1::2]):
    point, rung = blk.split("\n", 1)[0].split(" | ")
    t = re.search(r"block_size +\d+ .*?\| +([\d.]+) us", blk)
    p = re.search(r"block_size +\d+ .*?\| +([\d.]+) us", prog)
    ph = re.search(r"read-only ([\d.]+) us .*?write-only ([\d.]+) us", blk)
    st = re.search(r"first pass ([\d.]+) \(median\), the last block at the sync at ([\d.]+); released ([\d.]+)-([\d.]+); "
                   r"stage ([\d.]+); normalize ([\d.]+) \(median\); the last block done at ([\d.]+)", blk)
    if not (t and ph and st):
        print(f"| {point} | {rung} | missing: {'' if t else 'time '}{'' if ph else 'phases '}{'' if st else 'stamps'} |")
        continue
    f = st.groups()
    print(f"| {point} | {rung} | {t.group(1)} / {p.group(1) if p else '-'} | {ph.group(1)} | {f[0]}, {f[1]} | "
          f"{f[2]}-{f[3]} | {f[4]} | {ph.group(2)} | {f[5]} | {f[6]} |")
PY
