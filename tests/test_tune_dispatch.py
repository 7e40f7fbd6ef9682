#!/usr/bin/env python3
"""CI test of scripts/tune_dispatch.py: the dispatchers' tuned rows in layernorm_forward.cu and rmsnorm_forward.cu
are the ones the stored sweeps give (--check), and the derivation picks, at each point, the rung and block size
whose worst ratio to the best over the GPUs of an architecture and the timing modes is the smallest, a row of
PDL launches where their best differs, and a row of one GPU alone where the shared row costs it more than 1%."""
import csv
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import tune_dispatch  # noqa: E402
from fixture_csv import FIELDS, expect, status  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "tune_dispatch.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


for op in tune_dispatch.OPS:
    r = run(op, "--check")
    expect(f"{op}: the source's tuned rows are the stored sweeps' (--check)", r.returncode == 0, r.stdout + r.stderr)

# labels: rows, C, variant, 16-byte packs, mode
pl = tune_dispatch.parse_label
expect("label 8192x768 fp32: plain, packs, cold", pl("8192x768", 4) == (8192, 768, "plain", True, "cold"))
expect("label 4x4097:hot:pdl bf16: no packs, hot+pdl", pl("4x4097:hot:pdl", 2) == (4, 4097, "plain", False, "hot+pdl"))
expect("label 8192x4096:add:off1: fused add", pl("8192x4096:add:off1", 2) == (8192, 4096, "add", True, "cold"))
expect("label 4096x32x128:s12288: QK view of 131072 rows of 128", pl("4096x32x128:s12288", 2) ==
       (131072, 128, "qk", True, "cold"))
expect("label 4x5x33:s170: QK view, no 16-byte packs", pl("4x5x33:s170", 4)[3] is False)
expect("a label of another form is None", pl("65536x256:inf", 4) is None)


def row(gpu, kernel, name, shape, block, ms, sm="sm_90"):
    return {"op": "rmsnorm", "kernel": kernel, "kernel_name": name, "dtype": "bf16", "shape": shape,
            "block_size": block, "time_ms_median": ms, "time_ms_min": ms, "bytes": 1e6, "gbps": 1e-3 / ms,
            "sol_gbps": 1, "sol_pct": 1, "max_abs_err": 0, "max_rel_err": 0, "status": "OK", "gpu": gpu, "sm": sm,
            "cuda": "13.0", "git_rev": "x", "time_ms_launch_median": ms, "time_ms_launch_min": ms, "clock": "cupti"}


