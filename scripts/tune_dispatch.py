#!/usr/bin/env python3
"""The dispatcher's tuned table, derived from the sweeps of the rungs in results/.

    scripts/tune_dispatch.py OP [--results DIR] [--write | --check]

At every measured point (the rows of results/<gpu>/<op>.csv, every GPU folder), the rung of the ladder (kernel 1
up to the dispatcher, not cuDNN) and block size whose time is nearest the best rung's. LayerNorm and RMSNorm: a
point is rows x C of a variant (plain, RMSNorm's fused add, its QK-norm view) and packing; BatchNorm: channels
contiguous ([N, C], and NHWC as N*H*W rows of C) or NCHW (N, C and the plane's H*W), in training or inference
(its rungs choose their packs themselves: its rows do not split on packing).
The GPUs of one architecture (the CSV's sm column: an H100 and an H200 are both sm_90) share one table. A
point has a row for each kind of launch the dispatcher can tell apart, from the times of the mode that stands for
it: plain launches from the cold times (x not in L2), launches captured into a CUDA graph from the hot times (a
decode step's launches are captured, and their inputs are the last node's outputs, in L2: the programs' --hot),
launches with PDL (--pdl) from the hot+pdl times. The row is the (rung, block) whose worst ratio, over the GPUs,
of its time to the best rung's time there is the smallest. A captured row is written only where its choice
differs from the plain row's, a PDL row only where it differs from the row a PDL launch would take without it
(captured, else plain). Where the row a kind of launch on one GPU would take at a point (in the lookup's order,
below) costs that GPU more than 1% (OWN_OVER), and the same choice made over that GPU's times alone gives another
(rung, block) that costs it less, the point gets a row of that kind for that GPU alone, named by the CSV's gpu
column (the device's name, which the dispatcher compares): a GPU that is not in results/ takes the shared rows.
A candidate must have run at every GPU and mode of the point, with two exceptions: a GPU and mode with no row of
the rung at the point (in any status: a rung skipped or failed there stays asked, and loses) is not asked about
it; a GPU that has rows of a rung at one block size alone at the point, in any status (measured before that rung's
block size was swept: the rung's own choice), is not asked about the rung's other block sizes. Those are judged on
the GPUs that measured them. (A sweep whose other block sizes were skipped has rows of them: it is asked.)

The dispatcher (the last kernel of the program) looks the table up at run time: among the rows of the device's
architecture with the problem's element size, variant and packing (16-byte packs fit the row, or not), the
nearest measured shape (2 |log2 C/C'| + |log2 N/N'| + 2 |log2 HW/HW'|) and there the first row whose rung takes the
problem at that block size, in the order: the device's own PDL row, the shared PDL row (PDL launches), its own
captured row, the shared captured row (captured launches), its own plain row, the shared plain row; its own
fallback rules where no row does.

Prints the table, one line per row with its worst ratio and where (GPU, mode), after a line for each rung and GPU
of an architecture where that GPU has no rows of the rung at points another GPU of it has rows at (with their
count, unless it has none of the rung at all): the rows there are the other GPUs' choice; sweep it there. --write puts
the rows into the program's source between its `tuned rows` markers; --check exits 1 when the source's rows differ
from what the results give (CI runs it: a sweep stored without the table regenerated, or a table edited by hand,
fails).
"""
import math
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
from summary import DISPATCHER, is_program_csv, load  # noqa: E402
import regimes  # noqa: E402
from regimes import parse_label  # noqa: E402  (a LayerNorm/RMSNorm label: written once, there)

OPS = ["layernorm", "rmsnorm", "batchnorm"]
OWN_OVER = 1.01  # a GPU gets its own row of a point where the shared row costs it more than this
# the kinds of launch the dispatcher tells apart (the C rows' launch column, harness/dispatch.h's TL_*), the timing
# mode whose times choose each one's row, and the rows each falls back on, in order
PLAIN, PDL, CAPTURED = 0, 1, 2
MODES = {PLAIN: "cold", CAPTURED: "hot", PDL: "hot+pdl"}
FALLBACK = {PLAIN: (), CAPTURED: (PLAIN,), PDL: (CAPTURED, PLAIN)}
LAUNCH_NAMES = {PLAIN: "plain", PDL: "PDL", CAPTURED: "captured"}
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
VARIANTS = {"plain": "TV_PLAIN", "add": "TV_FUSED_ADD", "qk": "TV_QK_VIEW",  # the C enum of each variant
            "cl": "TV_BN_CL", "nchw": "TV_BN_NCHW", "cl_inf": "TV_BN_CL_INF", "nchw_inf": "TV_BN_NCHW_INF"}
