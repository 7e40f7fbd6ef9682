#!/usr/bin/env bash
# Issue 29's unmet throughput points on this GPU: the dispatcher's kernel under Nsight Compute; --help says more.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s47_unmet_ncu.sh [OP:DTYPE:LABEL ...]        (GIT_REV=<commit>)

Issue 29 closes with, for each throughput point where a target is not met (behind the best peer by more than 2%, or
under 95% of the copy at C >= 1024, 90% below), the number, the profile and what limits it. This takes each point
(by default the H200's 31 from summary.md: LayerNorm 11, RMSNorm 20; LABEL as scripts/shapes.py names it, e.g.
rmsnorm:bf16:8192x4096:add), times the dispatcher (its block sweep, the best block kept) and profiles its one
validated launch at that block under ncu (caches flushed, clocks as they are): the kernel, time, DRAM throughput
(% of peak) and bytes, warps active, registers, grid and block, the top three stall reasons per issue. ~10 s a
point. One table last; the ncu CSVs in $OUT/ncu.log.
H
    exit 0 ;;
esac
for a in "$@"; do
    case "$a" in
    layernorm:fp32:* | layernorm:bf16:* | layernorm:fp16:* | rmsnorm:fp32:* | rmsnorm:bf16:* | rmsnorm:fp16:*) ;;
    *) echo "s47_unmet_ncu: '$a' is not OP:DTYPE:LABEL (see --help)" >&2; exit 2 ;;
    esac
done
. results/lab/lab.sh
lab_start s47_unmet_ncu
if [ $# -eq 0 ]; then
    set -- layernorm:fp32:4096x16384 layernorm:fp32:2048x32768 layernorm:fp32:1024x65536 layernorm:bf16:8192x768 \
        layernorm:bf16:32768x256 layernorm:bf16:32768x512 layernorm:bf16:16384x1024 layernorm:bf16:8192x8192 \
        layernorm:bf16:4096x16384 layernorm:bf16:2048x32768 layernorm:bf16:1024x65536 \
        rmsnorm:fp32:8192x768 rmsnorm:fp32:32768x128 rmsnorm:fp32:32768x256 rmsnorm:fp32:32768x512 \
        rmsnorm:fp32:16384x1024 rmsnorm:fp32:16384x2048 rmsnorm:fp32:16384x4096 rmsnorm:fp32:2048x32768 \
        rmsnorm:fp32:1024x65536 rmsnorm:fp32:8192x4096:add rmsnorm:bf16:8192x768 rmsnorm:bf16:32768x128 \
        rmsnorm:bf16:32768x256 rmsnorm:bf16:32768x512 rmsnorm:bf16:16384x1024 rmsnorm:bf16:8192x8192 \
        rmsnorm:bf16:2048x32768 rmsnorm:bf16:1024x65536 rmsnorm:bf16:8192x4096:add rmsnorm:bf16:16384x4096:add
fi
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
lab_ncu_metrics
ROWS=$OUT/rows.txt
: > "$ROWS"
for spec in "$@"; do
    op=${spec%%:*}; rest=${spec#*:}; dt=${rest%%:*}; label=${rest#*:}
    args=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import shapes
m = [a for d, a, l in shapes.points(sys.argv[1], False, None) if d == sys.argv[2] and l == sys.argv[3]]
print(" ".join(m[0]) if m else "")' "$op" "$dt" "$label")
    [ -n "$args" ] || { echo "$spec|not a point of scripts/shapes.py" >> "$ROWS"; continue; }
    k=$(./${op}_forward --list | tail -n 1 | awk '{print $1}')
    ./${op}_forward $k --dtype $dt $args --json - 2>> "$OUT/run.log" > "$OUT/k.json"
    best=$(lab_best_json "$OUT/k.json")
    [ -n "$best" ] || { echo "$spec|no OK row" >> "$ROWS"; continue; }
    set -- $best
    "$NCU" --clock-control none --metrics "$M" --csv --print-units base ./${op}_forward $k --check --dtype $dt $args \
        --block-size $1 > "$OUT/ncu.csv" 2>&1
    { echo "### $spec dispatcher block $1"; cat "$OUT/ncu.csv"; } >> "$OUT/ncu.log"
    python3 results/lab/ncu_rows.py "$OUT/ncu.csv" "$spec|$1|$2|$3" --longest >> "$ROWS"
done
el profiled
rm -f "$OUT/ncu.csv" "$OUT/k.json"
echo "| point | block | us | % of the copy | kernel | ncu ns | DRAM % of peak | DRAM MB read / written | warps active % | regs | grid x block | top stalls / issue |"
echo "|---|---:|---:|---:|---|---:|---:|---|---:|---:|---|---|"
sed 's/^/| /; s/$/ |/' "$ROWS"
