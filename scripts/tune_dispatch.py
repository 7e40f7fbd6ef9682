#!/usr/bin/env python3
"""A dispatcher's rule of regimes, derived from a sweep that covers the space, and its regret.

    scripts/tune_dispatch.py OP [--regimes SWEEPS] [--leaves N] [--sms N] [--write | --check]

From SWEEPS/OP_dense.csv (scripts/dispatch_sweep.py --set dense: every rung at each of its block sizes, and the
dispatcher, at points that cover the shape space; default SWEEPS: results/h200/sweeps, the reference GPU's) and the
random draws folded into it (SWEEPS/OP_dense_random_SEED.csv: a draw, once it has checked a rule, renamed so), the
rule (scripts/regimes.py): a short table of regimes, each a condition on what a kernel author reasons with (element
size, whether rows take 16-byte packs, variant, kind of launch, 16-byte packs a row, rows an SM, BatchNorm's plane)
and the rung it runs, grown greedily as a tree that splits where a split saves the most summed log-regret. A rung's
time at a point is its time at its plan's block where the sweep has its at-plan rows beside it (SWEEPS/..._plan.csv,
dispatch_sweep.py --plans: what the dispatcher gets of the rung), else its fastest block size's; the rungs are read
by name from today's registry (a rung removed from the program drops out). Prints the table with each row's points
and mean regret, then the rule's regret
(its rung's time over the best rung's): on the dense set (in sample), on every SWEEPS/OP_random_*.csv (random
draws it was not derived from), on the benchmark's stored sets (results/<gpu>/OP.csv), and two-fold on the dense
set (each half judged by the rule of the other) beside the measured dispatcher at the same points.
--write puts the rule's C rows (harness/dispatch.h's regime_t) into the op's program (OP_forward.cu, or a backward
op's layernorm_backward.cu, rmsnorm_backward.cu) between its `regimes` markers;
--check exits 1 when the source's rows differ from what the sweep gives (CI runs it: a sweep stored without the
rule regenerated, or a rule edited by hand, fails).
"""
import math
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
from summary import load, log_path, open_log  # noqa: E402
import regimes  # noqa: E402
import shapes  # noqa: E402

OPS = shapes.FORWARD_OPS + shapes.BACKWARD_OPS  # (a backward op's rule: once its dense sweep is stored)
SWEEPS = os.path.join(ROOT, "results", "h200", "sweeps")  # the reference GPU's dense sweeps


def sweep_points(rows, disp, peers=()):
    """{(dtype, shape): {"disp": ms, "best": (ms, rung, block), "peer": (ms, name) or absent}} of a sweep's OK rows:
    the dispatcher's median, the fastest median of its rungs (every kernel but 0 and the dispatcher, at any block
    size), the faster of cuDNN (kernel 0) and the peers' rows (peers: dicts with kernel, dtype, shape,
    time_ms_median: scripts/peers.py's)."""
    pts = defaultdict(dict)

    def offer_peer(p, ms, name):
        if "peer" not in p or ms < p["peer"][0]:
            p["peer"] = (ms, name)
    for r in rows:
        if r["status"] != "OK":
            continue
        k, ms = int(r["kernel"]), float(r["time_ms_median"])
        p = pts[(r["dtype"], r["shape"])]
        if k == disp:
            p["disp"] = min(ms, p.get("disp", ms))
        elif k == 0:
            offer_peer(p, ms, "cudnn")
        elif "best" not in p or ms < p["best"][0]:
            p["best"] = (ms, k, int(r["block_size"]))
    for r in peers:
        key = (r["dtype"], r["shape"])
        if key in pts and r.get("time_ms_median"):
            offer_peer(pts[key], float(r["time_ms_median"]), str(r["kernel"]))
    return {key: p for key, p in pts.items() if "disp" in p and "best" in p}


def regret_figures(pts):
    """(points, share within 1.03x, worst ratio and its point, geomean over the better peer, share within 1.05x of
    it, points with a peer) of sweep_points(); a point's ratio is its p["retimed"] where it has one
    (scripts/dispatch_sweep.py --retime)."""
    ratios = sorted(((p.get("retimed", p["disp"] / p["best"][0]), key) for key, p in pts.items()), reverse=True)
    n = len(ratios)
    within = sum(1 for r, _ in ratios if r <= 1.03) / n if n else 0.0
    vs = [p["disp"] / p["peer"][0] for p in pts.values() if p.get("peer")]
    geo = math.exp(sum(math.log(v) for v in vs) / len(vs)) if vs else None
    near = sum(1 for v in vs if v <= 1.05) / len(vs) if vs else None
    return n, within, ratios[0] if ratios else (None, None), geo, near, len(vs)


