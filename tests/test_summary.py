#!/usr/bin/env python3
"""CI test of scripts/summary.py: its tables on a fixture CSV, and the rule's regions (the rows of a dispatcher's
k_regimes a stored point reaches first, read from C rows as the programs hold them) on a small fixture rule, and on
the stored results of the README's GPU."""
import gzip
import os
import re
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests"))
from fixture_csv import FIELDS, expect, status  # noqa: E402  (puts scripts/ on the path too)
import summary  # noqa: E402
import tune_dispatch  # noqa: E402

out = subprocess.run([sys.executable, os.path.join(root, "scripts", "summary.py"),
                      os.path.join(root, "tests", "fixtures", "layernorm_small.csv")],
                     capture_output=True, text=True, check=True).stdout
lines = out.splitlines()
# ladder: kernel 1's best block is 64 (100.79 GB/s), kernel 2 gains 5.00x over it, 3 failed, 0 skipped
expect("ladder: kernel 1 at its best block", "| 1 | thread-per-row | 64 | 101 | 3.5% | - |" in lines, out)
expect("ladder: kernel 2's gain over 1", "| 2 | three-launch | 128 | 504 | 17.4% | 5.00x |" in lines, out)
expect("ladder: a failed kernel", "| 3 | warp-per-row | - | - | - | FAIL |" in lines, out)
expect("ladder: a skipped kernel", "| 0 | cudnn | - | - | - | skipped |" in lines, out)
# best per shape
expect("best table: 8192x768", "| fp32 | 8192x768 | 2 three-launch | 128 | 504 | 17.4% | 2900 |" in lines, out)
expect("best table: 1024x65536", "| fp32 | 1024x65536 | 2 three-launch | 128 | 1790 | 59.7% | 3000 |" in lines, out)

# ---- the rule's regions on a fixture rule (LayerNorm's features, 132 SMs)
RULE = """
    // regimes: begin (a fixture: one C row a line, as tune_dispatch.py --write puts them)
    // bytes, 16-byte packs, variants, launches, packs a row [lo, hi), rows an SM [lo, hi), H*W [lo, hi), rung
    {0, 0, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 3, "no 16-byte packs"},
    {4, 1, 0, 0, 0, 64, 0, RG_ANY, 0, RG_ANY, 2, "fp32, 16-byte packs, packs a row < 64"},
    {2, 1, 0, 0, 0, 64, 0, RG_ANY, 0, RG_ANY, 2, "16-bit, 16-byte packs, packs a row < 64"},
    {0, 1, 0, TLB(TL_CAPTURED) | TLB(TL_PDL), 0, RG_ANY, 0, 1.41421, 0, RG_ANY, 3, "16-byte packs, captured/captured+PDL, rows an SM < 1.414"},
    {0, 1, 0, 0, 64, RG_ANY, 0, RG_ANY, 0, RG_ANY, 1, "16-byte packs, packs a row >= 64"},
    {0, -1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 1, "anything"},
    // regimes: end
"""
NUMBERS = {"cudnn": 0, "a": 1, "b": 2, "c": 3, "dispatch": 4}


def row(kernel, dtype, shape, ms, sol, nbytes, block=256, st="OK", name=None, op="layernorm"):
    r = {f: "" for f in FIELDS}
    r.update(op=op, kernel=str(kernel), kernel_name=name or {v: k for k, v in NUMBERS.items()}.get(kernel, str(kernel)),
             dtype=dtype, shape=shape, block_size=str(block), time_ms_median=str(ms), time_ms_min=str(ms),
             bytes=str(nbytes), gbps="1", sol_gbps="1", sol_pct=str(sol), status=st, gpu="Fixture GPU", clock="cupti")
    return r


rows = [
    # no 16-byte packs: rung 3 runs it (row 1); at 16x4097 rung 3 refuses, rows 2-5 do not hold it: "anything" (6)
    row(3, "fp32", "64x4097", 0.1, 50, 2e6), row(1, "fp32", "64x4097", 0.5, 10, 2e6),
    row(3, "fp32", "16x4097", 0, 0, 5e5, st="SKIP"), row(1, "fp32", "16x4097", 0.2, 8, 5e5),
    # 16-bit rows of 32 packs: row 3 (rung 2)
    row(2, "bf16", "8192x256", 0.02, 80, 8e6),
    # three points of long rows (row 5, rung 1), the middle by bytes fp32 8192x768 (rung 1's best block: 1.0 ms)
    row(1, "bf16", "8192x768", 0.3, 60, 2.5e7), row(1, "fp32", "16384x4096", 2.0, 70, 5.4e8),
    row(1, "fp32", "8192x768", 2.0, 5, 5e7, block=128), row(1, "fp32", "8192x768", 1.0, 10, 5e7, block=512),
    row(0, "fp32", "8192x768", 0.01, 90, 5e7, block=0), row(4, "fp32", "8192x768", 0.01, 99, 5e7, block=0),
    row(9, "fp32", "8192x768", 0.001, 99.9, 5e7, name="a_rung_renumbered_away"),  # not in the registry: left out
    # a captured point of few rows: row 4 (rung 3)
    row(3, "bf16", "4x8192:hot", 0.003, 20, 1.3e5),
]
peers = [row("torch.compile", "fp32", "8192x768", 0.02, 95, 5e7, block=0),
         row("quack", "fp32", "8192x768", 0.03, 80, 5e7, block=0),
         row("torch.compile", "fp32", "8192x768", 0.001, 99, 5e7, block=0, op="rmsnorm")]  # another op's
