#!/usr/bin/env python3
"""The dispatcher and every rung it chooses among, timed in one process at each point of a set that covers the
space: the dense set its rule is derived from, or a random draw that checks the rule on shapes it never saw.

    scripts/dispatch_sweep.py [OP ...] [--set random|dense] [--seed S] [--count K] [--budget SECONDS]
                              [--repeats R] [--out DIR] [--resume] [--peers K] [--plans] [--retime R] [--targets]
                              [--match REGEX] [--replan K,K]
    scripts/dispatch_sweep.py [OP ...] --report [--set random|dense] [--seed S] [--out DIR] [--targets]

At each point (scripts/shapes.py's dense set, or its random draw of --count points an op with --seed: a new seed
each run unless given, printed first) one process of the program runs the rungs (every kernel from the first
that takes 16-bit types up to the dispatcher: the rungs a dispatcher can choose; each with its block-size sweep)
and then the dispatcher, with the programs' own flush and clock, at least --repeats timed launches a block size (up
to 100 at a short point: about 10 ms of them, point_repeats), each kernel validated at its first block size
(--validate-first: validation is most of a large point's time). Rows go to DIR/<op>_dense.csv or
DIR/<op>_random_<seed>.csv (the programs' CSV schema; default DIR: results/<gpu>/sweeps), a random draw's rows
replacing the file's unless --resume. --peers K adds, at the first K points of each op's draw, kernel 0 (cuDNN,
in the same process: it plans each point, seconds) and torch.compile (scripts/peers.py --points, one process an op,
the same flush and clock; not at --pdl points, a launch it does not have; rows as JSON lines in
DIR/<op>_random_<seed>_peers.jsonl, kept by --resume once written). --match REGEX keeps the points whose
dtype:label it matches (a region of a set measured first). --budget stops an op's set after that many seconds: the
dense set runs in a fixed shuffled order, so a cut sweep still covers the space evenly, and --resume goes on where it
stopped.
--plans adds at each point a second process: the rungs alone, each at its plan's block size (--block-size plan:
the configuration the dispatcher launches it at), rows to DIR/<op>_dense_plan.csv or <op>_random_<seed>_plan.csv;
with --resume, a point measured before without them gets them (scripts/tune_dispatch.py derives the rule from a
rung's time at its plan where a point has one).
--replan K,K: measure nothing else but the at-plan rows of those rungs again, at the set's points (or those --match
keeps) that have at-plan rows: their old rows are dropped first (a plan changed in the code), the other rungs' kept;
with --resume, the points that already have new rows are kept (a run cut short by --budget goes on).

The fastest of a sweep is the least of some thirty noisy medians (every rung at every block size), biased low
against the dispatcher's one configuration by about the spread of a median: at a point of a few microseconds, that
is 2-4%. So at each point of a random draw where the dispatcher trails its best rung by more than 1.03x, --retime R
(default 2) runs R more processes of that rung's block-size sweep and the dispatcher (scripts/dispatch_check.py's
rounds): in each, the rung's time at the block the process before found fastest (the sweep's, for the first) beside
the dispatcher's; the median of the R ratios is the point's re-timed ratio (rows in DIR/<op>_random_<seed>_retimed.csv).

Prints, per op and over all, the dispatcher's time over its best rung's (scripts/tune_dispatch.py regret), as swept
and re-timed: the share of points within 1.03x, the worst point, and against the better of cuDNN and torch.compile
where they ran. Exit 1 when a program failed a point (its validation) and, with --targets, when the draw misses a
target: the dispatcher within 1.03x of its best rung at 95% of the points and within 1.10x at every point; against
the better of cuDNN and torch.compile (where they ran) level or ahead in geometric mean and within 1.05x at 95% of
the points (judged on the re-timed ratios where a point has one). make regress runs a random draw with --targets.
--report measures nothing and prints the same figures from the CSVs in --out: a draw measured in parts (an op at a
time, or cut by --budget and gone on with --resume) judged whole.
"""
import csv
import json
import os
import random
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import dispatch_check  # noqa: E402  (one_process, rounds_of, summarize)
import run_all  # noqa: E402  (slugify, gpus, built_ops, listed_dtypes)
import shapes  # noqa: E402
import regimes  # noqa: E402  (features)
import tune_dispatch  # noqa: E402  (regret)

OPS = shapes.FORWARD_OPS + shapes.BACKWARD_OPS
REGRET = 1.03  # the share-within target's ratio: the points re-timed are those past it