BEGIN = "// tuned rows: begin"
END = "// tuned rows: end"
BN_SHAPE = re.compile(r"^(\d+)x(\d+)(?:x(\d+)x(\d+):(nchw|nhwc))?((?::inf)?)$")


def parse_bn_label(label):
    """A BatchNorm CSV shape label -> (N, C, H*W, variant, True, "cold"), or None for a label of another form. N is
    the rows of C channels where the channels are contiguous ([N, C]; NHWC's N*H*W), H*W is 0 there (no planes);
    NCHW keeps N, C and H*W."""
    m = BN_SHAPE.match(label)
    if not m:
        return None
    n, c, h, w, layout, inf = m.groups()
    n, c, hw = int(n), int(c), int(h) * int(w) if h else 1
    if layout == "nchw" and hw > 1:
        variant, rows, planes = "nchw", n, hw
    else:  # [N, C], NHWC, and NCHW with one pixel (the memory of [N, C])
        variant, rows, planes = "cl", n * hw, 0
    return rows, c, planes, variant + ("_inf" if inf else ""), True, "cold"


def parse_point(op, label, es):
    """(N, C, HW, variant, 16-byte packs, mode) of a CSV row's shape label, or None (HW 0: no planes)."""
    if op == "batchnorm":
        return parse_bn_label(label)
    got = parse_label(label, es)
    return (got[0], got[1], 0, *got[2:]) if got else None


def arch(sm):
    """'sm_90' -> 90."""
    m = re.match(r"^sm_(\d+)$", sm or "")
    return int(m.group(1)) if m else None


def gpu_rows(results, op):
    """{gpu folder name: rows of its <op>.csv} for every folder under results that has one."""
    out = {}
    for d in sorted(os.listdir(results)):
        path = os.path.join(results, d, f"{op}.csv")
        if os.path.isdir(os.path.join(results, d)) and is_program_csv(f"{op}.csv") and os.path.exists(path):
            rows = load(path)
            if rows:
                out[d] = rows
    return out


def choose(by_run, seen):
    """(worst ratio, (rung, block), (gpu, mode) of the worst) of the candidate whose worst ratio over the runs
    {(gpu, mode): {(rung, block): ms}} is the smallest; None when no candidate ran everywhere it is asked. seen:
    {(gpu, mode): {rung: the block sizes with a row there, in any status}}."""
    runs = sorted(by_run)
    best_t = {run: min(by_run[run].values()) for run in runs}
    # the block sizes each GPU has a row of for each rung at this point (in any status: a sweep whose other block
    # sizes were skipped has swept them), over these modes
    blocks = defaultdict(set)
    for (gpu, mode) in runs:
        for rung, held in seen[(gpu, mode)].items():
            blocks[(gpu, rung)] |= held
    scored = []
    for cand in set().union(*(set(by_run[run]) for run in runs)):
        rung, block = cand
        # the runs that must hold it: all but those with no row of the rung and those of a GPU whose one block size
        # of the rung is another (never all: the run that timed the candidate holds it)
        def exempt(run):
            held = blocks[(run[0], rung)]
            return rung not in seen[run] or (len(held) == 1 and block not in held)
        asked = [run for run in runs if not exempt(run)]
        if any(cand not in by_run[run] for run in asked):
            continue
        worst, where = max((by_run[run][cand] / best_t[run], run) for run in asked)
        scored.append((worst, cand, where))
    return min(scored) if scored else None


