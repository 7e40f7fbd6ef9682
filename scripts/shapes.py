#!/usr/bin/env python3
"""The standard benchmark points, kept in this one place for every script (run_all, peers, plot, summary,
update_readme).

    python3 scripts/shapes.py OP [--quick | --set standard|latency|odd|tune|dense]   ->  one "DTYPE ARGS..." line per point
    python3 scripts/shapes.py OP --set random [--seed S] [--count K]                  ->  the same, a random draw

A point is (program arguments, label); the label is the program's own CSV shape string. Quick mode runs
each op's default point (the program's default shape) alone. LayerNorm and RMSNorm have two sets: the standard
throughput points, the latency points (the rows of one decode step and single long rows), each of those cold,
hot (--hot: inputs in L2, launches replayed from a CUDA graph) and hot with programmatic dependent launch (the
programs only), and the odd points (few rows of odd length, each beside the same rows at C + 1); every run takes
every set unless one is named. BatchNorm's standard points are seven shapes in
training and the same seven in inference (--inference); its tuning points (training, the programs alone) fill in
the shapes between and beyond them.

Two more sets cover the space rather than the benchmark's points (scripts/dispatch_sweep.py measures them; they are
never part of "every set"):
  dense   the set a dispatcher's rule is derived from: C from 64 to 262,144 every half-octave (rounded to a
          multiple of 8) with odd C beside some, rows every factor of 8 from 1 to what 2 GB holds (and 1024, 2048
          rows between 512 and 4096, where the waves decide the rung), fp32 and bf16,
          cold, and hot and hot+pdl where rows <= 512 (those every octave of C); RMSNorm's fused add (odd lengths
          too) and QK-norm view on a coarser grid (the fused add hot and hot+pdl too); BatchNorm over C and N*H*W
          in each layout in training, inference (elementwise) on a coarser grid.
  random  the set a rule is checked on: --count points drawn with --seed (printed; a new one each run unless
          given): C log-uniform over 64..262,144 (90% multiples of 8, 10% any value), rows log-uniform from 1 to
          what 2 GB holds, fp32, fp16 or bf16, each program's variants (RMSNorm's fused add, QK-norm view and
          Gemma offset; BatchNorm's layouts and inference), cold, or hot or hot+pdl where rows <= 512.
"""
import math
import random
import sys

import cli

# LayerNorm and RMSNorm: rows x C
ROWS_X_C = [(8192, 768), (32768, 128), (32768, 256), (32768, 512), (16384, 1024), (16384, 2048), (16384, 4096),
            (8192, 8192), (4096, 16384), (2048, 32768), (1024, 65536)]


# Latency points: the rows of one decode step at LLM widths, single long rows, one vocabulary-sized row a token
LATENCY_ROWS_X_C = [(n, c) for c in (4096, 8192) for n in (1, 4, 16, 64, 128, 512)] + [(1, 65536), (4, 32768),
                                                                                     (8, 128256)]
# Odd points: rows whose length takes no 16-byte pack (row r starts at element r * C, off a 16-byte boundary):
# an odd C beside C + 1 (even, still no 16-byte pack for fp32 and bf16), 1 to 64 rows
ODD_ROWS_X_C = [(n, c + d) for c in (4097, 16385, 65537, 131073) for d in (0, 1) for n in (1, 4, 16, 64)]
# Timing modes: program arguments and label suffix. hot+pdl (programmatic dependent launch) is the programs' own:
# the PyTorch peers have no such launch; kernel 0 (cuDNN) skips --pdl (its hot launches chain by PDL on their own
# where the program says so).
MODES = {"cold": ([], ""), "hot": (["--hot"], ":hot"), "hot+pdl": (["--hot", "--pdl"], ":hot:pdl")}


def rows_c(rows, cols, extra=(), tag=""):
    return (["-N", str(rows), "-C", str(cols), *extra], f"{rows}x{cols}{tag}")


