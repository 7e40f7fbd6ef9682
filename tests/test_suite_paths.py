#!/usr/bin/env python3
"""CI test: the dispatcher paths the GPU suite expects agree with the tuned tables in the sources.

The GPU suite (tests/gpu_suite_*.sh) checks at some points that the dispatcher runs a named rung: `expect_path` and
`expect_path_gpu` of LayerNorm's kernel 17 and RMSNorm's kernel 13, BatchNorm's `dispatch`, RMSNorm's captured
launch. When scripts/tune_dispatch.py derives the tables again, those rungs can change, and only a GPU run would
find out. This test reads each such check, builds the key the dispatcher looks up (harness/dispatch.h's
tuned_key_t) from its arguments, looks it up in the source's rows as the dispatcher does (the nearest measured
point; there the GPU's own row before the shared one, PDL before captured before plain), and wants the rung the
check names for the H100, the H200 and another sm_90 GPU. It assumes the row's rung takes the problem (the
programs' supports_ checks ask the runtime): the suite's points are chosen where they do.
"""
import math
import os
import re
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import expect, status  # noqa: E402

VARIANT = {"TV_PLAIN": 0, "TV_FUSED_ADD": 1, "TV_QK_VIEW": 2, "TV_BN_CL": 3, "TV_BN_NCHW": 4, "TV_BN_CL_INF": 5,
           "TV_BN_NCHW_INF": 6}
ROW = re.compile(r'\{(\d+), (\d+), (TV_\w+), (\d), (\d+), (\d+), (\d), (\d+), (\d+)(?:, (?:"([^"]+)"|NULL))?'
                 r'(?:, (\d+))?\},')
H100, H200, OTHER = "NVIDIA H100 80GB HBM3", "NVIDIA H200", "another sm_90 GPU"
PDL, CAPTURED = 1, 2


def table(program):
    """The tuned rows of a program's source, each a dict."""
    with open(os.path.join(ROOT, f"{program}.cu")) as f:
        text = f.read()
    rows = []
    for m in ROW.finditer(text[text.index("// tuned rows: begin"):text.index("// tuned rows: end")]):
        sm, b, v, full, n, c, launch, rung, block, gpu, hw = m.groups()
        rows.append(dict(sm=int(sm), bytes=int(b), variant=VARIANT[v], full=int(full), N=int(n), C=int(c),
                         launch=int(launch), rung=int(rung), block=int(block), gpu=gpu, HW=int(hw or 0)))
    return rows


def pick(rows, gpu, key):
    """The row the dispatcher takes on a GPU of that name (sm_90), ignoring the rungs' supports_ checks."""
    def same_class(r):
        return r["sm"] == 90 and all(r[f] == key[f] for f in ("bytes", "variant", "full"))
    points = {(r["N"], r["C"], r["HW"]) for r in rows if not r["gpu"] and same_class(r)}
    best, bd = None, None
    for r in rows:
        if not same_class(r) or (r["launch"] == PDL and not key["pdl"]) or \
           (r["launch"] == CAPTURED and not key["captured"]):
            continue
        if r["gpu"] and (r["gpu"] != gpu or (r["N"], r["C"], r["HW"]) not in points):
            continue
        hw = 2 * abs(math.log2(key["HW"] / r["HW"])) if r["HW"] > 0 and key["HW"] > 0 else 0.0
        d = 2 * abs(math.log2(key["C"] / r["C"])) + abs(math.log2(key["N"] / r["N"])) + hw
        d += {PDL: 0.0, CAPTURED: 2e-4}.get(r["launch"], 4e-4) + (0.0 if r["gpu"] else 1e-4)
        if bd is None or d < bd:
            best, bd = r, d
    return best


def opts(args):
    """The options of a program's command line (after the kernel) as a dict; flags map to True."""
    out, i = {}, 0
    while i < len(args):
        a = args[i]
        if a in ("--hot", "--pdl", "--inference", "--fused-add", "--check"):
            out[a] = True
            i += 1
        else:
            out[a] = args[i + 1]
            i += 2
    return out


