#!/usr/bin/env python3
"""CI tests of scripts/compare.py on fixture CSVs written here."""
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import FIELDS, expect, status  # noqa: E402


def row(kernel, block, gbps, sol_gbps=3000.0, status="OK", gpu="GPU A", shape="8192x768", dtype="fp32"):
    return {"op": "layernorm", "kernel": kernel, "kernel_name": f"k{kernel}", "dtype": dtype, "shape": shape,
            "block_size": block, "time_ms_median": 0.1, "time_ms_min": 0.1, "bytes": 1e6, "gbps": gbps,
            "sol_gbps": sol_gbps, "sol_pct": 100.0 * gbps / sol_gbps, "max_abs_err": 0, "max_rel_err": 0,
            "status": status, "gpu": gpu, "sm": "sm_90", "cuda": "13.0", "git_rev": "x"}


BASE = [row(7, 128, 2000.0), row(7, 256, 2400.0), row(9, 256, 2100.0), row(9, 512, 1900.0),
        row(7, 256, 1500.0, shape="1024x65536")]


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


def run(base_rows, new_rows, *extra):
    with tempfile.TemporaryDirectory() as d:
        b, n = os.path.join(d, "base.csv"), os.path.join(d, "new.csv")
        write(b, base_rows)
        write(n, new_rows)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "compare.py"), b, n, *extra],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr


rc, out = run(BASE, BASE)
expect("identical runs pass", rc == 0 and "verdict: PASS" in out, out)

slow = [dict(r) for r in BASE]
slow[1]["gbps"] = 2400.0 * 0.8  # kernel 7's best block 20% slower (best becomes 2000 at 128: -16.7%)
rc, out = run(BASE, slow)
expect("a 20% slowdown of the best block fails", rc == 1 and "slower by 16.7%" in out and "SLOWER" in out, out)

small = [dict(r) for r in BASE]
small[1]["gbps"] = 2400.0 * 0.97
rc, out = run(BASE, small)
expect("a 3% slowdown is within the 5% threshold", rc == 0, out)

failed = [dict(r) for r in BASE]
failed[3]["status"] = "FAIL"
rc, out = run(BASE, failed)
expect("a FAIL row fails", rc == 1 and "validation FAIL: layernorm kernel 9" in out, out)

missing = [r for r in BASE if r["kernel"] != 9]
rc, out = run(BASE, missing)
expect("a missing kernel fails", rc == 1 and "missing: layernorm kernel 9" in out, out)

other_gpu = [row(r["kernel"], r["block_size"], r["gbps"] * 1.4, sol_gbps=3000.0 * 1.4, gpu="GPU B", shape=r["shape"])
             for r in BASE]
rc, out = run(BASE, other_gpu)
expect("another GPU, same %SOL, passes (compared in %SOL)", rc == 0 and "comparing %SOL" in out, out)

other_gpu_slow = [dict(r) for r in other_gpu]
other_gpu_slow[1]["gbps"] = 2400.0 * 1.4 * 0.8
other_gpu_slow[1]["sol_pct"] = 100.0 * other_gpu_slow[1]["gbps"] / (3000.0 * 1.4)
rc, out = run(BASE, other_gpu_slow)
expect("another GPU with a %SOL drop fails", rc == 1 and "(%SOL)" in out, out)

quick = [r for r in BASE if r["shape"] == "8192x768"]
rc, out = run(BASE, quick)
expect("a shape NEW did not run is a note, not a failure", rc == 0 and "not run in NEW" in out, out)
rc, out = run(BASE, quick, "--strict")
expect("... and a failure with --strict", rc == 1, out)

rc, out = run(BASE, BASE, "--threshold", "0.5")
expect("threshold option accepted", rc == 0 and "threshold 50%" in out, out)

# The summary comes first: the problems counted per op and kernel, the verdict, then the tables
mixed = [r for r in BASE if (r["kernel"], r["block_size"]) != (9, 256)]  # kernel 9 block 256 missing
mixed = [dict(r, gbps=1920.0) if (r["kernel"], r["block_size"]) == (7, 256) else r for r in mixed]  # 7 slower
mixed = [dict(r, status="FAIL") if (r["kernel"], r["block_size"]) == (9, 512) else r for r in mixed]  # 9 fails
rc, out = run(BASE, mixed)
lines = out.splitlines()
expect("summary: kernel 7 compared at 2 points, 1 slower",
       rc == 1 and "| layernorm | 7 k7 | 2 | 1 | 0 | 0 |" in lines, out)
