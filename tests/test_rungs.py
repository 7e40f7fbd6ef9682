#!/usr/bin/env python3
"""Each rung of each program reads as a unit: for every registry name N of OP_forward.cu, the last `__global__`
declaration that names OP_N and the definition of launch_N( stand within 60 lines of each other, launch_N comes
after the kernel, the registry line points to launch_N (and to supports_N where that exists), and the last number is
the dispatcher ("dispatch"), which has no kernel of its own. Kernel 0 (cudnn) and the dispatcher have no
__global__: for them launch_N must exist. Exit 1 on the first program that breaks a rule (all are listed)."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NEAR = 60


def registry(src):
    """[(number, name, entry text)] of k_kernels[]."""
    m = re.search(r"static const kernel_t k_kernels\[\] = \{(.*?)\n\};", src, re.S)
    if not m:
        return []
    body = m.group(1)
    starts = list(re.finditer(r"\{\s*(\d+),\s*\"([^\"]+)\"", body))
    out = []
    for i, s in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(body)
        out.append((int(s.group(1)), s.group(2), body[s.start():end]))
    return out


def check(prog):
    path = os.path.join(ROOT, f"{prog}_forward.cu")
    with open(path) as f:
        src = f.read()
    lines = src.split("\n")
    op = prog
    problems = []
    reg = registry(src)
    if not reg:
        return [f"{prog}: no k_kernels[] registry"]
    nums = [n for n, _, _ in reg]
    if nums != list(range(len(reg))):
        problems.append(f"{prog}: registry numbers {nums} are not 0..{len(reg) - 1} in order")
    if reg[-1][1] != "dispatch":
        problems.append(f"{prog}: the last number ({reg[-1][0]}) is '{reg[-1][1]}', not the dispatcher")
    if reg[0][1] != "cudnn":
        problems.append(f"{prog}: kernel 0 is '{reg[0][1]}', not cudnn")
    for n, name, entry in reg:
        if not re.fullmatch(r"[a-z0-9_]+", name):
            problems.append(f"{prog} {n}: registry name '{name}' is not an identifier fragment (grep finds no code)")
            continue
        launch = [i for i, l in enumerate(lines) if re.match(rf"static void launch_{name}\(", l)]
        if len(launch) != 1:
            problems.append(f"{prog} {n} {name}: {len(launch)} definitions of launch_{name}(")
            continue
        if f"launch_{name}" not in entry:
            problems.append(f"{prog} {n} {name}: its registry line does not name launch_{name}")
        if re.search(rf"static const char \*supports_{name}\(", src) and f"supports_{name}" not in entry:
            problems.append(f"{prog} {n} {name}: supports_{name} exists but its registry line does not name it")
        kern = [i for i, l in enumerate(lines) if "__global__" in l and re.search(rf"\b{op}_{name}(_[a-z0-9_]+)?_kernel\b",
                                                                                   l + (lines[i + 1] if i + 1 < len(lines) else ""))]
        if name in ("cudnn", "dispatch"):
            if kern:
                problems.append(f"{prog} {n} {name}: has a __global__ of its own (line {kern[-1] + 1})")
            continue
        if not kern:
            problems.append(f"{prog} {n} {name}: no __global__ {op}_{name}[_part]_kernel")
            continue
        d = launch[0] - kern[-1]
        if not 0 < d <= NEAR:
            problems.append(f"{prog} {n} {name}: kernel at line {kern[-1] + 1}, launch_{name} at line {launch[0] + 1} "
                            f"({d} lines; wanted after it, within {NEAR})")
    return problems


def main():
    progs = sys.argv[1:] or ["layernorm", "rmsnorm", "batchnorm"]
    problems = [p for prog in progs for p in check(prog)]
    for p in problems:
        print(f"FAIL {p}")
    if not problems:
        print(f"PASS every rung of {', '.join(progs)}: kernel, then its launcher within {NEAR} lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
