"""A dispatcher's rule as regimes: a short table of conditions on what a kernel author reasons with, each sending its
region of the shape space to one rung, derived from a sweep that covers the space (scripts/dispatch_sweep.py) and
checked on a sweep it was not derived from. Used by scripts/tune_dispatch.py (--regimes).

The features of a point (computed the same way by a program from its problem and the device it runs on):
  bytes    element size of x: 4 (fp32) or 2 (fp16, bf16)
  packs16  1 where a row (and its stride) takes 16-byte packs, else 0
  variant  plain, add (RMSNorm's fused residual add), qk (its QK-norm view); BatchNorm cl ([N, C], NHWC) or nchw,
           training or inference (cl_inf, nchw_inf)
  launch   cold (a plain launch), hot (captured into a CUDA graph, inputs in L2), pdl (captured, with PDL)
  packs    log2 of the 16-byte packs a row (C x bytes / 16; BatchNorm: of C channels)
  rows_sm  log2 of the rows a streaming multiprocessor (rows / SMs; BatchNorm: N*H*W / SMs)
  plane    BatchNorm NCHW: log2 of H*W (0 elsewhere)
A rung's time at a point is its time at its plan's block where the sweep holds that (dispatch_sweep.py --plans: what
the dispatcher gets of it), else its fastest block size there; a rung that did not run a point (skipped, failed) costs
PENALTY there, unless a second rung of the region takes it (a dispatcher passes over a rung that refuses). The tree
starts with a leaf for each value of its op's ROOTS features (every variant; in the row programs also whether rows
take 16-byte packs, which runs other code in every rung: the two halves share no region) and grows greedily, best
split first, each split on one feature (a categorical one into two groups, a numeric one at a threshold between two
measured values, on a half-octave grid), while a split removes at least MIN_GAIN of summed log-regret and each side
keeps MIN_POINTS points, up to a number of leaves; where no single split of a leaf pays, a split that pays with the
best split of each of its sides (twice MIN_GAIN together: one region of two conditions, such as short rows and many
of them, that neither condition alone isolates). Each leaf is a row: its conditions, its rung.
"""
import math
import os
import re
from collections import defaultdict

import shapes  # (program, BACKWARD_OPS; the callers put scripts/ on the path)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGISTRY_ROW = re.compile(r'^\s*\{(\d+), "([a-z0-9_]+)",')

# The rows that end each program's table: rungs that take every problem of their variants (--list's limits), for: (the variants they hold, or None for every one; rung)
# what no derived row's rung takes: (the variants they hold, or None for every one; the rung's registry name)
FALLBACK = {"layernorm": [(None, "block_reread")], "rmsnorm": [(None, "block2d_vec")],
            "layernorm_backward": [(None, "last_block_reduce")], "rmsnorm_backward": [(None, "last_block_reduce")],
            "batchnorm": [({"cl_inf", "nchw_inf"}, "infer_elementwise"), ({"cl"}, "split_rows"),
                          ({"nchw"}, "nchw_split_planes")]}
# The features the tree first splits a leaf on, a leaf for each value: every op's variants (always), and in the row
# programs rows with and without 16-byte packs (where each side keeps MIN_POINTS points). BatchNorm's packs16 is not a code
# path of its own (its rungs take channels of any count), and a leaf for it costs the two-fold check 3 points.
ROOTS = defaultdict(lambda: ("variant", "packs16"), {"batchnorm": ("variant",)})
PENALTY = math.log(8.0)  # the log-regret of sending a point to a rung that did not run it
MIN_POINTS = 5
MIN_GAIN = 0.02
CATEGORICAL = ("bytes", "packs16", "variant", "launch")
NUMERIC = ("packs", "rows_sm", "plane")
SHAPE = re.compile(r"^(\d+)x(\d+)(?:x(\d+):s(\d+))?((?::add)?)((?::off[^:]*)?)((?::acc)?)((?::hot)?)((?::pdl)?)$")
BN_SHAPE = re.compile(r"^(\d+)x(\d+)(?:x(\d+)x(\d+):(nchw|nhwc))?((?::inf)?)((?::hot)?)((?::pdl)?)$")