def norm_key(program, o):
    """LayerNorm's and RMSNorm's key: rows, C, element size, variant, packing, PDL, captured."""
    b = 4 if o.get("--dtype", "fp32") == "fp32" else 2
    n, c = int(o.get("-N", 8192)), int(o.get("-C", 768 if program == "layernorm_forward" else 4096))
    variant = 0
    if "--heads" in o:  # RMSNorm's QK view: tokens x heads rows of head-dim
        variant, c = 2, int(o["--head-dim"])
        n = int(o.get("-N", 4096)) * int(o["--heads"])
    elif "--fused-add" in o:
        variant = 1
    return dict(bytes=b, variant=variant, full=int(c % (16 // b) == 0), N=n, C=c, HW=0, pdl=int("--pdl" in o),
                captured=int("--hot" in o))


def bn_key(o):
    """BatchNorm's key: channels contiguous as N*H*W rows of C, NCHW by N, C and H*W (one pixel: the [N, C] view)."""
    b = 4 if o.get("--dtype", "fp32") == "fp32" else 2
    n, c = int(o.get("-N", 65536)), int(o.get("-C", 256))
    hw = int(o.get("--height", 1)) * int(o.get("--width", 1))
    nchw = o.get("--layout", "nc") == "nchw" and hw > 1
    inf = "--inference" in o
    variant = (6 if inf else 4) if nchw else (5 if inf else 3)
    return dict(bytes=b, variant=variant, full=1, N=n if nchw else n * hw, C=c, HW=hw if nchw else 0,
                pdl=int("--pdl" in o), captured=int("--hot" in o))


def suite_calls(path):
    """The suite's lines, backslash continuations joined, each split as the shell would (None where it cannot)."""
    with open(os.path.join(ROOT, path)) as f:
        text = f.read().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.strip()
        try:
            yield line, shlex.split(line, comments=True)
        except ValueError:
            yield line, None


def rung_of(pattern):
    m = re.search(r"rung (\d+)", pattern)
    return int(m.group(1)) if m else None


checks = []  # (what, program, {gpu: expected rung}, key, the tuned point the pattern names or None)
for suite, program, disp in (("tests/gpu_suite_layernorm.sh", "layernorm_forward", "17"),
                             ("tests/gpu_suite_rmsnorm.sh", "rmsnorm_forward", "13")):
    for line, w in suite_calls(suite):
        if not w or w[0] not in ("expect_path", "expect_path_gpu") or w[1] != program or w[2] != disp:
            continue
        want = {H100: w[3], H200: w[3], OTHER: w[3]} if w[0] == "expect_path" else {H100: w[3], H200: w[4], OTHER: w[5]}
        args = w[5:] if w[0] == "expect_path" else w[7:]
        checks.append((f"{program} {disp} {' '.join(args)}", program, {g: rung_of(p) for g, p in want.items()},
                       norm_key(program, opts(args)), None))
    if program == "rmsnorm_forward":  # the captured launch's check (--hot): its command and its sm_90 pattern
        with open(os.path.join(ROOT, suite)) as f:
            text = f.read()
        cmd = re.search(r"out=\$\(\./rmsnorm_forward 13 ([^)]*?) 2>&1\); rc=\$\?\n[^\n]*\n[^\n]*else want=\"([^\"]+)\"", text)
        expect("the suite's captured-launch check is found (rmsnorm_forward 13 ... --hot, its sm_90 pattern)",
               cmd is not None and "--hot" in cmd.group(1), "")
        if cmd:
            args = shlex.split(cmd.group(1))
            tuned = re.search(r"tuned (\d+)x(\d+) captured", cmd.group(2))
            checks.append((f"rmsnorm_forward 13 {cmd.group(1)}", program, dict.fromkeys((H100, H200, OTHER),
                           rung_of(cmd.group(2))), norm_key(program, opts(args)),
                           (int(tuned.group(1)), int(tuned.group(2)), CAPTURED) if tuned else None))
for line, w in suite_calls("tests/gpu_suite_batchnorm.sh"):
    if not w or w[0] != "dispatch" or len(w) < 3 or any("$" in a for a in w[3:]):
        continue
    tuned = re.search(r"\\\[tuned (\d+)x(\d+)(?:x(\d+))?\\\]", w[1])
    checks.append((f"batchnorm_forward 15 {' '.join(w[3:])}", "batchnorm_forward",
                   dict.fromkeys((H100, H200, OTHER), rung_of(w[1])), bn_key(opts(w[3:])),
                   (int(tuned.group(1)), int(tuned.group(2)), 0) if tuned else None))

counts = {p: sum(1 for c in checks if c[1] == p) for p in ("layernorm_forward", "rmsnorm_forward", "batchnorm_forward")}
expect(f"the suite's dispatcher-path checks are found ({counts})", all(v >= 4 for v in counts.values()), str(counts))
tables = {p: table(p) for p in counts}
for what, program, want, key, point in checks:
    got = {g: pick(tables[program], g, key) for g in want}
    bad = [f"{g}: wants rung {want[g]}, the table gives {r and r['rung']} ({r and f'''{r['N']}x{r['C']}'''}"
           f"{' own' if r and r['gpu'] else ''})" for g, r in got.items() if not r or r["rung"] != want[g]]
    # a pattern that names the tuned point ("[tuned NxC]" closed right after it) wants the shared row of that point
    if point:
        for g, r in got.items():
            if r and ((r["N"], r["C"]) != point[:2] or (point[2] == 0 and r["gpu"]) or
                      (point[2] == CAPTURED and r["launch"] != CAPTURED)):
                bad.append(f"{g}: the pattern names tuned {point[0]}x{point[1]}, the table gives {r['N']}x{r['C']}"
                           f"{' (this GPU)' if r['gpu'] else ''} launch {r['launch']}")
    expect(f"suite path: {what}", not bad, "; ".join(bad))
sys.exit(status())
