#!/usr/bin/env python3
"""The standard benchmark points, kept in this one place for every script (run_all, peers, plot, summary,
update_readme).

    python3 scripts/shapes.py OP [--quick | --set standard|latency|odd|tune]   ->  one "DTYPE ARGS..." line per point

A point is (program arguments, label); the label is the program's own CSV shape string. Quick mode runs
each op's default point (the program's default shape) alone. LayerNorm and RMSNorm have two sets: the standard
throughput points, the latency points (the rows of one decode step and single long rows), each of those cold,
hot (--hot: inputs in L2, launches replayed from a CUDA graph) and hot with programmatic dependent launch (the
programs only), and the odd points (few rows of odd length, each beside the same rows at C + 1); every run takes
every set unless one is named. BatchNorm's standard points are seven shapes in
training and the same seven in inference (--inference); its tuning points (training, the programs alone) fill in
the shapes between and beyond them that its dispatcher's table is derived from.
"""
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
SHAPES = POINTS  # the ops that have standard points
DTYPES = ["fp32", "bf16"]

# The shapes (CSV labels) of the README's ladder tables: the default, and one other.
LADDER_SHAPES = {
    "layernorm": ["8192x768", "16384x4096"],
    "rmsnorm": ["8192x4096", "32768x128"],
    "batchnorm": ["65536x256", "32x256x56x56:nhwc"],
}


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


SETS = ["standard", "latency", "odd", "tune"]
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
    g.add_argument("--set", choices=SETS, help="one set of points (default: every set the op has)")
    a = ap.parse_args(argv[1:])
    for dtype, pargs, _label in points(a.op, a.quick, [a.set] if a.set else None):
        print(dtype, " ".join(pargs))
    return 0


if __name__ == "__main__":
    cli.run(main)