def image(n, c, h, w, layout):
    return (["--layout", layout, "-N", str(n), "-C", str(c), "--height", str(h), "--width", str(w)],
            f"{n}x{c}x{h}x{w}:{layout}")


BN_TRAINING = [rows_c(65536, 256), rows_c(16384, 1024), rows_c(4096, 4096),
               image(32, 256, 56, 56, "nchw"), image(128, 64, 112, 112, "nchw"),
               image(32, 256, 56, 56, "nhwc"), image(128, 64, 112, 112, "nhwc")]
# BatchNorm's tuning points (training; the programs alone, no peers): where its dispatcher's table has no standard
# point to go by. Channels contiguous ([N, C]; NHWC is the same memory with N*H*W rows): narrow, wide and few
# columns, x from 0.25 MB to over 5x the L2 of an H100; NCHW: planes of 7x7 to 112x112, few and many channels.
BN_TUNE = [rows_c(n, c) for n, c in ((1024, 64), (16384, 64), (262144, 64), (64, 1024), (4096, 512), (131072, 512),
                                     (256, 8192), (32768, 2048), (1024, 16384))] + \
          [image(n, c, h, h, "nchw") for n, c, h in ((256, 512, 7), (16, 2048, 7), (64, 256, 14), (32, 128, 28),
                                                     (8, 64, 112))]

POINTS = {
    "layernorm": {
        "default": rows_c(8192, 768),  # llm.c: B=8, T=1024, C=768
        "full": [rows_c(r, c) for r, c in ROWS_X_C],
        "latency": [rows_c(r, c, *MODES[m]) for m in MODES for r, c in LATENCY_ROWS_X_C],
        "odd": [rows_c(r, c) for r, c in ODD_ROWS_X_C],
    },
    "rmsnorm": {
        "default": rows_c(8192, 4096),
        "full": [rows_c(r, c) for r, c in ROWS_X_C]
        + [rows_c(8192, 4096),  # the program's default
           (["-N", "4096", "--heads", "32", "--head-dim", "128"], "4096x32x128:s12288"),  # QK-norm, q in qkv
           rows_c(8192, 4096, ["--fused-add"], ":add"),
           rows_c(16384, 4096, ["--fused-add"], ":add")],
        "latency": [rows_c(r, c, *MODES[m]) for m in MODES for r, c in LATENCY_ROWS_X_C],
        "odd": [rows_c(r, c) for r, c in ODD_ROWS_X_C],
    },
    "batchnorm": {
        "default": rows_c(65536, 256),
        # training, then the same shapes in inference (y from the running statistics: the copy's bytes)
        "full": BN_TRAINING + [(args + ["--inference"], label + ":inf") for args, label in BN_TRAINING],
        "tune": BN_TUNE,
    },
}
# The backward programs (layernorm_backward, rmsnorm_backward): the forward's throughput and odd points, its latency
# points cold and hot (their kernels take no --pdl), and the variants: --accumulate (dx added into a residual
# stream's gradient), RMSNorm's Gemma offset.
BACKWARD_MODES = {m: MODES[m] for m in ("cold", "hot")}
for _op, _default in (("layernorm", rows_c(8192, 768)), ("rmsnorm", rows_c(8192, 4096))):
    POINTS[f"{_op}_backward"] = {
        "default": _default,
        "full": [rows_c(r, c) for r, c in ROWS_X_C] + [rows_c(16384, 4096, ["--accumulate"], ":acc")]
        + ([rows_c(8192, 4096), rows_c(16384, 4096, ["--weight-offset", "1"], ":off")] if _op == "rmsnorm" else []),
        "latency": [rows_c(r, c, *BACKWARD_MODES[m]) for m in BACKWARD_MODES for r, c in LATENCY_ROWS_X_C],
        "odd": [rows_c(r, c) for r, c in ODD_ROWS_X_C],
    }
