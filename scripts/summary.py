#!/usr/bin/env python3
"""Markdown tables from a results CSV, and the CSV schema every script reads (CSV_FIELDS below).

    scripts/summary.py results/h200/layernorm.csv [--ladder-shape 8192x768] [--regions]

Prints (1) the ladder at one shape (default: the op's default point, scripts/shapes.py): each kernel's best block
size, GB/s, %SOL and gain over the previous step, per dtype; (2) the best kernel at every shape and dtype. Only OK
rows count; a kernel with no OK row at a shape shows why (FAIL, or the first skip reason is not in the CSV:
"skipped"; "not measured" where it has no row there at all).
--regions: instead, the rule's regions (regions_section): each row of the dispatcher's rule (k_regimes, read from
OP_forward.cu) that a stored point of the CSV reaches first (the first row that holds the point's key, scripts/
regimes.py features(), and whose rung ran there), its rung, the points it takes, and at their median point by bytes
the rung's %SOL (best block) beside the best of cuDNN (kernel 0) and the peers (peers.csv beside the CSV).
folder_note(): the paragraph at the top of the summary.md of a results folder that is not the README's GPU (the
Makefile's README_GPU): the GPU and the commits it was measured at, and which folder is the reference.
"""
import argparse
import csv
import gzip
import math
import os
import re
import subprocess
import sys
from collections import OrderedDict

import cli
import csvfile
import regimes
import shapes


# A results folder's run log of an op: OP.log.gz (run_all.py writes it compressed: the logs are most of results/'s
# bytes), or a plain OP.log from before.
def log_path(folder, op):
    """The path of folder's log of op (gzip'd first, else plain); None where it has neither."""
    for name in (f"{op}.log.gz", f"{op}.log"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    return None


def open_log(path):
    """A log, gzip'd or plain, open as text."""
    return gzip.open(path, "rt", errors="replace") if path.endswith(".gz") else open(path, errors="replace")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def best_rows(rows, numbers=None):
    """{(dtype, shape): {kernel: its OK row of least median time, its best block size}}, the points in the order
    the rows first name them (a point with no OK row left out). numbers ({kernel name: number}, a registry): each
    row's kernel by its name, a row whose name the registry does not have left out; None: the CSV's numbers."""
    out = OrderedDict()
    for r in rows:
        if r["status"] != "OK":
            continue
        k = int(r["kernel"]) if numbers is None else numbers.get(r["kernel_name"])
        if k is None:
            continue
        ks = out.setdefault((r["dtype"], r["shape"]), {})
        if k not in ks or float(r["time_ms_median"]) < float(ks[k]["time_ms_median"]):
            ks[k] = r
    return out


# The registry name of every program's dispatcher, its last number: it chooses among the rungs and is none of them.
DISPATCHER = "dispatch"


def is_rung(kernel, name):
    """Whether a kernel is a step of its ladder, the steps a gain is counted between: kernel 1 and up, not cuDNN
    (kernel 0) and not the dispatcher."""
    return kernel >= 1 and name != DISPATCHER


def readme_gpu():
    """The results folder (its name under results/) whose numbers the README shows: README_GPU from the environment
    (`make readme README_GPU=...` passes it there), else the Makefile's `README_GPU ?=` line; None without either."""
    if os.environ.get("README_GPU"):
        return os.environ["README_GPU"]
    try:
        with open(os.path.join(ROOT, "Makefile")) as f:
            m = re.search(r"^README_GPU \?= (\S+)", f.read(), re.M)
    except OSError:
        return None
    return m.group(1) if m else None


def folder_csv_rows(folder):
    """Every row of every CSV of a results folder (the programs', the peers', ncu_check's, dispatch_check's), read
    leniently: the columns differ from one CSV to the next, and only gpu and git_rev are wanted."""
    rows = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".csv"):
            with open(os.path.join(folder, name), newline="", errors="replace") as f:
                rows += list(csv.DictReader(f))
    return rows


