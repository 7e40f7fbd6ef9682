#!/usr/bin/env python3
"""CI tests of scripts/compare.py on fixture CSVs written here."""
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import FIELDS  # noqa: E402


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


failures = 0


def expect(name, cond, out):
    global failures
    if cond:
        print(f"ok   {name}")
    else:
        failures += 1
        print(f"FAIL {name}\n{out}")


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

sys.exit(1 if failures else 0)