expect("summary: kernel 9 (no OK row left) compared at none, 1 point missing, 1 validation FAIL",
       "| layernorm | 9 k9 | 0 | 0 | 1 | 1 |" in lines, out)
verdict = next((i for i, l in enumerate(lines) if l.startswith("verdict:")), None)
expect("summary first: the counts, then the verdict, then the tables and problems",
       lines[2].startswith("| op | kernel | points compared | slower | missing | validation FAIL |")
       and verdict is not None and "FAIL (3 problem(s)" in lines[verdict]
       and all(l.startswith("|") for l in lines[2:6])
       and min(i for i, l in enumerate(lines) if l.startswith("==") or "PROBLEM" in l) > verdict, out)

# --best-only: at each point the best of kernels 1 and up, whichever it is, and cuDNN (kernel 0) apart; another GPU
# (%SOL). BASE: cuDNN 60%, kernel 1 70%, kernel 2 80% (the best).
def gpu_b(kernel, sol_pct, **kw):
    return row(kernel, 256, 40.0 * sol_pct, sol_gbps=4000.0, gpu="GPU B", **kw)


ladder = [row(0, 0, 1800.0), row(1, 256, 2100.0), row(2, 256, 2400.0)]
swapped = [gpu_b(0, 60), gpu_b(1, 82), gpu_b(2, 60)]  # kernel 2 fell behind, kernel 1 is the best now
rc, out = run(ladder, swapped)
expect("every kernel: kernel 2's drop fails", rc == 1 and "slower by 25.0% (%SOL): layernorm kernel 2" in out, out)
rc, out = run(ladder, swapped, "--best-only")
lines = out.splitlines()
expect("--best-only: the best kernel changed and held its %SOL: passes, one row for the ladder, one for cuDNN",
       rc == 0 and "| layernorm | best of 1 and up | 1 | 0 | 0 | 0 |" in lines
       and "| layernorm | 0 k0 | 1 | 0 | 0 | 0 |" in lines and "| layernorm | 2 k2 |" not in out, out)
expect("--best-only: the table names the best kernel of each run",
       "| layernorm | best of 1 and up (2 k2 -> 1 k1) | fp32 | 8192x768 | 80.0 | 82.0 | +2.5% | ok |" in lines, out)
rc, out = run(ladder, [gpu_b(0, 60), gpu_b(1, 70), gpu_b(2, 72)], "--best-only")
expect("--best-only: the best dropping fails", rc == 1 and "| layernorm | best of 1 and up | 1 | 1 | 0 | 0 |" in out
       and "slower by 10.0% (%SOL): layernorm best of 1 and up (2 k2) fp32 8192x768" in out, out)
rc, out = run(ladder, [gpu_b(0, 50), gpu_b(2, 80)], "--best-only")
expect("--best-only: cuDNN dropping fails on its own row; a kernel not best and gone is no problem",
       rc == 1 and "| layernorm | 0 k0 | 1 | 1 | 0 | 0 |" in out and "missing" not in out.split("verdict")[1], out)
rc, out = run(ladder, [gpu_b(0, 60), gpu_b(1, 0, status="SKIP"), gpu_b(2, 0, status="FAIL")], "--best-only")
expect("--best-only: no kernel of the ladder OK: its FAIL counts on the ladder's row",
       rc == 1 and "| layernorm | best of 1 and up | 0 | 0 | 0 | 1 |" in out
       and "validation FAIL: layernorm kernel 2 k2" in out, out)
rc, out = run(ladder, [gpu_b(0, 60), gpu_b(1, 0, status="SKIP")], "--best-only")
expect("--best-only: no kernel of the ladder OK and none failed: missing",
       rc == 1 and "| layernorm | best of 1 and up | 0 | 0 | 1 | 0 |" in out
       and "no longer OK: layernorm best of 1 and up fp32 8192x768" in out, out)

sys.exit(status())