def commit_span(revs):
    """The commits of a set of git_rev values in words: "commit X (date)", or "N commits from X (date) to Y (date)",
    oldest to newest by this repository's history; revs it does not know are named after, in sorted order."""
    dated = {}
    hexes = sorted(r for r in revs if re.fullmatch(r"[0-9a-f]{7,40}(-dirty)?", r))
    try:
        # which of them this repository holds (cat-file answers "missing" for the others), then their dates
        check = subprocess.run(["git", "-C", ROOT, "cat-file", "--batch-check=%(objecttype)"], capture_output=True,
                               text=True, timeout=60, input="".join(r.replace("-dirty", "") + "\n" for r in hexes))
        kinds = check.stdout.split("\n")
        known = [r for i, r in enumerate(hexes) if check.returncode == 0 and i < len(kinds) and kinds[i] == "commit"]
        if known:
            out = subprocess.run(["git", "-C", ROOT, "show", "-s", "--format=%ct %cs",
                                  *[r.replace("-dirty", "") for r in known]], capture_output=True, text=True, timeout=60)
            fields = out.stdout.split()
            if out.returncode == 0 and len(fields) == 2 * len(known):
                dated = {r: (int(fields[2 * i]), fields[2 * i + 1]) for i, r in enumerate(known)}
    except (OSError, subprocess.TimeoutExpired):
        pass
    order = sorted(dated, key=lambda r: (dated[r][0], r))
    rest = sorted(r for r in revs if r not in dated)

    def words(r):
        return f"{r} ({dated[r][1]})"

    if len(revs) == 1 and order:
        span = f"commit {words(order[0])}"
    elif len(order) > 1:
        span = f"{len(revs)} commits from {words(order[0])} to {words(order[-1])}"
    elif order:
        span = f"{len(revs)} commits: {words(order[0])}"
    else:
        span = f"{len(revs)} commit{'s' if len(revs) != 1 else ''}"
    if rest:
        span += ("; " if order else ": ") + ", ".join(rest) + (" (not in this repository's history)" if order else "")
    return span


def folder_note(folder):
    """The note at the top of folder/summary.md ("" for none): for a results folder that is not the README's GPU
    (readme_gpu()), while the README's folder stands beside it, the GPU measured there, at which commits (the
    git_rev column of its CSVs), and the reference folder."""
    ref = readme_gpu()
    folder = os.path.normpath(folder)
    ref_folder = os.path.join(os.path.dirname(folder), ref) if ref else None
    if not ref or os.path.basename(folder) == ref or not os.path.isdir(ref_folder):
        return ""
    rows = folder_csv_rows(folder)
    revs = {r["git_rev"] for r in rows if r.get("git_rev")}
    gpus = sorted({r["gpu"] for r in rows if r.get("gpu")})
    if not rows or not revs or not gpus:
        return ""
    ref_gpus = sorted({r["gpu"] for r in folder_csv_rows(ref_folder) if r.get("gpu")})
    inside = os.path.abspath(ref_folder).startswith(ROOT + os.sep)
    shown = os.path.relpath(ref_folder, ROOT) if inside else ref_folder
    return (f"This folder is the record of what was measured on an {' and an '.join(gpus)}, at {commit_span(revs)}, "
            f"as the git_rev column of its CSVs says. The reference GPU is now the {' and the '.join(ref_gpus) or ref} "
            f"({shown}): the README's tables and example output come from there.\n\n")


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


# ---- the rule's regions: the dispatcher's rows of k_regimes (harness/dispatch.h regime_t), as a program holds them
REGIME_NUM = r"(RG_ANY|[0-9.e+-]+)"
REGIME_ROW = re.compile(r'\{(\d+), (-?\d+), ([^,]+), ([^,]+), ' + ", ".join([REGIME_NUM] * 6)
                        + r', (\d+), "([^"]*)"\},')