FORWARD_OPS = ["layernorm", "rmsnorm", "batchnorm"]
BACKWARD_OPS = ["layernorm_backward", "rmsnorm_backward"]
SHAPES = POINTS  # the ops that have standard points
DTYPES = ["fp32", "bf16"]

# The shapes (CSV labels) of the README's ladder tables: the default, and one other.
LADDER_SHAPES = {
    "layernorm": ["8192x768", "16384x4096"],
    "rmsnorm": ["8192x4096", "32768x128"],
    "batchnorm": ["65536x256", "32x256x56x56:nhwc"],
    "layernorm_backward": ["8192x768", "16384x4096"],
    "rmsnorm_backward": ["8192x4096", "32768x128"],
}


def program(op):
    """The program of an op: layernorm -> layernorm_forward; a backward op is its program's name."""
    return op if op in BACKWARD_OPS else f"{op}_forward"


def latency_labels(op):
    """The labels of an op's latency points, every mode (an empty set for an op without them)."""
    return {label for _args, label in POINTS.get(op, {}).get("latency", [])}


def odd_labels(op):
    """The labels of an op's odd points (an empty set for an op without them)."""
    return {label for _args, label in POINTS.get(op, {}).get("odd", [])}


def tune_labels(op):
    """The labels of an op's tuning points (an empty set for an op without them)."""
    return {label for _args, label in POINTS.get(op, {}).get("tune", [])}


def off_standard_labels(op):
    """The labels of an op's points outside its standard set (latency, odd and tuning points): the tables and
    ranges of the throughput points leave them out."""
    return latency_labels(op) | odd_labels(op) | tune_labels(op)


def default_label(op):
    return POINTS[op]["default"][1]


def default_shape(op, rows):
    """The shape to show an op's CSV rows at: its default point where the rows have it, else their first shape."""
    label = default_label(op) if op in POINTS else None
    return label if any(r["shape"] == label for r in rows) else rows[0]["shape"]


# ---- the dense and random sets
GB2 = 2 ** 31  # "what 2 GB holds": the bytes counted (x read and y written, the residual too) at most this
C_MIN, C_MAX = 64, 262144


def round8(c):
    return max(8, int(round(c / 8.0)) * 8)


def half_octaves(lo, hi, step=0.5):
    """lo * 2^(k * step) for k = 0, 1, ... up to hi, each rounded to a multiple of 8 (no repeats)."""
    out, k = [], 0
    while lo * 2 ** (k * step) <= hi * 1.0001:
        c = round8(lo * 2 ** (k * step))
        if c not in out:
            out.append(c)
        k += 1
    return out


DENSE_C = half_octaves(C_MIN, C_MAX)
# rows without 16-byte packs beside some of DENSE_C: odd lengths, and short rows of twice an odd length (16-bit rows
# 4-byte aligned), where the subwarp rungs compete with the odd-row ones
DENSE_ODD_C = [65, 90, 129, 182, 257, 1025, 3073, 8191, 16385, 65537, 262143]
DENSE_HOT_C = half_octaves(C_MIN, C_MAX, 1.0) + [1025, 16385]  # the hot modes: every octave, two odd
DENSE_HOT_N = [1, 8, 64, 512]
# rows between the grid's 512 and 4096 (7.8 and 15.5 rows an SM on 132 SMs), where the rows' waves decide the rung
DENSE_WAVE_N = [1024, 2048]
# about a row an SM (128 rows: 0.75-1.3 an SM on 100-170 SMs), where a block a row and a row split over several blocks
# trade places; long rows only (at C < 2048 128 rows are a few blocks whichever rung runs), cold, hot and hot+pdl
DENSE_ONE_ROW_N, DENSE_ONE_ROW_C = 128, 2048


def rows_upto(row_bytes, start=1, factor=8):
    """start, start * factor, ... while rows of row_bytes each stay within 2 GB."""
    out, n = [], start
    while n * row_bytes <= GB2:
        out.append(n)
        n *= factor
    return out


def esize(dtype):
    return 4 if dtype == "fp32" else 2


