#!/usr/bin/env python3
"""The kernels of an Nsight Compute CSV, a line each:

    TAG|kernel|ns|DRAM % of peak|DRAM MB read / written|warps active %|registers|grid x block|top three stalls

    tools/ncu_rows.py --metrics                  the metrics to profile with, one comma-separated list
    ncu --metrics "$(tools/ncu_rows.py --metrics)" --csv --print-units base ./rmsnorm_forward 13 ... > ncu.csv
    tools/ncu_rows.py ncu.csv TAG [--longest] [--keep NAME]

The stalls are ncu's warp-issue stalls per issued instruction (long_scoreboard, barrier, ...), the three largest.
The harness's own kernels (input conversion, the L2 flush, the copy and the --phases probes, cuRAND) are left out
unless --keep names one (e.g. copy16); --longest keeps only the longest kernel. The lines of the file that are not
ncu's CSV rows (the program's own output) are skipped; a file with no such row gives "TAG|no ncu rows". Exit 2 with
one line for a file that cannot be read or whose rows lack ncu's columns.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import cli  # noqa: E402  (scripts/cli.py: one-line errors)

STALLS = ("long_scoreboard", "barrier", "membar", "lg_throttle", "wait", "drain", "short_scoreboard", "mio_throttle",
          "no_instruction")
METRICS = ["gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum",
           "dram__bytes_write.sum", "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread",
           "launch__grid_size", "launch__block_size"] + [
    f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALLS]
HARNESS = ("convert_from_f32", "copy16", "flush_", "read16", "write16", "curand", "generate_seed")
COLUMNS = ("Kernel Name", "Metric Name", "Metric Value")


def number(text):
    """ncu's value as a float (thousands separators dropped), or None where it is not a number (n/a)."""
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def mb(m, key):
    v = number(m.get(key, ""))
    return "?" if v is None else "%.1f" % (v / 1e6)


def main(argv):
    ap = cli.Parser("ncu_rows", __doc__)
    ap.add_argument("csv", nargs="?", type=cli.readable_file, help="ncu's CSV output (other lines are skipped)")
    ap.add_argument("tag", nargs="?", help="the first field of each line")
    ap.add_argument("--metrics", action="store_true", help="print the metric list for ncu --metrics and exit")
    ap.add_argument("--longest", action="store_true", help="only the longest kernel")
    ap.add_argument("--keep", default="", help="a harness kernel to keep (e.g. copy16)")
    a = ap.parse_args(argv[1:])
    if a.metrics:
        if a.csv or a.tag:
            ap.error("--metrics takes no CSV or TAG")
        print(",".join(METRICS))
        return 0
    if a.csv is None or a.tag is None:
        ap.error("give a CSV and a TAG, or --metrics")
    try:
        with open(a.csv, newline="") as f:
            rows = list(csv.reader(line for line in f if line.startswith('"')))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise cli.DataError(f"{a.csv}: cannot read it as ncu's CSV ({e})")
    if not rows:
        print(f"{a.tag}|no ncu rows")
        return 0
    head, data = rows[0], rows[1:]
    missing = [c for c in COLUMNS if c not in head]
    if missing:
        raise cli.DataError(f"{a.csv}: not ncu's CSV (no column {', '.join(repr(c) for c in missing)})")
    ki, mi, vi = (head.index(c) for c in COLUMNS)
    by = {}
    for n, r in enumerate(data, 2):
        if len(r) <= max(ki, mi, vi):
            raise cli.DataError(f"{a.csv}: ncu row {n} has {len(r)} fields, fewer than its header's")
        if any(s in r[ki] and not (a.keep and a.keep in r[ki]) for s in HARNESS):
            continue
        by.setdefault((r[0], r[ki]), {})[r[mi]] = r[vi].replace(",", "")
    kernels = [(name, m) for (_, name), m in by.items()]
    if a.longest and kernels:
        kernels = [max(kernels, key=lambda nm: number(nm[1].get("gpu__time_duration.sum", "")) or 0.0)]
    if not kernels:
        print(f"{a.tag}|no kernel")
    for name, m in kernels:
        stalls = sorted(((v, k.split("stalled_")[1].split("_per_issue")[0]) for k, v in
                         ((k, number(v)) for k, v in m.items() if "stalled_" in k and "_per_issue" in k)
                         if v is not None), reverse=True)[:3]
        print("|".join([a.tag, name.replace("void ", "").split("<")[0].split("(")[0][:40],
                        m.get("gpu__time_duration.sum", "?"),
                        m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed", "?"),
                        "%s / %s" % (mb(m, "dram__bytes_read.sum"), mb(m, "dram__bytes_write.sum")),
                        m.get("sm__warps_active.avg.pct_of_peak_sustained_active", "?"),
                        m.get("launch__registers_per_thread", "?"),
                        "%s x %s" % (m.get("launch__grid_size", "?"), m.get("launch__block_size", "?")),
                        ", ".join(f"{n} {v:.2f}" for v, n in stalls)]))
    return 0


if __name__ == "__main__":
    cli.run(main)