def own_choice(by_run, seen, gpu, shared):
    """(worst, (rung, block), (gpu, mode)) of a row for one GPU alone at a point, or None: where the shared row's
    (rung, block) costs that GPU more than OWN_OVER over its runs and its own choice there costs it less."""
    mine = {run: cell for run, cell in by_run.items() if run[0] == gpu}
    best_t = {run: min(cell.values()) for run, cell in mine.items()}
    costs = [cell[shared] / best_t[run] for run, cell in mine.items() if shared in cell]
    own = choose(mine, seen) if costs and max(costs) > OWN_OVER else None
    return own if own and own[1] != shared and own[0] < max(costs) else None


def rung_rows(rows):
    """(rung number, row) for each row of a GPU's CSV that is a rung's: not cuDNN (kernel 0), not the dispatcher."""
    disp = {int(r["kernel"]) for r in rows if r["kernel_name"] == DISPATCHER}
    return [(int(r["kernel"]), r) for r in rows if int(r["kernel"]) >= 1 and int(r["kernel"]) not in disp]


def derive(per_gpu):
    """[(sm, es, variant, full, N, C, launch, rung, block, worst, where, gpu name or None, HW)] sorted, from {gpu: rows}:
    the shared rows (None) and the rows of one GPU alone (its CSV gpu name), each after its point's shared row."""
    names = {gpu: rows[0].get("gpu") or gpu for gpu, rows in per_gpu.items()}
    # times[(sm, es, variant, full, N, C, HW)][(gpu, mode)][(rung, block)] = median ms (the fastest row of duplicates)
    times = defaultdict(lambda: defaultdict(dict))
    # seen[point][(gpu, mode)][rung]: the block sizes with a row, in any status
    seen = defaultdict(lambda: defaultdict(lambda: defaultdict(set)))
    for gpu, rows in per_gpu.items():
        for k, r in rung_rows(rows):
            es = DTYPE_BYTES.get(r["dtype"])
            sm = arch(r.get("sm"))
            parsed = parse_point(r.get("op"), r["shape"], es) if es else None
            if parsed is None or sm is None:
                continue
            n, c, hw, variant, full, mode = parsed
            point = (sm, es, variant, full, n, c, hw)
            seen[point][(gpu, mode)][k].add(int(r["block_size"]))
            if r["status"] != "OK":
                continue
            t = float(r["time_ms_median"])
            cell = times[point][(gpu, mode)]
            key = (k, int(r["block_size"]))
            cell[key] = min(t, cell.get(key, t))
    out = []
    for point, by_run in times.items():
        # the (GPU, mode) runs of each kind of launch: a row for each kind, where its choice differs from the row
        # that kind would fall back on (captured -> plain; PDL -> captured, else plain)
        runs = {launch: {run: cell for run, cell in by_run.items() if run[1] == mode} for launch, mode in MODES.items()}
        best = {launch: choose(r, seen[point]) for launch, r in runs.items() if r}
        shared = {}  # launch -> the (rung, block) of the shared row written for it
        for launch in (PLAIN, CAPTURED, PDL):
            got = best.get(launch)
            fall = next((best[f] for f in FALLBACK[launch] if best.get(f)), None)
            if got is None or (fall and fall[1] == got[1]):
                continue
            worst, (rung, block), where = got
            shared[launch] = (rung, block)
            out.append((*point[:6], launch, rung, block, worst, f"{where[0]} {where[1]}", None, point[6]))
        own = defaultdict(dict)  # gpu -> launch -> the (rung, block) of its own row
        for launch in (PLAIN, CAPTURED, PDL):
            for gpu in sorted({run[0] for run in runs[launch]}):
                # what this GPU's launch takes without a row of its own: the next row of the lookup's order (the
                # shared row of the launch, then for each kind it falls back on, the GPU's own row and the shared)
                chain = [shared.get(launch)] + [x for f in FALLBACK[launch] for x in (own[gpu].get(f), shared.get(f))]
                takes = next((x for x in chain if x), None)
                mine = own_choice(runs[launch], seen[point], gpu, takes) if takes else None
                if mine:
                    worst, (rung, block), where = mine
                    own[gpu][launch] = (rung, block)
                    out.append((*point[:6], launch, rung, block, worst, f"{where[0]} {where[1]}", names[gpu], point[6]))
    out.sort(key=lambda r: (r[0], -r[1], list(VARIANTS).index(r[2]), not r[3], r[5], r[12], r[4], r[6], r[11] or ""))
    return out