def regime_rows(text):
    """[(conditions, rung, when)] of the C rows between a source's regimes markers (regimes.BEGIN, END; [] without
    them), each row's conditions as scripts/regimes.py's rule rows hold them (regimes.holds reads them: the numeric
    bounds, rows a SM of the device's SMs, as log2 of the C row's [lo, hi))."""
    if regimes.BEGIN not in text or regimes.END not in text:
        return []
    tv = {c: v for v, c in regimes.TV.items()}
    tl = {c: v for v, c in regimes.TL.items()}
    out = []
    for m in REGIME_ROW.finditer(text[text.index(regimes.BEGIN):text.index(regimes.END)]):
        b, pk, vs, ls, *nums, rung, when = m.groups()
        conds = []
        if int(b):
            conds.append(("bytes", ("in", (int(b),)), False))
        if int(pk) >= 0:
            conds.append(("packs16", ("in", (int(pk),)), False))
        for feat, mask, names in (("variant", vs, tv), ("launch", ls, tl)):
            if mask.strip() != "0":
                conds.append((feat, ("in", tuple(v for c, v in names.items() if f"({c})" in mask)), False))
        for feat, lo, hi in zip(regimes.NUMERIC, nums[0::2], nums[1::2]):
            if lo != "RG_ANY" and float(lo) > 0:
                conds.append((feat, ("lt", math.log2(float(lo))), True))
            if hi != "RG_ANY":
                conds.append((feat, ("lt", math.log2(float(hi))), False))
        out.append((conds, int(rung), when))
    return out


def program_rule(op):
    """regime_rows of OP_forward.cu."""
    with open(os.path.join(ROOT, f"{op}_forward.cu"), errors="replace") as f:
        return regime_rows(f.read())


def reached_row(rule, f, ran):
    """The index of the rule's row a point of features f reaches first: the first that holds it and whose rung ran
    there (ran: the rungs OK there), as a dispatcher passes over a row whose rung refuses the problem; where none
    of those ran, the first that holds it; None where no row does."""
    i = regimes.first_row(rule, f, ran)
    return regimes.first_row(rule, f) if i is None else i


