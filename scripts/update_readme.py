#!/usr/bin/env python3
"""Rewrites the README's generated tables from a results folder; running it twice changes nothing.

    scripts/update_readme.py results/<gpu> [--readme README.md] [--check]

Between `<!-- ladder:OP -->` and `<!-- /ladder:OP -->`: the ladder of OP (kernel, its idea from the
header comment of OP_forward.cu, best GB/s, %SOL and gain over the previous kernel, at the shapes of
scripts/shapes.py LADDER_SHAPES), one table per dtype. Between `<!-- best:OP -->` and `<!-- /best:OP -->`:
the best kernel of the ladder (1 and up) at every standard shape. Between `<!-- peers:OP -->` and `<!-- /peers:OP -->`: the side-by-side
table of scripts/side_by_side.py (best kernel, cuDNN, torch, torch.compile, Liger). Text outside the markers is left alone. --check: exit 1 if the
README would change (nothing is written).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import shapes as shapes_mod  # noqa: E402
from registry import header_kernels  # noqa: E402
from side_by_side import folder_tables  # noqa: E402
from summary import best_points, best_table, op_results, results_folder, row_clock  # noqa: E402

DTYPE_ORDER = ["fp32", "fp16", "bf16"]


CLOCK_WORDS = {"cupti": "the GPU's kernel timestamps", "events": "CUDA events around the launch, an older run"}


def clock_words(rows):
    """How the rows were timed, in words (both clocks where the folder holds both)."""
    return "timed on " + " and ".join(CLOCK_WORDS[c] for c in sorted({row_clock(r) for r in rows if r["status"] == "OK"}))


def ladder_block(op, rows, folder):
    ideas = header_kernels(os.path.join(ROOT, f"{op}_forward.cu"))
    names = {int(r["kernel"]): r["kernel_name"] for r in rows}
    for k, (name, _idea) in ideas.items():
        names.setdefault(k, name)
    best = best_points(rows)
    gpu = rows[0]["gpu"]
    revs = ", ".join(sorted({r["git_rev"] for r in rows}))
    shapes = list(shapes_mod.LADDER_SHAPES.get(op, []))
    shapes = [s for s in shapes if any(r["shape"] == s for r in rows)] or [rows[0]["shape"]]
    out = [f"Measured on an **{gpu}** ({os.path.relpath(folder, ROOT)}/, commit {revs}; {clock_words(rows)}), best "
           "block size of each kernel; gain = over the previous kernel that ran at that shape.", ""]
    for dtype in sorted({r["dtype"] for r in rows}, key=DTYPE_ORDER.index):
        head = "| # | kernel | the one idea it adds |"
        rule = "|---:|---|---|"
        for s in shapes:
            head += f" {s} {dtype} GB/s | %SOL | gain |"
            rule += "---:|---:|---:|"
        out += [head, rule]
        prev = {s: None for s in shapes}
        for k in sorted(names):
            line = f"| {k} | {names[k]} | {ideas.get(k, ('', ''))[1]} |"
            for s in shapes:
                p = best.get((dtype, s, k))
                if isinstance(p, dict):
                    g = float(p["gbps"])
                    gain = f"{g / prev[s]:.2f}x" if prev[s] else "-"
                    line += f" {g:.0f} | {float(p['sol_pct']):.1f}% | {gain} |"
                    prev[s] = g
                else:
                    line += f" {'FAIL' if p == 'FAIL' else 'skipped'} | | |"
            out.append(line)
        out.append("")
    return "\n".join(out).rstrip()


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
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the README is not up to date")
    a = ap.parse_args(argv[1:])
    with open(a.readme) as f:
        text = f.read()
    new = text
    found_any = False
    side = folder_tables(a.folder)
    for op, rows in op_results(a.folder):
        new, f1 = replace_block(new, f"ladder:{op}", ladder_block(op, rows, a.folder))
        # the ladder's own kernels (1 and up): cuDNN, kernel 0, is a peer, in the side-by-side table
        new, f2 = replace_block(new, f"best:{op}", best_table([r for r in rows if r["kernel"] != "0"]).strip())
        new, f3 = replace_block(new, f"peers:{op}", "\n".join(side[op][0]))
        found_any |= f1 or f2 or f3
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
