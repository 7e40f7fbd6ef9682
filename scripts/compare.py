#!/usr/bin/env python3
"""Regression check: compares a new run against a stored one.

    scripts/compare.py BASE NEW [--threshold 0.05] [--strict] [--best-only]

BASE and NEW are results CSVs (the programs' schema: harness/options.h CSV_HEADER, scripts/summary.py CSV_FIELDS) or
folders of them (every <op>.csv of NEW is compared with the same file in BASE). Points are matched by (op, kernel,
dtype, shape, block size). Reported:
- validation failures in NEW (any FAIL row);
- missing points: OK in BASE, missing or not OK in NEW, for every (op, dtype, shape) that NEW measured (shapes
  NEW did not run at all are listed as not run; --strict makes them failures);
- slower points: slowdowns beyond the threshold (default 5%) on each kernel's best block size: in GB/s when both
  runs come from the same GPU model, in %SOL when they differ.
--best-only: at each (op, dtype, shape), only the best of kernels 1 and up (whichever kernel that is in each run)
and, apart, cuDNN (kernel 0). The comparison to make across GPU models: there a kernel's rank in the ladder can
change, and what the program offers is its best kernel; cuDNN on the same two GPUs shows what the GPU changed.
Prints a summary first (the problems counted per op and kernel, where with --best-only every kernel of the
ladder counts in one row; the notes; the verdict), then each file's table and problems. Exit 1 on any failure or
regression, or when nothing was compared (an empty NEW, files of two different ops), 0 otherwise, 2 on bad
arguments or a malformed CSV.
"""
import os
import sys
from collections import Counter, namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli  # noqa: E402
from summary import is_program_csv, load, results_csv, results_folder, row_clock  # noqa: E402

# kind: one of KINDS (a column of the summary); kernel: the label of its row in the summary; text: its line
Problem = namedtuple("Problem", "kind op kernel text")
KINDS = ["slower", "missing", "validation FAIL"]
BEST = "best of 1 and up"


def results_path(path):
    """argparse type: a results CSV or a folder of them."""
    return results_folder(path) if os.path.isdir(path) else results_csv(path)


def pairs(base, new):
    """[(label, base_csv, new_csv)]: one pair for files, one per <op>.csv of NEW for folders."""
    if not os.path.isdir(new):
        return [(os.path.basename(new), base, new)]
    return [(name, os.path.join(base, name), os.path.join(new, name))
            for name in sorted(os.listdir(new)) if is_program_csv(name)]


def kernel_key(r, best_only):
    """The kernel a row counts for: its number, or with best_only "best" for every kernel of the ladder (1 and up),
    cuDNN (0) kept apart."""
    return "best" if best_only and r["kernel"] != "0" else r["kernel"]


def kernel_label(r, best_only):
    """The row of the summary that a row counts in."""
    return BEST if kernel_key(r, best_only) == "best" else f"{r['kernel']} {r['kernel_name']}"


def kernel_order(kernel):
    """Kernels by number (a kernel key or label: "7", "7 subwarp-regs-vec"); the others ("best", BEST, "all ...")
    after them."""
    first = kernel.split()[0]
    return (0, int(first)) if first.isdigit() else (1, 0)


def best_rows(rows, best_only):
    """(op, kernel key, dtype, shape) -> the OK row with the highest GB/s: over block sizes, and with best_only
    over the kernels of the ladder."""
    best = {}
    for r in rows:
        key = (r["op"], kernel_key(r, best_only), r["dtype"], r["shape"])
        if r["status"] == "OK" and (key not in best or float(r["gbps"]) > float(best[key]["gbps"])):
            best[key] = r
    return best


