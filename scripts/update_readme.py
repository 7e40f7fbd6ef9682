#!/usr/bin/env python3
"""Rewrites the README's generated tables from a results folder; running it twice changes nothing.

    scripts/update_readme.py results/<gpu> [--readme README.md] [--check]

Between `<!-- ladder:OP -->` and `<!-- /ladder:OP -->`: the ladder of OP, one line a kernel of the registry in the
header comment of the op's program (OP_forward.cu, or OP.cu for a backward op: its number, name and idea), each
rung at the shape of its region: the stored point of results/<gpu>/OP.csv (any set, any dtype) where its speed over
the fastest earlier rung that ran there is largest (region_rows), with the point, its best block size's GB/s and %SOL
there and that gain, over which rung; kernel 1, cuDNN (kernel 0) and the dispatcher at the first of
scripts/shapes.py's LADDER_SHAPES. A CSV row whose kernel name the registry no longer has is left out. The full
tables (both ladder shapes, the best kernel at every point, the side-by-side with the peers) are in
results/<gpu>/summary.md (scripts/run_all.py); the dispatcher's rule by region, scripts/summary.py --regions.
Between `<!-- standing:OP -->` and `<!-- /standing:OP -->`: one line per GPU, for every folder of results/ that
holds OP, where OP stands there (scripts/standings.py --line). Between `<!-- example:OP -->` and
`<!-- /example:OP -->`: the output of one kernel at one point as it stands in results/<gpu>/OP.log (EXAMPLES below),
with the device, speed-of-light and clock lines of its process.
Text outside the markers is left alone; it carries no measured number (tests/test_readme.py checks both).
--check: exit 1 if the README would change (nothing is written).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import shapes as shapes_mod  # noqa: E402
from registry import header_kernels  # noqa: E402
import standings  # noqa: E402
from summary import best_rows, is_rung, log_path, op_results, open_log, results_folder, row_clock  # noqa: E402

DTYPE_ORDER = ["fp32", "fp16", "bf16"]


CLOCK_WORDS = {"cupti": "the GPU's kernel timestamps", "events": "CUDA events around the launch, an older run"}


def clock_words(rows):
    """How the rows were timed, in words (both clocks where the folder holds both)."""
    return "timed on " + " and ".join(CLOCK_WORDS[c] for c in sorted({row_clock(r) for r in rows if r["status"] == "OK"}))


def status_word(p):
    """A ladder cell without a measurement: a failed validation, a kernel that said skipped, or no row at all."""
    return "FAIL" if p == "FAIL" else "skipped" if p else "not measured"


def first_ladder_shape(op, rows):
    """The first of the op's LADDER_SHAPES the rows hold (else the rows' first shape)."""
    return next((s for s in shapes_mod.LADDER_SHAPES.get(op, []) if any(r["shape"] == s for r in rows)),
                rows[0]["shape"])


def at_shape(points, k, shape):
    """Kernel k's best row at a shape, in the first dtype of DTYPE_ORDER it ran OK there; None where it did not."""
    for d in DTYPE_ORDER + sorted({d for d, _s in points} - set(DTYPE_ORDER)):
        if k in points.get((d, shape), {}):
            return (d, shape), points[(d, shape)][k]
    return None


def region_rows(points, kernels, shape):
    """{kernel: ((dtype, shape), its best row there, gain, the rung it is over)}: each rung (2 and up, not the
    dispatcher) at the stored point where its speed over the fastest earlier rung that ran OK there (a lower number,
    1 and up) is largest, the first such point in stored order where two gain alike. Kernel 1, cuDNN (0), the
    dispatcher and a rung that ran beside no earlier one: at shape (the first ladder shape), in the first dtype it
    ran OK there, gain and over None; such a rung that did not run there at its first OK point. A kernel with no
    OK row where it would be placed is left out. points: summary.best_rows' {(dtype, shape): {kernel: row}}, by
    registry numbers; kernels: the registry, {number: name}."""
    out = {}
    for k, name in sorted(kernels.items()):
        best = None
        if is_rung(k, name) and k > 1:
            for pt, ks in points.items():  # the points in stored order: the first of equal gains is kept
                if k not in ks or float(ks[k]["time_ms_median"]) <= 0:
                    continue
                earlier = [j for j in ks if 1 <= j < k and is_rung(j, kernels.get(j, ""))]
                if not earlier:
                    continue
                j = min(earlier, key=lambda j: (float(ks[j]["time_ms_median"]), j))
                gain = float(ks[j]["time_ms_median"]) / float(ks[k]["time_ms_median"])
                if best is None or gain > best[2]:
                    best = (pt, ks[k], gain, j)
        if best is None:
            got = at_shape(points, k, shape)
            if got is None and is_rung(k, name):  # a rung that ran only elsewhere: its first OK point
                got = next(((pt, ks[k]) for pt, ks in points.items() if k in ks), None)
            if got is not None:
                best = (got[0], got[1], None, None)
        if best is not None:
            out[k] = best
    return out


