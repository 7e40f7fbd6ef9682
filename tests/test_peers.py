#!/usr/bin/env python3
"""CI tests of scripts/peers.py's pure-Python parts and of scripts/side_by_side.py (no PyTorch, no GPU)."""
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import peers  # noqa: E402
import shapes  # noqa: E402
import side_by_side  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import FIELDS, expect, status  # noqa: E402


# Every standard point of every op is understood (the shape list is shapes.py's, not a copy).
for op in peers.OPS:
    for dtype, args, label in shapes.points(op):
        try:
            p = peers.parse_point(op, args)
            ok = peers.bytes_for(p, dtype) > 0
        except Exception as e:  # noqa: BLE001
            ok, p = False, e
        expect(f"peers: parses {op} {dtype} {label}", ok, str(p))

# Bytes as the programs count them (hand-computed from each program's setup()).
ln = peers.parse_point("layernorm", ["-N", "8192", "-C", "768"])
expect("bytes: layernorm 8192x768 fp32 = x, y, weight, bias, mean, rstd",
       peers.bytes_for(ln, "fp32") == 2 * 8192 * 768 * 4 + 2 * 768 * 4 + 2 * 8192 * 4)
qk = peers.parse_point("rmsnorm", ["-N", "4096", "--heads", "32", "--head-dim", "128"])
expect("QK view: tokens 4096, stride 3*H*D by default", qk["tokens"] == 4096 and qk["S"] == 3 * 32 * 128)
expect("bytes: QK-norm bf16 counts q (not all of qkv), y, weight, rstd",
       peers.bytes_for(qk, "bf16") == 2 * 131072 * 128 * 2 + 128 * 2 + 131072 * 4)
fa = peers.parse_point("rmsnorm", ["-N", "8192", "-C", "4096", "--fused-add"])
expect("bytes: fused add adds the residual read and written",
       peers.bytes_for(fa, "bf16") - peers.bytes_for(peers.parse_point("rmsnorm", ["-N", "8192", "-C", "4096"]), "bf16")
       == 2 * 8192 * 4096 * 2)
bn = peers.parse_point("batchnorm", ["--layout", "nchw", "-N", "128", "-C", "64", "--height", "112", "--width", "112"])
expect("bytes: batchnorm NCHW training = x, y and 8 fp32 per channel",
       peers.bytes_for(bn, "bf16") == 2 * 128 * 64 * 112 * 112 * 2 + 8 * 4 * 64)
bn["inference"] = True
expect("bytes: batchnorm inference = x, y and 4 fp32 per channel",
       peers.bytes_for(bn, "fp32") == 2 * 128 * 64 * 112 * 112 * 4 + 4 * 4 * 64)
try:
    peers.parse_point("layernorm", ["--bogus"])
    expect("an unknown program argument is an error", False)
except ValueError:
    expect("an unknown program argument is an error", True)

# merge: rows of the (op, peer) pairs re-run are replaced, the others kept
old = [{"op": "layernorm", "kernel": "torch", "shape": "a"}, {"op": "layernorm", "kernel": "torch.compile", "shape": "a"},
       {"op": "rmsnorm", "kernel": "torch", "shape": "a"}]
new = [{"op": "layernorm", "kernel": "torch", "shape": "b"}]
m = peers.merge_rows(old, new)
expect("merge: replaces layernorm/torch, keeps the rest",
       [(r["op"], r["kernel"], r["shape"]) for r in m]
       == [("layernorm", "torch.compile", "a"), ("rmsnorm", "torch", "a"), ("layernorm", "torch", "b")], str(m))

# Without PyTorch it says so, writes nothing and exits 0 (run with a python that cannot import torch).
with tempfile.TemporaryDirectory() as tmp:
    shim = os.path.join(tmp, "shim")
    os.makedirs(shim)
    with open(os.path.join(shim, "torch.py"), "w") as f:
        f.write("raise ImportError('no torch in this test')\n")
    env = dict(os.environ, PYTHONPATH=shim)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers.py"), "--out", os.path.join(tmp, "res")],
                       capture_output=True, text=True, env=env)
    expect("no PyTorch: exit 0, says so, no rows", r.returncode == 0 and "PyTorch is not installed" in r.stderr
           and not os.path.exists(os.path.join(tmp, "res")), r.stderr)


# side_by_side on a fixture: program rows (kernels 0..2) and peer rows
def row(kernel, name, gbps, sol_pct, bytes_=1e8, status="OK", shape="8192x4096", dtype="fp32", block=256):
    return {"op": "rmsnorm", "kernel": kernel, "kernel_name": name, "dtype": dtype, "shape": shape,
            "block_size": block, "time_ms_median": 0.1, "time_ms_min": 0.1, "bytes": bytes_, "gbps": gbps,
            "sol_gbps": 3000, "sol_pct": sol_pct, "max_abs_err": 0, "max_rel_err": 0, "status": status,
            "gpu": "G", "sm": "sm_90", "cuda": "13.0", "git_rev": "x"}


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


with tempfile.TemporaryDirectory() as tmp:
    write(os.path.join(tmp, "rmsnorm.csv"), [row(0, "cudnn", 2000, 66.7, block=0), row(1, "a", 1000, 33.3),
                                              row(2, "b", 2700, 90.0), row(2, "b", 2400, 80.0, block=512),
                                              row(1, "a", 0, 0, shape="32768x128", status="FAIL")])
    write(os.path.join(tmp, "peers.csv"), [row("torch", "F.rms_norm", 1800, 60.0, block=0),
                                           row("torch.compile", "F.rms_norm", 2500, 83.3, block=0)])
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "side_by_side.py"), tmp],
                       capture_output=True, text=True)
    line = "| fp32 | 8192x4096 | 2 b | 2700 | 90.0% | 2000 | 66.7% | 1800 | 60.0% | 2500 | 83.3% | 1.08x |"
    expect("side_by_side: best kernel (1 and up) against cuDNN, torch, torch.compile", r.returncode == 0
           and line in r.stdout.splitlines(), r.stdout + r.stderr)
    expect("side_by_side: a shape where no kernel passed says so",
           "| fp32 | 32768x128 | none OK | - | - | - | | - | | - | | - |" in r.stdout.splitlines(), r.stdout)
    write(os.path.join(tmp, "peers.csv"), [row("torch", "F.rms_norm", 1800, 60.0, bytes_=2e8, block=0)])
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "side_by_side.py"), tmp],
                       capture_output=True, text=True)
    expect("side_by_side: a peer counting other bytes is an error", r.returncode == 1 and "bytes differ" in r.stderr,
           r.stderr)

sys.exit(status())
