#!/usr/bin/env bash
# LayerNorm bf16 64x4096 and 128x4096 cold: Liger's kernel against rungs 14 and 15 under Nsight Compute; --help.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s41_liger_ncu.sh        (GIT_REV=<commit>; carry .whl holding liger_kernel-0.8.5's wheel)

Liger's LayerNorm forward at 4096 columns is one program a row of 8 warps, 2 packs a thread: the grid and block of
rung 14 at 256 threads, yet it is 0.13-0.16 us faster cold at 64 and 128 rows (H100). One call:
1. the cold times side by side (Liger through peers.py --point, rungs 14, 15 and the dispatcher);
2. one Nsight Compute profile of each kernel at 64 rows (caches flushed before each pass; SpeedOfLight,
   LaunchStats, Occupancy, WarpStateStats, InstructionStats, SourceCounters), its details in $OUT/ncu_*.txt and
   its per-instruction stall samples (the source page, SASS) in $OUT/src_*.csv, all in $OUT/ncu.tgz;
3. a table: duration, cycles, instructions, warp cycles an issue and the top stall reasons of each.
H
    exit 0 ;;
"") ;;
*) echo "s41_liger_ncu: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s41_liger_ncu
make -j16 layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 &
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/liger_kernel-*.whl \
    > "$OUT/pip.log" 2>&1 || { echo "s41_liger_ncu: liger's wheel does not install ($OUT/pip.log)" >&2; exit 1; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
wait $! || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
for n in 64 128; do
    ./layernorm_forward 14,15,16 --dtype bf16 -N $n -C 4096 > "$OUT/times_ours_$n.txt" 2>&1
    python3 scripts/peers.py --point "bf16 -N $n -C 4096" --peer liger --no-write layernorm \
        > "$OUT/times_liger_$n.txt" 2> "$OUT/times_liger_$n.err"
    echo "bf16 ${n}x4096 cold (us): Liger $(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]; print(" ".join("%.2f" % (x["time_ms_median"] * 1e3) for x in r))' "$OUT/times_liger_$n.txt"); ours:"
    grep -E "^ +- \| +1[456] \|" "$OUT/times_ours_$n.txt" | head -n 3
done
el timed
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
n=64  # the profiles at 64 rows only (one call's time)
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats
     --section SourceCounters --metrics dram__bytes_read.sum,smsp__inst_executed.sum,sm__cycles_elapsed.max"
"$NCU" $SEC -k regex:lean_split -c 1 -o "$OUT/r14_$n" ./layernorm_forward 14 --dtype bf16 -N $n -C 4096 \
    --block-size 256 --repeats 1 > "$OUT/ncu_r14_$n.log" 2>&1
"$NCU" $SEC -k regex:lean_one_pack -c 1 -o "$OUT/r15_$n" ./layernorm_forward 15 --dtype bf16 -N $n -C 4096 \
    --block-size 128 --repeats 1 > "$OUT/ncu_r15_$n.log" 2>&1
"$NCU" $SEC --profile-from-start off -k regex:layer_norm_forward -c 1 -o "$OUT/liger_$n" python3 scripts/peers.py \
    --ncu-range 1 --point "bf16 -N $n -C 4096" --peer liger layernorm > "$OUT/ncu_liger_$n.log" 2>&1
el "ncu ${n}x4096"
cd "$OUT" || exit 1
for r in r14_$n r15_$n liger_$n; do
    [ -f $r.ncu-rep ] || { echo "$r: no report (ncu_${r%_*}_${r##*_}.log)"; continue; }
    "$NCU" -i $r.ncu-rep --page details > ncu_$r.txt 2>&1
    "$NCU" -i $r.ncu-rep --page source --print-source sass --csv > src_$r.csv 2>&1
    echo "== $r: $(grep -E "^ +(Duration|Elapsed Cycles|Registers Per Thread|Executed Instructions|Warp Cycles Per Issued Instruction|dram__bytes_read.sum|Achieved Occupancy) " \
        ncu_$r.txt | awk '{$1=$1; print}' | tr '\n' ';')"
done
tar czf ncu.tgz ncu_*.txt src_*.csv ncu_*.log times_* 2>/dev/null
rm -f ./*.ncu-rep ncu_*.txt src_*.csv ncu_*.log times_*
el done
