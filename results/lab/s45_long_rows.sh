#!/usr/bin/env bash
# Long rows (1024x65536, 2048x32768) on this GPU: cuDNN, the long-row rungs and the dispatcher timed, then each under
# ncu; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s45_long_rows.sh [rmsnorm|layernorm]       (GIT_REV=<commit>; both ops by default)

Issue 29 wants >= 95% of the copy at 1024x65536 and 2048x32768. The H100 is there (LayerNorm 95-98%, RMSNorm
98-100%); the H200 is not (session 45: LayerNorm fp32 1024x65536 85.6%, RMSNorm bf16 89.1%; QuACK 95.7%, cuDNN
90-93%). At each of those points, fp32 and bf16: RMSNorm kernels 0 (cuDNN), 7, 8, 10 and 13 (the dispatcher),
LayerNorm 0, 11, 12 and 17, each timed alone (its block sweep; the best block kept), then its one validated launch
at that block under ncu (caches flushed): time, DRAM throughput and bytes, warps active, registers, grid and
block, the top three stall reasons per issue. The harness's own kernels (input conversion, the flush, the copy
probes) are left out of the ncu rows. One table last; logs under $OUT. One op a call: RMSNorm took 240 s on an H200, LayerNorm over 330 s.
H
exit 0 ;;
"") OPS="rmsnorm layernorm" ;;
rmsnorm | layernorm) OPS=$1 ;;
*) echo "s45_long_rows: give rmsnorm, layernorm or nothing (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s45_long_rows
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size
for r in long_scoreboard barrier membar lg_throttle wait drain short_scoreboard mio_throttle no_instruction; do
    M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
: > "$OUT/times.txt"
: > "$OUT/rows.txt"
for op in ${OPS}; do
    if [ $op = rmsnorm ]; then ks="0 7 8 10 13"; else ks="0 11 12 17"; fi
    for dt in fp32 bf16; do
        for pt in "1024 65536" "2048 32768"; do
            set -- $pt
            tag="$op $dt ${1}x$2"
            for k in $ks; do
                ./${op}_forward $k --dtype $dt -N $1 -C $2 --json - 2>> "$OUT/run.log" > "$OUT/k.json"
                best=$(python3 -c '
import json, sys
ok = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")) if r.get("status") == "OK"]
b = min(ok, key=lambda r: r["time_ms_median"]) if ok else None
print("%d %.2f %.1f" % (b["block_size"], b["time_ms_median"] * 1e3, b["sol_pct"]) if b else "")' "$OUT/k.json")
                [ -n "$best" ] || { echo "$tag|$k|none" >> "$OUT/times.txt"; continue; }
                set -- $pt $best
                bs=(--block-size $3)
                [ $k = 0 ] && bs=()  # cuDNN's kernel 0 takes no block size (its rows say block 0)
                "$NCU" --metrics "$M" --csv --print-units base ./${op}_forward $k --check --dtype $dt -N $1 -C $2 \
                    "${bs[@]}" > "$OUT/ncu.csv" 2>&1
                { echo "### $tag kernel $k block $3"; cat "$OUT/ncu.csv"; } >> "$OUT/ncu.log"
                printf '%s|%s|%s|%s|%s|%s\n' "$tag" "$k" "$3" "$4" "$5" "$(python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys
skip = ("convert_from_f32", "copy16", "flush_", "read16", "write16", "curand", "generate_seed")
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows:
    print("no ncu rows")
    sys.exit()
head, data = rows[0], rows[1:]
ki, mi, vi = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
by = {}
for r in data:
    if any(s in r[ki] for s in skip):
        continue
    by.setdefault((r[0], r[ki]), {})[r[mi]] = r[vi].replace(",", "")
if not by:
    print("no kernel")
    sys.exit()
# the longest kernel of the launch (a rung runs one; cuDNN may run more)
name, m = max(((k[1], v) for k, v in by.items()), key=lambda kv: float(kv[1].get("gpu__time_duration.sum", 0)))
stalls = sorted(((float(v), k.split("stalled_")[1].split("_per_issue")[0]) for k, v in m.items() if "stalled_" in k),
                reverse=True)[:3]
print(";".join([name.replace("void ", "").split("<")[0].split("(")[0][:40], str(len(by)), m.get("gpu__time_duration.sum", "?"),
                m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed", "?"), m.get("dram__bytes_read.sum", "?"),
                m.get("dram__bytes_write.sum", "?"), m.get("sm__warps_active.avg.pct_of_peak_sustained_active", "?"),
                m.get("launch__registers_per_thread", "?"), m.get("launch__grid_size", "?"),
                m.get("launch__block_size", "?"), ", ".join(f"{n} {v:.2f}" for v, n in stalls)]))
PY
)" >> "$OUT/rows.txt"
            done
        done
    done
    el "$op done"
done
python3 - "$OUT/rows.txt" <<'PY'
import sys
print("| point | kernel | block | us | %SOL | ncu: kernel | its us | DRAM % of peak | DRAM read MB | write MB | warps active % "
      "| regs | grid x block | stalls per issue (top 3) |")
print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
for line in open(sys.argv[1]):
    tag, k, bs, us, sol, ncu = line.rstrip("\n").split("|", 5)
    f = ncu.split(";")
    if len(f) < 11:
        print(f"| {tag} | {k} | {bs} | {us} | {sol}% | {ncu} | | | | | | | | |")
        continue
    name, n, t, dram, rd, wr, warps, regs, grid, block, stalls = f
    def num(x, scale=1.0, fmt="%.1f"):
        try:
            return fmt % (float(x) / scale)
        except ValueError:
            return x
    print(f"| {tag} | {k} | {bs} | {us} | {sol}% | {name} ({n}) | {num(t, 1e3, '%.2f')} | {num(dram)} | "
          f"{num(rd, 1e6)} | {num(wr, 1e6)} | {num(warps)} | {regs} | {grid} x {block} | {stalls} |")
PY
el done