def with_mode(pt, mode):
    args, label = pt
    extra, tag = MODES[mode]
    return (args + extra, label + tag)


def dense_rows_points(op, dtype):
    """LayerNorm's and RMSNorm's dense points of one dtype: (program arguments, label)."""
    e = esize(dtype)
    pts = [rows_c(n, c) for c in sorted(DENSE_C + DENSE_ODD_C) for n in rows_upto(2 * c * e)]
    pts += [rows_c(n, c) for c in DENSE_C for n in DENSE_WAVE_N if n * 2 * c * e <= GB2]
    pts += [with_mode(rows_c(n, c), m) for m in ("hot", "hot+pdl") for c in sorted(DENSE_HOT_C)
            for n in DENSE_HOT_N if n * 2 * c * e <= GB2]
    pts += [with_mode(rows_c(DENSE_ONE_ROW_N, c), m) for m in ("cold", "hot", "hot+pdl")
            for c in (DENSE_C if m == "cold" else sorted(DENSE_HOT_C)) if c >= DENSE_ONE_ROW_C]
    if op == "rmsnorm":  # the variants: fused add every octave of C and every factor of 8 of rows, hot and hot+pdl
        # every four octaves of C; QK-norm's heads of 64, 128 and 256
        add = ["--fused-add"]
        pts += [rows_c(n, c, add, ":add") for c in half_octaves(C_MIN, 65536, 1.0) for n in rows_upto(4 * c * e)]
        pts += [with_mode(rows_c(n, c, add, ":add"), m) for m in ("hot", "hot+pdl")
                for c in half_octaves(256, 65536, 4.0) for n in DENSE_HOT_N if n * 4 * c * e <= GB2]
        # and at odd lengths (no 16-byte packs: the rule had no fused row of them to go by), cold, hot and hot+pdl
        pts += [rows_c(n, c, add, ":add") for c in DENSE_ODD_C if c <= 65537 for n in rows_upto(4 * c * e)]
        pts += [with_mode(rows_c(n, c, add, ":add"), m) for m in ("hot", "hot+pdl") for c in (1025, 16385)
                for n in DENSE_HOT_N if n * 4 * c * e <= GB2]
        pts += [qk_view(t, h, d) for d in (64, 128, 256) for h in (8, 32) for t in rows_upto(2 * 3 * h * d * e)]
    return pts


# The backward programs' variants: (arguments, label tag, tensors of N x C moved: x, dy, dx, and dx read again).
BACKWARD_VARIANTS = {"plain": ([], "", 3), "acc": (["--accumulate"], ":acc", 4),
                     "offset": (["--weight-offset", "1"], ":off", 3)}


def backward_point(n, c, variant, mode="cold"):
    extra, tag, _tensors = BACKWARD_VARIANTS[variant]
    args, label = rows_c(n, c, extra, tag)
    return with_mode((args, label), mode)


def dense_backward_points(op, dtype):
    """The backward programs' dense points of one dtype: as the forward's (x, dy and dx within 2 GB), hot without
    PDL (their kernels take none); --accumulate every octave of C, RMSNorm's Gemma offset every two."""
    e = esize(dtype)
    pts = [backward_point(n, c, "plain") for c in sorted(DENSE_C + DENSE_ODD_C) for n in rows_upto(3 * c * e)]
    pts += [backward_point(n, c, "plain") for c in DENSE_C for n in DENSE_WAVE_N if n * 3 * c * e <= GB2]
    pts += [backward_point(n, c, "plain", "hot") for c in sorted(DENSE_HOT_C) for n in DENSE_HOT_N
            if n * 3 * c * e <= GB2]
    pts += [backward_point(n, c, "acc") for c in half_octaves(C_MIN, C_MAX, 1.0) for n in rows_upto(4 * c * e)]
    if op == "rmsnorm_backward":
        pts += [backward_point(n, c, "offset") for c in half_octaves(C_MIN, C_MAX, 2.0) for n in rows_upto(3 * c * e)]
    return pts


