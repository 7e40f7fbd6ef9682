#!/usr/bin/env python3
"""CI test: the dispatcher paths the GPU suite expects agree with the rules of regimes in the sources.

The GPU suite (tests/gpu_suite_*.sh; the backward programs' shared part names its program $P) checks at points of
each dispatcher's rule that the dispatcher runs the rung of that point's regime: `expect_path PROG DISPATCHER "rung R
name" ...`. When scripts/tune_dispatch.py derives a
rule again, its rows can change, and only a GPU run would find out. This test reads each such check, builds the key
the dispatcher computes (harness/dispatch.h's regime_key, as scripts/regimes.py's features()) from its arguments,
takes the rows of the source's k_regimes that hold it on a GPU of 100, 132 and 170 SMs, and wants the rung the
check names to be the first one's, or a later one's where the rungs before refuse the point (the supports_ checks
ask the runtime: the GPU run of the check sees them); the suite's points lie well inside their regions (a region
whose rows an SM span less than 170 / 100 holds no problem at all three: its check is read at 132 SMs, the
H200's). A check that names a later row's rung stands on the earlier rows' rungs refusing the point: where their
limits, as --list words them, say they take it, the check is wrong (the GPU run would find the first one running it).
Every row of a rule that a problem reaches first (not a row whose rung runs where an earlier one of the
same region refuses, nor the fallback rows that end the table) is the target of at least one check. A check
whose own rung refuses its point by those limits is wrong too (a packs limit counts packs of the rung's width: the
widest of 16 bytes that divides the row, one element in an odd fp32 row).

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

VARIANTS = ("TV_PLAIN", "TV_FUSED_ADD", "TV_QK_VIEW", "TV_BN_CL", "TV_BN_NCHW", "TV_BN_CL_INF", "TV_BN_NCHW_INF")
LAUNCHES = {"TL_PLAIN": "cold", "TL_PDL": "pdl", "TL_CAPTURED": "hot"}
NUM = r"(RG_ANY|[0-9.e+-]+)"
REGIME = re.compile(r'\{(\d+), (-?\d+), ([^,]+), ([^,]+), ' + ", ".join([NUM] * 6) + r', (\d+), "([^"]*)"\},')
SMS = (100, 132, 170)
H200_SMS = 132


def bits(text, names):
    """The names a TVB(...) | TVB(...) mask holds (None: 0, every one)."""
    text = text.strip()
    return None if text == "0" else {n for n in names if f"({n})" in text}


def table(program):
    """The regime rows of a program's source, each a dict."""
    with open(os.path.join(ROOT, f"{program}.cu")) as f:
        text = f.read()
    rows = []
    for m in REGIME.finditer(text[text.index("// regimes: begin"):text.index("// regimes: end")]):
        b, pk, v, ln, *nums, rung, when = m.groups()
        lo_hi = [math.inf if x == "RG_ANY" else float(x) for x in nums]
        vs = bits(v, VARIANTS)
        ls = bits(ln, LAUNCHES)
        rows.append(dict(bytes=int(b), packs16=int(pk), variants=vs and {VARIANTS.index(x) for x in vs},
                         launches=ls and {LAUNCHES[x] for x in ls}, packs=lo_hi[0:2], rows=lo_hi[2:4],
                         plane=lo_hi[4:6], rung=int(rung), when=when))
    return rows


def holds(r, k, sms):
    rows_sm = k["rows"] / sms
    return ((not r["bytes"] or r["bytes"] == k["bytes"]) and (r["packs16"] < 0 or r["packs16"] == k["packs16"]) and
            (r["variants"] is None or k["variant"] in r["variants"]) and
            (r["launches"] is None or k["launch"] in r["launches"]) and
            r["packs"][0] <= k["packs"] < r["packs"][1] and r["rows"][0] <= rows_sm < r["rows"][1] and
            r["plane"][0] <= k["plane"] < r["plane"][1])


