#!/usr/bin/env python3
"""CI test of scripts/regimes.py and tune_dispatch.py --regimes: the features of a point, the greedy rule found on a
synthetic sweep (two rungs whose crossover lies at a known row length), its regret on points it was not derived
from, a rung that refused a point never chosen for it, and the regret figures of dispatch_sweep (tune_dispatch's
sweep_points / regret_figures) with its re-timed ratios (dispatch_sweep --retime)."""
import csv
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import dispatch_sweep  # noqa: E402
import regimes  # noqa: E402
import tune_dispatch  # noqa: E402
from fixture_csv import FIELDS, expect, status  # noqa: E402

f = regimes.features("layernorm", "bf16", "264x4096:hot:pdl", 132)
expect("features: 16-bit, 16-byte packs, PDL, 512 packs a row, 2 rows an SM",
       f == {"bytes": 2, "packs16": 1, "variant": "plain", "launch": "pdl", "packs": 9.0, "rows_sm": 1.0,
             "plane": 0.0}, str(f))
f = regimes.features("rmsnorm", "fp32", "4096x32x128:s12288", 128)
expect("features: the QK view is tokens x heads rows of head_dim", f["variant"] == "qk" and f["rows_sm"] == 10.0
       and f["packs"] == 5.0 and f["packs16"] == 1, str(f))
f, g = (regimes.features("rmsnorm_backward", "bf16", lab, 132) for lab in ("16384x4096:off:acc:hot", "64x4100:off"))
expect("features: a backward program's labels are plain rows (its dispatcher keys --accumulate and the Gemma offset "
       "as plain), hot launches and packing read", f["variant"] == "plain" and f["launch"] == "hot" and
       f["packs16"] == 1 and g["variant"] == "plain" and g["packs16"] == 0, f"{f} {g}")
f = regimes.features("batchnorm", "fp32", "8x64x56x56:nchw:inf", 64)
expect("features: BatchNorm NCHW in inference: rows N*C, its plane", f["variant"] == "nchw_inf" and
       f["rows_sm"] == 3.0 and f["plane"] == math.log2(3136), str(f))
expect("features: a label of another form is None", regimes.features("layernorm", "fp32", "8x8:inf", 132) is None)


NAME = {k: name for name, k in regimes.registry("layernorm").items()}  # the rungs' names, as a sweep's rows have them


def row(kernel, shape, ms, block=256, st="OK", dtype="bf16"):
    return {"op": "layernorm", "kernel": kernel, "kernel_name": NAME[kernel], "dtype": dtype, "shape": shape,
            "block_size": block, "time_ms_median": ms, "time_ms_min": ms, "bytes": 1e6, "gbps": 1, "sol_gbps": 1,
            "sol_pct": 1, "max_abs_err": 0, "max_rel_err": 0, "status": st, "gpu": "G", "sm": "sm_90",
            "cuda": "13.0", "git_rev": "x", "time_ms_launch_median": ms, "time_ms_launch_min": ms, "clock": "cupti"}


def sweep(cs, ns):
    """Rung 6 wins below 2048 elements a row (bf16: 256 packs), rung 7 above; rung 8 refuses rows over 8192 and is
    never best; the dispatcher (9) always runs rung 6."""
    rows = []
    for c in cs:
        for n in ns:
            s = f"{n}x{c}"
            t6, t7 = c * 1.0, (c * 1.2 if c < 2048 else c * 0.8)
            rows += [row(6, s, t6, 128), row(6, s, t6 * 1.1, 256), row(7, s, t7), row(9, s, t6, 0)]
            rows.append(row(8, s, t6 * 1.5) if c <= 8192 else row(8, s, 0, st="SKIP"))
    return rows


dense = sweep([256, 512, 1024, 1536, 2560, 4096, 8192, 16384], [1, 64, 4096])
pts = regimes.points_of("layernorm", dense, 9, 132)
rule = regimes.derive(pts, 8)
rungs = [r for _c, r, _n, _m in rule]
expect("derive: two regimes, rung 6 for short rows and rung 7 for long ones", rungs == [6, 7], str(rule))
th = rule[0][0][0]
expect("derive: the split lies between the measured 1536 and 2560 elements (192 and 320 packs)",
       th[0] == "packs" and 192 < 2 ** th[1][1] <= 320, str(th))
expect("words: the first regime in words", regimes.words(rule[0][0], regimes.universe(pts)).startswith("packs a row <"),
       regimes.words(rule[0][0], regimes.universe(pts)))
