#!/usr/bin/env python3
"""CI test of scripts/plot.py: the three charts from fixture CSVs. Needs matplotlib (the Makefile's venv);
exits 77 (skipped, with a message) only where matplotlib is not installed and could not be."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import matplotlib  # noqa: F401
except ImportError:
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    if os.path.exists(venv) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(ROOT, ".venv")):
        os.execv(venv, [venv] + sys.argv)
    print("SKIP: matplotlib is not installed and `make venv` could not install it (no PyPI?)")
    sys.exit(77)

sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import write_csv  # noqa: E402

with tempfile.TemporaryDirectory() as d:
    folder = os.path.join(d, "fixture-gpu")
    write_csv(os.path.join(folder, "layernorm.csv"), "Fixture GPU", "sm_90", [10, 40, 80, 95])
    # a second shape so that %SOL-against-C has two points, and a peers file with torch rows
    with open(os.path.join(folder, "layernorm.csv")) as f:
        lines = f.read().splitlines()
    extra = [l.replace("8192x768", "16384x4096") for l in lines[1:]]
    with open(os.path.join(folder, "layernorm.csv"), "a") as f:
        f.write("\n".join(extra) + "\n")
    with open(os.path.join(folder, "peers.csv"), "w") as f:
        f.write(lines[0] + "\n")
        f.write(lines[1].replace(",0,k0,", ",torch,layer_norm,", 1) + "\n")
    out = os.path.join(d, "plots")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot.py"), folder, "--out", out],
                       capture_output=True, text=True)
    want = ["layernorm_sweep_fp32_8192x768.png", "layernorm_sol_vs_c_fp32.png", "layernorm_ladder_fp32_8192x768.png"]
    ok = r.returncode == 0
    for w in want:
        p = os.path.join(out, w)
        good = os.path.exists(p) and os.path.getsize(p) > 5000 and open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
        print(f"{'ok  ' if good else 'FAIL'} {w}")
        ok &= good
    if not ok:
        print(r.stdout, r.stderr)
    sys.exit(0 if ok else 1)