def pick(rows, key, sms, rung):
    """The index of the row that runs the key on a GPU of sms SMs: the first that holds it, or where the check names
    another rung, the first later row that holds it and runs that rung (the rows before it refuse the point: their
    rungs' supports_ checks, which the GPU run of the check sees); None where no row that holds it does."""
    held = [i for i, r in enumerate(rows) if holds(r, key, sms)]
    return next((i for i in held if rows[i]["rung"] == rung), held[0] if held else None)


def first_rows(rows):
    """The rows a problem can reach first: not one whose region repeats an earlier row's (its rung runs where that
    row's refuses), nor the table's last rows, which take what no derived row's rung takes (a region of every
    packs a row and rows an SM)."""
    out, seen = [], set()
    for i, r in enumerate(rows):
        region = (r["bytes"], r["packs16"], str(r["variants"]), str(r["launches"]), tuple(r["packs"]),
                  tuple(r["rows"]), tuple(r["plane"]))
        everything = r["packs"] == [0, math.inf] and r["rows"] == [0, math.inf]
        if region not in seen and not (everything and r["bytes"] == 0 and r["packs16"] < 0 and r["launches"] is None
                                       and i >= len(rows) - 3):
            out.append(i)
        seen.add(region)
    return out


def opts(args):
    """The options of a program's command line (after the kernel) as a dict; flags map to True."""
    out, i = {}, 0
    while i < len(args):
        a = args[i]
        if a in ("--hot", "--pdl", "--inference", "--fused-add", "--check", "--accumulate"):
            out[a] = True
            i += 1
        else:
            out[a] = args[i + 1]
            i += 2
    return out


def launch(o):
    return "pdl" if "--pdl" in o and "--hot" in o else "hot" if "--hot" in o else "cold"


def norm_key(program, o):
    """LayerNorm's and RMSNorm's key (scripts/regimes.py features(), linear): element size, packing, variant,
    launch, 16-byte packs a row, rows."""
    b = 4 if o.get("--dtype", "fp32") == "fp32" else 2
    vec = 16 // b
    n, c = int(o.get("-N", 8192)), int(o.get("-C", 768 if program == "layernorm_forward" else 4096))
    variant, full = 0, c % vec == 0  # (a backward program's --accumulate is plain too, as its dispatcher keys it)
    if "--heads" in o:  # RMSNorm's QK view: tokens x heads rows of head-dim, the token stride
        heads, c = int(o["--heads"]), int(o["--head-dim"])
        variant, n = 2, int(o.get("-N", 4096)) * heads
        stride = int(o.get("--row-stride", 3 * heads * c))
        full = c % vec == 0 and stride % vec == 0
    elif "--fused-add" in o:
        variant = 1
    width = math.gcd(vec, c, stride) if "--heads" in o else math.gcd(vec, c)  # the programs' vec_width
    return dict(bytes=b, packs16=int(full), variant=variant, launch=launch(o), packs=c * b / 16.0, rows=n, plane=1,
                c=c, vec=width)


def bn_key(o):
    """BatchNorm's key: channels contiguous as N*H*W rows of C, NCHW as N*C rows of a plane H*W (one pixel: the
    [N, C] view)."""
    b = 4 if o.get("--dtype", "fp32") == "fp32" else 2
    vec = 16 // b
    n, c = int(o.get("-N", 65536)), int(o.get("-C", 256))
    hw = int(o.get("--height", 1)) * int(o.get("--width", 1))
    nchw = o.get("--layout", "nc") == "nchw" and hw > 1
    inf = "--inference" in o
    variant = (6 if inf else 4) if nchw else (5 if inf else 3)
    return dict(bytes=b, packs16=int(hw % vec == 0 if nchw else c % vec == 0), variant=variant, launch=launch(o),
                packs=c * b / 16.0, rows=n * c if nchw else n * hw, plane=hw if nchw else 1)


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