held_out = regimes.points_of("layernorm", sweep([384, 768, 3072, 12288], [8, 512]), 9, 132)
n, w3, w10, worst = regimes.summary(regimes.regret(rule, held_out))
expect("regret on points the rule never saw: every one at its best rung", n == 8 and w3 == 1.0 and worst[0] == 1.0,
       str((n, w3, worst)))
r = regimes.regret([([], 8, 1, 0.0)], regimes.points_of("layernorm", sweep([16384], [1]), 9, 132))
expect("regret: a rung that did not run the point counts as infinite", r[0][0] == math.inf, str(r))

# at-plan rows (dispatch_sweep --plans): at a point they hold, a rung's time is its plan's, a rung whose plan refused
# the point is out of it; a point they do not hold keeps each rung's fastest block
t, _d = regimes.rung_times(sweep([1024, 4096], [8]), 9, None,
                           [row(6, "8x1024", 1400.0, 64), row(7, "8x1024", 0, 64, "SKIP")])
expect("rung times at plan: the plan's time, a rung refused at its plan out, other points as swept",
       t[("bf16", "8x1024")] == {6: 1400.0} and t[("bf16", "8x4096")] == {6: 4096.0, 7: 4096 * 0.8, 8: 4096 * 1.5},
       str(t))

sp = tune_dispatch.sweep_points(dense, 9)
n, within, (worst, where), geo, near, nc = tune_dispatch.regret_figures(sp)
expect("sweep figures: the dispatcher (always rung 6) within 1.03x at the 12 short-row points of 24",
       n == 24 and abs(within - 0.5) < 1e-9 and abs(worst - 1.25) < 1e-9, str((n, within, worst, where)))

pp = tune_dispatch.sweep_points([row(9, "8x512", 1.0, 0), row(6, "8x512", 0.95), row(0, "8x512", 1.2, 0)], 9,
                                [{"kernel": "torch.compile", "dtype": "bf16", "shape": "8x512", "time_ms_median": 0.9},
                                 {"kernel": "torch.compile", "dtype": "bf16", "shape": "1x64", "time_ms_median": 0.1}])
expect("sweep points: the better peer of cuDNN and torch.compile, at the sweep's points only",
       pp == {("bf16", "8x512"): {"disp": 1.0, "best": (0.95, 6, 256), "peer": (0.9, "torch.compile")}}, str(pp))
n, within, _w, geo, near, nc = tune_dispatch.regret_figures(pp)
expect("regret figures against the better peer: 1.0 / 0.9", nc == 1 and abs(geo - 1 / 0.9) < 1e-9 and near == 0.0,
       str((geo, near, nc)))

# re-timing (dispatch_sweep --retime): the points past 1.03x alone, each process's rung time at the block the process
# before chose (the sweep's first), the median ratio; a point re-timed before (--resume) kept, not run again
draw = [row(6, "8x512", 1.00, 64), row(6, "8x512", 1.05, 256), row(7, "8x512", 1.2), row(9, "8x512", 1.10, 0),
        row(6, "8x1024", 2.0, 64), row(9, "8x1024", 2.02, 0)]
ran = []


def fake_process(op, dtype, args, rung, disp):  # the first finds 256 fastest, the second 64: each judged at the other
    ran.append((dtype, tuple(args), rung, disp))
    t64, t256 = (1.02, 0.99) if len(ran) == 1 else (0.98, 1.01)
    return [row(rung, "8x512", t64, 64), row(rung, "8x512", t256, 256), row(disp, "8x512", 1.04, 0)]


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "layernorm_random_5.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(draw)
    real, dispatch_sweep.dispatch_check.one_process = dispatch_sweep.dispatch_check.one_process, fake_process
    try:
        pts_ = [("bf16", ["-N", "8", "-C", "512"], "8x512"), ("bf16", ["-N", "8", "-C", "1024"], "8x1024")]
        fails = dispatch_sweep.retime_op("layernorm", pts_, path, 2, lambda m: None)
        with open(path[:-4] + "_retimed.csv") as fh:
            rt = list(csv.DictReader(fh))
        expect("retime: the one point past 1.03x, two processes, the rung at the block the sweep chose, the median",
               not fails and len(ran) == 2 and ran[0][2:] == (6, 9) and "--validate-first" in ran[0][1] and
               len(rt) == 1 and rt[0]["shape"] == "8x512" and rt[0]["swept_ratio"] == "1.1000" and
               abs(float(rt[0]["retimed_ratio"]) - (1.04 / 1.02 + 1.04 / 1.01) / 2) < 1e-3,
               str((fails, ran, rt)))
        dispatch_sweep.retime_op("layernorm", pts_, path, 2, lambda m: None)
        expect("retime: a point re-timed before is kept (--resume), not run again", len(ran) == 2, str(ran))
    finally:
        dispatch_sweep.dispatch_check.one_process = real
    got = dispatch_sweep.with_retimed(tune_dispatch.sweep_points(draw, 9), path[:-4] + "_retimed.csv")
    n, within, (worst, where), *_ = tune_dispatch.regret_figures(got)
    expect("regret figures: a point's re-timed ratio stands for its swept one", n == 2 and within == 1.0 and
           abs(worst - (1.04 / 1.02 + 1.04 / 1.01) / 2) < 1e-3, str((n, within, worst, where)))