def parse_label(label, es):
    """A LayerNorm or RMSNorm CSV shape label (forward or backward) -> (N rows, C, variant, full 16-byte packs, mode), or
    None for a label of another form. Variants: plain, add (the fused add), qk (the QK-norm view), acc (a backward
    program's --accumulate); the weight offset counts as plain (the same bytes and work)."""
    m = SHAPE.match(label)
    if not m:
        return None
    a, b, d, s, add, _off, acc, hot, pdl = m.groups()
    vec = 16 // es
    if d:  # QK-norm: tokens x heads x head_dim, token stride s; the rows are tokens x heads of head_dim
        n, c, variant, full = int(a) * int(b), int(d), "qk", int(d) % vec == 0 and int(s) % vec == 0
    else:
        n, c, variant, full = int(a), int(b), "add" if add else "acc" if acc else "plain", int(b) % vec == 0
    mode = "hot+pdl" if pdl else "hot" if hot else "cold"
    return n, c, variant, full, mode


def features(op, dtype, label, sms):
    """The features (a dict) of a point of op at a CSV shape label on a device of sms SMs, or None."""
    es = 4 if dtype == "fp32" else 2
    vec = 16 // es
    if op == "batchnorm":
        m = BN_SHAPE.match(label)
        if not m:
            return None
        n, c, h, w, layout, inf, hot, pdl = m.groups()
        n, c, hw = int(n), int(c), (int(h) * int(w) if h else 1)
        nchw = layout == "nchw" and hw > 1
        rows, plane = (n * c if nchw else n * hw), (hw if nchw else 1)
        variant = ("nchw" if nchw else "cl") + ("_inf" if inf else "")
        full = (hw % vec == 0) if nchw else (c % vec == 0)
    else:
        got = parse_label(label, es)
        if not got:
            return None
        rows, c, variant, full, mode = got
        if op in shapes.BACKWARD_OPS:  # its dispatcher keys every problem as plain: --accumulate moves a fourth
            variant = "plain"  # tensor through the same kernels
        hot, pdl = mode != "cold", mode == "hot+pdl"
        plane = 1
    return {"bytes": es, "packs16": int(full), "variant": variant,
            "launch": "pdl" if pdl else "hot" if hot else "cold",
            "packs": math.log2(max(c * es / 16.0, 1e-9)), "rows_sm": math.log2(rows / float(sms)),
            "plane": math.log2(plane)}


def source(op):
    """The program source of an op: OP_forward.cu, or a backward op's own (layernorm_backward.cu)."""
    return os.path.join(ROOT, shapes.program(op) + ".cu")


def registry(op):
    """{kernel name: number} of the op's program's registry (k_kernels), as --list prints it."""
    out = {}
    with open(source(op)) as f:
        inside = False
        for line in f:
            if line.startswith("static const kernel_t k_kernels[]"):
                inside = True
            elif inside and line.startswith("};"):
                break
            elif inside:
                m = REGISTRY_ROW.match(line)
                if m:
                    out[m.group(2)] = int(m.group(1))
    return out


def rung_times(rows, disp, names=None, plan_rows=()):
    """{(dtype, shape): {rung: fastest OK median ms over its block sizes}} of a sweep's rows (kernel 0 and the
    dispatcher, the sweep's kernel disp, left out), and {(dtype, shape): the dispatcher's ms} where it ran. names
    ({kernel name: number}, registry()): the rungs by their names in today's registry, a rung no longer in it left
    out; None: by the sweep's numbers. plan_rows: the sweep's rows of each rung at its plan's block
    (scripts/dispatch_sweep.py --plans): at a point they hold, a rung's time is its time there (what the dispatcher
    gets of it), and a rung whose plan did not run the point is out of it (the dispatcher passes over it)."""
    def fastest(rs):
        times = defaultdict(dict)
        for r in rs:
            k, ms = int(r["kernel"]), float(r["time_ms_median"])
            if r["status"] != "OK" or k == disp:
                continue
            if names is not None:
                k = names.get(r["kernel_name"], 0)
            if k != 0:
                key = (r["dtype"], r["shape"])
                times[key][k] = min(ms, times[key].get(k, ms))
        return times
    times, at_plan = fastest(rows), fastest(plan_rows)
    planned = {(r["dtype"], r["shape"]) for r in plan_rows}
    for key in planned & set(times):
        times[key] = at_plan.get(key, {})
    dtimes = {}
    for r in rows:
        if r["status"] == "OK" and int(r["kernel"]) == disp:
            key, ms = (r["dtype"], r["shape"]), float(r["time_ms_median"])
            dtimes[key] = min(ms, dtimes.get(key, ms))
    return {k: t for k, t in times.items() if t}, dtimes


