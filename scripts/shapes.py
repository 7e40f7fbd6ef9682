#!/usr/bin/env python3
"""The standard benchmark shapes (DESIGN.md), kept in this one place for every script.

    python3 scripts/shapes.py layernorm     ->  one "ROWS COLS" line per shape
"""
import sys

# LayerNorm and RMSNorm: rows x C
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


def main(argv):
    if len(argv) != 2 or argv[1] not in SHAPES:
        print(f"usage: shapes.py {{{'|'.join(SHAPES)}}}", file=sys.stderr)
        return 2
    for shape in SHAPES[argv[1]]:
        print(" ".join(str(v) for v in shape))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