# --report: a draw's figures from its CSVs, nothing measured (no GPU, no program needed): the per-op and pooled lines,
# exit 1 with --targets past them, 0 without; one line and exit 2 where the CSV is not there
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "layernorm_random_5.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(draw)
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "dispatch_sweep.py"), "layernorm", "--report", "--seed", "5",
           "--out", tmp]
    judged, plain = (subprocess.run(cmd + t, capture_output=True, text=True) for t in (["--targets"], []))
    absent = subprocess.run(cmd[:-3] + ["6", "--out", tmp], capture_output=True, text=True)
    expect("--report: the stored draw's figures, its target missed (exit 1 with --targets, 0 without); no CSV: one line",
           judged.returncode == 1 and "all ops: 2 points" in judged.stdout and "MISSED" in judged.stdout and
           plain.returncode == 0 and "MISSED" not in plain.stdout and absent.returncode == 2 and
           len(absent.stderr.strip().splitlines()) == 1, judged.stdout + judged.stderr + absent.stderr)

# torch.compile's rows of a draw (compiled_peer): written whole when peers.py ends; --resume (keep) keeps a file
# written before and runs nothing, without it the rows are measured again
calls = []


def fake_run(cmd, **kw):
    calls.append(cmd)
    return subprocess.CompletedProcess(cmd, 0, stdout='{"status": "OK", "peer": "torch.compile"}\n',
                                       stderr="peers: 1 rows (1 OK, 0 FAIL)\n")


with tempfile.TemporaryDirectory() as tmp:
    jl = os.path.join(tmp, "layernorm_random_5_peers.jsonl")
    real_run, dispatch_sweep.subprocess.run = dispatch_sweep.subprocess.run, fake_run
    try:
        pts_ = [("bf16", ["-N", "8", "-C", "512"], "8x512"), ("bf16", ["-N", "8", "-C", "512", "--hot", "--pdl"], "p")]
        f1 = dispatch_sweep.compiled_peer("layernorm", pts_, jl, lambda m: None)
        with open(jl) as fh:
            first = fh.read()
        f2 = dispatch_sweep.compiled_peer("layernorm", pts_, jl, lambda m: None, keep=True)
        kept = len(calls)
        f3 = dispatch_sweep.compiled_peer("layernorm", pts_, jl, lambda m: None)
    finally:
        dispatch_sweep.subprocess.run = real_run
    expect("compiled_peer: the non-PDL points through peers.py, rows written whole; --resume keeps them and runs "
           "nothing; without it they are measured again", not (f1 or f2 or f3) and kept == 1 and len(calls) == 2 and
           '"OK"' in first and not os.path.exists(jl + ".part") and
           not any(n.endswith(".points") for n in os.listdir(tmp)), str((calls, first)))

# the timed launches a block size: about 10 ms of them at a point's copy time, within [--repeats, 100]
expect("point_repeats: a decode row 100, a 2 GB point the floor, hot points by their 32 launches a repetition",
       dispatch_sweep.point_repeats("rmsnorm", "bf16", "16x672", 10) == 100 and
       dispatch_sweep.point_repeats("rmsnorm", "bf16", "262144x4096", 10) == 10 and
       dispatch_sweep.point_repeats("layernorm", "fp32", "512x8192", 10) == 100 and
       30 <= dispatch_sweep.point_repeats("layernorm", "fp32", "512x8192:hot", 10) <= 45 and
       20 <= dispatch_sweep.point_repeats("batchnorm", "fp32", "256x64x112x112:nchw", 10) <= 30,
       str([dispatch_sweep.point_repeats(*a, 10) for a in (("rmsnorm", "bf16", "16x672"),
                                                            ("rmsnorm", "bf16", "262144x4096"),
                                                            ("batchnorm", "fp32", "256x64x112x112:nchw"))]))