def qk_view(tokens, heads, head_dim):
    """RMSNorm's QK-norm view: q (heads x head_dim a token) inside a qkv buffer of 3 x heads x head_dim a token."""
    return (["-N", str(tokens), "--heads", str(heads), "--head-dim", str(head_dim)],
            f"{tokens}x{heads}x{head_dim}:s{3 * heads * head_dim}")


def bn_nc(m, c, inference):
    args, label = rows_c(m, c)
    return (args + ["--inference"], label + ":inf") if inference else (args, label)


def bn_image(n, c, h, w, layout, inference):
    args, label = image(n, c, h, w, layout)
    return (args + ["--inference"], label + ":inf") if inference else (args, label)


BN_DENSE_C = half_octaves(8, 16384)
BN_PLANES = [(7, 7), (14, 14), (28, 28), (56, 56), (112, 112)]


def dense_bn_points(dtype):
    """BatchNorm's dense points of one dtype: [N, C] (and so NHWC) over C and N*H*W rows, NCHW over C, planes and
    images, training and inference."""
    e = esize(dtype)
    pts = [bn_nc(m, c, False) for c in BN_DENSE_C for m in rows_upto(2 * c * e, 64)]
    pts += [bn_image(n, c, h, w, "nchw", False) for c in half_octaves(16, 2048, 1.0) for h, w in BN_PLANES
            for n in rows_upto(2 * c * h * w * e, 1)]
    pts += [bn_image(n, c, 14, 14, "nhwc", False) for c in (64, 512) for n in rows_upto(2 * c * 196 * e, 1)]
    # inference is elementwise (one pass, y from the running statistics): every octave of C, rows every factor of 64
    pts += [bn_nc(m, c, True) for c in half_octaves(8, 16384, 1.0) for m in rows_upto(2 * c * e, 64, 64)]
    pts += [bn_image(n, c, h, w, "nchw", True) for c in half_octaves(16, 2048, 2.0) for h, w in BN_PLANES[::2]
            for n in rows_upto(2 * c * h * w * e, 1, 64)]
    return pts


def dense_points(op):
    """[(dtype, program arguments, label)] of an op's dense set."""
    if op == "batchnorm":
        return [(d, list(a), lab) for d in DTYPES for a, lab in dense_bn_points(d)]
    if op in BACKWARD_OPS:
        return [(d, list(a), lab) for d in DTYPES for a, lab in dense_backward_points(op, d)]
    return [(d, list(a), lab) for d in DTYPES for a, lab in dense_rows_points(op, d)]