def candidates(takes):
    """The rungs a dispatcher chooses among (every kernel from the first that takes a 16-bit type, the dispatcher
    excluded) and the dispatcher's number (the last), from {kernel: its dtypes} (run_all.listed_dtypes)."""
    disp = max(takes)
    first = min(n for n, dts in takes.items() if n > 0 and "bf16" in dts)
    return [n for n in sorted(takes) if first <= n < disp], disp


def point_key(dtype, label):
    return (dtype, label)


def done_points(path):
    """The (dtype, shape) of the points a CSV holds a dispatcher row for."""
    if not os.path.exists(path):
        return set()
    with open(path, newline="") as f:
        return {point_key(r["dtype"], r["shape"]) for r in csv.DictReader(f)}


MAX_REPEATS, REPEAT_MS, COPY_BYTES_PER_MS = 100, 10.0, 4.0e9  # 4 TB/s: about the H200's copy, a rough clock


def point_repeats(op, dtype, label, base):
    """The timed launches a block size at a point (a CSV label): about REPEAT_MS of them at the time a copy of its
    tensors takes (at least 2 us a launch; a captured repetition is HOT_LAUNCHES launches), within [base,
    MAX_REPEATS]. A cold point of a few microseconds spreads by 3-4% from launch to launch: its median over 10
    launches moves by the whole of a 1.03x target from one process to the next, over 100 by a third of that."""
    f = regimes.features(op, dtype, label, 1)
    if f is None:
        return base
    es = f["bytes"]
    # rows (at one SM: all of them) of C elements, or NCHW's rows of a plane
    elements = 2 ** f["rows_sm"] * (2 ** f["plane"] if f["variant"].startswith("nchw") else 2 ** f["packs"] * 16 / es)
    ms = max(2e-3, 2 * elements * es / COPY_BYTES_PER_MS) * (32 if f["launch"] != "cold" else 1)
    return int(min(MAX_REPEATS, max(base, REPEAT_MS / ms)))