# --plans: a point swept before gets its at-plan process alone (--resume), a new point both; the at-plan process
# runs the rungs alone with --block-size plan, into the sweep's _plan.csv
calls = []


def fake_point(op, rungs, disp, dtype, args, repeats, csv_path, cudnn, at_plan=False):
    calls.append((args[1], os.path.basename(csv_path), at_plan))
    return 0, 0.0, ""


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "layernorm_dense.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows([row(6, "8x512", 1.0, 64), row(9, "8x512", 1.0, 0)])
    real = (dispatch_sweep.run_point, dispatch_sweep.run_all.listed_dtypes)
    dispatch_sweep.run_point = fake_point
    dispatch_sweep.run_all.listed_dtypes = lambda op: {0: {"bf16"}, 6: {"bf16"}, 7: {"bf16"}, 9: {"bf16"}}
    try:
        pts_ = [("bf16", ["-N", "8", "-C", "512"], "8x512"), ("bf16", ["-N", "8", "-C", "1024"], "8x1024")]
        dispatch_sweep.sweep_op("layernorm", pts_, path, 3, 0, set(), lambda m: None, plans=True)
        expect("--plans: the swept point at plan alone, the new one swept and at plan",
               calls == [("8", "layernorm_dense_plan.csv", True), ("8", "layernorm_dense.csv", False),
                         ("8", "layernorm_dense_plan.csv", True)], str(calls))
        cmd = []
        dispatch_sweep.subprocess.run, real_run = (lambda c, **k: cmd.append(c) or
                                                   subprocess.CompletedProcess(c, 0, "", "")), subprocess.run
        try:
            real[0]("layernorm", [6, 7], 9, "bf16", ["-N", "8"], 3, "x_plan.csv", False, at_plan=True)
        finally:
            dispatch_sweep.subprocess.run = real_run
        expect("--plans: the at-plan process runs the rungs alone at --block-size plan",
               cmd and cmd[0][1] == "6,7" and cmd[0][-2:] == ["--block-size", "plan"], str(cmd))
    finally:
        dispatch_sweep.run_point, dispatch_sweep.run_all.listed_dtypes = real

# --replan K: at the points of the _plan.csv among the set's, rung K's old at-plan rows dropped and measured again (K
# alone, at plan), the other rungs' rows kept; --resume keeps the points that have new rows
replans = []


def fake_replan(op, rungs, disp, dtype, args, repeats, csv_path, cudnn, at_plan=False):
    replans.append((args[1], list(rungs), at_plan))
    with open(csv_path, "a", newline="") as fh:
        csv.DictWriter(fh, fieldnames=FIELDS).writerow(row(7, f"{args[1]}x512", 0.5, 64))
    return 0, 0.0, ""


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "layernorm_dense.csv")
    with open(path[:-4] + "_plan.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows([row(6, "8x512", 1.0, 64), row(7, "8x512", 2.0, 64), row(6, "16x512", 1.0, 64),
                     row(7, "16x512", 2.0, 64), row(7, "32x512", 2.0, 64)])
    real = (dispatch_sweep.run_point, dispatch_sweep.run_all.listed_dtypes)
    dispatch_sweep.run_point = fake_replan
    dispatch_sweep.run_all.listed_dtypes = lambda op: {0: {"bf16"}, 6: {"bf16"}, 7: {"bf16"}, 9: {"bf16"}}
    try:
        pts_ = [("bf16", ["-N", n, "-C", "512"], f"{n}x512") for n in ("8", "16", "64")]  # 32x512 not in the set
        n1, _s, f1 = dispatch_sweep.replan_op("layernorm", pts_, path, 3, 0, [7], False, lambda m: None)
        with open(path[:-4] + "_plan.csv", newline="") as fh:
            kept = sorted((r["kernel"], r["shape"], r["time_ms_median"]) for r in csv.DictReader(fh))
        n2, _s, _f = dispatch_sweep.replan_op("layernorm", pts_, path, 3, 0, [7], True, lambda m: None)
        expect("--replan: the set's planned points measured again at plan for the rung alone, its old rows there "
               "dropped, other rungs' and other points' kept; --resume runs none twice",
               n1 == 2 and not f1 and replans == [("8", [7], True), ("16", [7], True)] and n2 == 0 and
               kept == [("6", "16x512", "1.0"), ("6", "8x512", "1.0"), ("7", "16x512", "0.5"),
                        ("7", "32x512", "2.0"), ("7", "8x512", "0.5")], f"{n1} {f1} {replans} {n2} {kept}")
    finally:
        dispatch_sweep.run_point, dispatch_sweep.run_all.listed_dtypes = real