def log_uniform_int(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def random_c(rng, lo=C_MIN, hi=C_MAX):
    c = log_uniform_int(rng, lo, hi)
    return c if rng.random() < 0.1 else min(max(round8(c), lo), hi)


def random_mode(rng, rows):
    return rng.choice(["cold", "hot", "hot+pdl"]) if rows <= 512 else "cold"


def random_point(op, rng):
    """One (dtype, program arguments, label) of an op's random draw."""
    dtype = rng.choice(["fp32", "fp16", "bf16"])
    e = esize(dtype)
    if op == "batchnorm":
        inf = rng.random() < 0.5
        layout = rng.choice(["nc", "nhwc", "nchw"])
        c = random_c(rng, 8, 16384)
        if layout == "nc":
            m = log_uniform_int(rng, 64, max(64, GB2 // (2 * c * e)))
            return (dtype, *bn_nc(m, c, inf))
        h = rng.choice([7, 14, 28, 56, 112])
        n = log_uniform_int(rng, 1, max(1, GB2 // (2 * c * h * h * e)))
        args, label = bn_image(n, c, h, h, layout, inf)
        return (dtype, list(args), label)
    if op in BACKWARD_OPS:  # plain rows, --accumulate, RMSNorm's Gemma offset; cold, or hot where rows <= 512
        variant = rng.choice(["plain", "plain", "acc"] + (["offset"] if op == "rmsnorm_backward" else []))
        c = random_c(rng)
        n = log_uniform_int(rng, 1, max(1, GB2 // (BACKWARD_VARIANTS[variant][2] * c * e)))
        args, label = backward_point(n, c, variant, rng.choice(["cold", "hot"]) if n <= 512 else "cold")
        return (dtype, list(args), label)
    variant = "plain" if op == "layernorm" else rng.choice(["plain", "plain", "fused", "qk", "offset"])
    if variant == "qk":
        d, h = rng.choice([64, 96, 128, 256]), rng.choice([2, 4, 8, 16, 32, 64])
        t = log_uniform_int(rng, 1, max(1, GB2 // (2 * 3 * h * d * e)))
        args, label = qk_view(t, h, d)
        return (dtype, list(args), label)
    c = random_c(rng)
    per_row = (4 if variant == "fused" else 2) * c * e
    n = log_uniform_int(rng, 1, max(1, GB2 // per_row))
    extra, tag = {"plain": ([], ""), "fused": (["--fused-add"], ":add"),
                  "offset": (["--weight-offset", "1"], ":off1")}[variant]
    args, label = rows_c(n, c, extra, tag)
    args, label = with_mode((args, label), random_mode(rng, n))
    return (dtype, list(args), label)


def random_points(op, seed, count):
    """[(dtype, program arguments, label)]: count points of an op drawn with seed (no point twice)."""
    rng = random.Random(f"{op}:{seed}")
    out, seen = [], set()
    tries = 0
    while len(out) < count and tries < 20 * count:
        tries += 1
        pt = random_point(op, rng)
        if (pt[0], pt[2]) not in seen:
            seen.add((pt[0], pt[2]))
            out.append(pt)
    return out


def new_seed():
    """A seed chosen now (nothing can be fitted to it), printed by whoever draws with it."""
    return random.SystemRandom().randrange(1, 10 ** 6)


SETS = ["standard", "latency", "odd", "tune"]
GENERATED = ["dense", "random"]  # the sets that cover the space (never part of "every set")
SET_KEYS = {"standard": "full", "latency": "latency", "odd": "odd", "tune": "tune"}  # a set's key in POINTS[op]
PROGRAMS_ONLY = {"tune"}  # sets the peers do not run (points for the programs' own dispatcher tables)


def points(op, quick=False, sets=None):
    """[(dtype, program arguments, label)] for an op's sweep: its default point (quick), or the points of the
    named sets (None: every set the op has)."""
    if op not in POINTS:
        raise KeyError(f"no standard points for op '{op}'")
    if quick:
        pts = [POINTS[op]["default"]]
    else:
        pts = [pt for name in SETS if name in (sets or SETS) for pt in POINTS[op].get(SET_KEYS[name], [])]
    return [(dtype, list(args), label) for dtype in DTYPES for args, label in pts]


def main(argv):
    ap = cli.Parser("shapes", __doc__)
    ap.add_argument("op", choices=POINTS)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="the default point only")
    g.add_argument("--set", choices=SETS + GENERATED,
                   help="one set of points (default: every set the op has; dense and random only when named)")
    ap.add_argument("--seed", type=int, help="random: the draw's seed (default: a new one, printed on stderr)")
    ap.add_argument("--count", type=int, default=200, help="random: points drawn (default 200)")
    a = ap.parse_args(argv[1:])
    if a.count < 1:
        ap.error(f"--count {a.count}: at least 1")
    if a.set == "dense":
        pts = dense_points(a.op)
    elif a.set == "random":
        seed = a.seed if a.seed is not None else new_seed()
        print(f"seed {seed}", file=sys.stderr)
        pts = random_points(a.op, seed, a.count)
    else:
        pts = points(a.op, a.quick, [a.set] if a.set else None)
    for dtype, pargs, _label in pts:
        print(dtype, " ".join(pargs))
    return 0


if __name__ == "__main__":
    cli.run(main)