def run_point(op, rungs, disp, dtype, args, repeats, csv_path, cudnn, at_plan=False):
    """One process: the rungs taking dtype, then the dispatcher (and kernel 0 first where cudnn); at_plan: the rungs
    alone, each at its plan's block (--block-size plan). (rc, seconds, last stderr line)."""
    ks = rungs if at_plan else ([0] if cudnn else []) + rungs + [disp]
    cmd = [os.path.join(ROOT, shapes.program(op)), ",".join(map(str, ks)), "--dtype", dtype, *args,
           "--repeats", str(repeats), "--validate-first", "--csv", csv_path]
    cmd += ["--block-size", "plan"] if at_plan else []
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        rc, err = r.returncode, (r.stderr.strip().splitlines() or r.stdout.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        rc, err = 124, "timed out after 600 s"
    return rc, time.time() - t0, err[:200]


def plan_csv(path):
    """The at-plan rows' CSV beside a sweep's (--plans)."""
    return tune_dispatch.beside(path, tune_dispatch.PLAN)


def retimed_csv(path):
    """The re-timed points' CSV beside a random draw's (--retime)."""
    return tune_dispatch.beside(path, tune_dispatch.RETIMED)


def sweep_op(op, pts, csv_path, repeats, budget, peer_keys, progress, plans=False):
    takes = run_all.listed_dtypes(op)
    rungs, disp = candidates(takes)
    done, planned = done_points(csv_path), done_points(plan_csv(csv_path)) if plans else set()
    todo = [p for p in pts if point_key(p[0], p[2]) not in done or (plans and point_key(p[0], p[2]) not in planned)]
    t0, failures, n = time.time(), [], 0
    for i, (dtype, args, label) in enumerate(todo):
        if budget and time.time() - t0 > budget:
            progress(f"{op}: budget of {budget:.0f} s spent after {n} points; {len(todo) - i} left (--resume)")
            break
        ks, key, secs, rc = [k for k in rungs if dtype in takes[k]], point_key(dtype, label), 0.0, 0
        reps = point_repeats(op, dtype, label, repeats)
        if key not in done:
            rc, secs, err = run_point(op, ks, disp, dtype, args, reps, csv_path, key in peer_keys)
            if rc != 0:
                failures.append(f"{op} {dtype} {label}: exit {rc}: {err}")
        if plans and key not in planned:
            prc, psecs, err = run_point(op, ks, disp, dtype, args, reps, plan_csv(csv_path), False, at_plan=True)
            secs += psecs
            if prc != 0:
                failures.append(f"{op} {dtype} {label} at plan: exit {prc}: {err}")
            rc = rc or prc
        n += 1
        progress(f"{op} [{n}/{len(todo)} {time.time() - t0:.0f} s] {dtype} {label}: {secs:.1f} s"
                 + (f" exit {rc}" if rc else ""))
    return n, time.time() - t0, failures


def replan_op(op, pts, csv_path, repeats, budget, kernels, resume, progress):
    """--replan: the at-plan rows of these kernels (numbers in today's registry) at the points of the sweep's _plan.csv
    among pts, measured again. (points, seconds, failures)."""
    path, takes = plan_csv(csv_path), run_all.listed_dtypes(op)
    if not os.path.exists(path):
        return 0, 0.0, [f"{op}: no {os.path.basename(path)} to measure plans again in (--plans first)"]
    wanted = {name for name, k in regimes.registry(op).items() if k in kernels}
    keys = {point_key(d, lab) for d, _a, lab in pts}
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        fields, rows = rd.fieldnames, list(rd)
    planned = {point_key(r["dtype"], r["shape"]) for r in rows} & keys
    if not resume:  # the changed rungs' old rows at these points go
        rows = [r for r in rows if not (r["kernel_name"] in wanted and point_key(r["dtype"], r["shape"]) in keys)]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
    have = {point_key(r["dtype"], r["shape"]) for r in rows if r["kernel_name"] in wanted}
    todo = [p for p in pts if point_key(p[0], p[2]) in planned - have]
    t0, failures, n = time.time(), [], 0
    for i, (dtype, args, label) in enumerate(todo):
        if budget and time.time() - t0 > budget:
            progress(f"{op}: budget of {budget:.0f} s spent after {n} points; {len(todo) - i} left (--resume)")
            break
        ks = [k for k in kernels if dtype in takes.get(k, ())]
        if not ks:
            continue
        rc, secs, err = run_point(op, ks, 0, dtype, args, point_repeats(op, dtype, label, repeats), path, False,
                                  at_plan=True)
        if rc != 0:
            failures.append(f"{op} {dtype} {label} at plan: exit {rc}: {err}")
        n += 1
        progress(f"{op} replan [{n}/{len(todo)} {time.time() - t0:.0f} s] {dtype} {label}: {secs:.1f} s"
                 + (f" exit {rc}" if rc else ""))
    return n, time.time() - t0, failures


def main(argv):
    ap = cli.Parser("dispatch_sweep", __doc__)
    ap.add_argument("ops", nargs="*", help="ops (default: every program built)")
    ap.add_argument("--set", choices=["random", "dense"], default="random", help="the set (default random)")
    ap.add_argument("--seed", type=int, help="random: the draw's seed (default: a new one, printed)")
    ap.add_argument("--count", type=int, default=70, help="random: points an op (default 70)")
    ap.add_argument("--budget", type=float, default=0, help="seconds an op at most (default: no limit)")
    ap.add_argument("--repeats", type=int, default=10,
                    help="timed launches a block size at least (default 10; up to 100 at a short point)")
    ap.add_argument("--peers", type=int, default=0,
                    help="cuDNN (kernel 0) and torch.compile at the first K points an op (random draws)")
    ap.add_argument("--out", help="folder of the CSVs (default results/<gpu>/sweeps)")
    ap.add_argument("--resume", action="store_true", help="keep the CSV's points and measure the others")
    ap.add_argument("--device", default="0", help="GPU index (default 0)")
    ap.add_argument("--plans", action="store_true",
                    help="also each rung at its plan's block (--block-size plan), rows to the sweep's _plan.csv")
    ap.add_argument("--retime", type=int, default=2,
                    help="random draws: processes re-timing a point the dispatcher trails by > 1.03x (default 2)")
    ap.add_argument("--match", metavar="REGEX",
                    help="only the set's points whose dtype:label matches (a region measured first, e.g. "
                         "'x[0-9]*[13579]:add')")
    ap.add_argument("--replan", metavar="K,K",
                    help="only the at-plan rows of these rungs, measured again where the sweep has at-plan rows")
    ap.add_argument("--targets", action="store_true", help="exit 1 when the sweep misses a target (above)")
    ap.add_argument("--report", action="store_true",
                    help="measure nothing: the figures of the CSVs in --out (the draw of --seed, or the dense set)")
    a = ap.parse_args(argv[1:])
    unknown = [op for op in a.ops if op not in OPS]
    if unknown:
        ap.error(f"unknown op {' '.join(unknown)} (one of {', '.join(OPS)})")
    if a.count < 1 or a.repeats < 1 or a.budget < 0 or a.peers < 0 or a.retime < 0:
        ap.error("--count and --repeats at least 1, --budget, --peers and --retime at least 0")
    if a.peers and a.set != "random":
        ap.error("--peers: on a random draw (--set random)")
    try:
        match = re.compile(a.match) if a.match else None
    except re.error as e:
        ap.error(f"--match: not a regular expression: {e}")
    replan = None
    if a.replan is not None:
        if not re.fullmatch(r"[0-9]+(,[0-9]+)*", a.replan):
            ap.error(f"--replan: kernel numbers separated by commas, not '{a.replan}'")
        replan = [int(k) for k in a.replan.split(",")]
        if a.report or a.peers or a.plans:
            ap.error("--replan measures the at-plan rows alone: not with --report, --peers or --plans")
        if a.set == "random" and a.seed is None:
            ap.error("--replan on a random draw: give the draw's --seed")
    if a.report:
        return report_stored(ap, a)
    ops = a.ops or [op for op in OPS if op in run_all.built_ops()]
    missing = [op for op in ops if not os.access(os.path.join(ROOT, shapes.program(op)), os.X_OK)]
    if missing:
        ap.error(f"not built: {' '.join(shapes.program(op) for op in missing)} (make)")
    gpus = run_all.gpus()
    if not gpus:
        print("dispatch_sweep: no CUDA device (nvidia-smi lists none)", file=sys.stderr)
        return 2
    os.environ["CUDA_VISIBLE_DEVICES"] = a.device
    name = dict(gpus).get(int(a.device), gpus[0][1]) if a.device.isdigit() else gpus[0][1]
    out = a.out or os.path.join(ROOT, "results", run_all.slugify(name), "sweeps")
    os.makedirs(out, exist_ok=True)
    seed = a.seed if a.seed is not None else shapes.new_seed()
    if a.set == "random":
        print(f"random draw: seed {seed}, {a.count} points an op ({', '.join(ops)})", flush=True)

    def progress(msg):
        print(msg, file=sys.stderr, flush=True)

    failures, paths = [], {}
    for op in ops:
        if a.set == "dense":
            pts = shapes.dense_points(op)
            random.Random(f"dense:{op}").shuffle(pts)  # a cut sweep still covers the space evenly
        else:
            pts = shapes.random_points(op, seed, a.count)
        if match:
            pts = [p for p in pts if match.search(f"{p[0]}:{p[2]}")]
        path = set_csv(out, op, a.set, seed)
        if replan:
            n, secs, fails = replan_op(op, pts, path, a.repeats, a.budget, replan, a.resume, progress)
            print(f"{op}: the plans of {a.replan} at {n} points in {secs:.0f} s -> "
                  f"{os.path.relpath(plan_csv(path), ROOT)}", flush=True)
            failures += fails
            continue
        if a.set == "random" and not a.resume:
            for old in (path, retimed_csv(path), plan_csv(path)):
                if os.path.exists(old):
                    os.remove(old)
        peer_pts = pts[:a.peers]  # cuDNN and torch.compile at the same points, also when --resume skips some
        n, secs, fails = sweep_op(op, pts, path, a.repeats, a.budget, {point_key(d, l) for d, _a, l in peer_pts},
                                  progress, a.plans)
        if a.peers:
            fails += compiled_peer(op, peer_pts, path[:-4] + "_peers.jsonl", progress, a.resume)
        if a.set == "random" and a.retime:
            fails += retime_op(op, pts, path, a.retime, progress)
        print(f"{op}: {n} points in {secs:.0f} s ({secs / max(n, 1):.2f} s a point) -> {os.path.relpath(path, ROOT)}",
              flush=True)
        failures += fails
        paths[op] = path
    if replan:
        for f in failures:
            print(f"FAIL {f}")
        return 1 if failures else 0
    return report(paths, set_name(a.set, seed), a.targets, failures)


def report(paths, what, targets, failures=()):
    """The figures of a set's CSVs ({op: path}): per op, the dispatcher against its best rung as swept and
    re-timed, and over all of them (judge) against the targets and the peers; the failures and, with targets, the
    targets missed, one line each. The exit status: 1 where there is either."""
    pooled = {}
    for op, path in paths.items():
        if os.path.exists(path):
            print(tune_dispatch.regret_report(op, path, what))
            rows = tune_dispatch.load(path)
            if rows:
                disp = max(int(r["kernel"]) for r in rows)
                got = tune_dispatch.sweep_points(rows, disp, peer_rows(path[:-4] + "_peers.jsonl"))
                got = with_retimed(got, retimed_csv(path))
                retimed_report(op, got)
                pooled.update({(op,) + k: p for k, p in got.items()})
    missed = judge(pooled)  # prints the pooled figures; what they miss counts with targets only
    if not targets:
        missed = []
    for f in failures:
        print(f"FAIL {f}")
    for m in missed:
        print(f"MISSED {m}")
    return 1 if failures or missed else 0


def report_stored(ap, a):
    """--report: the figures of a set measured before, perhaps in parts (--budget, --resume), from its CSVs."""
    if a.set == "random" and a.seed is None:
        ap.error("--report on a random draw needs its --seed")
    out = a.out
    if not out:
        gpus = run_all.gpus()
        if not gpus:
            ap.error("--report without a GPU here: give --out, the folder of the CSVs")
        out = os.path.join(ROOT, "results", run_all.slugify(gpus[0][1]), "sweeps")
    paths = {op: set_csv(out, op, a.set, a.seed) for op in (a.ops or OPS)}
    paths = {op: path for op, path in paths.items() if os.path.exists(path)}
    if not paths:
        ap.error(f"no {os.path.basename(set_csv(out, 'OP', a.set, a.seed))} in {out}")
    return report(paths, set_name(a.set, a.seed), a.targets)


def set_csv(out, op, set_, seed):
    """The CSV of an op's dense set or random draw of seed in the folder out."""
    return os.path.join(out, f"{op}_dense.csv" if set_ == "dense" else f"{op}_random_{seed}.csv")


def set_name(set_, seed):
    return set_ + (f" seed {seed}" if set_ == "random" else "")


RETIMED_FIELDS = ["op", "dtype", "shape", "rung", "rung_block", "rung_ms", "dispatch_ms", "swept_ratio",
                  "retimed_ratio", "rounds", "git_rev"]


def retime_op(op, pts, path, rounds, progress):
    """Re-times the points of a random draw's CSV (path) where the dispatcher trails its best rung by more than
    1.03x: `rounds` processes of the rung's block-size sweep and the dispatcher, each process's rung time taken at
    the block the process before found fastest (the sweep's first); rows to path's _retimed.csv, whose points
    (--resume) are kept. The failures, one line each."""
    rows = tune_dispatch.load(path)
    out_path, out, fails = retimed_csv(path), [], []
    if os.path.exists(out_path):
        with open(out_path, newline="") as f:
            out = list(csv.DictReader(f))
    done = {(r["dtype"], r["shape"]) for r in out}
    if not rows:
        return []
    disp = max(int(r["kernel"]) for r in rows)
    args_of = {point_key(d, lab): args for d, args, lab in pts}
    got = tune_dispatch.sweep_points(rows, disp)
    todo = [(key, p) for key, p in sorted(got.items()) if p["disp"] / p["best"][0] > REGRET and key in args_of
            and key not in done]
    progress(f"{op}: re-timing {len(todo)} points the dispatcher trails by more than {REGRET:.2f}x "
             f"({rounds} processes each)")

    def write():  # after every point: a run cut short keeps what it re-timed
        with open(out_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=RETIMED_FIELDS, lineterminator="\n")
            w.writeheader()
            w.writerows(out)
    for (dtype, label), p in todo:
        rung = p["best"][1]
        swept = [r for r in rows if r["status"] == "OK" and (r["dtype"], r["shape"]) == (dtype, label)]
        try:
            procs = [swept] + [dispatch_check.one_process(op, dtype, [*args_of[(dtype, label)], "--validate-first"],
                                                          rung, disp) for _ in range(rounds)]
            rds = dispatch_check.rounds_of(procs, rung, disp, f"{op} {dtype} {label}")
        except RuntimeError as e:
            fails.append(f"{op} {dtype} {label}: re-timing: {e}")
            continue
        ratio, (rm, bs, dm, rev) = dispatch_check.summarize(rds)
        out.append({"op": op, "dtype": dtype, "shape": label, "rung": rung, "rung_block": bs, "rung_ms": f"{rm:.6f}",
                    "dispatch_ms": f"{dm:.6f}", "swept_ratio": f"{p['disp'] / p['best'][0]:.4f}",
                    "retimed_ratio": f"{ratio:.4f}", "rounds": rounds, "git_rev": rev})
        write()
    return fails


def with_retimed(pts, path):
    """sweep_points() with each point's re-timed ratio (the _retimed.csv at path) as p["retimed"], where it has one."""
    if os.path.exists(path):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                key = (r["dtype"], r["shape"])
                if key in pts:
                    pts[key]["retimed"] = float(r["retimed_ratio"])
    return pts


def retimed_report(op, pts):
    """One line: an op's share within 1.03x and worst point, as swept and with the re-timed ratios."""
    n_re = sum("retimed" in p for p in pts.values())
    if not pts or not n_re:
        return
    n, within, (worst, where), *_ = tune_dispatch.regret_figures(pts)
    swept = {k: dict(p) for k, p in pts.items()}
    for p in swept.values():
        p.pop("retimed", None)
    _n, within0, (worst0, _w0), *_ = tune_dispatch.regret_figures(swept)
    print(f"{op}: {n_re} of {n} points re-timed; the dispatcher within 1.03x of its best rung at {within:.1%} "
          f"(as swept {within0:.1%}), worst {worst:.3f}x at {where[0]} {where[1]} (as swept {worst0:.3f}x)")


def compiled_peer(op, pts, path, progress, keep=False):
    """torch.compile at pts (not --pdl ones) through scripts/peers.py --points, its rows as JSON lines into path
    (written whole when peers.py ends, so a run cut short leaves none; keep: an existing file stands, as --resume
    keeps a draw's points); the failures, one line each."""
    todo = [(d, args) for d, args, _label in pts if "--pdl" not in args]
    if keep and os.path.exists(path):
        progress(f"{op}: torch.compile rows kept from {os.path.relpath(path, ROOT)} (--resume)")
        return []
    if os.path.exists(path):
        os.remove(path)
    if not todo:
        return []
    pfile = path[:-6] + ".points"
    with open(pfile, "w") as f:
        f.writelines(f"{d} {' '.join(args)}\n" for d, args in todo)
    progress(f"{op}: torch.compile at {len(todo)} points (scripts/peers.py --points)")
    # --device 0: the one GPU CUDA_VISIBLE_DEVICES (main) shows
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers.py"), "--points", pfile, "--peer",
                        "torch.compile", "--no-write", "--device", "0", op], capture_output=True, text=True)
    os.remove(pfile)
    with open(path + ".part", "w") as f:
        f.write(r.stdout)
    os.replace(path + ".part", path)
    last = (r.stderr.strip().splitlines() or [""])[-1]
    progress(f"{op}: {last}")
    return [] if r.returncode == 0 else [f"{op} torch.compile: exit {r.returncode}: {last[:200]}"]