with tempfile.TemporaryDirectory() as tmp:
    for name, rows in (("layernorm_dense.csv", dense), ("layernorm_random_12.csv", sweep([640, 6144], [2, 99]))):
        with open(os.path.join(tmp, name), "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tune_dispatch.py"), "layernorm", "--regimes",
                        tmp, "--sms", "132"], capture_output=True, text=True)
    expect("tune_dispatch --regimes prints the rule and its regret in sample and on the random draw",
           r.returncode == 0 and "| 1 | packs a row <" in r.stdout and "random seed 12: 4 points" in r.stdout and
           "dense (in sample): 24 points" in r.stdout, r.stdout + r.stderr)
    # a checked draw folded into the dense set (renamed OP_dense_random_SEED.csv): derived from, no longer a check
    os.rename(os.path.join(tmp, "layernorm_random_12.csv"), os.path.join(tmp, "layernorm_dense_random_12.csv"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tune_dispatch.py"), "layernorm", "--regimes",
                        tmp, "--sms", "132"], capture_output=True, text=True)
    expect("tune_dispatch --regimes: a folded draw's points join the dense set's, and it is no random check",
           r.returncode == 0 and "from 28 points" in r.stdout and "1 random draws folded into it" in r.stdout and
           "random seed 12" not in r.stdout and "dense and folded draws (in sample): 28 points" in r.stdout,
           r.stdout + r.stderr)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tune_dispatch.py"), "layernorm", "--regimes",
                        tmp], capture_output=True, text=True)
    expect("--regimes without --sms where no log says: exit 2, one line", r.returncode == 2 and
           len(r.stderr.strip().splitlines()) == 1, r.stderr)
# a backward program's rule from its own dense sweep: rung 7 where a row takes 16-byte packs (it refuses the others),
# rung 5 (last_block_reduce, its fallback row) elsewhere; rung 8 (column_tiles) the slowest at these short rows
BNAME = {k: name for name, k in regimes.registry("layernorm_backward").items()}
with tempfile.TemporaryDirectory() as tmp:
    brows = []
    for c in (256, 1000, 1024, 3000, 4096, 8192):
        for n in (8, 512, 16384):
            for lab in (f"{n}x{c}", f"{n}x{c}:acc"):
                packed = c % 8 == 0
                for k, ms, st in ((5, c * 2.0, "OK"), (6, c * 1.5, "OK" if packed else "SKIP"),
                                  (7, c * 1.0, "OK" if packed else "SKIP"), (8, c * 2.5, "OK"),
                                  (9, c * (1.0 if packed else 2.0), "OK")):
                    brows.append(dict(row(6, lab, ms if st == "OK" else 0, 256, st), op="layernorm_backward",
                                      kernel=k, kernel_name=BNAME[k]))
    with open(os.path.join(tmp, "layernorm_backward_dense.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(brows)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tune_dispatch.py"), "layernorm_backward",
                        "--regimes", tmp, "--sms", "132"], capture_output=True, text=True)
    expect("tune_dispatch --regimes derives a backward program's rule: rung 7, and rung 5 where 7 refuses (rows "
           "without 16-byte packs; --accumulate's points as plain ones)",
           r.returncode == 0 and "| 1 | anything | 7 | 36 |" in r.stdout and "| 2 | anything | 5 | 0 |" in r.stdout
           and "dense (in sample): 36 points" in r.stdout and "within 1.03x of the best rung at 100.0%" in r.stdout,
           r.stdout + r.stderr)
r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tune_dispatch.py"), "layernorm", "--regimes",
                    os.path.join(ROOT, "results", "h200", "sweeps")], capture_output=True, text=True)
expect("--regimes on the stored H200 sweeps", r.returncode == 0 and "(132 SMs)" in r.stdout, r.stdout + r.stderr)
sys.exit(status())