def regret_report(op, path, what):
    """Lines: the dispatcher over its best rung at a sweep's points (and over cuDNN where it ran: the peers' rows, kept
    apart, are judged over every op by scripts/dispatch_sweep.py), worst first."""
    rows = load(path)
    disp = max(int(r["kernel"]) for r in rows) if rows else 0
    pts = sweep_points(rows, disp)
    n, within, (worst, where), geo, near, nc = regret_figures(pts)
    if not n:
        return f"{op} ({what}): no point with the dispatcher and a rung"
    out = [f"{op} ({what}): {n} points; dispatcher within 1.03x of its best rung at {within:.1%}, "
           f"worst {worst:.3f}x at {where[0]} {where[1]}"]
    if nc:
        out.append(f"{op} ({what}): against cuDNN (kernel 0, the sweep's own rows) at {nc} points: geomean {geo:.3f}x, "
                   f"within 1.05x at {near:.1%}")
    for r, key in sorted(((p["disp"] / p["best"][0], key) for key, p in pts.items()), reverse=True)[:8]:
        if r <= 1.03:
            break
        p = pts[key]
        out.append(f"  {r:.3f}x {key[0]} {key[1]}: dispatcher {p['disp'] * 1e3:.2f} us, rung {p['best'][1]} "
                   f"at {p['best'][2]} threads {p['best'][0] * 1e3:.2f} us")
    return "\n".join(out)

def swept_sms(sweeps, op):
    """The SMs of the GPU a sweeps folder was measured on: the device line of results/<gpu>/<op>.log above it."""
    log = log_path(os.path.dirname(os.path.abspath(sweeps)), op)
    if log:
        with open_log(log) as f:
            m = re.search(r"\| (\d+) SMs \|", f.readline())
        if m:
            return int(m.group(1))
    return None


def write_regimes(a, rule, universe):
    """--regimes with --write or --check: the rule's C rows in OP_forward.cu, between its regimes markers."""
    src = regimes.source(a.op)
    block = regimes.c_rows(a.op, rule, universe)
    with open(src) as f:
        lines = f.read().split("\n")
    at = [i for i, l in enumerate(lines) if l.strip().startswith((regimes.BEGIN, regimes.END))]
    if len(at) != 2 or not lines[at[0]].strip().startswith(regimes.BEGIN):
        print(f"tune_dispatch: {os.path.relpath(src, ROOT)} has no '{regimes.BEGIN}' ... '{regimes.END}' markers",
              file=sys.stderr)
        return 2
    indent = lines[at[0]][:len(lines[at[0]]) - len(lines[at[0]].lstrip())]
    if a.check:
        same = [l.strip() for l in lines[at[0]:at[1] + 1]] == block
        print(f"tune_dispatch: {a.op}: {'the source holds' if same else 'the source DIFFERS from'} the {len(rule)} "
              "regimes the sweep gives" + ("" if same else f" (run scripts/tune_dispatch.py {a.op} --regimes "
                                                          f"{os.path.relpath(os.path.abspath(a.regimes), ROOT)} --write)"))
        return 0 if same else 1
    lines[at[0]:at[1] + 1] = [indent + l for l in block]
    with open(src, "w") as f:
        f.write("\n".join(lines))
    print(f"tune_dispatch: wrote {len(rule)} regimes into {os.path.relpath(src, ROOT)}")
    return 0


PLAN, RETIMED = "_plan.csv", "_retimed.csv"  # beside a sweep's CSV: its at-plan rows, its re-timed points
AUX = (PLAN, RETIMED)


def beside(path, suffix):
    """The file beside a sweep's CSV that ends in suffix (PLAN, RETIMED)."""
    return path[:-4] + suffix


def sweep_file(name, prefix):
    """Whether a file name is a sweep's CSV (not its at-plan or re-timed rows) that begins with prefix."""
    return name.startswith(prefix) and name.endswith(".csv") and not name.endswith(AUX)


def plan_rows(path):
    """The at-plan rows beside a sweep's CSV (scripts/dispatch_sweep.py --plans), [] where it has none."""
    plan = beside(path, PLAN)
    return load(plan) if os.path.exists(plan) else []


def training_files(sweeps, op):
    """The sweeps a rule is derived from: SWEEPS/OP_dense.csv, then every SWEEPS/OP_dense_random_SEED.csv (a random
    draw that has been checked against a rule and then folded into the dense set, renamed so: its points fill in
    where the dense grid is coarse, and the next check is a draw of a new seed)."""
    folded = sorted(p for p in os.listdir(sweeps) if sweep_file(p, f"{op}_dense_random_"))
    return [os.path.join(sweeps, f"{op}_dense.csv")] + [os.path.join(sweeps, p) for p in folded]


