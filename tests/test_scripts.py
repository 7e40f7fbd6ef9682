#!/usr/bin/env python3
"""CI tests of the pure-Python parts of run_all.py, regress.py, shapes.py, update_readme.py and ncu_check.py, and of
every script's command line."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import csvfile  # noqa: E402
import ncu_check  # noqa: E402
import registry  # noqa: E402
import regress  # noqa: E402
import run_all  # noqa: E402
import shapes  # noqa: E402
import standings  # noqa: E402
import summary  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import expect, status, write_csv  # noqa: E402


# shapes: one list, quick = the default shape, both dtypes
pts = shapes.points("layernorm", sets=["standard"])
expect("shapes: 11 standard LayerNorm shapes x 2 dtypes", len(pts) == 22 and pts[0] == ("fp32", ["-N", "8192", "-C", "768"], "8192x768"))
lat = shapes.points("layernorm", sets=["latency"])
expect("shapes: 15 latency shapes x cold, hot and hot+pdl x 2 dtypes, hot ones run with --hot and labelled :hot",
       len(lat) == 90 and ("fp32", ["-N", "512", "-C", "8192", "--hot", "--pdl"], "512x8192:hot:pdl") in lat and ("fp32", ["-N", "1", "-C", "4096"], "1x4096") in lat
       and ("bf16", ["-N", "8", "-C", "128256", "--hot"], "8x128256:hot") in lat)
odd = shapes.points("rmsnorm", sets=["odd"])
expect("shapes: 4 odd C and C + 1 x 1..64 rows x 2 dtypes, cold", len(odd) == 64 and ("bf16", ["-N", "64", "-C", "131074"],
       "64x131074") in odd and not any("--hot" in a for _d, a, _l in odd))
expect("shapes: every set by default", len(shapes.points("layernorm")) == 176 and len(shapes.points("rmsnorm")) == 184)
expect("shapes: batchnorm has no odd set", shapes.points("batchnorm", sets=["odd"]) == [])
expect("shapes: BatchNorm has no latency set", shapes.points("batchnorm", sets=["latency"]) == [])
bn = shapes.points("batchnorm", sets=["standard"])
bn_train = [label for d, a, label in bn if d == "fp32" and "--inference" not in a]
expect("shapes: BatchNorm's seven training shapes, each again in inference (--inference, labelled :inf as the program does)",
       len(bn) == 28 and len(bn_train) == 7
       and all(("fp32", a + ["--inference"], label + ":inf") in bn for d, a, label in bn if d == "fp32" and label in bn_train)
       and ("bf16", ["--layout", "nhwc", "-N", "32", "-C", "256", "--height", "56", "--width", "56", "--inference"],
            "32x256x56x56:nhwc:inf") in bn, [p[2] for p in bn])
tune = shapes.points("batchnorm", sets=["tune"])
expect("shapes: BatchNorm's tuning points are training points of every class (narrow, wide, few rows, NCHW planes of 7x7 "
       "to 112x112), none a standard point", len(tune) == 28 and not any("--inference" in a for _d, a, _l in tune)
       and {"1024x64", "256x8192", "256x512x7x7:nchw", "8x64x112x112:nchw"} <= {l for _d, _a, l in tune}
       and not {l for _d, _a, l in tune} & {l for _d, _a, l in bn}
       and shapes.tune_labels("batchnorm") == {l for _d, _a, l in tune} and shapes.tune_labels("layernorm") == set()
       and shapes.off_standard_labels("batchnorm") == shapes.tune_labels("batchnorm")
       and len(shapes.points("batchnorm")) == 56, [p[2] for p in tune])
expect("shapes: quick mode runs the default shape only", [p[2] for p in shapes.points("layernorm", True)] == ["8192x768"] * 2)

expect("shapes: RMSNorm's quick point is its default shape 8192x4096",
       [p[2] for p in shapes.points("rmsnorm", True)] == ["8192x4096"] * 2)
expect("shapes: rows are shown at the op's default point, or at their first shape where they lack it",
       shapes.default_shape("layernorm", [{"shape": "32768x128"}, {"shape": "8192x768"}]) == "8192x768"
       and shapes.default_shape("layernorm", [{"shape": "32768x128"}]) == "32768x128")
expect("shapes: every ladder shape is a standard point",
       all(l in [lab for _d, _a, lab in shapes.points(op)] for op, ls in shapes.LADDER_SHAPES.items() for l in ls))
# every standard point's arguments are accepted by its program (it then stops at "no CUDA device" here)
env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
for op in shapes.POINTS:
    prog = os.path.join(ROOT, shapes.program(op))
    if not os.access(prog, os.X_OK):
        expect(f"shapes: {shapes.program(op)} is built", False, "run make first")
        continue
    bad = []
    pts = shapes.points(op)
    if op in shapes.BACKWARD_OPS:  # and a sample of the dense set and of a random draw (their variants)
        pts += shapes.dense_points(op)[::37] + shapes.random_points(op, 7, 40)
    for dtype, args, label in pts:
        r = subprocess.run([prog, "all", "--dtype", dtype, *args], capture_output=True, text=True, env=env)
        if "no CUDA device" not in r.stderr and "no CUDA device" not in r.stdout:
            bad.append(f"{label}: {r.stderr.strip()}")
    expect(f"shapes: the program accepts every standard {op} point"
           + (" (and dense and random ones)" if op in shapes.BACKWARD_OPS else ""), not bad, bad)
expect("shapes: the ops' programs: layernorm -> layernorm_forward, a backward op its own name",
       shapes.program("layernorm") == "layernorm_forward" and shapes.program("rmsnorm_backward") == "rmsnorm_backward")
labels = [lab for _d, _a, lab in shapes.random_points("rmsnorm_backward", 11, 200)]
expect("shapes: a backward draw holds plain rows, --accumulate, the Gemma offset and hot rows, and no --pdl",
       any(lab.endswith(":acc") for lab in labels) and any(":off" in lab for lab in labels)
       and any(lab.endswith(":hot") for lab in labels) and not any("pdl" in lab for lab in labels), labels[:8])

# make regress checks the built programs that have stored results, and names the others
with tempfile.TemporaryDirectory() as res:
    os.makedirs(os.path.join(res, "some-gpu"))
    open(os.path.join(res, "some-gpu", "layernorm.csv"), "w").close()
    got = regress.checked_ops(res)
    built = run_all.built_ops()
    expect("regress: the built ops with stored results, the others left out",
           got == [op for op in built if op == "layernorm"], (got, built))

# slugs
expect("slug of an H100", run_all.slugify("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3")
expect("slug of an H200", run_all.slugify("NVIDIA H200") == "h200")

# --resume: a point is done when every kernel asked for that takes its dtype has a row there (skipped rows count)
rows = [{"dtype": "fp32", "shape": "8x8", "kernel": k} for k in ("0", "1", "2")] + \
       [{"dtype": "bf16", "shape": "8x8", "kernel": k} for k in ("0", "1")]
every = {k: {"fp32", "bf16"} for k in (0, 1, 2)}
expect("resume: a point with rows of every kernel is complete, one missing a kernel is not",
       run_all.complete_points(rows, [0, 1, 2], every) == {("fp32", "8x8")},
       run_all.complete_points(rows, [0, 1, 2], every))
expect("resume: with fewer kernels asked for, both points are complete",
       run_all.complete_points(rows, [0, 1], every) == {("fp32", "8x8"), ("bf16", "8x8")})
expect("resume: a kernel that does not take bf16 leaves the bf16 point complete without its row",
       run_all.complete_points(rows, [0, 1, 2], {**every, 2: {"fp32"}}) == {("fp32", "8x8"), ("bf16", "8x8")})
if os.access(os.path.join(ROOT, "batchnorm_forward"), os.X_OK):
    takes = run_all.listed_dtypes("batchnorm")
    expect("resume: the registry's kernels from --list", sorted(takes) == list(range(15)), sorted(takes))
    expect("--list: kernel 1 takes fp32 alone, kernel 0 every dtype",
           takes[1] == {"fp32"} and takes[0] == {"fp32", "fp16", "bf16"}, takes)
def old_schema_csv(path, points):
    """A CSV of the schema before its newer columns (the reader checks every column): (kernel, dtype, shape,
    gbps) a row."""
    old = csvfile.REQUIRED
    fill = {"op": "layernorm", "kernel_name": "k", "block_size": "256", "status": "OK", "gpu": "G", "sm": "sm_90",
            "cuda": "13.0", "git_rev": "x"}
    with open(path, "w") as f:
        f.write(",".join(old) + "\n")
        for k, dt, shape, g in points:
            r = dict(fill, kernel=k, dtype=dt, shape=shape, gbps=g)
            f.write(",".join(r.get(c, "0") for c in old) + "\n")


with tempfile.TemporaryDirectory() as d:
    p = os.path.join(d, "x.csv")
    old_schema_csv(p, [("1", "fp32", "8x8", "1"), ("1", "bf16", "8x8", "2"), ("2", "bf16", "4x4", "3")])
    run_all.drop_rows(p, points={("bf16", "8x8")})
    with open(p) as f:
        header = f.readline().strip().split(",")
    kept = [(r["kernel"], r["dtype"], r["shape"], r["gbps"], r["clock"]) for r in summary.load(p)]
    expect("resume: drop_rows removes that point's rows only, the others stay",
           kept == [("1", "fp32", "8x8", "1", ""), ("2", "bf16", "4x4", "3", "")], kept)
    expect("drop_rows rewrites a file of an older schema in the current one (the program appends to it)",
           header == summary.CSV_FIELDS, header)
    old_schema_csv(p, [("1", "fp32", "8x8", "1"), ("1", "bf16", "8x8", "2"), ("2", "bf16", "8x8", "3")])
    run_all.drop_rows(p, [1], {("bf16", "8x8")})
    kept = [(r["kernel"], r["dtype"], r["shape"], r["gbps"]) for r in summary.load(p)]
    expect("--kernels with --dtype: only those kernels' rows at those points go",
           kept == [("1", "fp32", "8x8", "1"), ("2", "bf16", "8x8", "3")], kept)

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
    with open(os.path.join(ROOT, "Makefile")) as f:  # the results folder whose numbers the README shows
        readme_gpu = re.search(r"^README_GPU \?= (\S+)", f.read(), re.M).group(1)
    folder = os.path.join(ROOT, "results", readme_gpu)
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
    import update_readme  # noqa: E402
    expect("update_readme: a ladder cell says why it is empty",
           [update_readme.status_word(p) for p in ("FAIL", "SKIP", None)] == ["FAIL", "skipped", "not measured"])

# ncu_check: a program's op launches are the kernels after each L2 flush; the last ones are the timed loop
hdr = '"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
seq = ["curand_setup", "bn_partials<float>", "bn_finalize", "bn_normalize",  # validation launch
       "flush_write_kernel(int4 *, unsigned long, int)", "flush_read_kernel(const int4 *, unsigned long, int *)",
       "copy16_kernel<true>",  # a flushed launch of the SOL copy
       "bn_partials<float>", "bn_finalize", "bn_normalize", "bn_partials<float>", "bn_finalize", "bn_normalize"]
for _ in range(2):  # two timed launches of an op of three kernels
    seq += ["flush_write_kernel(int4 *, unsigned long, int)", "flush_read_kernel(const int4 *, unsigned long, int *)",
            "bn_partials<float>", "bn_finalize", "bn_normalize"]
lines = [hdr]
for i, name in enumerate(seq):
    us = {"bn_partials<float>": 10, "bn_finalize": 20, "bn_normalize": 30}.get(name, 99)
    lines.append(f'"{i}","1","{name}","gpu__time_duration.sum","usecond","{us}"\n')
    lines.append(f'"{i}","1","{name}","dram__bytes.sum","Mbyte","1"\n')
    lines.append(f'"{i}","1","{name}","sm__cycles_active.max","cycle","{us * 1000:,}"\n')  # at 1 GHz: 0.9 x duration
    lines.append(f'"{i}","1","{name}","sm__cycles_elapsed.avg.per_second","hz","{1e9 / 0.9:,.2f}"\n')
launches = ncu_check.parse_ncu_csv("==PROF== noise\n" + "".join(lines))
expect("ncu_check parses one record a launch", len(launches) == len(seq) and launches[2][0] == "bn_finalize", launches)
groups = ncu_check.after_flushes(launches, 2)
expect("ncu_check sums the kernels after each flush, the warm-ups and the copy left out",
       len(groups) == 2 and all(abs(t - 0.060) < 1e-9 and abs(b - 3e6) < 1e-3 and k == 3 for t, b, k, _a in groups),
       groups)
expect("ncu_check: SM-active time from cycles over the SM clock, summed like the durations",
       all(abs(a - 0.054) < 1e-6 for _t, _b, _k, a in groups), groups)
expect("ncu_check brackets the harness between SM-active time and ncu's duration",
       ncu_check.bracketed(0.058, 0.054, 0.060, 0.03) == "yes" and ncu_check.bracketed(0.050, 0.054, 0.060, 0.03) == "no"
       and ncu_check.bracketed(0.065, 0.054, 0.060, 0.03) == "no" and ncu_check.bracketed(0.058, float("nan"), 0.06, 0.03) == "")
try:
    ncu_check.after_flushes(launches, 4)
    expect("ncu_check refuses fewer flushed launches than the timed loop", False)
except ncu_check.CheckError:
    expect("ncu_check refuses fewer flushed launches than the timed loop", True)
calls = ncu_check.per_call([("a", 0.1, 5.0, 0.09), ("b", 0.2, 6.0, 0.1), ("a", 0.1, 5.0, 0.09), ("b", 0.3, 6.0, 0.2)], 2)
expect("ncu_check splits a peer's range into its calls", [(round(t, 9), k) for t, _b, k, _a in calls] == [(0.3, 2), (0.4, 2)],
       calls)
expect("ncu_check: 'dispatch' is each program's last kernel, the dispatcher (its header's list)",
       all(ncu_check.dispatcher_number(op) == str(max(registry.header_kernels(os.path.join(ROOT, f"{op}_forward.cu"))))
           and registry.header_kernels(os.path.join(ROOT, f"{op}_forward.cu"))[int(ncu_check.dispatcher_number(op))][0]
           == "dispatch" for op in ("layernorm", "rmsnorm", "batchnorm")))
expect("ncu_check: its standard points name the dispatcher as 'dispatch', not a number that a new rung would move",
       all(k == "dispatch" or k == "0" or k in ncu_check.PEERS for _op, k, _a in ncu_check.STANDARD))
expect("ncu_check: the programs' default dtype is fp32",
       ncu_check.split_dtype(["-N", "4"]) == ("fp32", ["-N", "4"]) and
       ncu_check.split_dtype(["-N", "4", "--dtype", "bf16", "-C", "8"]) == ("bf16", ["-N", "4", "-C", "8"]))
with tempfile.TemporaryDirectory() as d:
    row = {"op": "layernorm", "kernel": "10", "dtype": "fp32", "shape": "8x8", "harness_ms": "1", "ncu_ms": "1",
           "ratio": "1", "dram_ratio": "1", "gpu": "NVIDIA H100 80GB HBM3", "git_rev": "x"}
    ncu_check.store(d, [row, dict(row, shape="16x8")])
    ncu_check.store(d, [dict(row, ratio="1.01")])
    stored = ncu_check.read_rows(os.path.join(d, "h100-80gb-hbm3", "ncu_check.csv"))
    expect("ncu_check.csv: a point measured again replaces its row, others stay",
           sorted((r["shape"], r["ratio"]) for r in stored) == [("16x8", "1"), ("8x8", "1.01")], stored)

# standings: the dispatcher against the best rung of its ladder, and the one line per op.
def srow(k, name, dtype, shape, gbps, status="OK", sol=None):
    return {"op": "layernorm", "kernel": str(k), "kernel_name": name, "dtype": dtype, "shape": shape, "block_size": "256",
            "time_ms_median": "1", "bytes": "1000", "gbps": str(gbps), "sol_gbps": "100", "sol_pct": str(sol or gbps),
            "status": status, "gpu": "G", "clock": "cupti"}
rows = [srow(0, "cudnn", "fp32", "8192x768", 90), srow(7, "subwarp_regs_vec", "fp32", "8192x768", 80),
        srow(9, "block_reread", "fp32", "8192x768", 60), srow(13, "dispatch", "fp32", "8192x768", 76),
        srow(7, "subwarp_regs_vec", "fp32", "16384x4096", 50, "SKIP"), srow(9, "block_reread", "fp32", "16384x4096", 95),
        srow(13, "dispatch", "fp32", "16384x4096", 95.5)]
reg = standings.regret_rows(rows)
expect("standings: the dispatcher against its best rung (never itself, never cuDNN), SKIP rows left out",
       [(s, b["kernel"], round(r, 4)) for _d, s, _x, b, r in reg] == [("8192x768", "7", round(80 / 76, 4)),
                                                                       ("16384x4096", "9", round(95 / 95.5, 4))], reg)
table = standings.regret_table("layernorm", rows, {})
expect("standings: a dispatcher more than 2% behind its best rung is marked lost",
       "**lost**" in table[2] and "**lost**" not in table[3], table)
check = {("layernorm", "fp32", "8192x768"): (1.0526, 1.01)}  # stored 80 / 76 = 1.05263
table = standings.regret_table("layernorm", rows, check)
expect("standings: the same-process ratio (dispatch_check.csv), where a point has one, is shown and judged",
       "**lost**" not in table[2] and "| 1.053x | 1.010x |" in table[2], table)
expect("standings: the line judges the same-process ratio", "at 0 of 2 points" in standings.op_line(
       "layernorm", rows, [], check))
stale = {("layernorm", "fp32", "8192x768"): (1.0700, 1.01)}
table = standings.regret_table("layernorm", rows, stale)
expect("standings: a check of other stored rows (its stored ratio is not theirs) is neither shown nor judged",
       "| 1.053x | - **lost** |" in table[2] and "at 1 of 2 points" in standings.op_line(
           "layernorm", rows, [], stale), table)
with tempfile.TemporaryDirectory() as cd:
    with open(os.path.join(cd, "dispatch_check.csv"), "w") as f:
        f.write("op,dtype,shape,rung,rung_block,rung_ms,dispatch_ms,stored_ratio,same_run_ratio,rounds,gpu,git_rev\n"
                "layernorm,bf16,4x4097,13,256,0.0042,0.0042,1.0380,1.0010,3,G,x\n")
    expect("standings: dispatch_check.csv read", standings.same_run_ratios(cd) ==
           {("layernorm", "bf16", "4x4097"): (1.038, 1.001)})
    # beside a program CSV, the summaries and the folder check leave it alone (it once stopped `make readme`)
    shutil.copy(os.path.join(ROOT, "tests", "fixtures", "layernorm_small.csv"), os.path.join(cd, "layernorm.csv"))
    expect("summary: a results folder with dispatch_check.csv holds one program CSV, layernorm",
           [op for op, _rows in summary.op_results(cd)] == ["layernorm"] and summary.results_folder(cd) == cd)
# dispatch_check: each process's rung time is taken at the block the process before found fastest (not its own
# fastest: the minimum of a sweep is biased low), the first process only chooses
import dispatch_check  # noqa: E402
def proc(rung_ms, disp_ms):
    return [{"kernel": "10", "block_size": str(b), "time_ms_median": str(t), "git_rev": "r"} for b, t in rung_ms.items()] + \
        [{"kernel": "14", "block_size": "256", "time_ms_median": str(disp_ms), "git_rev": "r"}]
rds = dispatch_check.rounds_of([proc({64: 9.0, 256: 8.0}, 8.6), proc({64: 7.9, 256: 8.4}, 8.5),
                                proc({64: 8.5, 256: 8.2}, 8.3)], 10, 14, "t")
expect("dispatch_check: the rung timed at the block chosen one process before, the dispatcher in the same process",
       rds == [(8.4, 256, 8.5, "r"), (8.5, 64, 8.3, "r")], rds)
try:
    dispatch_check.rounds_of([proc({256: 8.0}, 8.6), proc({64: 7.9}, 8.5)], 10, 14, "t")
    expect("dispatch_check: a chosen block missing from the next process is an error", False)
except RuntimeError as e:
    expect("dispatch_check: a chosen block missing from the next process is an error", "block 256" in str(e), e)

# hot latency points: a peer whose launches chained by PDL on their own meets ours with --pdl, the others ours without
def hot(k, name, shape, gbps, chained):
    return dict(srow(k, name, "fp32", shape, gbps), chained=chained)
lat = [hot(0, "cudnn", "1x4096:hot", 90, "yes"), hot(12, "latency_split", "1x4096:hot", 70, "no"),
       hot(12, "latency_split", "1x4096:hot:pdl", 95, "yes")]
peer_rows = [dict(hot("torch", "F.layer_norm", "1x4096:hot", 60, ""), kernel="torch")]
got = standings.latency_counts("layernorm", lat, peer_rows, ":hot")
expect("standings: hot, a chained cuDNN row meets ours with --pdl, an unchained peer ours without",
       got[:2] == (1, 1) and abs(got[2] - min(95 / 90, 70 / 60)) < 1e-9, got)
unknown = [dict(r, chained="") for r in lat]  # rows of an older CSV: not known to chain
got = standings.latency_counts("layernorm", unknown, peer_rows, ":hot")
expect("standings: hot, a cuDNN row not known to chain meets ours without PDL",
       got[:2] == (0, 1) and abs(got[2] - 70 / 90) < 1e-9, got)
got = standings.latency_counts("layernorm", [dict(r, shape=r["shape"].replace(":hot", ""), chained="") for r in lat[:2]], [], "")
expect("standings: cold, every peer row meets ours as it is", got[:2] == (0, 1) and abs(got[2] - 70 / 90) < 1e-9, got)

line = standings.op_line("layernorm", rows, [])
expect("standings: the line gives the range of %SOL, cuDNN beside it, and the dispatcher's worst point",
       "80-96% (fp32)" in line and "behind by more than 2% at 1 of 1 " in line and "at 1 of 2 points (worst 1.05x" in line,
       line)

# Every script of scripts/ (cli.py and csvfile.py are modules they share): executable, run as `scripts/NAME` through its shebang, it
# answers --help, and a bad input is one line on stderr and exit 2 (never a traceback). BAD: each one's bad inputs.
fixture = os.path.join(ROOT, "tests", "fixtures", "layernorm_small.csv")
fixtures = os.path.dirname(fixture)  # a results folder: one program CSV
readme = os.path.join(ROOT, "README.md")  # a file that is not a results CSV
with tempfile.TemporaryDirectory() as d:
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    BAD = {
        "compare.py": [["/nonexistent", fixture], [fixture, fixtures], [readme, fixture], [fixture, fixture, "--bogus"],
                       [fixture, fixture, "--threshold", "x"], [empty, empty]],
        "gpu_check.sh": [["bogus"], ["gaps"]],
        "ncu_check.py": [[], ["nosuchop", "1"], ["layernorm", "x"], ["--standard", "layernorm", "10"]],
        "peers.py": [["nosuchop"], ["--bogus"]],
        "plot.py": [["/nonexistent"], [empty], [readme]],
        "registry.py": [[], ["/nonexistent.cu"], [readme]],
        "regress.py": [["--threshold", "x"]],
        "run_all.py": [["--kernels", "x"], ["nosuchop"]],
        "shapes.py": [[], ["nosuchop"]],
        "side_by_side.py": [[], ["/nonexistent"], [fixtures, "nosuchop"]],
        "standings.py": [[], ["/nonexistent"], [fixtures, "nosuchop"]],
        "summary.py": [["/nonexistent.csv"], [fixtures], [readme], [fixture, "--ladder-shape", "1x1"]],
        "update_readme.py": [["/nonexistent"], [fixtures, "--readme", "/nonexistent"]],
        "dispatch_check.py": [[], ["/nonexistent"], [fixtures, "--rounds", "0"]],
        "tune_dispatch.py": [[], ["bogus"], ["rmsnorm", "--write", "--check"], ["rmsnorm", "--leaves", "0"],
                             ["rmsnorm", "--regimes", "/nonexistent"], ["rmsnorm", "--regimes", d],
                             ["rmsnorm", "--regimes", d, "--write"]],
        # (never without arguments: on a GPU machine that is a whole random draw)
        "dispatch_sweep.py": [["bogus"], ["--count", "0"], ["--set", "sparse"], ["--set", "dense", "--peers", "3"],
                              ["--report"], ["--set", "dense", "--match", "("], ["--set", "dense", "--replan", "7,x"],
                              ["--replan", "7"], ["--set", "dense", "--replan", "7", "--plans"]],
        "peer_gaps.py": [[], ["--seed", "1"], ["--seed", "1", "bogus"], ["--seed", "1", "--sweeps", "/nonexistent"],
                         ["--seed", "1", "--lead", "0.5"]],
    }
    listed = {n for n in os.listdir(os.path.join(ROOT, "scripts")) if n.endswith((".py", ".sh"))} - {"cli.py", "csvfile.py", "regimes.py"}
    expect("every script of scripts/ is checked here", listed == set(BAD), listed ^ set(BAD))
    env = dict(os.environ, OUT=os.path.join(d, "out"))  # gpu_check.sh writes there once it runs
    for name, bads in sorted(BAD.items()):
        path = os.path.join(ROOT, "scripts", name)
        with open(path) as f:
            shebang = f.readline().strip()
        runs = os.access(path, os.X_OK)
        expect(f"{name}: executable, with a shebang",
               runs and shebang in ("#!/usr/bin/env python3", "#!/usr/bin/env bash"), shebang)
        if not runs:
            continue  # reported: its other checks would only fail the same way
        r = subprocess.run([path, "--help"], capture_output=True, text=True, env=env)
        expect(f"{name} --help: exit 0, a usage", r.returncode == 0 and r.stdout.startswith("usage:"),
               f"rc {r.returncode}: {r.stderr}")
        for args in bads:
            r = subprocess.run([path, *args], capture_output=True, text=True, env=env)
            lines = r.stderr.strip().splitlines()
            shown = " ".join(args).replace(ROOT + os.sep, "") or "(no arguments)"
            expect(f"{name} {shown}: exit 2, one line on stderr",
                   r.returncode == 2 and len(lines) == 1 and lines[0].startswith(name.split(".")[0] + ":")
                   and "Traceback" not in r.stderr, f"rc {r.returncode}: {r.stderr!r}")
    expect("gpu_check.sh: --help and a bad phase start nothing", not os.path.exists(env["OUT"]))
    # its slowest(): the GPU suite's checks by the seconds each took, from the log's "### [T s]" lines
    log = os.path.join(d, "suite.log")
    with open(log, "w") as f:
        f.write("### [3 s] a 1 (exit 0)\nout\n### [10 s] b 2 (exit 0)\n### not a stamp\n### [11 s] c (exit 1)\n")
    fn = "source <(sed -n '/^slowest()/,/^}/p' scripts/gpu_check.sh); slowest \"$1\""
    r = subprocess.run(["bash", "-c", fn, "slowest", log], capture_output=True, text=True, cwd=ROOT)
    expect("gpu_check.sh slowest: each check's seconds (T minus the one before), slowest first",
           r.stdout.splitlines() == ["slowest GPU-suite checks (s):", "7\tb 2 (exit 0)", "3\ta 1 (exit 0)",
                                     "1\tc (exit 1)"], repr(r.stdout + r.stderr))

sys.exit(status())