def points_of(op, rows, disp, sms, names=None, plan_rows=()):
    """[(key, features, {rung: ms})] of a sweep (names, plan_rows: as rung_times')."""
    times, _ = rung_times(rows, disp, names, plan_rows)
    out = []
    for key, t in sorted(times.items()):
        f = features(op, key[0], key[1], sms)
        if f is not None and t:
            out.append((key, f, t))
    return out


def leaf_choice(pts, rungs):
    """(cost, (rung, second)) of the rung, and the rung after it for the points it does not take (None: none
    needed), with the least summed log-regret over pts ((key, features, times)): a dispatcher passes over
    a rung that refuses a problem to the next row that holds it. A point neither takes costs PENALTY."""
    def cost(r1, r2):
        tot = 0.0
        for _k, _f, t in pts:
            r = r1 if r1 in t else r2
            tot += math.log(t[r] / min(t.values())) if r in t else PENALTY
        return tot
    best = min((cost(r, None), (r, None)) for r in rungs)
    if any(best[1][0] not in t for _k, _f, t in pts):
        best = min([best] + [(cost(r1, r2) + 1e-9, (r1, r2)) for r1 in rungs for r2 in rungs if r2 != r1])
    return best


def thresholds(values):
    """Split points between consecutive measured values of a numeric feature (log2 scale): in each gap the point of
    the half-octave grid nearest its middle (none where the gap holds no grid point)."""
    vals = sorted(set(values))
    out = []
    for a, b in zip(vals, vals[1:]):
        g = math.floor((a + b) + 0.5) / 2.0  # the half-octave nearest the middle
        cands = [x for x in (g, g - 0.5, g + 0.5) if a < x <= b]
        if cands:
            out.append(min(cands, key=lambda x: abs(x - (a + b) / 2)))
    return out


def splits(pts):
    """Candidate splits of a node: (feature, test description, predicate)."""
    out = []
    for feat in CATEGORICAL:
        vals = sorted({f[feat] for _k, f, _t in pts}, key=str)
        if len(vals) < 2:
            continue
        for v in vals:  # one value against the rest
            out.append((feat, ("in", (v,)), lambda f, feat=feat, v=v: f[feat] == v))
    for feat in NUMERIC:
        vals = [f[feat] for _k, f, _t in pts]
        for th in thresholds(vals):
            out.append((feat, ("lt", th), lambda f, feat=feat, th=th: f[feat] < th))
    return out


def best_split(pts, rungs, ahead=True):
    """(gain, feature, test, left, right) of the split of a node that removes the most summed log-regret; where none
    removes MIN_GAIN and ahead, the split that removes the most with the best split of each side (at least twice
    MIN_GAIN together), its gain counted so; None where no split keeps MIN_POINTS a side."""
    base, _ = leaf_choice(pts, rungs)
    best, sides = None, []
    for feat, test, pred in splits(pts):
        left = [p for p in pts if pred(p[1])]
        right = [p for p in pts if not pred(p[1])]
        if len(left) < MIN_POINTS or len(right) < MIN_POINTS:
            continue
        gain = base - leaf_choice(left, rungs)[0] - leaf_choice(right, rungs)[0]
        sides.append((gain, feat, test, left, right))
        if best is None or gain > best[0] + 1e-12:
            best = (gain, feat, test, left, right)
    if not ahead or best is None or best[0] >= MIN_GAIN:
        return best
    for gain, feat, test, left, right in sides:
        then = sum(max(s[0], 0.0) for s in (best_split(left, rungs, False), best_split(right, rungs, False)) if s)
        if gain + then >= 2 * MIN_GAIN and gain + then > best[0] + 1e-12:
            best = (gain + then, feat, test, left, right)
    return best


