#!/usr/bin/env python3
"""CI test of scripts/tune_dispatch.py: each program's rule of regimes (its k_regimes rows) is the one the stored
dense sweep gives (--check; a backward program's once its sweep is stored), and the C rows it writes hold what the
rule says (scripts/regimes.py c_row)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import regimes  # noqa: E402
import tune_dispatch  # noqa: E402
from fixture_csv import expect, status  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "tune_dispatch.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


for op in tune_dispatch.OPS:
    r = run(op, "--check")
    if os.path.exists(os.path.join(tune_dispatch.SWEEPS, f"{op}_dense.csv")):
        expect(f"{op}: the source's rule of regimes is the stored dense sweep's (--check)", r.returncode == 0,
               r.stdout[-400:] + r.stderr)
    else:  # a backward program's rule stays reasoned until its dense sweep is stored; a forward one has its sweep
        expect(f"{op}: no stored dense sweep: --check says so in one line, exit 2 (a backward program's, only)",
               op.endswith("_backward") and r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and
               f"{op}_dense.csv" in r.stderr, r.stderr)
    with open(regimes.source(op)) as f:
        text = f.read()
    expect(f"{op}: the program's rows sit between the regimes markers --write fills",
           text.count(regimes.BEGIN) == 1 and text.count(regimes.END) == 1)
    named = re.findall(r'"[^"\n]*(?:H100|H200|A100|NVIDIA)[^"\n]*"', text)  # a GPU's name in the code's strings
    expect(f"{op}: no tuned table and no GPU name in the program's code", "tuned rows" not in text and "k_tuned" not
           in text and not named, str(named[:3]))

# a row in C: 16-bit, 16-byte packs, captured launches, 256 <= packs a row < 4096, rows an SM >= 0.0221 -> rung 12
universe = {"bytes": {2, 4}, "packs16": {0, 1}, "variant": {"plain"}, "launch": {"cold", "hot", "pdl"}}
conds = [("bytes", ("in", (2,)), False), ("packs16", ("in", (1,)), False), ("launch", ("in", ("cold",)), True),
         ("launch", ("in", ("pdl",)), True), ("packs", ("lt", 8.0), True), ("packs", ("lt", 12.0), False),
         ("rows_sm", ("lt", -5.5), True)]
row = regimes.c_row(conds, 12, universe)
expect("c_row: element size, packing, the launches left, the bounds as powers of two, the rung, the words",
       row.startswith("{2, 1, 0, TLB(TL_CAPTURED), 256, 4096, 0.0220971, RG_ANY, 0, RG_ANY, 12, \"16-bit, 16-byte packs, "
                      "captured, 256 <= packs a row < 4096, rows an SM >= 0.0221\"},"), row)
lines = regimes.c_rows("layernorm", [(conds, 12, 5, 0.0), ([], 9, 0, 0.0)], universe)
expect("c_rows: the markers around the rows, the command that writes them in the first",
       lines[0].startswith(regimes.BEGIN) and "tune_dispatch.py layernorm --write" in
       lines[0] and lines[-1] == regimes.END and lines[-2].startswith("{0, -1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 9,"),
       "\n".join(lines))
sys.exit(status())
