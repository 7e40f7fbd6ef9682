"""Shared by the script tests: small results CSVs (the programs' schema: scripts/summary.py CSV_FIELDS) and
expect(), which counts failures."""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from summary import CSV_FIELDS as FIELDS  # noqa: E402


def write_csv(path, gpu, sm, sol_pcts):
    """One OK row per kernel 0..len(sol_pcts)-1 at layernorm fp32 8192x768, block 256, copy 3000 GB/s."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for k, pct in enumerate(sol_pcts):
            w.writerow({"op": "layernorm", "kernel": k, "kernel_name": f"k{k}", "dtype": "fp32", "shape": "8192x768",
                        "block_size": 256, "time_ms_median": 0.02, "time_ms_min": 0.02, "bytes": 5e7,
                        "gbps": 30 * pct, "sol_gbps": 3000, "sol_pct": pct, "max_abs_err": 0, "max_rel_err": 0,
                        "status": "OK", "gpu": gpu, "sm": sm, "cuda": "13.0", "git_rev": "x",
                        "time_ms_launch_median": 0.022, "time_ms_launch_min": 0.021, "clock": "cupti"})


failures = 0


def expect(name, cond, detail=""):
    """Prints ok/FAIL for one check; the test exits with status(), 1 when any check failed."""
    global failures
    print(f"{'ok  ' if cond else 'FAIL'} {name}" + ("" if cond else f": {detail}"))
    failures += 0 if cond else 1


def status():
    return 1 if failures else 0