def derive(pts, max_leaves=24, op=None):
    """The rule: [(conditions, rung, points, mean log-regret)], conditions a list of (feature, test, negated); the
    op's FALLBACK rows last."""
    rungs = sorted({r for _k, _f, t in pts for r in t})
    # each variant is a problem of its own (its rungs differ), and so, in a row program, are rows with and without
    # 16-byte packs: the tree starts with a leaf for each value of the ROOTS features
    leaves = [([], pts)]
    for feat in ROOTS[op]:
        split = []
        for conds, lp in leaves:
            vals = sorted({f[feat] for _k, f, _t in lp}, key=str)
            parts = [[p for p in lp if p[1][feat] == v] for v in vals]
            if len(vals) > 1 and (feat == "variant" or min(len(part) for part in parts) >= MIN_POINTS):
                split += [(conds + [(feat, ("in", (v,)), False)], part) for v, part in zip(vals, parts)]
            else:
                split.append((conds, lp))
        leaves = split
    while len(leaves) < max_leaves:
        cands = []
        for i, (conds, lp) in enumerate(leaves):
            s = best_split(lp, rungs)
            if s and s[0] >= MIN_GAIN:
                cands.append((s[0], i, s))
        if not cands:
            break
        _gain, i, (_g, feat, test, left, right) = max(cands, key=lambda c: c[0])
        conds, _ = leaves[i]
        leaves[i:i + 1] = [(conds + [(feat, test, False)], left), (conds + [(feat, test, True)], right)]
    rule = []
    for conds, lp in leaves:
        cost, (rung, second) = leaf_choice(lp, rungs)
        rule.append((conds, rung, len(lp), cost / len(lp)))
        if second is not None:  # where rung refuses a point of the region
            rule.append((conds, second, 0, 0.0))
    return rule + fallback_rows(op)


def holds(conds, f):
    for feat, (op, arg), neg in conds:
        ok = f[feat] in arg if op == "in" else f[feat] < arg
        if ok == neg:
            return False
    return True


def fallback_rows(op):
    """FALLBACK's rows of an op as rule rows (their rungs' numbers from the registry)."""
    if op not in FALLBACK:
        return []
    names = registry(op)
    return [([] if vs is None else [("variant", ("in", tuple(sorted(vs))), False)], names[name], 0, 0.0)
            for vs, name in FALLBACK[op]]


def first_row(rule, f, ran=None):
    """The index of the row of a rule (rows that begin with their conditions and rung) a point of features f
    reaches: the first that holds it and whose rung ran the point (ran: the rungs that did; None: the first that
    holds), as a dispatcher passes over a row whose rung refuses a problem; None where none does."""
    return next((i for i, (conds, rung, *_rest) in enumerate(rule)
                 if holds(conds, f) and (ran is None or rung in ran)), None)


def choose(rule, f, t=None):
    """The rung the rule gives a point of features f (first_row; t: its rungs' times), None where no row does."""
    i = first_row(rule, f, t)
    return None if i is None else rule[i][1]


def regret(rule, pts):
    """[(ratio, key, rung chosen, best rung)] of the rule at each point, worst first (inf: the rung did not run)."""
    out = []
    for key, f, t in pts:
        r = choose(rule, f, t)
        best = min(t, key=t.get)
        out.append((t[r] / t[best] if r in t else math.inf, key, r, best))
    return sorted(out, key=lambda x: -x[0])


NAMES = {"bytes": {4: "fp32", 2: "16-bit"}, "packs16": {1: "16-byte packs", 0: "no 16-byte packs"},
         "launch": {"cold": "cold", "hot": "captured", "pdl": "captured+PDL"}}


def words(conds, universe):
    """A row's conditions in words: the values left of each categorical feature (universe: {feature: every value
    the points have}), one interval a numeric feature."""
    lo, hi, allowed = {}, {}, {}
    for feat, (op, arg), neg in conds:
        if op == "in":
            left = allowed.get(feat, set(universe[feat]))
            allowed[feat] = left - set(arg) if neg else left & set(arg)
        elif neg:
            lo[feat] = max(lo.get(feat, -math.inf), arg)
        else:
            hi[feat] = min(hi.get(feat, math.inf), arg)
    parts = []
    for feat in CATEGORICAL:
        if feat in allowed and allowed[feat] != set(universe[feat]):
            names = NAMES.get(feat, {})
            vals = "/".join(str(names.get(v, v)) for v in sorted(allowed[feat], key=str))
            parts.append(vals if feat in NAMES else f"{feat} {vals}")
    for feat in NUMERIC:
        a, b = lo.get(feat), hi.get(feat)
        unit = {"packs": "packs a row", "rows_sm": "rows an SM", "plane": "H*W"}[feat]
        if a is not None and b is not None:
            parts.append(f"{2 ** a:.4g} <= {unit} < {2 ** b:.4g}")
        elif a is not None:
            parts.append(f"{unit} >= {2 ** a:.4g}")
        elif b is not None:
            parts.append(f"{unit} < {2 ** b:.4g}")
    return ", ".join(parts) or "anything"


