#!/usr/bin/env python3
"""Reads a program's kernel list from the header comment of its .cu file (no binary, no GPU needed).

    scripts/registry.py layernorm_forward.cu     ->  one "NUMBER  NAME  IDEA" line per kernel

Header lines look like `   7  subwarp-regs-vec   the one idea`, after a line that starts with "Kernels".
"""
import re

import cli


def header_kernels(path):
    """{number: (name, idea)} from the first /* ... */ comment of a .cu file."""
    with open(path, errors="replace") as f:  # a file that is not text has no kernel list, not a decoding error
        text = f.read()
    m = re.search(r"/\*(.*?)\*/", text, re.S)
    if not m:
        return {}
    block = m.group(1)
    start = block.find("Kernels")
    if start < 0:
        return {}
    out = {}
    for line in block[start:].splitlines()[1:]:
        if not line.strip():
            if out:
                break
            continue
        k = re.match(r"^\s+(\d+)\s+(\S+)\s+(.*\S)\s*$", line)
        if not k:
            break
        out[int(k.group(1))] = (k.group(2), k.group(3))
    return out


def main(argv):
    ap = cli.Parser("registry", __doc__)
    ap.add_argument("source", type=cli.readable_file, help="a program's source, e.g. layernorm_forward.cu")
    a = ap.parse_args(argv[1:])
    kernels = header_kernels(a.source)
    if not kernels:
        ap.error(f"no kernel list in the header comment of {a.source}")
    width = max(len(name) for name, _idea in kernels.values())
    for k, (name, idea) in sorted(kernels.items()):
        print(f"{k:4d}  {name:{width}}  {idea}")
    return 0


if __name__ == "__main__":
    cli.run(main)
