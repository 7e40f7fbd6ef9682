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

Then a dry run of the quick suite (`tests/gpu_suite.sh quick`, what `make test` runs on a GPU) in a copy of tests/
whose programs, planted-bug builds and compute-sanitizer are stand-ins that record their command lines (their
--list is the real program's, which needs no GPU): its parts all end, side by side and SUITE_SERIAL=1 give the same
lines, and it still runs every one of the dispatcher-path checks above, every program's kernels in every dtype of
its registry (`all`, cuDNN's kernel 0 with them), one memcheck pass of every kernel but cuDNN's (no sanitizer run
names kernel 0 or all), and each planted bug of SUITE_BUGS.
"""
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

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
commands = []  # each check's command line: (program, kernel or None for the dispatcher, args)
for suite, program, disp in (("tests/gpu_suite_layernorm.sh", "layernorm_forward", "17"),
                             ("tests/gpu_suite_rmsnorm.sh", "rmsnorm_forward", "13")):
    for line, w in suite_calls(suite):
        if not w or w[0] not in ("expect_path", "expect_path_gpu") or w[1] != program or w[2] != disp:
            continue
        want = {H100: w[3], H200: w[3], OTHER: w[3]} if w[0] == "expect_path" else {H100: w[3], H200: w[4], OTHER: w[5]}
        args = w[5:] if w[0] == "expect_path" else w[7:]
        checks.append((f"{program} {disp} {' '.join(args)}", program, {g: rung_of(p) for g, p in want.items()},
                       norm_key(program, opts(args)), None))
        commands.append((program, disp, ["--check"] + args))
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
            commands.append((program, "13", args))
for line, w in suite_calls("tests/gpu_suite_batchnorm.sh"):
    if not w or w[0] != "dispatch" or len(w) < 3 or any("$" in a for a in w[3:]):
        continue
    tuned = re.search(r"\\\[tuned (\d+)x(\d+)(?:x(\d+))?\\\]", w[1])
    checks.append((f"batchnorm_forward 15 {' '.join(w[3:])}", "batchnorm_forward",
                   dict.fromkeys((H100, H200, OTHER), rung_of(w[1])), bn_key(opts(w[3:])),
                   (int(tuned.group(1)), int(tuned.group(2)), 0) if tuned else None))
    commands.append(("batchnorm_forward", None, ["--check"] + w[3:]))  # dispatch(): the dispatcher (15 today)

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

# ---- the dry run of the quick suite
FAKE_PROG = r"""#!/bin/bash
# a program's stand-in: records its command line; --list is the real program's
name=${0##*/}
if [ "$1" = --list ]; then cat "$FAKE_DIR/lists/${name%_bug[0-9]}"; exit 0; fi
echo "${FAKE_UNDER:-run} $name $*" >> "$FAKE_DIR/calls.$$"
echo "$name | FAKE GPU | sm_90 | fake"
echo "block_size  256 | max err abs 0 rel 0 | OK | path fake"
case "$name" in *_bug*) echo FAIL; exit 1 ;; esac
"""
FAKE_SANITIZER = r"""#!/bin/bash
# compute-sanitizer's stand-in: --tool T --error-exitcode 9 ./PROG ARGS
shift 4
FAKE_UNDER=sanitizer "$@"
rc=$?
echo "========= ERROR SUMMARY: 0 errors"
exit $rc
"""
BUGS = "1 3"


def dry_run(tmp, programs, serial):
    """tests/gpu_suite.sh quick in tmp: its output and the command lines it ran, (under, program, argv) each."""
    for f in os.listdir(tmp):
        if f.startswith("calls."):
            os.remove(os.path.join(tmp, f))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUITE_", "SAN_", "PART_", "HAVE_GPU"))}
    # SOURCED_BY_RUNNER: no summary line, and no PyTorch test (the script tests run it)
    env.update(FAKE_DIR=tmp, SANITIZER=os.path.join(tmp, "fake-sanitizer"), SUITE_BUGS=BUGS, SOURCED_BY_RUNNER="1",
               SUITE_SERIAL="1" if serial else "0", SUITE_TIMES=os.path.join(tmp, "times"))
    r = subprocess.run(["bash", "tests/gpu_suite.sh", "quick"], cwd=tmp, env=env, capture_output=True, text=True,
                       timeout=600)
    calls = []
    for f in sorted(os.listdir(tmp)):
        if f.startswith("calls."):
            with open(os.path.join(tmp, f)) as fh:
                calls += [tuple(line.split()[:2]) + (line.split()[2:],) for line in fh]
    return r, calls


programs = sorted(f[:-3] for f in os.listdir(ROOT) if f.endswith("_forward.cu"))
unbuilt = [p for p in programs if not os.access(os.path.join(ROOT, p), os.X_OK)]
if unbuilt:
    print(f"dry run of the quick suite skipped: {', '.join(unbuilt)} not built (make)")
    sys.exit(status())
with tempfile.TemporaryDirectory(prefix="norm_suite_dry_") as tmp:
    shutil.copytree(os.path.join(ROOT, "tests"), os.path.join(tmp, "tests"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.cu", "*.py", "*.h"))
    os.makedirs(os.path.join(tmp, "build"))
    os.makedirs(os.path.join(tmp, "lists"))
    registry = {}  # program: [(kernel, dtypes)]
    for p in programs:
        open(os.path.join(tmp, p + ".cu"), "w").close()  # the suite lists the programs by their sources
        lst = subprocess.run([os.path.join(ROOT, p), "--list"], capture_output=True, text=True,
                             env=dict(os.environ, CUDA_VISIBLE_DEVICES=""), timeout=60).stdout
        with open(os.path.join(tmp, "lists", p), "w") as f:
            f.write(lst)
        registry[p] = [(int(line.split()[0]), line.split()[2].split(",")) for line in lst.splitlines() if line.strip()]
    fakes = [p for p in programs] + [f"build/{p}_bug{b}" for p in programs for b in BUGS.split()] + \
            ["build/test_gpu_inputs"]
    for path, text in [(f, FAKE_PROG) for f in fakes] + [("fake-sanitizer", FAKE_SANITIZER)]:
        with open(os.path.join(tmp, path), "w") as f:
            f.write(text)
        os.chmod(os.path.join(tmp, path), 0o755)

    r, calls = dry_run(tmp, programs, serial=False)
    out = r.stdout + r.stderr
    lines = [line for line in out.splitlines() if re.match(r"(PASS|FAIL|SKIP) ", line)]
    expect("dry run: the quick suite runs to its end", r.returncode == 0 and "ended before its last check" not in out
           and "== GPU suite: the checks that compare measured times" in out and len(lines) > 100,
           f"exit {r.returncode}: {out[-600:]}")
    ops = [p[:-len("_forward")] for p in programs]
    with open(os.path.join(tmp, "times")) as f:
        times = f.read().strip()
    expect("dry run: a part for every program and the shared checks, each with its seconds (and in SUITE_TIMES)",
           all(re.search(rf"^== GPU suite: {p} \(\d+ s\)$", out, re.M) for p in programs) and
           re.search(r"^== GPU suite: the shared checks \(\d+ s\)$", out, re.M) is not None and
           re.fullmatch(", ".join(rf"{op} \d+ s" for op in ops) + r", shared \d+ s, timed alone \d+ s", times),
           "\n".join(line for line in out.splitlines() if line.startswith("==")) + f"\nSUITE_TIMES: {times}")
    r2, calls2 = dry_run(tmp, programs, serial=True)
    lines2 = [line for line in (r2.stdout + r2.stderr).splitlines() if re.match(r"(PASS|FAIL|SKIP) ", line)]
    expect("dry run: side by side and one after the other (SUITE_SERIAL=1), the same checks and verdicts",
           Counter(lines) == Counter(lines2) and Counter(map(str, calls)) == Counter(map(str, calls2)),
           f"{len(lines)} against {len(lines2)} lines, {len(calls)} against {len(calls2)} runs")

    ran = [(prog, argv) for under, prog, argv in calls if under == "run"]
    sanitized = [(prog, argv) for under, prog, argv in calls if under == "sanitizer"]
    for program, kernel, args in commands:
        want = ([kernel] if kernel else [str(registry[program][-1][0])]) + args
        expect(f"dry run: quick mode runs {program} {' '.join(want)}", (program, want) in ran)

    def dtype(argv):
        return argv[argv.index("--dtype") + 1] if "--dtype" in argv else "fp32"
    for p in programs:
        dts = sorted({d for _, ds in registry[p] for d in ds}, key=["fp32", "fp16", "bf16"].index)
        missing = [d for d in dts if not any(q == p and argv[:2] == ["all", "--check"] and dtype(argv) == d
                                             for q, argv in ran)]
        expect(f"dry run: {p} all --check (every kernel, cuDNN's too) in every dtype ({', '.join(dts)})",
               not missing, f"none in {missing}")
        ours = ",".join(str(k) for k, _ in registry[p] if k != 0)
        expect(f"dry run: one memcheck pass of {p}'s kernels but cuDNN's ({ours})",
               any(q == p and argv[0] == ours for q, argv in sanitized))
        for b in BUGS.split():
            expect(f"dry run: planted bug {b} of {p} runs", any(q == f"{p}_bug{b}" for q, _ in ran))
    bad = [f"{q} {' '.join(argv)}" for q, argv in sanitized if argv[0] == "all" or "0" in argv[0].split(",")]
    expect("dry run: no sanitizer run in quick mode names cuDNN's kernel 0 (or all)", not bad, "; ".join(bad[:3]))
    print(f"dry run: {len(lines)} checks, {len(calls)} program runs ({len(sanitized)} under the sanitizer) in quick "
          f"mode: " + ", ".join(f"{op} {sum(1 for q, _ in ran + sanitized if q.startswith(op))}" for op in ops))
sys.exit(status())
