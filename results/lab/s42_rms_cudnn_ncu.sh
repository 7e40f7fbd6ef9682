#!/usr/bin/env bash
# RMSNorm bf16 8192x768 and 16384x2048 cold: cuDNN against rungs 6, 11 and 12 (and the copy) under Nsight Compute;
# --help says more.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s42_rms_cudnn_ncu.sh        (GIT_REV=<commit>)

At RMSNorm bf16 8192x768 every good rung (6, 11, 12) takes 8.38-8.42 us (91-92% of the copy, H100), cuDNN 7.87
(97.6%); at 16384x2048 cuDNN runs at 104% of the copy and the rungs at 96-99%. A kernel faster than the copy moves
the same bytes some other way: the question is where. For each of cuDNN (kernel 0) and rungs 12 (64 threads), 6
(256) and 11 (32) at both shapes, one run under Nsight Compute (caches flushed before each kernel, clocks left
alone), every kernel of the run profiled, the copy that defines the speed of light among them: grid, block,
registers, duration, DRAM bytes read and written, L2 sectors written, achieved occupancy. $OUT/ncu_*.csv, a table
last (the median of each kernel's launches).
H
    exit 0 ;;
"") ;;
*) echo "s42_rms_cudnn_ncu: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s42_rms_cudnn_ncu
make -j16 rmsnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum
M=$M,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for shape in "8192 768" "16384 2048"; do
    set -- $shape
    for spec in "0" "12 --block-size 64" "6 --block-size 256" "11 --block-size 32"; do
        k=${spec%% *}
        "$NCU" --cache-control all --clock-control none --metrics "$M" --csv \
            ./rmsnorm_forward $spec --dtype bf16 -N $1 -C $2 --repeats 3 > "$OUT/ncu_${k}_$1x$2.csv" 2> "$OUT/ncu_${k}_$1x$2.err"
        echo "$1x$2 kernel $k: exit $?"
    done
done
el profiled
python3 - "$OUT" <<'PY'
import csv, glob, os, statistics, sys
from collections import defaultdict
print("| run | kernel (name start) | launches | grid | block | regs | us | DRAM read MB | DRAM write MB | L2 write MB | warps active % |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "ncu_*.csv"))):
    lines = [l for l in open(path) if l.startswith('"')]
    vals = defaultdict(lambda: defaultdict(list))  # kernel name -> metric -> values over its launches
    for r in csv.DictReader(lines):
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        unit = r.get("Metric Unit", "")
        scale = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3, "ns": 1e-3, "us": 1, "ms": 1e3,
                 "nsecond": 1e-3, "usecond": 1, "msecond": 1e3}
        if r["Metric Name"].startswith(("dram__bytes", "gpu__time")):
            v *= scale.get(unit, 1)
        if r["Metric Name"].startswith("lts__t_sectors"):
            v *= 32e-6
        vals[r["Kernel Name"][:40]][r["Metric Name"]].append(v)
    run = os.path.basename(path)[4:-4]
    for name, m in vals.items():
        med = lambda k: statistics.median(m[k]) if m.get(k) else float("nan")
        print(f"| {run} | {name} | {len(m.get('gpu__time_duration.sum', []))} | {med('launch__grid_size'):.0f} | {med('launch__block_size'):.0f} | "
              f"{med('launch__registers_per_thread'):.0f} | {med('gpu__time_duration.sum'):.2f} | "
              f"{med('dram__bytes_read.sum'):.2f} | {med('dram__bytes_write.sum'):.2f} | "
              f"{med('lts__t_sectors_op_write.sum'):.2f} | {med('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f} |")
PY
el done
