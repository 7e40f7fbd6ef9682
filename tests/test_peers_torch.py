#!/usr/bin/env python3
"""scripts/peers.py's PyTorch side on small problems: every op and variant, eager and torch.compile, passes its
float64 check; a corrupted output fails it; torch.compile makes one graph and does not recompile on the next
call. Runs on the GPU where PyTorch sees one, else on the CPU; without PyTorch it is skipped (exit 77), as in
CI. (The GPU machines have PyTorch: the GPU suite runs it there.)"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("PyTorch is not installed here")
    sys.exit(77)
import peers  # noqa: E402
from fixture_csv import expect, status  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

device = "cuda" if torch.cuda.is_available() else "cpu"
CASES = [("layernorm", ["-N", "64", "-C", "768"]),
         ("rmsnorm", ["-N", "64", "-C", "512"]),
         ("rmsnorm", ["-N", "16", "--heads", "4", "--head-dim", "64"]),
         ("rmsnorm", ["-N", "64", "-C", "256", "--fused-add"]),
         ("rmsnorm", ["-N", "64", "-C", "256", "--weight-offset", "1"]),
         ("batchnorm", ["-N", "256", "-C", "32"]),
         ("batchnorm", ["--layout", "nchw", "-N", "4", "-C", "8", "--height", "7", "--width", "7"]),
         ("batchnorm", ["--layout", "nhwc", "-N", "4", "-C", "8", "--height", "7", "--width", "7"]),
         ("batchnorm", ["-N", "256", "-C", "32", "--inference"])]

for op, args in CASES:
    p = peers.parse_point(op, args)
    for dtype in ["fp32", "bf16"]:
        name = f"{op} {' '.join(args)} {dtype} on {device}"
        t, fn, reset, check = peers.build_case(torch, F, p, dtype, device)
        out = fn(t)
        expect(f"eager passes: {name}", check(t, out)[2] == 0)
        if reset:
            reset(t)
        out = fn(t)
        out["y"] = out["y"] * 1.05  # 5% off: outside every dtype's tolerance
        expect(f"a corrupted y fails: {name}", check(t, out)[2] > 0)
        torch._dynamo.reset()
        counters.clear()
        compiled = torch.compile(fn, fullgraph=True, dynamic=False)
        if reset:
            reset(t)
        out = compiled(t)
        expect(f"torch.compile: one graph: {name}", counters["stats"]["unique_graphs"] == 1,
               str(counters["stats"]["unique_graphs"]))
        expect(f"torch.compile passes: {name}", check(t, out)[2] == 0)
        try:
            with peers._no_recompile(torch, "torch.compile"):
                compiled(t)
            expect(f"torch.compile: no recompile on the next call: {name}", True)
        except Exception as e:  # noqa: BLE001
            expect(f"torch.compile: no recompile on the next call: {name}", False, str(e)[:200])

sys.exit(status())
