#!/usr/bin/env python3
"""Markdown tables from a results CSV, and the CSV schema every script reads (CSV_FIELDS below).

    scripts/summary.py results/h100-80gb-hbm3/layernorm.csv [--ladder-shape 8192x768]

Prints (1) the ladder at one shape (default: the op's default point, scripts/shapes.py): each kernel's best block
size, GB/s, %SOL and gain over the previous step, per dtype; (2) the best kernel at every shape and dtype. Only OK
rows count; a kernel with no OK row at a shape shows why (FAIL, or the first skip reason is not in the CSV:
"skipped"; "not measured" where it has no row there at all).
"""
import argparse
import csv
import os
import sys
from collections import OrderedDict

import cli
import csvfile
import shapes


# The programs' CSV schema (harness/options.h CSV_HEADER), in order: csvfile.CSV_FIELDS. The last four columns
# came later (csvfile.NEWER): a row without the first three was timed with CUDA events (row_clock).
CSV_FIELDS = csvfile.CSV_FIELDS


def load(path, kernel_numbers=True):
    """The rows of a results CSV, read strictly (csvfile.read: a malformed row ends the script with one line naming
    the file and line). kernel_numbers=False: peers.csv (peer names in the kernel column)."""
    return csvfile.read(path, kernel_numbers=kernel_numbers)


def results_csv(path):
    """argparse type: a program's CSV, or one in its schema (peers.csv): its header has every column but the
    newer ones (csvfile.NEWER)."""
    cli.readable_file(path)
    with open(path, newline="", errors="replace") as f:  # a binary file fails the header check, not the decoder
        header = next(csv.reader(f), [])
    missing = [c for c in csvfile.REQUIRED if c not in header]
    if missing:
        raise argparse.ArgumentTypeError(f"{path} is not a results CSV (no column {', '.join(missing[:3])}"
                                         + (", ...)" if len(missing) > 3 else ")"))
    return path


# The CSVs of a results folder that are not a program's rows: the peers (peers.py, in the programs' schema), the
# timing cross-check (ncu_check.py) and the dispatcher's same-process check (dispatch_check.py).
CHECK_CSV = "dispatch_check.csv"  # scripts/dispatch_check.py's rows, beside a folder's CSVs
OTHER_CSVS = ("peers.csv", "ncu_check.csv", CHECK_CSV)  # CSVs of other schemas in a results folder


def is_program_csv(name):
    return name.endswith(".csv") and name not in OTHER_CSVS


def row_clock(r):
    """The clock a row's time_ms_median was taken on: cupti (GPU kernel timestamps) or events."""
    return r.get("clock") or "events"


def is_chained(r):
    """Whether a hot row's launches chained by programmatic dependent launch (the chained column; a row without
    it is not known to)."""
    return r.get("chained") == "yes"


def results_folder(path):
    """argparse type: a results folder (results/<gpu>): at least one program CSV, each in the schema."""
    cli.folder(path)
    names = [n for n in sorted(os.listdir(path)) if is_program_csv(n)]
    if not names:
        raise argparse.ArgumentTypeError(f"no results CSV in {path}")
    for n in names:
        results_csv(os.path.join(path, n))
    return path


def op_results(folder):
    """[(op, rows)] for every non-empty <op>.csv of a results folder (not the OTHER_CSVS), sorted by file."""
    out = []
    for name in sorted(os.listdir(folder)):
        if is_program_csv(name):
            rows = load(os.path.join(folder, name))
            if rows:
                out.append((rows[0]["op"], rows))
    return out


def best_points(rows):
    """(dtype, shape, kernel) -> the OK row with the highest GB/s, or a status string."""
    best = OrderedDict()
    for r in rows:
        key = (r["dtype"], r["shape"], int(r["kernel"]))
        cur = best.get(key)
        if r["status"] == "OK":
            if not isinstance(cur, dict) or float(r["gbps"]) > float(cur["gbps"]):
                best[key] = r
        elif cur is None or (isinstance(cur, str) and r["status"] == "FAIL"):
            best[key] = r["status"]
    return best


# The registry name of every program's dispatcher, its last number: it chooses among the rungs and is none of them.
DISPATCHER = "dispatch"


def is_rung(kernel, name):
    """Whether a kernel is a step of its ladder, the steps a gain is counted between: kernel 1 and up, not cuDNN
    (kernel 0) and not the dispatcher."""
    return kernel >= 1 and name != DISPATCHER


def ladder(rows, shape):
    best = best_points(rows)
    names = {int(r["kernel"]): r["kernel_name"] for r in rows}
    gpu = rows[0]["gpu"] if rows else "?"
    out = []
    for dtype in sorted({r["dtype"] for r in rows if r["shape"] == shape}, key=["fp32", "fp16", "bf16"].index):
        out.append(f"\n{rows[0]['op']} ladder, {dtype}, {shape}, {gpu}:\n")
        out.append("| kernel | name | best block | GB/s | %SOL | gain over previous |")
        out.append("|---:|---|---:|---:|---:|---:|")
        prev = None
        for k in sorted(names):
            p = best.get((dtype, shape, k))
            if not isinstance(p, dict):
                out.append(f"| {k} | {names[k]} | - | - | - | {('FAIL' if p == 'FAIL' else 'skipped' if p else 'not measured')} |")
                continue
            g = float(p["gbps"])
            step = is_rung(k, names[k])
            gain = f"{g / prev:.2f}x" if step and prev else "-"
            out.append(f"| {k} | {names[k]} | {p['block_size']} | {g:.0f} | {float(p['sol_pct']):.1f}% | {gain} |")
            if step:
                prev = g
    return "\n".join(out)


def best_table(rows):
    best = best_points(rows)
    out = ["\n| dtype | shape | best kernel | block | GB/s | %SOL | copy GB/s |", "|---|---|---|---:|---:|---:|---:|"]
    keys = OrderedDict()
    for (dtype, shape, _k) in best:
        keys[(dtype, shape)] = True
    for dtype, shape in keys:
        cands = [v for (d, s, _k), v in best.items() if d == dtype and s == shape and isinstance(v, dict)]
        if not cands:
            out.append(f"| {dtype} | {shape} | none OK | - | - | - | - |")
            continue
        b = max(cands, key=lambda r: float(r["gbps"]))
        out.append(f"| {dtype} | {shape} | {b['kernel']} {b['kernel_name']} | {b['block_size']} | "
                   f"{float(b['gbps']):.0f} | {float(b['sol_pct']):.1f}% | {float(b['sol_gbps']):.0f} |")
    return "\n".join(out)


def main(argv):
    ap = cli.Parser("summary", __doc__)
    ap.add_argument("csv", type=results_csv, help="a program's results CSV")
    ap.add_argument("--ladder-shape", help="the shape of the ladder table")
    a = ap.parse_args(argv[1:])
    rows = load(a.csv)
    if not rows:
        print(f"summary: no rows in {a.csv}", file=sys.stderr)
        return 1
    if a.ladder_shape and not any(r["shape"] == a.ladder_shape for r in rows):
        ap.error(f"no rows at --ladder-shape {a.ladder_shape} in {a.csv}")
    print(ladder(rows, a.ladder_shape or shapes.default_shape(rows[0]["op"], rows)))
    print(best_table(rows))
    return 0


if __name__ == "__main__":
    cli.run(main)