rule = summary.regime_rows(RULE)
expect("regime_rows: every C row, its rung and its words", [(r, w) for _c, r, w in rule] == [
    (3, "no 16-byte packs"), (2, "fp32, 16-byte packs, packs a row < 64"),
    (2, "16-bit, 16-byte packs, packs a row < 64"),
    (3, "16-byte packs, captured/captured+PDL, rows an SM < 1.414"), (1, "16-byte packs, packs a row >= 64"),
    (1, "anything")], str(rule))
got = summary.regions("layernorm", rows, peers, 132, rule, NUMBERS)
listed = [(i + 1, rule[i][1], sorted(pts)) for i, pts, _mid, _mine, _peer in got]
expect("regions: each row a stored point reaches first, once, with its rung and its points (row 2 reached by none; "
       "a point whose row's rung refused it at the next row that holds it)", listed == [
           (1, 3, [("fp32", "64x4097")]), (3, 2, [("bf16", "8192x256")]), (4, 3, [("bf16", "4x8192:hot")]),
           (5, 1, [("bf16", "8192x768"), ("fp32", "16384x4096"), ("fp32", "8192x768")]),
           (6, 1, [("fp32", "16x4097")])], str(listed))
r5 = next(g for g in got if g[0] == 4)
expect("regions: a row's point at the median by bytes, its rung at its best block, the best peer there (this op's)",
       r5[2] == ("fp32", "8192x768") and r5[3]["block_size"] == "512" and r5[4]["kernel"] == "torch.compile", str(r5))
table = summary.regions_table("layernorm", rows, peers, 132, rule, NUMBERS)
expect("regions_table: the row of long rows, its rung's %SOL over the best peer's",
       "| 5 | 16-byte packs, packs a row >= 64 | 1 a | 3 | fp32 8192x768 | 10.0% | torch.compile | 95.0% | 0.11x |"
       in table, "\n".join(table))
expect("regions_table: a row with no peer at its point", "| 3 | 16-bit, 16-byte packs, packs a row < 64 | 2 b | 1 | "
       "bf16 8192x256 | 80.0% | - | - | - |" in table, "\n".join(table))
only0 = [row(1, "fp32", "8192x768", 1.0, 10, 5e7), row(0, "fp32", "8192x768", 0.5, 40, 5e7, block=0)]
t0 = summary.regions_table("layernorm", only0, [], 132, rule, NUMBERS)
expect("regions_table: cuDNN (kernel 0) a peer", any("| cuDNN | 40.0% | 0.25x |" in line for line in t0), "\n".join(t0))

# ---- the programs' own rules, and the section on the README's GPU's stored results
with open(os.path.join(root, "Makefile")) as f:
    gpu = re.search(r"^README_GPU \?= (\S+)", f.read(), re.M).group(1)
for op in ("layernorm", "rmsnorm", "batchnorm"):
    with open(os.path.join(root, f"{op}_forward.cu")) as f:
        text = f.read()
    c_lines = [line for line in text[text.index("// regimes: begin"):text.index("// regimes: end")].splitlines()
               if line.strip().startswith("{")]
    rule = summary.program_rule(op)
    expect(f"program_rule({op}): every C row of k_regimes read", len(rule) == len(c_lines) >= 3,
           f"{len(rule)} of {len(c_lines)}")
    csv_path = os.path.join(root, "results", gpu, f"{op}.csv")
    if not os.path.exists(csv_path):
        continue
    r = subprocess.run([sys.executable, os.path.join(root, "scripts", "summary.py"), csv_path, "--regions"],
                       capture_output=True, text=True)
    body = [line for line in r.stdout.splitlines() if re.match(r"^\| \d+ \|", line)]
    nums = [int(line.split("|")[1]) for line in body]
    rungs_ok = all(line.split("|")[3].split()[0] == str(rule[n - 1][1]) for n, line in zip(nums, body))
    expect(f"summary.py --regions on results/{gpu}/{op}.csv: the rows reached, once each, in order, each with its "
           "row's rung", r.returncode == 0 and body and nums == sorted(set(nums)) and rungs_ok
           and r.stdout.startswith("The rule's regions"), r.stdout + r.stderr)
# the run logs: run_all.py writes OP.log.gz (appended to as gzip members); the readers take it, or a plain OP.log
with tempfile.TemporaryDirectory() as tmp:
    expect("log_path: None where a folder has no log", summary.log_path(tmp, "layernorm") is None)
    with open(os.path.join(tmp, "layernorm.log"), "w") as f:
        f.write("device 0: Old GPU | sm_90 | 100 SMs | x\n")
    expect("log_path: a plain log from before", summary.log_path(tmp, "layernorm").endswith("layernorm.log"))
    os.makedirs(os.path.join(tmp, "sweeps"))
    expect("swept_sms reads a plain log's device line", tune_dispatch.swept_sms(os.path.join(tmp, "sweeps"),
                                                                              "layernorm") == 100)
    with gzip.open(os.path.join(tmp, "layernorm.log.gz"), "wb") as g:
        g.write(b"device 0: NVIDIA H200 | sm_90 | 132 SMs | x\nfirst\n")
    with gzip.open(os.path.join(tmp, "layernorm.log.gz"), "ab") as g:  # a second member, as run_all appends
        g.write(b"second\n")
    path = summary.log_path(tmp, "layernorm")
    with summary.open_log(path) as f:
        text = f.read()
    expect("log_path prefers the gzip'd log; open_log reads every member of it as text",
           path.endswith("layernorm.log.gz") and text.splitlines()[1:] == ["first", "second"], text)
    expect("swept_sms reads the gzip'd log's device line", tune_dispatch.swept_sms(os.path.join(tmp, "sweeps"),
                                                                                 "layernorm") == 132)
sys.exit(status())
