#!/usr/bin/env python3
"""Reads a program's kernel list from the header comment of its .cu file (no binary, no GPU needed).

Header lines look like `   7  subwarp-regs-vec   the one idea`, after a line that starts with "Kernels".
"""
import re


def header_kernels(path):
    """{number: (name, idea)} from the first /* ... */ comment of a .cu file."""
    with open(path) as f:
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
