#!/usr/bin/env bash
# RMSNorm rung 6 with two rows a lane group against the rung as it is; --help says what it does.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s36_two_rows.sh [ncu]     (GIT_REV=<commit>, PEERS=1)

Builds rmsnorm_forward and, from results/lab/s36_rms_two_rows.patch, three variants of rung 6 (build/x/):
r1copy (the rung as patched with one row: the control), r2lb512 (two adjacent rows a lane group, w loaded with x,
__launch_bounds__(512)), r2late (two rows, w loaded after the sums, bounds 1024). Validates the variants (--check
at odd shapes, --fused-add, QK-norm), then times rung 6 of each at seven points, two rounds alternating, best
block each; PEERS=1 adds torch.compile at three points (scripts/peers.py). Prints one table.
ncu: instead, one Nsight Compute profile each of the landed rung and r2lb512 at bf16 32768x128 and 32768x256
(duration, DRAM bytes, occupancy, registers, warp cycles an issue), files $OUT/ncu_*.txt.
H
exit 0 ;;
"" | ncu) ;;
*) echo "s36_two_rows: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s36_two_rows
make -j16 rmsnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
P=s36_rms_two_rows.patch
if [ "${1:-}" = ncu ]; then
    lab_variant rmsnorm_forward $P r2lb512 -DR6_ROWS=2 -DR6_LB=512 || exit 1
    el built
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for spec in "./rmsnorm_forward 128 128" "build/x/r2lb512 64 128" "build/x/r2lb512 128 128" \
                "./rmsnorm_forward 512 256" "build/x/r2lb512 128 256"; do
        set -- $spec
        tag="$(basename "$1")_$2_$3"
        "$NCU" -k regex:subwarp_rows --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy \
            --section LaunchStats --section WarpStateStats --metrics dram__bytes_read.sum,smsp__inst_executed.sum \
            "$1" 6 --dtype bf16 -N 32768 -C "$3" --block-size "$2" --repeats 5 > "$OUT/ncu_$tag.txt" 2>&1
        echo "== $tag: $(grep -E "^ +(Duration|DRAM Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|dram__bytes_read.sum|smsp__inst_executed.sum) " \
            "$OUT/ncu_$tag.txt" | awk '{$1=$1; print}' | tr '\n' ';')"
    done
    exit 0
fi
lab_variant rmsnorm_forward $P r1copy -DR6_ROWS=1 &
lab_variant rmsnorm_forward $P r2lb512 -DR6_ROWS=2 -DR6_LB=512 &
lab_variant rmsnorm_forward $P r2late -DR6_ROWS=2 -DR6_LB=1024 -DR6_LATE_W=1 &
wait
el built
for b in build/x/r2lb512 build/x/r2late; do
    for a in "--dtype bf16 -N 1031 -C 1000" "--dtype bf16 -N 33 -C 128" "--dtype bf16 -N 1001 -C 256 --fused-add" \
             "--dtype fp32 -N 77 -C 128" "--dtype fp16 -N 5 -C 136" "--dtype bf16 --heads 32 --head-dim 128 -N 63" \
             "--dtype bf16 -N 32767 -C 128 --fused-add --weight-offset 1"; do
        $b 6 --check $a > "$OUT/check.txt" 2>&1 || { echo "CHECK FAILED: $b $a"; tail -n 5 "$OUT/check.txt"; }
    done
done
el checked
PTS=("bf16 -N 32768 -C 128" "bf16 -N 32768 -C 256" "bf16 -N 8192 -C 768" "bf16 -N 32768 -C 512"
     "fp32 -N 32768 -C 128" "fp32 -N 32768 -C 256" "bf16 --heads 32 --head-dim 128 -N 4096")
rm -f "$OUT/times.txt"
for round in 1 2; do
    for b in ./rmsnorm_forward build/x/r1copy build/x/r2lb512 build/x/r2late; do
        for pt in "${PTS[@]}"; do
            set -- $pt; dt=$1; shift
            lab_best "$pt" "$(basename "$b")" "$b" 6 --dtype "$dt" "$@"
        done
    done
done
el timed
if [ -n "${PEERS:-}" ]; then
    for pt in "bf16 -N 32768 -C 128" "bf16 -N 32768 -C 256" "bf16 -N 8192 -C 768"; do
        timeout 120 python3 scripts/peers.py --point "$pt" --peer torch.compile --no-write rmsnorm 2>> "$OUT/peers.err" \
            | tail -n 1 >> "$OUT/peers.txt"
    done
fi
lab_table
[ -f "$OUT/peers.txt" ] && cat "$OUT/peers.txt"
exit 0
