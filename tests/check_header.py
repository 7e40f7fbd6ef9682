#!/usr/bin/env python3
"""Checks that a program's header comment lists the same kernels as its registry (--list output).

--list lines look like ` 7  subwarp-regs-vec   fp32,fp16,bf16  limits ...  idea ...`; the header's number,
name and idea must agree with them. Usage: check_header.py PROGRAM.cu "LIST OUTPUT"
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from registry import header_kernels  # noqa: E402


def list_kernels(listing):
    out = {}
    for line in listing.splitlines():
        k = re.match(r"^\s*(\d+)\s+(\S+)\s+(.*\S)\s*$", line)
        if k:
            out[int(k.group(1))] = (k.group(2), k.group(3))
    return out


def main():
    header = header_kernels(sys.argv[1])
    listed = list_kernels(sys.argv[2])
    ok = bool(header) and sorted(header) == sorted(listed)
    if not ok:
        print(f"  kernel numbers differ: header {sorted(header)} vs --list {sorted(listed)}")
    for n in sorted(set(header) & set(listed)):
        (hname, hidea), (lname, lrest) = header[n], listed[n]
        if hname != lname or not lrest.endswith(hidea):
            print(f"  kernel {n}: header '{hname}: {hidea}' vs --list '{lname} ... {lrest}'")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
