#!/usr/bin/env python3
"""The standard benchmark shapes (DESIGN.md), kept in this one place for every script.

    python3 scripts/shapes.py layernorm [--quick]   ->  one "DTYPE ARGS..." line per point
"""
import sys

# LayerNorm and RMSNorm: rows x C. The first is the op's default (quick mode runs it alone).
ROWS_X_C = [
    (8192, 768),  # llm.c default (B=8, T=1024, C=768)
    (32768, 128),
    (32768, 256),
    (32768, 512),
    (16384, 1024),
    (16384, 2048),
    (16384, 4096),
    (8192, 8192),
    (4096, 16384),
    (2048, 32768),
    (1024, 65536),
]

SHAPES = {
    "layernorm": ROWS_X_C,
    "rmsnorm": ROWS_X_C,
}
DTYPES = ["fp32", "bf16"]

# The shapes of the README's ladder tables: the default, and one with large rows.
LADDER_SHAPES = {
    "layernorm": [(8192, 768), (16384, 4096)],
    "rmsnorm": [(8192, 4096), (32768, 128)],
}


def shape_args(shape):
    rows, cols = shape
    return ["-N", str(rows), "-C", str(cols)], f"{rows}x{cols}"


def points(op, quick=False):
    """[(dtype, program arguments, label)] for an op's standard sweep."""
    if op not in SHAPES:
        raise KeyError(f"no standard shapes for op '{op}'")
    shapes = SHAPES[op][:1] if quick else SHAPES[op]
    out = []
    for dtype in DTYPES:
        for shape in shapes:
            args, label = shape_args(shape)
            out.append((dtype, args, label))
    return out


def main(argv):
    args = [a for a in argv[1:] if a != "--quick"]
    if len(args) != 1 or args[0] not in SHAPES:
        print(f"usage: shapes.py {{{'|'.join(SHAPES)}}} [--quick]", file=sys.stderr)
        return 2
    for dtype, pargs, _label in points(args[0], "--quick" in argv):
        print(dtype, " ".join(pargs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