def compare(base_rows, new_rows, threshold, strict, best_only):
    """(table lines, problems, notes, points compared per (op, kernel label)) for one CSV."""
    problems, notes = [], []
    base_gpus = {r["gpu"] for r in base_rows}
    new_gpus = {r["gpu"] for r in new_rows}
    same_gpu = base_gpus == new_gpus and len(new_gpus) == 1
    metric, unit = ("gbps", "GB/s") if same_gpu else ("sol_pct", "%SOL")
    if not same_gpu:
        notes.append(f"GPUs differ ({', '.join(sorted(base_gpus))} vs {', '.join(sorted(new_gpus))}): comparing %SOL"
                     + ("" if best_only else "; --best-only compares what the program offers on each GPU"))
    base_clocks = {row_clock(r) for r in base_rows if r["status"] == "OK"}
    new_clocks = {row_clock(r) for r in new_rows if r["status"] == "OK"}
    if base_clocks != new_clocks:
        notes.append(f"clocks differ ({', '.join(sorted(base_clocks))} vs {', '.join(sorted(new_clocks))}): the GPU's "
                     "kernel timestamps leave out the launch latency that CUDA events include, so short kernels "
                     "look faster on cupti")

    def where(r, kernel=None):
        """A point in words; kernel: what to call the kernel (default: the row's own)."""
        kernel = kernel or f"kernel {r['kernel']} {r['kernel_name']}"
        return f"{r['op']} {kernel} {r['dtype']} {r['shape']}"

    for r in new_rows:
        if r["status"] == "FAIL":
            problems.append(Problem("validation FAIL", r["op"], kernel_label(r, best_only),
                                    f"validation FAIL: {where(r)} block {r['block_size']}"))

    # A missing point: a kernel's block size, or with best_only no OK kernel of the ladder (or cuDNN) at all
    def point(r):
        key = (r["op"], kernel_key(r, best_only), r["dtype"], r["shape"])
        return key if best_only else key + (r["block_size"],)

    measured = {(r["op"], r["dtype"], r["shape"]) for r in new_rows}
    new_status = {}
    for r in new_rows:
        new_status.setdefault(point(r), set()).add(r["status"])
    not_run, seen = set(), set()
    for r in base_rows:
        p = point(r)
        if r["status"] != "OK" or p in seen:
            continue
        seen.add(p)
        got = new_status.get(p, set())
        if (r["op"], r["dtype"], r["shape"]) not in measured:
            not_run.add((r["op"], r["dtype"], r["shape"]))
        elif not got & {"OK", "FAIL"}:  # a FAIL is reported above already
            what = where(r, BEST) if p[1] == "best" else where(r)
            if not best_only:
                what += f" block {r['block_size']}"
            problems.append(Problem("missing", r["op"], kernel_label(r, best_only),
                                    f"{'no longer OK' if got else 'missing'}: {what}"))
    if not_run and strict:
        problems += [Problem("missing", g[0], "all (shape not run)", f"not run in NEW: {' '.join(g)}")
                     for g in sorted(not_run)]
    elif not_run:
        notes.append(f"{len(not_run)} (op, dtype, shape) group(s) of BASE not run in NEW (--strict: failures): "
                     + ", ".join(" ".join(g) for g in sorted(not_run)))

    bb, nb = best_rows(base_rows, best_only), best_rows(new_rows, best_only)
    table = [f"| op | kernel | dtype | shape | base {unit} | new {unit} | change | verdict |",
             "|---|---|---|---|---:|---:|---:|---|"]
    compared = Counter()
    for k in sorted(set(bb) & set(nb), key=lambda k: (k[0], k[2], k[3], kernel_order(k[1]))):
        b_row, n_row = bb[k], nb[k]
        label = kernel_label(b_row, best_only)
        compared[k[0], label] += 1
        b, n = float(b_row[metric]), float(n_row[metric])
        change = n / b - 1 if b > 0 else 0.0
        slow = change < -threshold
        kernels = f"{b_row['kernel']} {b_row['kernel_name']}"
        if k[1] == "best":  # the best kernel of each run: BASE's -> NEW's where they differ
            if n_row["kernel"] != b_row["kernel"]:
                kernels += f" -> {n_row['kernel']} {n_row['kernel_name']}"
            kernels = f"{BEST} ({kernels})"
        if slow:
            problems.append(Problem("slower", k[0], label, f"slower by {-change:.1%} ({unit}): "
                                    + where(b_row, kernels if k[1] == "best" else None)))
        table.append(f"| {k[0]} | {kernels} | {k[2]} | {k[3]} | {b:.1f} | {n:.1f} | {change:+.1%} | "
                     f"{'SLOWER' if slow else 'ok'} |")
    return table, problems, notes, compared