def universe(pts):
    return {feat: {f[feat] for _k, f, _t in pts} for feat in CATEGORICAL}


def summary(ratios):
    """(points, share within 1.03x, share within 1.10x, worst) of regret()'s ratios."""
    n = len(ratios)
    if not n:
        return 0, 0.0, 0.0, None
    return (n, sum(1 for r in ratios if r[0] <= 1.03) / n, sum(1 for r in ratios if r[0] <= 1.10) / n, ratios[0])



def two_fold(op, pts, dispatcher_ms, max_leaves):
    """Two-fold check on the dense set itself: the rule derived from each half (split by a hash of the point) and
    judged on the other; beside it the measured dispatcher's ratio at the same points. [(rule ratio, dispatcher
    ratio)] over every point."""
    import zlib
    out = []
    for fold in (0, 1):
        half = [p for p in pts if zlib.crc32(repr(p[0]).encode()) % 2 != fold]
        other = {p[0]: p for p in pts if zlib.crc32(repr(p[0]).encode()) % 2 == fold}
        if len(half) < 2 * MIN_POINTS or not other:
            continue
        for ratio, key, _r, _b in regret(derive(half, max_leaves, op), list(other.values())):
            t = other[key][2]
            out.append((ratio, dispatcher_ms.get(key, math.inf) / min(t.values())))
    return out


# ---- the rule as C rows (harness/dispatch.h regime_t), between the program's markers
BEGIN = "// regimes: begin"
END = "// regimes: end"
TV = {"plain": "TV_PLAIN", "add": "TV_FUSED_ADD", "qk": "TV_QK_VIEW", "cl": "TV_BN_CL", "nchw": "TV_BN_NCHW",
      "cl_inf": "TV_BN_CL_INF", "nchw_inf": "TV_BN_NCHW_INF"}
TL = {"cold": "TL_PLAIN", "hot": "TL_CAPTURED", "pdl": "TL_PDL"}


def c_row(conds, rung, universe_):
    """One regime_t initializer of a rule row."""
    lo = {f: -math.inf for f in NUMERIC}
    hi = {f: math.inf for f in NUMERIC}
    allowed = {}
    for feat, (op, arg), neg in conds:
        if op == "in":
            left = allowed.get(feat, set(universe_.get(feat, ())) | set(arg))
            allowed[feat] = left - set(arg) if neg else left & set(arg)
        elif neg:
            lo[feat] = max(lo[feat], arg)
        else:
            hi[feat] = min(hi[feat], arg)
    b = allowed.get("bytes")
    bytes_ = 0 if b is None or len(b) != 1 else next(iter(b))
    pk = allowed.get("packs16")
    packs16 = -1 if pk is None or len(pk) != 1 else next(iter(pk))
    var = allowed.get("variant")
    variants = "0" if var is None else " | ".join(f"TVB({TV[v]})" for v in sorted(var)) or "0"
    ln = allowed.get("launch")
    launches = "0" if ln is None or ln == {"cold", "hot", "pdl"} else " | ".join(f"TLB({TL[v]})" for v in sorted(ln))

    def bound(x, low):
        return ("0" if low else "RG_ANY") if abs(x) == math.inf else f"{2 ** x:.6g}"
    nums = ", ".join(f"{bound(lo[f], True)}, {bound(hi[f], False)}" for f in NUMERIC)
    return f'{{{bytes_}, {packs16}, {variants}, {launches}, {nums}, {rung}, "{words(conds, universe_)}"}},'


def c_rows(op, rule, universe_):
    """The C lines of a rule, markers included."""
    out = [f"{BEGIN} (scripts/tune_dispatch.py {op} --write, from the stored dense sweep; do not edit)",
           "// bytes, 16-byte packs, variants, launches, packs a row [lo, hi), rows an SM [lo, hi), H*W [lo, hi), rung"]
    out += [c_row(conds, rung, universe_) for conds, rung, _n, _m in rule]
    return out + [END]