def write_results(tmp, op, data):
    """tmp/<gpu>/<op>.csv for each {gpu folder: its rows}."""
    for name, rows in data.items():
        os.makedirs(os.path.join(tmp, name), exist_ok=True)
        with open(os.path.join(tmp, name, f"{op}.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)


with tempfile.TemporaryDirectory() as tmp:
    # two GPUs of sm_90: rung 5 is best on A cold (1.00 vs 1.10), rung 6 on A hot; on B rung 7 (skipped on A, OK
    # on B only) is best cold at 0.9. Plain launches take the cold times: worst ratios rung 5 max(1, 1.05 / 0.9 B) =
    # 1.17, rung 6 max(1.1 A, 1 / 0.9 B) = 1.11 -> rung 6; captured launches the hot times: rung 6 (1.00 on both)
    data = {"a": [row("A", 5, "r5", "64x768", 128, 1.0), row("A", 6, "r6", "64x768", 64, 1.1),
                  row("A", 6, "r6", "64x768", 128, 1.3),
                  row("A", 5, "r5", "64x768:hot", 128, 1.2), row("A", 6, "r6", "64x768:hot", 64, 1.0),
                  row("A", 9, "dispatch", "64x768", 0, 0.5), row("A", 0, "cudnn", "64x768", 0, 0.1),
                  dict(row("A", 7, "r7", "64x768", 256, 0.9), status="SKIP"),  # skipped on A: asked there, loses
                  # PDL launches: rung 5 best on both GPUs -> a PDL row of its own
                  row("A", 5, "r5", "64x768:hot:pdl", 128, 0.8), row("A", 6, "r6", "64x768:hot:pdl", 64, 1.0),
                  # a point whose plain and PDL choice agree (rung 6 at 64): its plain row serves PDL launches
                  row("A", 6, "r6", "16x768", 64, 1.0), row("A", 5, "r5", "16x768", 128, 1.1),
                  row("A", 6, "r6", "16x768:hot:pdl", 64, 0.7), row("A", 5, "r5", "16x768:hot:pdl", 128, 0.8),
                  # a point where hot wants another rung than cold (rung 5 hot, 6 cold): a captured row; PDL agrees
                  # with it, so no PDL row
                  row("A", 6, "r6", "32x768", 64, 1.0), row("A", 5, "r5", "32x768", 128, 1.2),
                  row("A", 6, "r6", "32x768:hot", 64, 0.7), row("A", 5, "r5", "32x768:hot", 128, 0.5),
                  row("A", 6, "r6", "32x768:hot:pdl", 64, 0.6), row("A", 5, "r5", "32x768:hot:pdl", 128, 0.4),
                  # a point whose PDL choice over both GPUs is the plain row's (rung 6 at 64: worst 1.10 on B, rung 5
                  # 1.12 on A), where B alone wants rung 5: a PDL row for B
                  row("A", 6, "r6", "8x768", 64, 1.0), row("A", 5, "r5", "8x768", 128, 1.2),
                  row("A", 6, "r6", "8x768:hot:pdl", 64, 0.5), row("A", 5, "r5", "8x768:hot:pdl", 128, 0.56)],
            "b": [row("B", 5, "r5", "64x768", 128, 1.05), row("B", 6, "r6", "64x768", 64, 1.0),
                  row("B", 6, "r6", "64x768", 128, 1.0),
                  row("B", 5, "r5", "64x768:hot:pdl", 128, 0.9), row("B", 6, "r6", "64x768:hot:pdl", 64, 1.0),
                  row("B", 5, "r5", "64x768:hot", 128, 1.0), row("B", 6, "r6", "64x768:hot", 64, 1.0),
                  row("B", 9, "dispatch", "64x768", 0, 0.5),
                  row("B", 7, "r7", "64x768", 256, 0.9),  # OK on B only: not a candidate
                  row("B", 6, "r6", "8x768", 64, 1.0), row("B", 5, "r5", "8x768", 128, 1.2),
                  row("B", 6, "r6", "8x768:hot:pdl", 64, 0.55), row("B", 5, "r5", "8x768:hot:pdl", 128, 0.5)],
            "c": [row("C", 4, "r4", "64x768", 256, 1.0, sm="sm_80")]}
    write_results(tmp, "rmsnorm", data)
    table = tune_dispatch.derive(tune_dispatch.gpu_rows(tmp, "rmsnorm"))
    plain = [t for t in table if t[0] == 90 and t[4:7] == (64, 768, 0) and t[11] is None]
    expect("derive: one plain sm_90 row at 64x768, rung 6 at 64 threads (worst 1.11 against rung 5's 1.20; cuDNN, the "
           "dispatcher and a rung skipped on one GPU are no candidates, the best there counts)", len(plain) == 1
           and plain[0][7:9] == (6, 64) and abs(plain[0][9] - 1 / 0.9) < 1e-9 and plain[0][10] == "b cold", str(table))
    own = [t for t in table if t[0] == 90 and t[4:6] == (64, 768) and t[11] is not None]
    expect("derive: rows of one GPU alone at 64x768, plain launches: A rung 5 at 128 (the shared rung 6 costs A 1.10 "
           "cold), B rung 7 at 256 (1.11; rung 7 ran on B cold only); captured launches: A rung 6 at 64, since without "
           "a row of its own a captured launch on A takes A's plain row (rung 5, 1.20 hot), though the shared choice "
           "hot is the shared plain row's", [t[4:12] for t in own] ==
           [(64, 768, 0, 5, 128, 1.0, "a cold", "A"), (64, 768, 0, 7, 256, 1.0, "b cold", "B"),
            (64, 768, 2, 6, 64, 1.0, "a hot", "A")], str(table))
    b_pdl = [t for t in table if t[0] == 90 and t[4:6] == (8, 768)]
    expect("derive: a PDL row for one GPU alone where the shared PDL choice is the plain row's and costs that GPU over "
           "1% (B: rung 5 at 128; the plain row, rung 6 at 64, costs it 1.10)", [t[6:9] + t[11:12] for t in b_pdl] ==
           [(0, 6, 64, None), (1, 5, 128, "B")], str(table))
    pdl = [t for t in table if t[0] == 90 and t[4:7] == (64, 768, 1)]
    expect("derive: the PDL launches of 64x768 get their own row where their best differs (rung 5 at 128, from the "
           "hot+pdl times alone)", len(pdl) == 1 and pdl[0][7:9] == (5, 128) and pdl[0][9] == 1.0, str(table))
    agree = [t for t in table if t[0] == 90 and t[4:6] == (16, 768)]
    expect("derive: no PDL row where the PDL best is the plain row's (no captured row: no hot times there)",
           [t[6:9] for t in agree] == [(0, 6, 64)], str(table))
    cap = [t for t in table if t[0] == 90 and t[4:6] == (32, 768)]
    expect("derive: a captured row where the hot times choose another rung than the cold (rung 5 at 128 against 6 at "
           "64), and no PDL row where PDL agrees with it", [t[6:9] for t in cap] == [(0, 6, 64), (2, 5, 128)], str(table))
    lines = tune_dispatch.c_rows("rmsnorm", table, ["x"])
    expect("c rows: a captured row has launch 2", "{90, 2, TV_PLAIN, 1, 32, 768, 2, 5, 128},  // 1.000 a hot" in lines,
           "\n".join(lines))
    expect("derive: another architecture gets its own row", [t[7] for t in table if t[0] == 80] == [4], str(table))
    r = run("rmsnorm", "--results", tmp)
    expect("the printed table names the rows, their worst ratio and their GPU", r.returncode == 0
           and "| 90 | 2 | plain | yes | 64 | 768 | - | plain | 6 | 64 | 1.111 | b cold | all |" in r.stdout
           and "| 90 | 2 | plain | yes | 64 | 768 | - | plain | 7 | 256 | 1.000 | b cold | B |" in r.stdout
           and "| 90 | 2 | plain | yes | 32 | 768 | - | captured | 5 | 128 | 1.000 | a hot | all |" in r.stdout
           and "(4 of one GPU alone); 0 with a worst ratio over 1.01" in r.stdout, r.stdout + r.stderr)

r = run("bogus")
expect("an op without a dispatcher table: exit 2, one line", r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
       r.stderr)

# BatchNorm: channels contiguous ([N, C], NHWC, NCHW of one pixel) as N*H*W rows of C, NCHW by N, C and H*W
pb = tune_dispatch.parse_bn_label
expect("BatchNorm label 65536x256: cl, 65536 rows of 256, no planes", pb("65536x256") == (65536, 256, 0, "cl", True, "cold"))
expect("BatchNorm label 32x256x56x56:nhwc:inf: cl inference, 100352 rows", pb("32x256x56x56:nhwc:inf") ==
       (100352, 256, 0, "cl_inf", True, "cold"))
expect("BatchNorm label 8x64x112x112:nchw: NCHW, planes of 12544", pb("8x64x112x112:nchw") ==
       (8, 64, 12544, "nchw", True, "cold"))
expect("BatchNorm label 4096x64x1x1:nchw: one pixel, the memory of [N, C]", pb("4096x64x1x1:nchw") ==
       (4096, 64, 0, "cl", True, "cold"))
expect("BatchNorm: a label of another form is None", pb("8x4097:hot") is None and pb("4096x32x128:s12288") is None)


def bn_row(gpu, kernel, name, shape, block, ms, dtype="fp32"):
    return dict(row(gpu, kernel, name, shape, block, ms), op="batchnorm", dtype=dtype)


with tempfile.TemporaryDirectory() as tmp:
    rows = [bn_row("A", 11, "l2_keep_front", "65536x256", 512, 1.0), bn_row("A", 12, "l2_coalesced_sums", "65536x256", 512, 1.1),
            bn_row("A", 9, "nchw_cluster_l2", "32x256x56x56:nchw", 256, 2.0),
            bn_row("A", 7, "nchw_split_planes", "32x256x56x56:nchw", 32, 2.2),
            bn_row("A", 13, "infer_elementwise", "32x256x56x56:nchw:inf", 128, 1.5),
            bn_row("A", 14, "dispatch", "65536x256", 0, 0.5), bn_row("A", 0, "cudnn", "65536x256", 0, 0.1)]
    write_results(tmp, "batchnorm", {"a": rows})
    table = tune_dispatch.derive(tune_dispatch.gpu_rows(tmp, "batchnorm"))
    expect("derive, BatchNorm: a row per point and mode, NCHW with its planes (cuDNN and the dispatcher no candidates)",
           [(t[2], t[4], t[5], t[7], t[8], t[12]) for t in table] ==
           [("cl", 65536, 256, 11, 512, 0), ("nchw", 32, 256, 9, 256, 3136), ("nchw_inf", 32, 256, 13, 128, 3136)],
           str(table))
    lines = tune_dispatch.c_rows("batchnorm", table, ["x"])
    expect("c rows, BatchNorm: an NCHW row ends with NULL (no GPU of its own) and the planes' H*W",
           "{90, 4, TV_BN_NCHW, 1, 32, 256, 0, 9, 256, NULL, 3136},  // 1.000 a cold" in lines
           and "{90, 4, TV_BN_CL, 1, 65536, 256, 0, 11, 512},  // 1.000 a cold" in lines, "\n".join(lines))
# a rung one GPU of an architecture has no rows of (its rows there are the others' choice): named, and where it has
# rows of the rung at some points but not at others the other GPUs ran it at, those points counted; a GPU of
# another architecture without it is not
with tempfile.TemporaryDirectory() as tmp:
    data = {"a": [row("A", 5, "r5", "64x768", 128, 1.0), row("A", 8, "r8", "64x768", 128, 0.9),
                  dict(row("A", 6, "r6", "64x768", 64, 1.0), status="SKIP"), row("A", 5, "r5", "1x4096", 128, 0.1),
                  row("A", 5, "r5", "4x4096", 128, 0.1)],
            "b": [row("B", 5, "r5", "64x768", 128, 1.0), dict(row("B", 6, "r6", "64x768", 64, 1.0), status="FAIL"),
                  row("B", 8, "r8", "1x4096", 128, 0.1)],
            "c": [row("C", 5, "r5", "64x768", 128, 1.0, sm="sm_80")]}
    write_results(tmp, "rmsnorm", data)
    got = tune_dispatch.unswept(tune_dispatch.gpu_rows(tmp, "rmsnorm"))
    expect("unswept: rung 5 lacks 2 of its 3 points on b, rung 8 1 of 2 on a and b; a rung skipped or failed on a GPU "
           "has rows there; sm_80's one GPU lacks nothing",
           got == {(90, 5): {"b": (2, 3)}, (90, 8): {"a": (1, 2), "b": (1, 2)}}, str(got))
    r = run("rmsnorm", "--results", tmp)
    expect("the printed table is preceded by a line for each rung and GPU with points missing", r.returncode == 0 and
           "tune_dispatch: rmsnorm: rung 5 has no rows from b at 2 of the 3 points the GPUs of sm_90 ran it at (sm_90): "
           "its rows there are the other GPUs' choice" in r.stdout.splitlines(), r.stdout + r.stderr)
    data["b"] = data["b"][:2]
    write_results(tmp, "rmsnorm", data)
    r = run("rmsnorm", "--results", tmp)
    expect("a rung a GPU never ran: named without a count", r.returncode == 0 and
           "tune_dispatch: rmsnorm: rung 8 has no rows from b (sm_90): its rows there are the other GPUs' choice"
           in r.stdout.splitlines(), r.stdout + r.stderr)
r = run("rmsnorm", "--results", "/nonexistent")
expect("a missing results folder: exit 2, one line", r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
       r.stderr)
r = run("--help")
expect("--help", r.returncode == 0 and "tuned" in r.stdout)
sys.exit(status())