def summary(problems, compared):
    """The problems counted per op and kernel: one row for every kernel compared or with a problem."""
    counts = Counter((p.op, p.kernel, p.kind) for p in problems)
    rows = set(compared) | {(p.op, p.kernel) for p in problems if p.kind in KINDS}
    out = [f"| op | kernel | points compared | {' | '.join(KINDS)} |", "|---|---|---:|" + "---:|" * len(KINDS)]
    for op, kernel in sorted(rows, key=lambda r: (r[0], kernel_order(r[1]), r[1])):
        out.append(f"| {op} | {kernel} | {compared[op, kernel]} | "
                   + " | ".join(str(counts[op, kernel, kind]) for kind in KINDS) + " |")
    return out


def main(argv):
    ap = cli.Parser("compare", __doc__)
    ap.add_argument("base", type=results_path, help="the stored run: a results CSV, or a folder of them")
    ap.add_argument("new", type=results_path, help="the run to check: a results CSV, or a folder of them")
    ap.add_argument("--threshold", type=float, default=0.05, help="slowdown that counts (default 0.05 = 5%%)")
    ap.add_argument("--strict", action="store_true", help="shapes of BASE that NEW did not run are failures")
    ap.add_argument("--best-only", action="store_true",
                    help="only each point's best kernel (1 and up) and cuDNN (0): across GPU models")
    a = ap.parse_args(argv[1:])
    if os.path.isdir(a.base) != os.path.isdir(a.new):
        ap.error("BASE and NEW must be both CSV files or both folders")
    problems, compared, details = [], Counter(), []
    notes = {}  # note -> the files it is about (the GPU and clock notes are often the same for every file)
    for label, bpath, npath in pairs(a.base, a.new):
        details.append(f"\n== {label}: {bpath} -> {npath}")
        if not os.path.exists(bpath):
            details.append(f"  no baseline {bpath}: nothing to compare")
            problems.append(Problem("no baseline", label, "", f"no baseline for {label} in {a.base}"))
            continue
        table, file_problems, file_notes, file_compared = compare(load(bpath, kernel_numbers=False), load(npath, kernel_numbers=False), a.threshold, a.strict,
                                                                  a.best_only)
        details += table + [f"  PROBLEM: {p.text}" for p in file_problems]
        problems += file_problems
        for n in file_notes:
            notes.setdefault(n, []).append(label)
        compared += file_compared
    print(f"{a.base} -> {a.new}{', best kernels only' if a.best_only else ''}: problems per op and kernel\n")
    print("\n".join(summary(problems, compared)))
    for n, labels in notes.items():
        print(f"note ({', '.join(labels)}): {n}")
    for p in problems:
        if p.kind not in KINDS:  # a file of NEW with no baseline: no kernel to count it against
            print(p.text)
    if not problems and not sum(compared.values()):  # an empty NEW, or files of different ops: no evidence of a pass
        print(f"\nverdict: FAIL (nothing compared: no point of NEW has an OK row of BASE to compare with)")
        print("\n".join(details))
        return 1
    print(f"\nverdict: {'FAIL' if problems else 'PASS'} ({len(problems)} problem(s), threshold {a.threshold:.0%})")
    print("\n".join(details))
    return 1 if problems else 0


if __name__ == "__main__":
    cli.run(main)
