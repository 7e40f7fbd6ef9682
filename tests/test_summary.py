#!/usr/bin/env python3
"""CI test of scripts/summary.py on a fixture CSV."""
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = subprocess.run([sys.executable, os.path.join(root, "scripts", "summary.py"),
                      os.path.join(root, "tests", "fixtures", "layernorm_small.csv")],
                     capture_output=True, text=True, check=True).stdout
lines = out.splitlines()
# ladder: kernel 1's best block is 64 (100.79 GB/s), kernel 2 gains 5.00x over it, 3 failed, 0 skipped
assert "| 1 | thread-per-row | 64 | 101 | 3.5% | - |" in lines, out
assert "| 2 | three-launch | 128 | 504 | 17.4% | 5.00x |" in lines, out
assert "| 3 | warp-per-row | - | - | - | FAIL |" in lines, out
assert "| 0 | cudnn | - | - | - | skipped |" in lines, out
# best per shape
assert "| fp32 | 8192x768 | 2 three-launch | 128 | 504 | 17.4% | 2900 |" in lines, out
assert "| fp32 | 1024x65536 | 2 three-launch | 128 | 1790 | 59.7% | 3000 |" in lines, out
print("ok")