def regions(op, rows, peers, sms, rule, numbers):
    """[(row index, [points it takes], the point at their median by bytes, the rung's best row there or None, the
    best peer's row there or None)] of every row of the rule that a stored point reaches first, in the rule's
    order. rows: the program's CSV rows (kernel 0: cuDNN, a peer); peers: peers.csv's rows (any op: this op's
    taken); sms: the SMs of the device (rows an SM); numbers: the registry, {kernel name: number} (a row whose
    name it does not have left out); the dispatcher (its name DISPATCHER) is no rung."""
    points = best_rows(rows, numbers)
    disp = numbers.get(DISPATCHER)
    size = {}
    for r in rows:
        size.setdefault((r["dtype"], r["shape"]), float(r["bytes"]))
    taken = OrderedDict()
    for key in size:
        f = regimes.features(op, key[0], key[1], sms)
        if f is None:
            continue
        ran = {k for k in points.get(key, {}) if k not in (0, disp)}
        i = reached_row(rule, f, ran)
        if i is not None:
            taken.setdefault(i, []).append(key)
    best_peer = {}
    for r in [r for r in rows if numbers.get(r["kernel_name"]) == 0] + [r for r in peers if r["op"] == op]:
        key = (r["dtype"], r["shape"])
        if r["status"] == "OK" and (key not in best_peer or float(r["sol_pct"]) > float(best_peer[key]["sol_pct"])):
            best_peer[key] = r
    out = []
    for i in sorted(taken):
        pts = sorted(taken[i], key=lambda k: (size[k], k))
        mid = pts[(len(pts) - 1) // 2]
        out.append((i, pts, mid, points.get(mid, {}).get(rule[i][1]), best_peer.get(mid)))
    return out


def regions_table(op, rows, peers, sms, rule, numbers):
    """The markdown lines of regions(): a row of the rule a line."""
    from side_by_side import PEER_COLUMNS  # here: side_by_side imports this module
    names = {k: n for n, k in numbers.items()}
    label = {str(key if key is not None else 0): name for name, key in PEER_COLUMNS}  # cuDNN is kernel 0
    out = ["| row | when | rung | points | median point by bytes | rung %SOL | best peer there | peer %SOL | ratio |",
           "|---:|---|---|---:|---|---:|---|---:|---:|"]
    for i, pts, mid, mine, peer in regions(op, rows, peers, sms, rule, numbers):
        _conds, rung, when = rule[i]
        cells = [f"{i + 1}", when, f"{rung} {names.get(rung, '?')}", f"{len(pts)}", f"{mid[0]} {mid[1]}",
                 f"{float(mine['sol_pct']):.1f}%" if mine else "-",
                 (label.get(str(peer["kernel"]), str(peer["kernel"])) if peer else "-"),
                 f"{float(peer['sol_pct']):.1f}%" if peer else "-",
                 f"{float(mine['sol_pct']) / float(peer['sol_pct']):.2f}x" if mine and peer and
                 float(peer["sol_pct"]) > 0 else "-"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def folder_sms(folder, op):
    """The SMs of the GPU of a results folder: the device line of folder/OP.log (tune_dispatch.swept_sms); None
    without it."""
    import tune_dispatch  # here: tune_dispatch imports this module
    return tune_dispatch.swept_sms(os.path.join(folder, "sweeps"), op)


def regions_section(path):
    """The section "The rule's regions" of a program's CSV (results/<gpu>/OP.csv) for its folder's summary.md: the
    rows of the dispatcher's rule (k_regimes in OP_forward.cu) that a stored point reaches first, the device's SMs
    from OP.log beside it, the peers from peers.csv beside it; "" where the CSV has no rows, the source no rule or
    the log no SMs."""
    rows = load(path)
    op = rows[0]["op"] if rows else None
    if not op or not os.path.exists(os.path.join(ROOT, f"{op}_forward.cu")):
        return ""
    folder = os.path.dirname(os.path.abspath(path))
    rule, sms = program_rule(op), folder_sms(folder, op)
    if not rule or not sms:
        return ""
    peers_path = os.path.join(folder, "peers.csv")
    peers = load(peers_path, kernel_numbers=False) if os.path.exists(peers_path) else []
    table = regions_table(op, rows, peers, sms, rule, regimes.registry(op))
    return (f"The rule's regions: each row of the dispatcher's rule (k_regimes in {op}_forward.cu, {len(rule)} rows) "
            f"that a stored point of {os.path.basename(path)} reaches first (the first row that holds it and whose "
            f"rung ran there; rows an SM on {sms} SMs), the rung it runs and the points it takes; at their median "
            "point by bytes, the rung's %SOL at its best block size, the best of cuDNN (kernel 0) and the peers "
            "(peers.csv) there, and the rung's %SOL over that peer's:\n\n" + "\n".join(table) + "\n")


def main(argv):
    ap = cli.Parser("summary", __doc__)
    ap.add_argument("csv", type=results_csv, help="a program's results CSV")
    ap.add_argument("--ladder-shape", help="the shape of the ladder table")
    ap.add_argument("--regions", action="store_true",
                    help="print the rule's regions instead (regions_section: the CSV's op.log and peers.csv beside it)")
    a = ap.parse_args(argv[1:])
    rows = load(a.csv)
    if not rows:
        print(f"summary: no rows in {a.csv}", file=sys.stderr)
        return 1
    if a.regions:
        text = regions_section(a.csv)
        if not text:
            print(f"summary: no rule of regions for {a.csv} (no {rows[0]['op']}_forward.cu rule, or no SMs in the "
                  f"{rows[0]['op']}.log beside it)", file=sys.stderr)
            return 1
        print(text, end="")
        return 0
    if a.ladder_shape and not any(r["shape"] == a.ladder_shape for r in rows):
        ap.error(f"no rows at --ladder-shape {a.ladder_shape} in {a.csv}")
    print(ladder(rows, a.ladder_shape or shapes.default_shape(rows[0]["op"], rows)))
    print(best_table(rows))
    return 0


if __name__ == "__main__":
    cli.run(main)