def print_regimes(ap, a):
    """--regimes: the rule derived from the dense sweep, its regret there (in sample) and on the random draws."""
    dense = os.path.join(a.regimes, f"{a.op}_dense.csv")
    if not os.path.exists(dense):
        ap.error(f"no {a.op}_dense.csv in {a.regimes} (scripts/dispatch_sweep.py {a.op} --set dense)")
    sms = a.sms or swept_sms(a.regimes, a.op)
    if not sms:
        ap.error(f"the SMs of the GPU of {a.regimes} are not known: give --sms")
    names = regimes.registry(a.op)  # the rungs by name, numbered as the program numbers them today
    files = training_files(a.regimes, a.op)
    pts, dtimes, disps, planned = [], {}, [], 0
    for path in files:
        rows, prows = load(path), plan_rows(path)
        disps.append(max(int(r["kernel"]) for r in rows))
        pts += regimes.points_of(a.op, rows, disps[-1], sms, names, prows)
        dtimes.update(regimes.rung_times(rows, disps[-1])[1])
        planned += len({(r["dtype"], r["shape"]) for r in prows})
    disp = disps[0]  # the dense sweep's dispatcher: the stored sets' too
    if len(pts) < 2 * regimes.MIN_POINTS:
        ap.error(f"{len(pts)} points in {dense}: too few to derive a rule from")
    rule = regimes.derive(pts, a.leaves, a.op)
    folded = len(files) - 1
    print(f"{a.op}: a rule of {len(rule)} regimes from {len(pts)} points of {os.path.relpath(dense, ROOT)}"
          + (f" and {folded} random draws folded into it" if folded else "")
          + f" ({sms} SMs); a rung's time is its time at its plan's block at the {planned} points that have it, "
          "else its fastest block size's")
    print("| # | regime | rung | points | mean regret |")
    print("|---:|---|---:|---:|---:|")
    everything = regimes.universe(pts)
    for i, (conds, rung, n, mean) in enumerate(rule, 1):
        print(f"| {i} | {regimes.words(conds, everything)} | {rung} | {n} | {math.exp(mean):.3f}x |")
    if a.write or a.check:
        return write_regimes(a, rule, everything)
    sets = [("dense and folded draws (in sample)" if folded else "dense (in sample)", pts)]
    for path in sorted(os.listdir(a.regimes)):
        if sweep_file(path, f"{a.op}_random_"):
            rr = load(os.path.join(a.regimes, path))
            sets.append((f"random seed {path[len(a.op) + 8:-4]}",
                         regimes.points_of(a.op, rr, max(int(r['kernel']) for r in rr), sms, names,
                                           plan_rows(os.path.join(a.regimes, path)))))
    stored = os.path.join(os.path.dirname(os.path.abspath(a.regimes)), f"{a.op}.csv")
    if os.path.exists(stored):  # the benchmark's own sets, which the rule was not derived from
        sr = load(stored)
        sets.append((f"the stored sets ({os.path.relpath(stored, ROOT)})", regimes.points_of(a.op, sr, disp, sms, names)))
    for what, ps in sets:
        rg = regimes.regret(rule, ps)
        n, w3, w10, worst = regimes.summary(rg)
        if not n:
            continue
        print(f"{what}: {n} points; the rule's rung within 1.03x of the best rung at {w3:.1%}, within 1.10x at "
              f"{w10:.1%}; worst {worst[0]:.3f}x at {worst[1][0]} {worst[1][1]} (rung {worst[2]}, best {worst[3]})")
    cv = regimes.two_fold(a.op, pts, dtimes, a.leaves)
    if cv:
        share = lambda xs, th: sum(1 for x in xs if x <= th) / len(xs)  # noqa: E731
        rr, dd = [x for x, _ in cv], [y for _, y in cv]
        print(f"two-fold on the dense set ({len(cv)} points, each judged by the rule of the other half): within 1.03x "
              f"at {share(rr, 1.03):.1%}, 1.10x at {share(rr, 1.10):.1%}, worst {max(rr):.3f}x; the measured "
              f"dispatcher there within 1.03x at {share(dd, 1.03):.1%}, 1.10x at {share(dd, 1.10):.1%}, worst "
              f"{max(dd):.3f}x")
    return 0


def main(argv):
    ap = cli.Parser("tune_dispatch", __doc__)
    ap.add_argument("op", choices=OPS)
    ap.add_argument("--regimes", metavar="SWEEPS", type=cli.folder, default=SWEEPS,
                    help="derive the rule from SWEEPS/OP_dense.csv (scripts/dispatch_sweep.py --set dense) and print "
                         "it with its regret there, on every SWEEPS/OP_random_*.csv and on the stored sets "
                         "(default results/h200/sweeps)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="write the rule's rows into the op's program")
    g.add_argument("--check", action="store_true", help="exit 1 when the program's rows differ from the rule's")
    ap.add_argument("--leaves", type=int, default=24, help="rows of the rule at most, before its fallback rows "
                                                           "(default 24)")
    ap.add_argument("--sms", type=int, help="the SMs of the swept GPU (default: read from the first line of the "
                                            "folder above SWEEPS' OP.log)")
    a = ap.parse_args(argv[1:])
    if a.leaves < 1:
        ap.error(f"--leaves {a.leaves}: at least 1")
    return print_regimes(ap, a)


if __name__ == "__main__":
    cli.run(main)