def unswept(per_gpu):
    """{(sm, rung): {GPU folder: (points it lacks, points)}}: for each rung, the points (dtype and shape) where some GPU
    of an architecture has a row of the rung (any status) and another GPU of it has none, counted for that GPU against
    all the points where the architecture has the rung. That GPU is not asked about the rung there (choose), so the
    table's rows of the rung at those points are the other GPUs' choice; a rung one GPU never ran lacks everywhere."""
    have = defaultdict(lambda: defaultdict(lambda: defaultdict(set)))  # sm -> rung -> gpu -> its (dtype, shape)s
    gpus = defaultdict(set)  # sm -> the GPU folders with rows of that architecture
    for gpu, rows in per_gpu.items():
        for k, r in rung_rows(rows):
            sm = arch(r.get("sm"))
            if sm is not None:
                have[sm][k][gpu].add((r["dtype"], r["shape"]))
                gpus[sm].add(gpu)
    out = {}
    for sm in sorted(have):
        for k in sorted(have[sm]):
            points = set().union(*have[sm][k].values())
            lack = {g: (len(points - have[sm][k].get(g, set())), len(points)) for g in sorted(gpus[sm])}
            lack = {g: v for g, v in lack.items() if v[0]}
            if lack:
                out[(sm, k)] = lack
    return out


def c_rows(op, table, sources):
    """The source lines of the block, markers included (indented by the caller)."""
    lines = [BEGIN + f" (scripts/tune_dispatch.py {op} --write; do not edit), from",
             *(f"// {s}" for s in sources),
             "// sm, bytes, variant, 16-byte packs, N, C, launch (0 plain, 1 PDL, 2 captured), rung, block[, GPU]" +
             (" (NCHW: GPU or NULL, the planes' H*W)" if any(r[12] for r in table) else "") +
             "    worst time over the best rung's (GPU, mode)"]
    for sm, es, variant, full, n, c, launch, rung, block, worst, where, gpu, hw in table:
        own = f', "{gpu}"' if gpu else ", NULL" if hw else ""
        own += f", {hw}" if hw else ""
        lines.append(f"{{{sm}, {es}, {VARIANTS[variant]}, {int(full)}, {n}, {c}, {launch}, {rung}, {block}{own}}},  "
                     f"// {worst:.3f} {where}")
    lines.append(END)
    return lines


def source_block(path):
    """(lines before, the block's lines, lines after) of a program source; ValueError without the markers."""
    with open(path) as f:
        lines = f.read().split("\n")
    starts = [i for i, l in enumerate(lines) if l.strip().startswith(BEGIN)]
    ends = [i for i, l in enumerate(lines) if l.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(f"{path}: expected one '{BEGIN}' line and one '{END}' line after it")
    return lines[:starts[0]], [l.strip() for l in lines[starts[0]:ends[0] + 1]], lines[ends[0] + 1:]



# ---- regret: the dispatcher against its own rungs (and cuDNN) at each point of a sweep (scripts/dispatch_sweep.py)
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
    it, points with a peer) of sweep_points()."""
    ratios = sorted(((p["disp"] / p["best"][0], key) for key, p in pts.items()), reverse=True)
    n = len(ratios)
    within = sum(1 for r, _ in ratios if r <= 1.03) / n if n else 0.0
    vs = [p["disp"] / p["peer"][0] for p in pts.values() if p.get("peer")]
    geo = math.exp(sum(math.log(v) for v in vs) / len(vs)) if vs else None
    near = sum(1 for v in vs if v <= 1.05) / len(vs) if vs else None
    return n, within, ratios[0] if ratios else (None, None), geo, near, len(vs)


def regret_report(op, path, what):
    """Lines: the dispatcher over its best rung at a sweep's points (and over cuDNN where it ran), worst first."""
    rows = load(path)
    disp = max(int(r["kernel"]) for r in rows) if rows else 0
    pts = sweep_points(rows, disp)
    n, within, (worst, where), geo, near, nc = regret_figures(pts)
    if not n:
        return f"{op} ({what}): no point with the dispatcher and a rung"
    out = [f"{op} ({what}): {n} points; dispatcher within 1.03x of its best rung at {within:.1%}, "
           f"worst {worst:.3f}x at {where[0]} {where[1]}"]
    if nc:
        out.append(f"{op} ({what}): against the better peer at {nc} points: geomean {geo:.3f}x, within 1.05x at "
                   f"{near:.1%}")
    for r, key in sorted(((p["disp"] / p["best"][0], key) for key, p in pts.items()), reverse=True)[:8]:
        if r <= 1.03:
            break
        p = pts[key]
        out.append(f"  {r:.3f}x {key[0]} {key[1]}: dispatcher {p['disp'] * 1e3:.2f} us, rung {p['best'][1]} "
                   f"at {p['best'][2]} threads {p['best'][0] * 1e3:.2f} us")
    return "\n".join(out)