DISPATCHERS = {"layernorm_forward": "14", "rmsnorm_forward": "12", "batchnorm_forward": "14",
               "layernorm_backward": "9", "rmsnorm_backward": "9"}


def suite_of(program):
    """A program's part of the GPU suite, and how its checks name the program there: the backward programs share
    tests/gpu_suite_backward.sh, which names its program $P."""
    if program.endswith("_backward"):
        return "tests/gpu_suite_backward.sh", ("$P",)
    return f"tests/gpu_suite_{program[:-len('_forward')]}.sh", (program,)


checks = []  # (what, program, expected rung, key)
commands = []  # each check's command line: (program, kernel, args)
for program, disp in DISPATCHERS.items():
    path, names = suite_of(program)
    for line, w in suite_calls(path):
        if not w or w[0] != "expect_path" or w[1] not in names or w[2] != disp or any("$" in a for a in w[5:]):
            continue
        o = opts(w[5:])
        key = bn_key(o) if program == "batchnorm_forward" else norm_key(program, o)
        checks.append((f"{program} {disp} {' '.join(w[5:])}", program, rung_of(w[3]), key))
        commands.append((program, disp, (["--repeats", "3"] if "--hot" in w[5:] else ["--check"]) + w[5:]))

# A rung's limits as --list words them (its registry row's third field), read as far as they say when it refuses a
# problem: each phrase takes the key, refuses it, or cannot be read here (None: its supports_ check decides on the GPU)
LIMIT_PHRASES = [
    (r"any C|every variant|deterministic|sm_90\+|pow2 blocks|power-of-two blocks|plain \+ offset",
     lambda k, m: True),
    (r"16-byte packs|16-byte", lambda k, m: bool(k["packs16"])),
    (r"row <= (\d+) KB", lambda k, m: k["packs"] * 16 <= int(m.group(1)) * 1024),
    (r"C <= (\d+) 16-byte packs", lambda k, m: bool(k["packs16"]) and k["packs"] <= int(m.group(1))),
    # packs of the rung's width: the widest of 16 bytes that divides the row (an odd fp32 row's are of 1 element)
    (r"C <= (\d+) packs(?: \(.*\))?|<= (\d+) a row", lambda k, m: k["c"] / k["vec"] <= int(m.group(1) or m.group(2))),
    # RMSNorm 5: the row in 8 packs a thread of a 1024-thread block, or in a block's shared memory (227 KB on sm_90)
    (r"row in 8 packs x block or smem", lambda k, m: k["c"] * k["bytes"] <= 227 * 1024),
    (r"no add", lambda k, m: k["variant"] != 1),
    (r"plain", lambda k, m: k["variant"] == 0),
]


def limits(program):
    """{rung: its limits' words} of a program's registry."""
    with open(os.path.join(ROOT, f"{program}.cu")) as f:
        text = f.read()
    reg = text[text.index("static const kernel_t k_kernels[]"):]
    return {int(k): words for k, words in re.findall(r'\{(\d+), "[a-z0-9_]+", [^,]+, "([^"]*)"', reg[:reg.index("};")])}


def takes(words, key):
    """Whether a rung of these limits takes the key: True, False, or None where a phrase cannot be read here."""
    verdict = True
    for phrase in (x.strip() for x in re.split(r"[;,]", words) if x.strip()):
        rule = next(((rx, f) for rx, f in LIMIT_PHRASES if re.fullmatch(rx, phrase)), None)
        if rule is None:
            verdict = None
        elif not rule[1](key, re.fullmatch(rule[0], phrase)):
            return False
    return verdict


k8, k1 = (dict(bytes=4, packs16=1, variant=0, launch="cold", packs=c / 4.0, rows=8, plane=1, c=c, vec=4)
          for c in (131072, 262144))
