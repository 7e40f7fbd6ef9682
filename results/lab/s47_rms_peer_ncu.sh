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
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size
for r in long_scoreboard barrier membar lg_throttle wait drain short_scoreboard mio_throttle no_instruction; do
    M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
ROWS=$OUT/rows.txt
: > "$ROWS"
# kernel rows of an ncu CSV: name;time ns;DRAM %;read B;write B;warps active %;regs;grid;block;top 3 stalls
parse() {
    python3 - "$1" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows:
    print(sys.argv[2] + "|no ncu rows")
    sys.exit()
head, data = rows[0], rows[1:]
ki, mi, vi = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
by = {}
for r in data:
    if any(s in r[ki] for s in ("convert_from_f32", "flush_", "curand", "generate_seed")):
        continue
    by.setdefault((r[0], r[ki]), {})[r[mi]] = r[vi].replace(",", "")
for (_, name), m in by.items():
    stalls = sorted(((float(v), k.split("stalled_")[1].split("_per_issue")[0]) for k, v in m.items()
                     if "stalled_" in k), reverse=True)[:3]
    print(sys.argv[2] + "|" + ";".join([name.replace("void ", "").split("<")[0].split("(")[0][:40],
          m.get("gpu__time_duration.sum", "?"), m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed", "?"),
          m.get("dram__bytes_read.sum", "?"), m.get("dram__bytes_write.sum", "?"),
          m.get("sm__warps_active.avg.pct_of_peak_sustained_active", "?"), m.get("launch__registers_per_thread", "?"),
          m.get("launch__grid_size", "?"), m.get("launch__block_size", "?"),
          ", ".join(f"{n} {v:.2f}" for v, n in stalls)]))
PY
}
for pt in "fp32 32768 128" "bf16 32768 256" "bf16 8192 768" "fp32 16384 4096"; do
    set -- $pt
    tag="$1 ${2}x$3"
    ./rmsnorm_forward 13 --dtype $1 -N $2 -C $3 --json - 2>> "$OUT/run.log" > "$OUT/k.json"
    best=$(python3 -c '
import json, sys
ok = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")) if r.get("status") == "OK"]
b = min(ok, key=lambda r: r["time_ms_median"]) if ok else None
print("%d %.2f %.1f" % (b["block_size"], b["time_ms_median"] * 1e3, b["sol_pct"]) if b else "")' "$OUT/k.json")
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
    parse "$OUT/ncu.csv" "$tag ours" >> "$ROWS"
    "$NCU" --clock-control none -k regex:copy16 -c 1 --metrics "$M" --csv --print-units base ./rmsnorm_forward 13 \
        --dtype $1 -N $2 -C $3 --block-size $4 --repeats 1 > "$OUT/ncu.csv" 2>&1
    { echo "### $tag the harness's copy"; cat "$OUT/ncu.csv"; } >> "$OUT/ncu.log"
    parse "$OUT/ncu.csv" "$tag copy" >> "$ROWS"
    "$NCU" --clock-control none --profile-from-start off --metrics "$M" --csv --print-units base \
        python3 scripts/peers.py --ncu-range 3 --point "$1 -N $2 -C $3" --peer torch.compile rmsnorm \
        > "$OUT/ncu.csv" 2>&1
    { echo "### $tag torch.compile"; cat "$OUT/ncu.csv"; } >> "$OUT/ncu.log"
    parse "$OUT/ncu.csv" "$tag torch.compile" >> "$ROWS"
    el "$tag"
done
rm -f "$OUT/ncu.csv" "$OUT/k.json" "$OUT/tc.json"
echo "| point | who | kernel | ns | DRAM % of peak | read B | write B | warps active % | regs | grid | block | top stalls / issue |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
sed -E 's/^([a-z0-9]+ [0-9x]+) (ours|copy|torch.compile)\|/\1|\2|/; s/;/|/g; s/^/| /; s/$/ |/' "$ROWS"