def swept_sms(sweeps, op):
    """The SMs of the GPU a sweeps folder was measured on: the device line of results/<gpu>/<op>.log above it."""
    log = os.path.join(os.path.dirname(os.path.abspath(sweeps)), f"{op}.log")
    if os.path.exists(log):
        with open(log) as f:
            m = re.search(r"\| (\d+) SMs \|", f.readline())
        if m:
            return int(m.group(1))
    return None


def write_regimes(a, rule, universe):
    """--regimes with --write or --check: the rule's C rows in OP_forward.cu, between its regimes markers."""
    src = os.path.join(ROOT, f"{a.op}_forward.cu")
    block = regimes.c_rows(a.op, rule, universe, os.path.relpath(os.path.abspath(a.regimes), ROOT))
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
                                                          f"{block[0].split('--regimes ')[1].split()[0]} --write)"))
        return 0 if same else 1
    lines[at[0]:at[1] + 1] = [indent + l for l in block]
    with open(src, "w") as f:
        f.write("\n".join(lines))
    print(f"tune_dispatch: wrote {len(rule)} regimes into {os.path.relpath(src, ROOT)}")
    return 0


def print_regimes(ap, a):
    """--regimes: the rule derived from the dense sweep, its regret there (in sample) and on the random draws."""
    dense = os.path.join(a.regimes, f"{a.op}_dense.csv")
    if not os.path.exists(dense):
        ap.error(f"no {a.op}_dense.csv in {a.regimes} (scripts/dispatch_sweep.py {a.op} --set dense)")
    sms = a.sms or swept_sms(a.regimes, a.op)
    if not sms:
        ap.error(f"the SMs of the GPU of {a.regimes} are not known: give --sms")
    rows = load(dense)
    disp = max(int(r["kernel"]) for r in rows)
    names = regimes.registry(a.op)  # the rungs by name, numbered as the program numbers them today
    pts = regimes.points_of(a.op, rows, disp, sms, names)
    if len(pts) < 2 * regimes.MIN_POINTS:
        ap.error(f"{len(pts)} points in {dense}: too few to derive a rule from")
    rule = regimes.derive(pts, a.leaves, a.op)
    print(f"{a.op}: a rule of {len(rule)} regimes from {len(pts)} points of {os.path.relpath(dense, ROOT)} "
          f"({sms} SMs); a rung's time is its fastest block size's")
    print("| # | regime | rung | points | mean regret |")
    print("|---:|---|---:|---:|---:|")
    everything = regimes.universe(pts)
    for i, (conds, rung, n, mean) in enumerate(rule, 1):
        print(f"| {i} | {regimes.words(conds, everything)} | {rung} | {n} | {math.exp(mean):.3f}x |")
    if a.write or a.check:
        return write_regimes(a, rule, everything)
    sets = [("dense (in sample)", pts)]
    for path in sorted(os.listdir(a.regimes)):
        if path.startswith(f"{a.op}_random_") and path.endswith(".csv"):
            rr = load(os.path.join(a.regimes, path))
            sets.append((f"random seed {path[len(a.op) + 8:-4]}",
                         regimes.points_of(a.op, rr, max(int(r['kernel']) for r in rr), sms, names)))
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
    cv = regimes.two_fold(a.op, pts, regimes.rung_times(rows, disp)[1], a.leaves)
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
    ap.add_argument("--results", type=cli.folder, default=os.path.join(ROOT, "results"),
                    help="the folder of GPU folders (default results/)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="write the rows into OP_forward.cu (with --regimes: the rule's)")
    g.add_argument("--check", action="store_true", help="exit 1 when OP_forward.cu's rows differ (with --regimes: the "
                                                        "rule's)")
    ap.add_argument("--regimes", metavar="SWEEPS", type=cli.folder,
                   help="derive a rule of regimes from SWEEPS/OP_dense.csv (scripts/dispatch_sweep.py) and print it "
                        "with its regret there, on every SWEEPS/OP_random_*.csv and on the stored sets")
    ap.add_argument("--leaves", type=int, default=24, help="--regimes: rows of the rule at most (default 24)")
    ap.add_argument("--sms", type=int, help="--regimes: the SMs of the swept GPU (default: read from the first "
                                            "line of the folder above SWEEPS' OP.log)")
    a = ap.parse_args(argv[1:])
    if a.regimes:
        return print_regimes(ap, a)
    per_gpu = gpu_rows(a.results, a.op)
    if not per_gpu:
        ap.error(f"no {a.op}.csv under {a.results}")
    table = derive(per_gpu)
    if not table:
        ap.error(f"no rung rows of {a.op} with a shape to tune on under {a.results}")
    for (sm, k), lack in unswept(per_gpu).items():
        for gpu, (miss, of) in lack.items():
            where = "" if miss == of else f" at {miss} of the {of} points the GPUs of sm_{sm} ran it at"
            print(f"tune_dispatch: {a.op}: rung {k} has no rows from {gpu}{where} (sm_{sm}): its rows there are the "
                  "other GPUs' choice")
    src = os.path.join(ROOT, f"{a.op}_forward.cu")
    block = c_rows(a.op, table, [f"results/{g}/{a.op}.csv" for g in per_gpu])
    if a.write or a.check:
        try:
            before, old, after = source_block(src)
        except ValueError as e:
            print(f"tune_dispatch: {e}", file=sys.stderr)
            return 2
        if a.check:
            same = old == block
            print(f"tune_dispatch: {a.op}: {'the source holds' if same else 'the source DIFFERS from'} the "
                  f"{len(table)} rows the results give" + ("" if same else f" (run scripts/tune_dispatch.py {a.op} --write)"))
            return 0 if same else 1
        with open(src, "w") as f:
            f.write("\n".join(before + ["    " + l for l in block] + after))
        print(f"tune_dispatch: wrote {len(table)} rows into {os.path.relpath(src, ROOT)}")
        return 0
    print(f"{a.op}: the dispatcher's tuned rows from {', '.join(per_gpu)}")
    print("| sm | bytes | variant | 16-byte packs | N | C | H*W | launch | rung | block | worst ratio | where | GPU |")
    print("|---:|---:|---|---|---:|---:|---:|---|---:|---:|---:|---|---|")
    for sm, es, variant, full, n, c, launch, rung, block_size, worst, where, gpu, hw in table:
        print(f"| {sm} | {es} | {variant} | {'yes' if full else 'no'} | {n} | {c} | {hw or '-'} | {LAUNCH_NAMES[launch]} | "
              f"{rung} | {block_size} | {worst:.3f} | {where} | {gpu or 'all'} |")
    # the rows over OWN_OVER where the GPU that pays it has no row of its own at the point
    key = lambda r: (r[:7] + (r[12],), r[10].split()[0])  # noqa: E731
    own_at = {key(r) for r in table if r[11]}
    over = [r for r in table if r[9] > OWN_OVER and key(r) not in own_at]
    own = sum(1 for r in table if r[11])
    print(f"\n{len(table)} rows ({own} of one GPU alone); {len(over)} with a worst ratio over {OWN_OVER} that no row of one GPU replaces" +
          (": " + ", ".join(f"{r[4]}x{r[5]}{f'x{r[12]}' if r[12] else ''} {r[1]}B {r[2]}{' ' + LAUNCH_NAMES[r[6]] if r[6] else ''} "
                            f"{r[9]:.3f} ({r[10]})" for r in over) if over else ""))
    return 0


if __name__ == "__main__":
    cli.run(main)