expect("limits: RMSNorm 8's words take fp32 rows of 512 KB and refuse 1 MB; 'C <= 64 packs x block' is not read here",
       takes("plain; 16-byte; row <= 512 KB", k8) is True and takes("plain; 16-byte; row <= 512 KB", k1) is False
       and takes("sm_90+; C <= 64 packs x block", k8) is None and takes("16-byte packs, <= 2048 a row", k8) is False
       and takes("plain; 16-byte; row <= 512 KB", dict(k8, variant=1)) is False)
odd = {c: dict(k8, packs16=0, packs=c / 4.0, c=c, vec=1) for c in (201, 601)}
expect("limits: LayerNorm 7's packs are of its width: an odd fp32 row of 601 is 601 packs of 1 (refused), 201 taken",
       takes("C <= 256 packs (1024 fp32)", odd[601]) is False and takes("C <= 256 packs (1024 fp32)", odd[201]) is True)
expect("limits: RMSNorm 5's row in registers or shared memory: fp32 rows of 32768 taken, 65536 (256 KB) refused",
       takes("row in 8 packs x block or smem", dict(k8, c=32768)) is True
       and takes("row in 8 packs x block or smem", dict(k8, c=65536)) is False)
tables = {p: table(p) for p in DISPATCHERS}
LIMITS = {p: limits(p) for p in DISPATCHERS if p != "batchnorm_forward"}  # (BatchNorm's words are of layouts)
counts = {p: sum(1 for c in checks if c[1] == p) for p in DISPATCHERS}
expect(f"the suite's dispatcher-path checks are found ({counts})", all(v >= 4 for v in counts.values()), str(counts))
expect("every program's rule of regimes is read", all(len(t) >= 2 for t in tables.values()),
       str({p: len(t) for p, t in tables.items()}))
hit = {p: set() for p in DISPATCHERS}
for what, program, want, key in checks:
    rows = tables[program]
    at = pick(rows, key, H200_SMS, want)
    lo, hi = rows[at]["rows"] if at is not None else (0, math.inf)
    narrow = hi < lo * max(SMS) / min(SMS)  # no problem holds at every SMS: read at the H200's
    got = {sms: pick(rows, key, sms, want) for sms in ((H200_SMS,) if narrow else SMS)}
    bad = [f"{sms} SMs: wants rung {want}, the rule gives {'none' if i is None else rows[i]['rung']}"
           f"{'' if i is None else ' (regime ' + str(i + 1) + ': ' + rows[i]['when'] + ')'}"
           for sms, i in got.items() if i is None or rows[i]["rung"] != want]
    if got[132] is not None:
        hit[program].add(got[132])
        # a check that names a later row's rung stands on the earlier rows' rungs refusing the point: where their
        # limits say they take it, the dispatcher runs the first of them (as the GPU run of the check would find)
        lims = LIMITS.get(program, {})
        if want in lims and takes(lims[want], key) is False:
            bad.append(f"its rung {want} refuses it by its limits ({lims[want]}): a later row's rung runs")
        for i in (i for i in range(got[132]) if holds(rows[i], key, H200_SMS) and rows[i]["rung"] in lims):
            if takes(lims[rows[i]["rung"]], key):
                bad.append(f"regime {i + 1} holds it first and its rung {rows[i]['rung']} takes it by its limits "
                           f"({lims[rows[i]['rung']]}): the dispatcher runs rung {rows[i]['rung']}, not {want}")
    expect(f"suite path: {what}", not bad, "; ".join(bad))
for p, rows in tables.items():
    missed = [f"{i + 1} ({rows[i]['when']})" for i in first_rows(rows) if i not in hit[p]]
    expect(f"suite paths: every regime of {p}'s rule a problem reaches first has a check", not missed,
           "none for regime " + ", ".join(missed))

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


programs = sorted(f[:-3] for f in os.listdir(ROOT) if f.endswith(("_forward.cu", "_backward.cu")))
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
    ops = [p if p.endswith("_backward") else p[:-len("_forward")] for p in programs]
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
