#!/usr/bin/env bash
# LayerNorm bf16 64x4096 cold: where the warps of rung 14 and of Liger's kernel wait, sampled densely; --help.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s42_liger_sampling.sh        (GIT_REV=<commit>; carry .whl holding liger_kernel-0.8.5's wheel)

Session 41 profiled rung 14 (256 threads) and Liger's LayerNorm at bf16 64x4096 once each: ~95 warp-state samples
a kernel, too few to place the 0.16 us between them. Here each kernel is profiled over 20 launches (caches flushed
before each, clocks left alone) with warp-state sampling at its shortest interval (--warp-sampling-interval 0):
the SourceCounters and WarpStateStats sections, sm__cycles_active against the duration. $OUT/src_*.csv (the
per-instruction samples of every launch), $OUT/ncu_*.txt; a table last: samples summed over the launches by
stall reason, and the samples before the first 16-byte load, between it and the barrier, and after it.
H
    exit 0 ;;
"") ;;
*) echo "s42_liger_sampling: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s42_liger_sampling
make -j16 layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 &
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/liger_kernel-*.whl \
    > "$OUT/pip.log" 2>&1 || { echo "s42_liger_sampling: liger's wheel does not install ($OUT/pip.log)" >&2; exit 1; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
wait $! || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SEC="--cache-control all --clock-control none --warp-sampling-interval 0 --section WarpStateStats
     --section SourceCounters --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.max"
"$NCU" $SEC -k regex:lean_split -c 20 -o "$OUT/r14" ./layernorm_forward 14 --dtype bf16 -N 64 -C 4096 \
    --block-size 256 --repeats 30 > "$OUT/ncu_r14.log" 2>&1
"$NCU" $SEC --profile-from-start off -k regex:layer_norm_forward -c 20 -o "$OUT/liger" python3 scripts/peers.py \
    --ncu-range 20 --point "bf16 -N 64 -C 4096" --peer liger layernorm > "$OUT/ncu_liger.log" 2>&1
el profiled
cd "$OUT" || exit 1
for r in r14 liger; do
    [ -f $r.ncu-rep ] || { echo "$r: no report (ncu_$r.log)"; continue; }
    "$NCU" -i $r.ncu-rep --page details --csv > ncu_$r.csv 2>&1
    "$NCU" -i $r.ncu-rep --page source --print-source sass --csv > src_$r.csv 2>&1
done
python3 - <<'PY'
import csv, statistics
from collections import Counter, defaultdict
for r in ("r14", "liger"):
    try:
        det = [x for x in csv.DictReader(l for l in open(f"ncu_{r}.csv") if l.startswith('"'))]
    except OSError:
        continue
    m = defaultdict(list)
    for x in det:
        if x["Metric Name"] in ("Duration", "SM Active Cycles", "Elapsed Cycles", "gpu__time_duration.sum",
                                "sm__cycles_active.avg"):
            m[x["Metric Name"]].append(float(x["Metric Value"].replace(",", "")))
    print(r, {k: round(statistics.median(v), 1) for k, v in m.items()}, "launches", max(len(v) for v in m.values()))
    blocks, hdr = [], None  # the source page: a header and its rows a launch
    for x in csv.reader(open(f"src_{r}.csv")):
        if "Source" in x and "Warp Stall Sampling (All Samples)" in x:
            hdr = x
            blocks.append([])
        elif hdr and len(x) == len(hdr):
            blocks[-1].append(x)
    if not blocks:
        print("  no source page")
        continue
    i_src, i_all = hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)")
    stall_cols = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    seg, reasons = Counter(), Counter()
    for data in blocks:
        first_ldg = next((i for i, x in enumerate(data) if "LDG.E.128" in x[i_src]), 0)
        bar = next((i for i, x in enumerate(data) if x[i_src].split()[:1] == ["BAR.SYNC"] or " BAR." in x[i_src]),
                   len(data))
        for i, x in enumerate(data):
            n = int(float(x[i_all] or 0))
            seg["before the first 16-byte load" if i < first_ldg else "load .. barrier" if i <= bar
                else "after the barrier"] += n
            for c in stall_cols:
                reasons[hdr[c]] += int(float(x[c] or 0))
    print(f"  {len(blocks)} launches, samples {sum(seg.values())}: " + ", ".join(f"{k} {v}" for k, v in seg.items()))
    print("  top stall reasons: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common(8)))
PY
tar czf ncu.tgz ncu_*.csv src_*.csv ncu_*.log 2>/dev/null
rm -f ./*.ncu-rep ncu_*.csv src_*.csv ncu_*.log
el done
