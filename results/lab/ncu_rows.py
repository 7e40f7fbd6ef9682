#!/usr/bin/env python3
"""The kernel rows of an Nsight Compute CSV (`ncu --metrics $M --csv --print-units base`, M from lab.sh's
lab_ncu_metrics), one line each: TAG|kernel|ns|DRAM % of peak|DRAM MB read / written|warps active %|registers|
grid x block|the top three stall reasons per issue. The harness's own kernels (input conversion, the flush, the copy
and phase probes, cuRAND) are left out unless --keep names one; --longest keeps only the longest kernel.

    results/lab/ncu_rows.py CSV TAG [--longest] [--keep NAME]
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import cli  # noqa: E402  (scripts/cli.py: one-line errors)

HARNESS = ("convert_from_f32", "copy16", "flush_", "read16", "write16", "curand", "generate_seed")


def main(argv):
    ap = cli.Parser("ncu_rows", __doc__)
    ap.add_argument("csv", type=cli.readable_file, help="ncu's CSV output (other lines are skipped)")
    ap.add_argument("tag", help="the first field of each line")
    ap.add_argument("--longest", action="store_true", help="only the longest kernel")
    ap.add_argument("--keep", default="", help="a harness kernel to keep (e.g. copy16)")
    a = ap.parse_args(argv[1:])
    with open(a.csv) as f:
        rows = [r for r in csv.reader(line for line in f if line.startswith('"'))]
    if not rows:
        print(f"{a.tag}|no ncu rows")
        return
    head, data = rows[0], rows[1:]
    ki, mi, vi = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
    by = {}
    for r in data:
        if any(s in r[ki] and not (a.keep and a.keep in r[ki]) for s in HARNESS):
            continue
        by.setdefault((r[0], r[ki]), {})[r[mi]] = r[vi].replace(",", "")
    kernels = [(name, m) for (_, name), m in by.items()]
    if a.longest and kernels:
        kernels = [max(kernels, key=lambda nm: float(nm[1].get("gpu__time_duration.sum", 0)))]
    if not kernels:
        print(f"{a.tag}|no kernel")
    for name, m in kernels:
        stalls = sorted(((float(v), k.split("stalled_")[1].split("_per_issue")[0]) for k, v in m.items()
                         if "stalled_" in k), reverse=True)[:3]
        print("|".join([a.tag, name.replace("void ", "").split("<")[0].split("(")[0][:40],
                        m.get("gpu__time_duration.sum", "?"),
                        m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed", "?"),
                        "%.1f / %.1f" % (float(m.get("dram__bytes_read.sum", 0)) / 1e6,
                                         float(m.get("dram__bytes_write.sum", 0)) / 1e6),
                        m.get("sm__warps_active.avg.pct_of_peak_sustained_active", "?"),
                        m.get("launch__registers_per_thread", "?"),
                        "%s x %s" % (m.get("launch__grid_size", "?"), m.get("launch__block_size", "?")),
                        ", ".join(f"{n} {v:.2f}" for v, n in stalls)]))


if __name__ == "__main__":
    cli.run(main)