def ladder_block(op, rows, folder):
    """The README's ladder of op: one line a kernel of its registry, each rung at the point of its region
    (region_rows); rows named in the CSV by a kernel the registry no longer has are left out."""
    ideas = header_kernels(os.path.join(ROOT, f"{shapes_mod.program(op)}.cu"))
    kernels = {k: name for k, (name, _idea) in ideas.items()}
    numbers = {name: k for k, name in kernels.items()}
    points = best_rows(rows, numbers)
    gpu = rows[0]["gpu"]
    shape = first_ladder_shape(op, rows)
    placed = region_rows(points, kernels, shape)
    status = {}  # kernel -> why it has no OK row at shape: FAIL before a skip
    for r in rows:
        k = numbers.get(r["kernel_name"])
        if r["shape"] == shape and k is not None and r["status"] != "OK":
            status[k] = "FAIL" if "FAIL" in (status.get(k), r["status"]) else r["status"]
    out = [f"Each rung at the stored point (any set and dtype of {os.path.relpath(folder, ROOT)}/{op}.csv) where it "
           "gains most over every earlier rung: its speed there over the fastest lower-numbered rung that ran there, "
           f"each kernel at its best block size, on an **{gpu}** ({clock_words(rows)}). Kernel 1, cuDNN (0) and the "
           f"dispatcher (cuDNN and the dispatcher are not rungs of the ladder) at {shape}, as a rung that ran beside "
           "no earlier one (there, else at its first stored point).", "",
           "| # | kernel | the one idea it adds | shape | GB/s | %SOL | gain there |",
           "|---:|---|---|---|---:|---:|---|"]
    for k in sorted(kernels):
        line = f"| {k} | {kernels[k]} | {ideas[k][1]} |"
        if k in placed:
            (d, s), p, gain, over = placed[k]
            line += (f" {d} {s} | {float(p['gbps']):.0f} | {float(p['sol_pct']):.1f}% | "
                     + (f"{gain:.2f}x over {over} |" if gain is not None else "- |"))
        else:
            # a rung with no OK row anywhere is not measured; cuDNN and the dispatcher say why at shape
            line += f" {status_word(None if is_rung(k, kernels[k]) else status.get(k))} | | | |"
        out.append(line)
    return "\n".join(out)


# The README's example output: (op, the kernel's registry name, dtype, the program's "rows R cols C" words).
EXAMPLES = {"layernorm": ("subwarp_regs_vec", "fp32", "rows 8192 cols 768")}


def example_block(op, folder):
    """The last run of the EXAMPLES point in folder/OP.log, with its process's header lines, as a code block; None
    when the log does not hold it."""
    if op not in EXAMPLES:
        return None
    name, dtype, shape = EXAMPLES[op]
    path = log_path(folder, op)
    if not path:
        return None
    with open_log(path) as f:
        lines = f.read().splitlines()
    want = re.compile(rf'^{shapes_mod.program(op)} \| kernel \d+ "{re.escape(name)}" \| {dtype} \| {shape} \|')
    starts = [i for i, line in enumerate(lines) if want.match(line)]
    if not starts:
        return None
    i = starts[-1]
    head = {}
    for line in lines[:i]:
        for key in ("device ", "speed of light:", "clock:"):
            if line.startswith(key):
                head[key] = line
    end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("best:")), None)
    if end is None:
        return None
    body = [head[k] for k in ("device ", "speed of light:", "clock:") if k in head] + lines[i:end + 1]
    return "```\n" + "\n".join(body) + "\n```\n" + f"(from {os.path.relpath(path, ROOT)})"


def standing_block(op, results_root):
    """One line per GPU folder under results_root that holds OP."""
    out = []
    for name in sorted(os.listdir(results_root)):
        folder = os.path.join(results_root, name)
        if os.path.isdir(folder) and os.path.exists(os.path.join(folder, f"{op}.csv")):
            res = standings.folder_standings(folder, [op])
            if op in res:
                out.append(f"- {res[op][0]}")
    return "\n".join(out) if out else None


def replace_block(text, tag, body):
    pat = re.compile(rf"(<!-- {re.escape(tag)} -->\n)(.*?)(<!-- /{re.escape(tag)} -->)", re.S)
    if not pat.search(text):
        return text, False
    return pat.sub(lambda m: m.group(1) + body + "\n" + m.group(3), text), True


def main(argv):
    ap = cli.Parser("update_readme", __doc__)
    ap.add_argument("folder", type=results_folder, help="a results folder, results/<gpu>")
    ap.add_argument("--readme", type=cli.readable_file, default=os.path.join(ROOT, "README.md"),
                    help="the README to rewrite (default: the project's)")
    ap.add_argument("--results", type=cli.folder, default=os.path.join(ROOT, "results"),
                    help="the folder of every GPU's results, for the standing lines (default: the project's results/)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the README is not up to date")
    a = ap.parse_args(argv[1:])
    with open(a.readme) as f:
        text = f.read()
    new = text
    found_any = False
    for op, rows in op_results(a.folder):
        new, found = replace_block(new, f"ladder:{op}", ladder_block(op, rows, a.folder))
        found_any |= found
        for tag, body in ((f"example:{op}", example_block(op, a.folder)),
                          (f"standing:{op}", standing_block(op, a.results))):
            if body is not None:
                new, _found = replace_block(new, tag, body)
    if not found_any:
        print(f"update_readme: no markers for the ops in {a.folder}", file=sys.stderr)
        return 1
    if a.check:
        if new != text:
            print(f"update_readme: {a.readme} is not up to date with {a.folder}", file=sys.stderr)
            return 1
        return 0
    if new != text:
        with open(a.readme, "w") as f:
            f.write(new)
        print(f"update_readme: rewrote the tables of {a.readme}")
    else:
        print(f"update_readme: {a.readme} already up to date")
    return 0


if __name__ == "__main__":
    cli.run(main)
