#!/usr/bin/env python3
"""CI tests of the pure-Python parts of run_all.py, regress.py, shapes.py and update_readme.py."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import ncu_check  # noqa: E402
import regress  # noqa: E402
import run_all  # noqa: E402
import shapes  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import expect, status, write_csv  # noqa: E402


# shapes: one list, quick = the default shape, both dtypes
pts = shapes.points("layernorm")
expect("shapes: 11 standard LayerNorm shapes x 2 dtypes", len(pts) == 22 and pts[0] == ("fp32", ["-N", "8192", "-C", "768"], "8192x768"))
expect("shapes: quick mode runs the default shape only", [p[2] for p in shapes.points("layernorm", True)] == ["8192x768"] * 2)

expect("shapes: RMSNorm's quick point is its default shape 8192x4096",
       [p[2] for p in shapes.points("rmsnorm", True)] == ["8192x4096"] * 2)
expect("shapes: every ladder shape is a standard point",
       all(l in [lab for _d, _a, lab in shapes.points(op)] for op, ls in shapes.LADDER_SHAPES.items() for l in ls))
# every standard point's arguments are accepted by its program (it then stops at "no CUDA device" here)
env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
for op in shapes.POINTS:
    prog = os.path.join(ROOT, f"{op}_forward")
    if not os.access(prog, os.X_OK):
        expect(f"shapes: {op}_forward is built", False, "run make first")
        continue
    bad = []
    for dtype, args, label in shapes.points(op):
        r = subprocess.run([prog, "all", "--dtype", dtype, *args], capture_output=True, text=True, env=env)
        if "no CUDA device" not in r.stderr and "no CUDA device" not in r.stdout:
            bad.append(f"{label}: {r.stderr.strip()}")
    expect(f"shapes: the program accepts every standard {op} point", not bad, bad)

# slugs
expect("slug of an H100", run_all.slugify("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3")
expect("slug of an H200", run_all.slugify("NVIDIA H200") == "h200")

# --resume: a point is done when every kernel asked for has a row there (skipped rows count); others run again
rows = [{"dtype": "fp32", "shape": "8x8", "kernel": k} for k in ("0", "1", "2")] + \
       [{"dtype": "bf16", "shape": "8x8", "kernel": k} for k in ("0", "1")]
expect("resume: a point with rows of every kernel is complete, one missing a kernel is not",
       run_all.complete_points(rows, [0, 1, 2]) == {("fp32", "8x8")}, run_all.complete_points(rows, [0, 1, 2]))
expect("resume: with fewer kernels asked for, both points are complete",
       run_all.complete_points(rows, [0, 1]) == {("fp32", "8x8"), ("bf16", "8x8")})
if os.access(os.path.join(ROOT, "batchnorm_forward"), os.X_OK):
    expect("resume: the registry's kernels from --list", run_all.listed_kernels("batchnorm") == list(range(9)),
           run_all.listed_kernels("batchnorm"))
with tempfile.TemporaryDirectory() as d:
    p = os.path.join(d, "x.csv")
    with open(p, "w") as f:
        f.write("op,kernel,dtype,shape,gbps\nln,1,fp32,8x8,1\nln,1,bf16,8x8,2\nln,2,bf16,4x4,3\n")
    run_all.drop_rows(p, points={("bf16", "8x8")})
    with open(p) as f:
        kept = f.read()
    expect("resume: drop_rows removes that point's rows only, the header and the others stay",
           kept == "op,kernel,dtype,shape,gbps\nln,1,fp32,8x8,1\nln,2,bf16,4x4,3\n", kept)
    with open(p, "w") as f:
        f.write("op,kernel,dtype,shape,gbps\nln,1,fp32,8x8,1\nln,1,bf16,8x8,2\nln,2,bf16,8x8,3\n")
    run_all.drop_rows(p, [1], {("bf16", "8x8")})
    with open(p) as f:
        kept = f.read()
    expect("--kernels with --dtype: only those kernels' rows at those points go",
           kept == "op,kernel,dtype,shape,gbps\nln,1,fp32,8x8,1\nln,2,bf16,8x8,3\n", kept)

with tempfile.TemporaryDirectory() as d:
    # a node of four GPUs, one 10% slow: flagged; the others are not
    dirs = []
    for i, scale in enumerate([1.0, 1.01, 0.90, 0.99]):
        p = os.path.join(d, f"gpu{i}")
        write_csv(os.path.join(p, "layernorm.csv"), "NVIDIA H200", "sm_90", [80 * scale, 90 * scale, 95 * scale])
        dirs.append((str(i), p))
    report = {g: sick for g, _r, sick in run_all.sick_gpus(dirs)}
    expect("sick GPU: the one 10% below the node's median is flagged, the others not",
           report == {"0": False, "1": False, "2": True, "3": False}, report)

    # baseline choice: same GPU, else same architecture, else none
    res = os.path.join(d, "results")
    write_csv(os.path.join(res, "h100-80gb-hbm3", "layernorm.csv"), "NVIDIA H100 80GB HBM3", "sm_90", [90])
    b, why = regress.find_baseline(res, "h100-80gb-hbm3", "sm_90")
    expect("regress baseline: the same GPU when stored", b.endswith("h100-80gb-hbm3") and "GB/s" in why, why)
    b, why = regress.find_baseline(res, "h200", "sm_90")
    expect("regress baseline: else a GPU of the same architecture, in %SOL", b and b.endswith("h100-80gb-hbm3") and "%SOL" in why, why)
    b, why = regress.find_baseline(res, "b200", "sm_100")
    expect("regress baseline: none for another architecture", b is None, why)

    # README rewrite: idempotent, and the committed README is up to date with its results
    readme = os.path.join(d, "README.md")
    shutil.copy(os.path.join(ROOT, "README.md"), readme)
    folder = os.path.join(ROOT, "results", "h100-80gb-hbm3")
    tool = [sys.executable, os.path.join(ROOT, "scripts", "update_readme.py"), folder, "--readme", readme]
    with open(readme) as f:
        before = f.read()
    scrambled = before.replace("| 7 | subwarp-regs-vec |", "| 7 | stale-row |", 1)
    with open(readme, "w") as f:
        f.write(scrambled)
    r1 = subprocess.run(tool, capture_output=True, text=True)
    with open(readme) as f:
        once = f.read()
    r2 = subprocess.run(tool, capture_output=True, text=True)
    with open(readme) as f:
        twice = f.read()
    expect("update_readme rewrites a stale table", r1.returncode == 0 and "stale-row" not in once, r1.stdout + r1.stderr)
    expect("update_readme twice changes nothing", r2.returncode == 0 and once == twice and "already up to date" in r2.stdout)
    expect("update_readme leaves text outside the markers alone", once == before)
    chk = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "update_readme.py"), folder, "--check"],
                         capture_output=True, text=True)
    expect("the committed README's tables match results/", chk.returncode == 0, chk.stderr)

# ncu_check: an op of several kernels is timed per launch of the op (BatchNorm: partials, finalize, normalize)
hdr = '"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
lines = [hdr]
for i in range(6):  # two launches of an op of three kernels
    name = ["bn_partials<float>", "bn_finalize", "bn_normalize"][i % 3]
    lines.append(f'"{i}","1","{name}","gpu__time_duration.sum","usecond","{10 * (i % 3 + 1)}"\n')
    lines.append(f'"{i}","1","{name}","dram__bytes.sum","Mbyte","{i % 3 + 1}"\n')
launches = ncu_check.parse_ncu_csv("==PROF== noise\n" + "".join(lines))
groups = ncu_check.per_op_launch(launches)
expect("ncu_check parses one record a launch", len(launches) == 6 and launches[1][0] == "bn_finalize", launches)
expect("ncu_check sums the kernels of one op launch",
       len(groups) == 2 and abs(groups[0][0] - 0.060) < 1e-9 and abs(groups[1][1] - 6e6) < 1e-3, groups)
single = ncu_check.per_op_launch([("k", 0.1, 5.0), ("k", 0.2, 6.0)])
expect("ncu_check leaves a one-kernel op's launches alone", single == [(0.1, 5.0), (0.2, 6.0)], single)

sweep = "block_size   64 | 0.2 ms (min 0.1) | x\nblock_size  512 | 0.1 ms (min 0.1) | x\nbest: block_size 512 | 1 GB/s | 1% SOL\n"
expect("ncu_check profiles a sweeping kernel at its best block size", ncu_check.best_block(sweep) == "512")
expect("ncu_check leaves a one-block kernel alone",
       ncu_check.best_block("block_size  256 (own) | 0.1 ms (min 0.1) | x\nbest: block_size 256 | 1 GB/s\n") is None)

sys.exit(status())
