#!/usr/bin/env python3
"""Rewrites the README's generated tables from a results folder; running it twice changes nothing.

    scripts/update_readme.py results/<gpu> [--readme README.md] [--check]

Between `<!-- ladder:OP -->` and `<!-- /ladder:OP -->`: the ladder of OP, one table: each kernel, its idea from
the header comment of OP_forward.cu, and its best GB/s, %SOL and gain over the previous kernel at the first of
scripts/shapes.py's LADDER_SHAPES, a column group per dtype. The full tables (both ladder shapes, the best
kernel at every point, the side-by-side with the peers) are in results/<gpu>/summary.md (scripts/run_all.py).
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
from summary import best_points, is_rung, op_results, results_folder, row_clock  # noqa: E402

DTYPE_ORDER = ["fp32", "fp16", "bf16"]


CLOCK_WORDS = {"cupti": "the GPU's kernel timestamps", "events": "CUDA events around the launch, an older run"}


def clock_words(rows):
    """How the rows were timed, in words (both clocks where the folder holds both)."""
    return "timed on " + " and ".join(CLOCK_WORDS[c] for c in sorted({row_clock(r) for r in rows if r["status"] == "OK"}))


def status_word(p):
    """A ladder cell without a measurement: a failed validation, a kernel that said skipped, or no row at all."""
    return "FAIL" if p == "FAIL" else "skipped" if p else "not measured"


def ladder_block(op, rows, folder):
    ideas = header_kernels(os.path.join(ROOT, f"{op}_forward.cu"))
    names = {int(r["kernel"]): r["kernel_name"] for r in rows}
    for k, (name, _idea) in ideas.items():
        names.setdefault(k, name)
    best = best_points(rows)
    gpu = rows[0]["gpu"]
    shape = next((s for s in shapes_mod.LADDER_SHAPES.get(op, []) if any(r["shape"] == s for r in rows)),
                 rows[0]["shape"])
    dtypes = sorted({r["dtype"] for r in rows if r["shape"] == shape}, key=DTYPE_ORDER.index)
    out = [f"{shape} on an **{gpu}** ({os.path.relpath(folder, ROOT)}/{op}.csv, {clock_words(rows)}), best block size "
           "of each kernel; gain = over the previous rung that ran (cuDNN and the dispatcher are not rungs of the ladder).", ""]
    head = "| # | kernel | the one idea it adds |" + "".join(f" {d} GB/s | %SOL | gain |" for d in dtypes)
    out += [head, "|---:|---|---|" + "---:|---:|---:|" * len(dtypes)]
    prev = {d: None for d in dtypes}
    for k in sorted(names):
        line = f"| {k} | {names[k]} | {ideas.get(k, ('', ''))[1]} |"
        for d in dtypes:
            p = best.get((d, shape, k))
            if isinstance(p, dict):
                g = float(p["gbps"])
                step = is_rung(k, names[k])
                gain = f"{g / prev[d]:.2f}x" if step and prev[d] else "-"
                line += f" {g:.0f} | {float(p['sol_pct']):.1f}% | {gain} |"
                if step:
                    prev[d] = g
            else:
                line += f" {status_word(p)} | | |"
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
    path = os.path.join(folder, f"{op}.log")
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    want = re.compile(rf'^{op}_forward \| kernel \d+ "{re.escape(name)}" \| {dtype} \| {shape} \|')
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
