#!/usr/bin/env python3
"""CI test of tools/: every tool is executable, answers --help, and meets bad input with one line on stderr, exit 2,
no traceback; ncu_rows.py reads an Nsight Compute CSV a line a kernel."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import expect, status  # noqa: E402

T = os.path.join(ROOT, "tools")
BAD = {"ncu_rows.py": [["/nonexistent", "T"], [T], ["--bogus"]],
       "remeasure.sh": [[], ["bogus"], ["rungs"], ["rungs", "nosuch:1"], ["rungs", "rmsnorm:x"]]}
expect("every tool of tools/ is checked here", set(os.listdir(T)) == set(BAD), set(os.listdir(T)) ^ set(BAD))
for name, bads in sorted(BAD.items()):
    path = os.path.join(T, name)
    expect(f"{name}: executable", os.access(path, os.X_OK))
    r = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=60)
    expect(f"{name} --help: exit 0, usage", r.returncode == 0 and "usage" in r.stdout.lower(), r.stdout + r.stderr)
    for args in bads:
        r = subprocess.run([path, *args], capture_output=True, text=True, timeout=60, cwd=ROOT)
        lines = r.stderr.strip().splitlines()
        expect(f"{name} {' '.join(args) or '(no arguments)'}: exit 2, one line, no traceback",
               r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, f"{r.returncode} {r.stderr}")
with tempfile.TemporaryDirectory() as d:
    csv_path = os.path.join(d, "ncu.csv")
    with open(csv_path, "w") as f:
        f.write('"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                '"0","1","layernorm_k","gpu__time_duration.sum","usecond","12.5"\n')
    r = subprocess.run([os.path.join(T, "ncu_rows.py"), csv_path, "T"], capture_output=True, text=True, timeout=60)
    expect("ncu_rows.py: a line for the kernel of a small CSV", r.returncode == 0 and "layernorm_k" in r.stdout,
           r.stdout + r.stderr)
sys.exit(status())
