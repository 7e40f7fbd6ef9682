#!/usr/bin/env bash
# RMSNorm on the H200 where torch.compile leads: the dispatcher and torch.compile's kernel under Nsight Compute; --help.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s47_rms_peer_ncu.sh        (GIT_REV=<commit>)

On the H200 torch.compile stands 1-7% ahead of RMSNorm's dispatcher at most throughput points, at 100-105% of the
copy its own process measured (rows stored sessions apart; on the H100 the same points are level). Is the lead
there when both kernels run under the same conditions? At fp32 32768x128, bf16 32768x256, bf16 8192x768 and fp32
16384x4096: the dispatcher (kernel 13, its block sweep, the best block kept) and torch.compile (scripts/peers.py
--point) timed as they are stored; then each one's validated launch under ncu (caches flushed before each kernel,
clocks as they are: --clock-control none), beside the harness's copy of the same bytes in the same ncu process:
time, DRAM throughput and bytes, warps active, registers, grid and block, the top three stall reasons per issue.
Prediction: if the lead is real, torch.compile's kernel is shorter under ncu too, with higher DRAM throughput;
if it is within 1% there, the stored lead comes from the two timing harnesses (their flushes), not the kernels.
One table last; logs under $OUT (ncu.log, times).
H
    exit 0 ;;
"") ;;
*) echo "s47_rms_peer_ncu: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s47_rms_peer_ncu
make -j16 rmsnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
lab_ncu_metrics
ROWS=$OUT/rows.txt
: > "$ROWS"
for pt in "fp32 32768 128" "bf16 32768 256" "bf16 8192 768" "fp32 16384 4096"; do
    set -- $pt
    tag="$1 ${2}x$3"
    ./rmsnorm_forward 13 --dtype $1 -N $2 -C $3 --json - 2>> "$OUT/run.log" > "$OUT/k.json"
    best=$(lab_best_json "$OUT/k.json")
    echo "$tag: dispatcher (block, us, % of the copy): ${best:-none}" | tee -a "$OUT/times.txt"
    python3 scripts/peers.py --point "$1 -N $2 -C $3" --peer torch.compile --no-write rmsnorm \
        > "$OUT/tc.json" 2>> "$OUT/run.log"
    echo "$tag: torch.compile (us, % of its copy): $(python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(" ".join("%.2f %.1f" % (x["time_ms_median"] * 1e3, x["sol_pct"]) for x in r))' "$OUT/tc.json")" |
        tee -a "$OUT/times.txt"
    [ -n "$best" ] || continue
    set -- $pt $best
    "$NCU" --clock-control none --metrics "$M" --csv --print-units base ./rmsnorm_forward 13 --check --dtype $1 \
        -N $2 -C $3 --block-size $4 > "$OUT/ncu.csv" 2>&1
    { echo "### $tag dispatcher block $4"; cat "$OUT/ncu.csv"; } >> "$OUT/ncu.log"
    python3 results/lab/ncu_rows.py "$OUT/ncu.csv" "$tag|ours" >> "$ROWS"
    "$NCU" --clock-control none -k regex:copy16 -c 1 --metrics "$M" --csv --print-units base ./rmsnorm_forward 13 \
        --dtype $1 -N $2 -C $3 --block-size $4 --repeats 1 > "$OUT/ncu.csv" 2>&1
    { echo "### $tag the harness's copy"; cat "$OUT/ncu.csv"; } >> "$OUT/ncu.log"
    python3 results/lab/ncu_rows.py "$OUT/ncu.csv" "$tag|copy" --keep copy16 >> "$ROWS"
    "$NCU" --clock-control none --profile-from-start off --metrics "$M" --csv --print-units base \
        python3 scripts/peers.py --ncu-range 3 --point "$1 -N $2 -C $3" --peer torch.compile rmsnorm \
        > "$OUT/ncu.csv" 2>&1
    { echo "### $tag torch.compile"; cat "$OUT/ncu.csv"; } >> "$OUT/ncu.log"
    python3 results/lab/ncu_rows.py "$OUT/ncu.csv" "$tag|torch.compile" >> "$ROWS"
    el "$tag"
done
rm -f "$OUT/ncu.csv" "$OUT/k.json" "$OUT/tc.json"
echo "| point | who | kernel | ns | DRAM % of peak | DRAM MB read / written | warps active % | regs | grid x block | top stalls / issue |"
echo "|---|---|---|---:|---:|---|---:|---:|---|---|"
sed 's/^/| /; s/$/ |/' "$ROWS"
