#!/usr/bin/env python3
"""Regression check: compares a new run against a stored one.

    scripts/compare.py BASE NEW [--threshold 0.05] [--strict]

BASE and NEW are results CSVs (DESIGN.md schema) or folders of them (every <op>.csv of NEW is compared with
the same file in BASE). Points are matched by (op, kernel, dtype, shape, block size). Reported:
- validation failures in NEW (any FAIL row);
- kernels or points that disappeared: OK in BASE, missing or not OK in NEW, for every (op, dtype, shape)
  that NEW measured (shapes NEW did not run at all are listed as not run; --strict makes them failures);
- slowdowns beyond the threshold (default 5%) on each kernel's best block size: in GB/s when both runs come
  from the same GPU model, in %SOL when they differ.
Prints a table and a verdict; exit 1 on any failure or regression, 0 otherwise, 2 on bad arguments.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summary import best_points, is_program_csv, load, row_clock  # noqa: E402


def pairs(base, new):
    """[(label, base_csv, new_csv)]: one pair for files, one per <op>.csv of NEW for folders."""
    if os.path.isdir(new):
        if not os.path.isdir(base):
            raise ValueError("BASE must be a folder when NEW is one")
        out = []
        for name in sorted(os.listdir(new)):
            if is_program_csv(name):
                out.append((name, os.path.join(base, name), os.path.join(new, name)))
        if not out:
            raise ValueError(f"no CSV files in {new}")
        return out
    return [(os.path.basename(new), base, new)]


def best_by_kernel(rows):
    """(op, kernel, dtype, shape) -> the best OK row by GB/s."""
    best = {}
    for op in {r["op"] for r in rows}:
        for (dtype, shape, kernel), r in best_points([x for x in rows if x["op"] == op]).items():
            if isinstance(r, dict):
                best[(op, str(kernel), dtype, shape)] = r
    return best


def compare(base_rows, new_rows, threshold, strict):
    """Returns (table lines, problems, notes)."""
    problems, notes, table = [], [], []
    base_gpus = {r["gpu"] for r in base_rows}
    new_gpus = {r["gpu"] for r in new_rows}
    same_gpu = base_gpus == new_gpus and len(new_gpus) == 1
    metric, unit = ("gbps", "GB/s") if same_gpu else ("sol_pct", "%SOL")
    if not same_gpu:
        notes.append(f"GPUs differ ({', '.join(sorted(base_gpus))} vs {', '.join(sorted(new_gpus))}): comparing %SOL")
    base_clocks = {row_clock(r) for r in base_rows if r["status"] == "OK"}
    new_clocks = {row_clock(r) for r in new_rows if r["status"] == "OK"}
    if base_clocks != new_clocks:
        notes.append(f"clocks differ ({', '.join(sorted(base_clocks))} vs {', '.join(sorted(new_clocks))}): the GPU's "
                     "kernel timestamps leave out the launch latency that CUDA events include, so short kernels "
                     "look faster on cupti")

    for r in new_rows:
        if r["status"] == "FAIL":
            problems.append(f"validation FAIL: {r['op']} kernel {r['kernel']} {r['kernel_name']} {r['dtype']} "
                            f"{r['shape']} block {r['block_size']}")

    measured = {(r["op"], r["dtype"], r["shape"]) for r in new_rows}
    new_ok = {(r["op"], r["kernel"], r["dtype"], r["shape"], r["block_size"]) for r in new_rows if r["status"] == "OK"}
    new_any = {(r["op"], r["kernel"], r["dtype"], r["shape"], r["block_size"]) for r in new_rows}
    new_fail = {(r["op"], r["kernel"], r["dtype"], r["shape"], r["block_size"]) for r in new_rows if r["status"] == "FAIL"}
    not_run = set()
    for r in base_rows:
        if r["status"] != "OK":
            continue
        group = (r["op"], r["dtype"], r["shape"])
        key = (r["op"], r["kernel"], r["dtype"], r["shape"], r["block_size"])
        if group not in measured:
            not_run.add(group)
        elif key not in new_ok and key not in new_fail:  # a FAIL is reported above already
            what = "missing" if key not in new_any else "no longer OK"
            problems.append(f"{what}: {r['op']} kernel {r['kernel']} {r['kernel_name']} {r['dtype']} {r['shape']} "
                            f"block {r['block_size']}")
    if not_run:
        msg = (f"{len(not_run)} (op, dtype, shape) group(s) of BASE not run in NEW: "
               + ", ".join(f"{g[0]} {g[1]} {g[2]}" for g in sorted(not_run)))
        (problems if strict else notes).append(msg)

    bb, nb = best_by_kernel(base_rows), best_by_kernel(new_rows)
    table.append(f"| op | kernel | dtype | shape | base {unit} | new {unit} | change | verdict |")
    table.append("|---|---|---|---|---:|---:|---:|---|")

    def order(k):
        return (k[0], k[2], k[3], int(k[1]))

    for k in sorted(set(bb) & set(nb), key=order):
        b, n = float(bb[k][metric]), float(nb[k][metric])
        change = n / b - 1 if b > 0 else 0.0
        slow = change < -threshold
        if slow:
            problems.append(f"slower by {-change:.1%} ({unit}): {k[0]} kernel {k[1]} {bb[k]['kernel_name']} {k[2]} {k[3]}")
        table.append(f"| {k[0]} | {k[1]} {bb[k]['kernel_name']} | {k[2]} | {k[3]} | {b:.1f} | {n:.1f} | "
                     f"{change:+.1%} | {'SLOWER' if slow else 'ok'} |")
    return table, problems, notes


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--threshold", type=float, default=0.05, help="slowdown that counts (default 0.05 = 5%%)")
    ap.add_argument("--strict", action="store_true", help="shapes of BASE that NEW did not run are failures")
    a = ap.parse_args(argv[1:])
    for p in (a.base, a.new):
        if not os.path.exists(p):
            print(f"compare: no such file or folder: {p}", file=sys.stderr)
            return 2
    try:
        todo = pairs(a.base, a.new)
    except ValueError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    all_problems = []
    for label, bpath, npath in todo:
        print(f"== {label}: {bpath} -> {npath}")
        if not os.path.exists(bpath):
            print(f"  no baseline {bpath}: nothing to compare")
            all_problems.append(f"no baseline for {label}")
            continue
        table, problems, notes = compare(load(bpath), load(npath), a.threshold, a.strict)
        for n in notes:
            print(f"  note: {n}")
        print("\n".join(table))
        for p in problems:
            print(f"  PROBLEM: {p}")
        all_problems += problems
    print(f"\nverdict: {'FAIL' if all_problems else 'PASS'} ({len(all_problems)} problem(s), "
          f"threshold {a.threshold:.0%})")
    return 1 if all_problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