def peer_rows(path):
    """The OK rows (dicts) of a peers JSON-lines file, [] where there is none."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip().startswith("{")]
    return [r for r in rows if r.get("status") == "OK"]


def judge(pts):
    """The targets a sweep's points (tune_dispatch.sweep_points, over every op) miss, one line each."""
    n, within, (worst, where), geo, near, nc = tune_dispatch.regret_figures(pts)
    print(f"all ops: {n} points; the dispatcher within 1.03x of its best rung at {within:.1%}, worst "
          f"{worst or 0:.3f}x" + (f"; against the better of cuDNN and torch.compile at {nc} points geomean "
                                  f"{geo:.3f}x, within 1.05x at {near:.1%}" if nc else ""))
    out = []
    if not n:
        return ["no point measured"]
    if within < 0.95:
        out.append(f"the dispatcher within 1.03x of its best rung at {within:.1%} of {n} points (target 95%)")
    if worst > 1.10:
        out.append(f"the dispatcher {worst:.3f}x its best rung at {' '.join(where)} (target 1.10x at every point)")
    if nc and geo > 1.0:
        out.append(f"the dispatcher {geo:.3f}x the better peer in geometric mean over {nc} points (target 1.00x)")
    if nc and near < 0.95:
        out.append(f"the dispatcher within 1.05x of the better peer at {near:.1%} of {nc} points (target 95%)")
    return out


if __name__ == "__main__":
    cli.run(main)
