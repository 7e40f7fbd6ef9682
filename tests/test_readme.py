#!/usr/bin/env python3
"""The README is a guide whose numbers all come from results/: at most 250 lines; every generated block
(ladder, standing, example) present and up to date with the CSVs and logs (scripts/update_readme.py --check against
the Makefile's README_GPU); and no measured number written by hand outside those blocks (a number with a unit
of time, rate or ratio: us, ms, GB/s, TB/s, %, 1.05x). Exit 1 on a failure, each printed as a FAIL line."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 250
OPS = ["layernorm", "rmsnorm", "batchnorm"]
# A number with a unit that a measurement would carry.
MEASURED = re.compile(r"(?<![\w.])\d+(\.\d+)?\s?(GB/s|TB/s|MB/s|us\b|µs|ms\b|%|x\b)")
# Numbers with such units that are settings, not measurements: the plots' scale, run_all's sick-GPU threshold.
ALLOWED = ["the copy as 100%", "more than 5% below", "~100 ms of kernel time", "buffer of 2x L2", "of 3x L2",
           "above 100%"]


def readme_gpu():
    with open(os.path.join(ROOT, "Makefile")) as f:
        m = re.search(r"^README_GPU \?= (\S+)", f.read(), re.M)
    return m.group(1) if m else None


def main():
    fails = []
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
