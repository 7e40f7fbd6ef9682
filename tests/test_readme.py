#!/usr/bin/env python3
"""The README is a guide whose numbers all come from results/: at most 270 lines; every generated block
(ladder, standing, example) present and up to date with the CSVs and logs (scripts/update_readme.py --check against
the Makefile's README_GPU); and no measured number written by hand outside those blocks (a number with a unit
of time, rate or ratio: us, ms, GB/s, TB/s, %, 1.05x). And the ladder's layout on a small fixture (ladder_checks):
each rung at the stored point where it gains most over the fastest earlier rung that ran there (not the previous
rung's), at its best OK block; kernel 1, cuDNN and the dispatcher at the first ladder shape; a rung with no OK row
"not measured"; a CSV kernel the registry no longer names left out; one line a kernel of the registry. Exit 1 on a
failure, each printed as a FAIL line."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import FIELDS  # noqa: E402  (puts scripts/ on the path too)
import summary  # noqa: E402
import update_readme  # noqa: E402
from registry import header_kernels  # noqa: E402
MAX_LINES = 270
OPS = ["layernorm", "rmsnorm", "batchnorm"]
# A number with a unit that a measurement would carry.
MEASURED = re.compile(r"(?<![\w.])\d+(\.\d+)?\s?(GB/s|TB/s|MB/s|us\b|µs|ms\b|%|x\b)")
# Numbers with such units that are settings, not measurements: the plots' scale, run_all's sick-GPU threshold, the
# timing's long-launch rule.
ALLOWED = ["the copy as 100%", "more than 5% below", "~100 ms of kernel time", "buffer of 2x L2", "of 3x L2",
           "above 100%", "a launch over 100 ms"]


def readme_gpu():
    with open(os.path.join(ROOT, "Makefile")) as f:
        m = re.search(r"^README_GPU \?= (\S+)", f.read(), re.M)
    return m.group(1) if m else None


def row(kernel, name, dtype, shape, ms, block=256, st="OK", nbytes=1e6):
    r = {f: "" for f in FIELDS}
    gbps = nbytes / ms / 1e6 if ms else 0
    r.update(op="layernorm", kernel=str(kernel), kernel_name=name, dtype=dtype, shape=shape, block_size=str(block),
             time_ms_median=str(ms), time_ms_min=str(ms), bytes=str(nbytes), gbps=f"{gbps:.2f}", sol_gbps="4000",
             sol_pct=f"{gbps / 40:.2f}", status=st, gpu="Fixture GPU", clock="cupti")
    return r


def fixture_rows(names):
    """A ladder of rungs 1-5 (names: number -> name), cuDNN and the dispatcher (6) at four points, the first
    LayerNorm ladder shape among them, as (rows, the wanted {kernel: (dtype, shape, ms, gain, over)})."""
    first = "8192x768"
    n = names
    rows = [
        # the first ladder shape: cuDNN, the dispatcher and kernel 1 stay here (the dispatcher is faster elsewhere)
        row(0, n[0], "fp32", first, 1.0, 0), row(6, n[6], "fp32", first, 1.5, 0), row(1, n[1], "fp32", first, 10.0),
        row(2, n[2], "fp32", first, 5.0), row(3, n[3], "fp32", first, 4.0), row(4, n[4], "fp32", first, 10.0),
        # a hot point: 2 gains 4x over 1 (its best block: 2 ms at 128), 3 gains 2x over 2
        row(1, n[1], "bf16", "4x8192:hot", 8.0), row(2, n[2], "bf16", "4x8192:hot", 3.0),
        row(2, n[2], "bf16", "4x8192:hot", 2.0, 128), row(3, n[3], "bf16", "4x8192:hot", 1.0),
        row(6, n[6], "bf16", "4x8192:hot", 0.5, 0),
        # odd rows: 1 and 2 skip; 4 gains 2x over 3, the best earlier rung (3's FAIL row is no time of it)
        row(1, n[1], "fp32", "64x4097", 0, st="SKIP"), row(2, n[2], "fp32", "64x4097", 0, st="SKIP"),
        row(3, n[3], "fp32", "64x4097", 0.5), row(3, n[3], "fp32", "64x4097", 0.1, 512, st="FAIL"),
        row(4, n[4], "fp32", "64x4097", 0.25),
        # here 4 gains 5x over the previous rung (3) but only 1.67x over the best earlier one (2): not its point
        row(1, n[1], "fp32", "16384x4096", 4.0), row(2, n[2], "fp32", "16384x4096", 1.0),
        row(3, n[3], "fp32", "16384x4096", 3.0), row(4, n[4], "fp32", "16384x4096", 0.6),
        # a kernel the registry no longer names, at its old number: left out (it would be 3's best earlier rung)
        row(2, "renumbered_away", "bf16", "4x8192:hot", 0.01),
        # rung 5: skipped everywhere
        row(5, n[5], "fp32", first, 0, st="SKIP"), row(5, n[5], "bf16", "4x8192:hot", 0, st="SKIP"),
    ]
    want = {0: ("fp32", first, 1.0, None, None), 1: ("fp32", first, 10.0, None, None),
            2: ("bf16", "4x8192:hot", 2.0, 4.0, 1), 3: ("bf16", "4x8192:hot", 1.0, 2.0, 2),
            4: ("fp32", "64x4097", 0.25, 2.0, 3), 6: ("fp32", first, 1.5, None, None)}
    return rows, want


def ladder_checks(fails):
    """The ladder's choice of each rung's point on the fixture, through region_rows and through ladder_block."""
    names = {0: "cudnn", 1: "r1", 2: "r2", 3: "r3", 4: "r4", 5: "r5", 6: "dispatch"}
    rows, want = fixture_rows(names)
    placed = update_readme.region_rows(summary.best_rows(rows, {v: k for k, v in names.items()}), names, "8192x768")
    got = {k: (pt[0], pt[1], float(p["time_ms_median"]), g if g is None else round(g, 6), o)
           for k, (pt, p, g, o) in placed.items()}
    if got != want:
        fails.append(f"region_rows on the fixture: {got}, wanted {want}")
    # the same through ladder_block with today's registry of layernorm_forward.cu (its first kernels as the rungs)
    reg = header_kernels(os.path.join(ROOT, "layernorm_forward.cu"))
    if len(reg) < 7 or reg[max(reg)][0] != summary.DISPATCHER:
        fails.append(f"layernorm_forward.cu: no registry of at least 7 kernels ending in the dispatcher ({reg})")
        return
    real = {k: reg[k][0] for k in range(6)}
    real[6] = reg[max(reg)][0]
    rows, want = fixture_rows(real)
    for r in rows:  # the dispatcher under its registry number
        if r["kernel"] == "6":
            r["kernel"] = str(max(reg))
    block = update_readme.ladder_block("layernorm", rows, os.path.join(ROOT, "results", "fixture")).split("\n")
    table = [line for line in block if re.match(r"^\| \d+ \|", line)]
    if [int(line.split("|")[1]) for line in table] != sorted(reg):
        fails.append(f"ladder_block: not one line a kernel of the registry ({len(table)} for {len(reg)})")
    for k, (d, s, ms, gain, over) in want.items():
        kk = max(reg) if k == 6 else k
        cell = (f"| {kk} | {reg[kk][0]} | {reg[kk][1]} | {d} {s} | {1 / ms:.0f} | {1 / ms / 40:.1f}% | "
                + (f"{gain:.2f}x over {over} |" if gain else "- |"))
        if cell not in table:
            fails.append(f"ladder_block: no line {cell!r} in:\n" + "\n".join(table))
    if f"| 5 | {reg[5][0]} | {reg[5][1]} | not measured | | | |" not in table:
        fails.append("ladder_block: a rung with no OK row is not 'not measured'")
    for k in range(7, max(reg)):
        if f"| {k} | {reg[k][0]} | {reg[k][1]} | not measured | | | |" not in table:
            fails.append(f"ladder_block: rung {k}, in no row, is not 'not measured'")
    if "8192x768" not in block[0] or "Fixture GPU" not in block[0]:
        fails.append(f"ladder_block: the sentence does not name the GPU and the first ladder shape: {block[0]}")


def main():
    fails = []
    ladder_checks(fails)
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    n = text.count("\n")
    if n > MAX_LINES:
        fails.append(f"README.md has {n} lines (at most {MAX_LINES})")
    for op in OPS:
        for tag in ("ladder", "standing"):
            m = re.search(rf"<!-- {tag}:{op} -->\n(.*?)<!-- /{tag}:{op} -->", text, re.S)
            if not m or not m.group(1).strip():
                fails.append(f"README.md: the generated block {tag}:{op} is missing or empty")
    outside = re.sub(r"<!-- (\w+):(\w+) -->\n.*?<!-- /\1:\2 -->", "", text, flags=re.S)
    for allowed in ALLOWED:
        outside = outside.replace(allowed, "")
    for i, line in enumerate(outside.split("\n")):
        for m in MEASURED.finditer(line):
            fails.append(f"README.md: a number written by hand outside the generated blocks: '{m.group(0)}' in: "
                         f"{line.strip()[:100]}")
    gpu = readme_gpu()
    if not gpu:
        fails.append("Makefile: no README_GPU")
    else:
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "update_readme.py"),
                            os.path.join(ROOT, "results", gpu), "--check"], capture_output=True, text=True)
        if r.returncode != 0:
            fails.append(f"README.md disagrees with results/: {(r.stderr or r.stdout).strip()} (run make readme)")
    for f_ in fails:
        print(f"FAIL {f_}")
    if not fails:
        print("PASS README: within its length, every number generated from results/ and up to date")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
