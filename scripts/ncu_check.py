#!/usr/bin/env python3
"""Cross-checks the harness's clock against Nsight Compute, for a program's kernel or a peer.

    scripts/ncu_check.py [--out DIR] [--no-write] [--tolerance T] OP KERNEL [PROGRAM ARGS ...]
    scripts/ncu_check.py [--out DIR] [--no-write] [--tolerance T] --standard

KERNEL is a kernel number of OP's program (0 = cuDNN), `dispatch` (its dispatcher, whatever its number) or a
peer of scripts/peers.py (torch, torch.compile, liger, quack). For each point:
- the harness time: the program's median of 100 cold launches on its own clock (for a kernel that sweeps block
  sizes, its best block size, run alone), or peers.py's median for a peer (`--point ... --no-write`);
- Nsight Compute: `ncu --cache-control all --clock-control none --metrics gpu__time_duration.sum,dram__bytes.sum`
  on the same launches. For a program, every kernel is profiled and the op's launches are the kernels that
  follow each L2 flush (flush_read_kernel), the last 30 of them (the timed loop of `--repeats 30`); for a peer,
  the calls peers.py makes between cudaProfilerStart and Stop (`--ncu-range 30`, ncu flushes the caches
  itself before each kernel), which must be the kernels the timed run ran: the same grid and block, kernel by
  kernel, as its trace gives them (torch.compile picks its kernel at run time; a profile of another is an error).
  An op's time is the sum of its kernels' gpu__time_duration, median over launches.
- the ratio harness / ncu, and DRAM bytes (ncu) against the bytes the harness counts;
- a lower bound from the same profile: the op's SM-active time, each kernel's sm__cycles_active.max (the busiest
  SM's cycles with work resident) over its SM clock (sm__cycles_elapsed.avg.per_second). A true kernel window
  lies between the two: at least the busiest SM's work, at most ncu's duration, which includes the launch and
  completion work around the grid. `bracketed` says whether the harness time does (1 +- T at each end).
Rows go to DIR/<gpu-slug>/ncu_check.csv (DIR defaults to results/; a point measured again replaces its row):
op,kernel,dtype,shape,harness_ms,ncu_ms,ratio,dram_ratio, then ncu_minus_harness_us (Nsight Compute
writes its timestamps from the command stream around the grid, so it counts the grid's launch and completion
work as well: a constant of about a microsecond a kernel that the ratio shows at short kernels only),
kernels (per launch of the op), block_size, harness_clock, dram_mb, counted_mb, gpu, git_rev, ncu_sm_active_ms,
bracketed. --standard runs the points of STANDARD below (the three programs, fp32 and bf16, short and long
kernels, cuDNN and torch.compile). Exit 1 when a ratio is outside 1 +- T (default 0.03) or a point could not be
measured, 2 on bad arguments.
"""
import argparse
import csv
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import csvfile  # noqa: E402
import registry  # noqa: E402
import run_all  # noqa: E402  (slugify)
import shapes  # noqa: E402
import summary  # noqa: E402
from peers import PEERS  # noqa: E402  (its pure-Python part: no PyTorch at import)

HARNESS_REPEATS, NCU_REPEATS = 100, 30
CSV_FIELDS = ["op", "kernel", "dtype", "shape", "harness_ms", "ncu_ms", "ratio", "dram_ratio", "ncu_minus_harness_us",
              "kernels", "block_size", "harness_clock", "dram_mb", "counted_mb", "gpu", "git_rev", "ncu_sm_active_ms",
              "bracketed"]
# (op, kernel, program arguments): kernels under 20 us and over 100 us, fp32 and bf16, one-kernel and
# three-kernel ops, cuDNN (kernel 0) and torch.compile. "dispatch": the program's dispatcher, whatever its number
# (the last kernel of its header's list: a rung added below it renumbers it).
STANDARD = [
    ("layernorm", "dispatch", ["--dtype", "fp32", "-N", "1", "-C", "32"]),  # the shortest launch: the clocks' offset
    ("layernorm", "dispatch", ["--dtype", "fp32", "-N", "8192", "-C", "768"]),
    ("layernorm", "dispatch", ["--dtype", "fp32", "-N", "16384", "-C", "4096"]),
    ("layernorm", "dispatch", ["--dtype", "bf16", "-N", "1024", "-C", "65536"]),
    ("layernorm", "0", ["--dtype", "bf16", "-N", "8192", "-C", "768"]),
    ("layernorm", "torch.compile", ["--dtype", "bf16", "-N", "8192", "-C", "768"]),
    ("rmsnorm", "dispatch", ["--dtype", "bf16", "-N", "8192", "-C", "4096"]),
    ("rmsnorm", "0", ["--dtype", "fp32", "-N", "16384", "-C", "4096"]),
    ("rmsnorm", "torch.compile", ["--dtype", "bf16", "-N", "8192", "-C", "4096"]),
    ("batchnorm", "dispatch", ["--dtype", "bf16", "-N", "65536", "-C", "256"]),
    ("batchnorm", "dispatch", ["--dtype", "fp32", "--layout", "nhwc", "-N", "32", "-C", "256", "--height", "56",
                              "--width", "56"]),
]


def dispatcher_number(op):
    """The number of OP's dispatcher: the last kernel of its source's header list (scripts/registry.py)."""
    kernels = registry.header_kernels(os.path.join(ROOT, f"{op}_forward.cu"))
    if not kernels or kernels[max(kernels)][0] != "dispatch":
        raise CheckError(f"{op}_forward.cu: its header's last kernel is not the dispatcher")
    return str(max(kernels))

# to ms and bytes; ncu writes units either way ("usecond" or "us", "Mbyte" or "MB")
UNITS = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
         "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3,
         "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9,
         "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3}
# the SM metrics' units, as ncu scales them for display (lower case): cycles, and the SM clock in cycles a second
SM_UNITS = {"cycle": 1.0, "kcycle": 1e3, "mcycle": 1e6, "gcycle": 1e9,
            "cycle/second": 1.0, "cycle/msecond": 1e3, "cycle/usecond": 1e6, "cycle/nsecond": 1e9,
            "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
NCU_METRICS = ["--cache-control", "all", "--clock-control", "none", "--metrics",
               "gpu__time_duration.sum,dram__bytes.sum,sm__cycles_active.max,sm__cycles_elapsed.avg.per_second"]


class CheckError(Exception):
    """A point that could not be measured (the message says why)."""


def parse_ncu_csv(text):
    """[(kernel name, ms, bytes, SM-active ms, launch)] per kernel launch, in launch order, from `ncu --csv` with
    the metrics of NCU_METRICS (NaN for a metric the profile lacks); launch = (blocks, threads a block) from its
    Grid Size and Block Size columns, None where it has none."""
    h, rows = metric_rows(text)
    if h is None:
        return []
    col = {k: h.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
    dims = {k: h.index(k) for k in ("Grid Size", "Block Size") if k in h}
    by_id = {}
    for r in rows:
        try:
            raw = float(r[col["Metric Value"]].replace(",", ""))
        except ValueError:
            continue
        unit = r[col["Metric Unit"]]
        if r[col["Metric Name"]].startswith("sm__cycles"):  # cycles and cycles a second ("cycle/nsecond": GHz)
            v = raw * SM_UNITS.get(unit.strip().lower(), float("nan"))
        else:
            v = raw * UNITS.get(unit, float("nan"))
        e = by_id.setdefault(int(r[col["ID"]]), {"name": r[col["Kernel Name"]],
                                                 "launch": launch_dims(*(r[dims[k]] for k in dims))})
        e[r[col["Metric Name"]]] = v
    nan = float("nan")
    out = []
    for i in sorted(by_id):
        e = by_id[i]
        hz = e.get("sm__cycles_elapsed.avg.per_second", nan)
        active = e.get("sm__cycles_active.max", nan) / hz * 1e3 if hz == hz and hz > 0 else nan
        out.append((e["name"], e.get("gpu__time_duration.sum", nan), e.get("dram__bytes.sum", nan), active,
                    e["launch"]))
    return out


def metric_rows(text):
    """(header, rows) of `ncu --csv` output in its long form (a row a metric of a kernel launch): the header row
    (it names ID and Metric Name) and the complete rows after it; (None, []) where there is none."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    head = next((i for i, r in enumerate(rows) if "Metric Name" in r and "ID" in r), None)
    if head is None:
        return None, []
    return rows[head], [r for r in rows[head + 1:] if len(r) >= len(rows[head])]


def launch_dims(*cells):
    """(blocks, threads a block) from ncu's "(x, y, z)" Grid Size and Block Size cells; None unless both parse."""
    if len(cells) != 2:
        return None
    out = []
    for c in cells:
        try:
            out.append(math.prod(int(v) for v in c.strip().strip("()").split(",")))
        except ValueError:
            return None
    return tuple(out)


def same_launches(timed, profiled):
    """None when the kernels Nsight Compute profiled in one call, [(blocks, threads)], are the timed run's
    (`launches` of peers.py's row; [] where its trace had none: nothing to compare), else why not. A peer that
    picks its kernel at run time (torch.compile's autotuning) can pick another one under the profiler."""
    timed = [tuple(t) for t in timed or []]
    if not timed or any(p is None for p in profiled) or timed == list(profiled):
        return None
    show = lambda ls: ", ".join(f"<<<{b}, {t}>>>" for b, t in ls)  # noqa: E731
    return f"ncu profiled other kernels ({show(profiled)}) than the timed run's ({show(timed)})"


def is_flush(name, which):
    return name.split("(")[0].split("<")[0].strip().endswith(f"flush_{which}_kernel")


def after_flushes(launches, last):
    """[(ms, bytes, kernels, SM-active ms)] of the op launches of a program run: each launch is the kernels that follow an L2 flush
    (flush_read_kernel) up to the next flush (flush_write_kernel); the last `last` of them are the timed loop.
    Warm-up launches (no flush before them) fall into the group before, which is not among the last ones."""
    groups, cur = [], None
    for name, ms, nbytes, active, _launch in launches:
        if is_flush(name, "write"):
            cur = None
        elif is_flush(name, "read"):
            cur = []
            groups.append(cur)
        elif cur is not None:
            cur.append((ms, nbytes, active))
    groups = groups[-last:]
    if len(groups) < last or any(not g for g in groups):
        raise CheckError(f"ncu: expected {last} flushed launches with kernels, found "
                         f"{sum(1 for g in groups if g)}")
    return [(sum(t for t, _b, _a in g), sum(b for _t, b, _a in g), len(g), sum(a for _t, _b, a in g)) for g in groups]


def per_call(launches, calls):
    """[(ms, bytes, kernels, SM-active ms)] per call of a peer's range: `calls` calls launch the same kernels in the
    same order."""
    if not launches or len(launches) % calls:
        raise CheckError(f"ncu: {len(launches)} kernels in the range do not split into {calls} calls")
    k = len(launches) // calls
    return [(sum(e[1] for e in launches[i:i + k]), sum(e[2] for e in launches[i:i + k]), k,
             sum(e[3] for e in launches[i:i + k])) for i in range(0, len(launches), k)]


def run(cmd, what, timeout=600):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CheckError(f"{what} did not finish within {timeout} s")
    if r.returncode != 0:
        tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
        raise CheckError(f"{what} exited {r.returncode}: {' | '.join(tail)}")
    return r.stdout


def program_rows(op, kernel, args):
    """The program's CSV rows of one run at HARNESS_REPEATS."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rows.csv")
        run([os.path.join(ROOT, f"{op}_forward"), kernel, "--repeats", str(HARNESS_REPEATS), *args, "--csv", path],
            f"{op}_forward {kernel}")
        return summary.load(path)


def best_ok(rows, what):
    ok = [r for r in rows if r["status"] == "OK"]
    if not ok:
        raise CheckError(f"{what}: no OK row ({', '.join(sorted({r['status'] for r in rows})) or 'no rows'})")
    return max(ok, key=lambda r: float(r["gbps"]))


def check_program(op, kernel, args):
    rows = program_rows(op, kernel, args)
    best = best_ok(rows, f"{op} kernel {kernel}")
    if len([r for r in rows if r["status"] == "OK"]) > 1 and "--block-size" not in args:
        # a sweep: measure (and profile) the best block size alone, so that both sides time the same launches
        args = [*args, "--block-size", best["block_size"]]
        best = best_ok(program_rows(op, kernel, args), f"{op} kernel {kernel} {' '.join(args)}")
    cmd = ["ncu", "--csv", *NCU_METRICS, os.path.join(ROOT, f"{op}_forward"), kernel, "--repeats", str(NCU_REPEATS),
           *args]
    launches = after_flushes(parse_ncu_csv(run(cmd, "ncu")), NCU_REPEATS)
    return best, launches


def split_dtype(args):
    """(dtype, the other arguments) of a program's argument list (the programs' default dtype is fp32)."""
    if "--dtype" not in args:
        return "fp32", list(args)
    i = args.index("--dtype")
    return args[i + 1], args[:i] + args[i + 2:]


def check_peer(op, peer, args):
    point = " ".join(args)
    dtype, rest = split_dtype(args)
    spec = f"{dtype} {' '.join(rest)}"
    script = os.path.join(ROOT, "scripts", "peers.py")
    out = run([sys.executable, script, "--peer", peer, "--point", spec, "--no-write", op], f"peers.py {point}")
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    best = best_ok(rows, f"{peer} {op} {point}")
    cmd = ["ncu", "--csv", "--profile-from-start", "off", *NCU_METRICS, sys.executable, script, "--peer", peer,
           "--point", spec, "--ncu-range", str(NCU_REPEATS), op]
    profiled = parse_ncu_csv(run(cmd, "ncu"))
    launches = per_call(profiled, NCU_REPEATS)
    k = launches[0][2]
    for i in range(NCU_REPEATS):
        why = same_launches(best.get("launches"), [e[4] for e in profiled[i * k:(i + 1) * k]])
        if why:
            raise CheckError(f"call {i + 1} of {NCU_REPEATS}: {why}")
    return best, launches


def check(op, kernel, args, tolerance):
    """One CSV row (dict) for a point."""
    best, launches = check_peer(op, kernel, args) if kernel in PEERS else check_program(op, kernel, args)
    ncu_ms = statistics.median(e[0] for e in launches)
    dram = statistics.median(e[1] for e in launches)
    active = statistics.median(e[3] for e in launches)
    harness = float(best["time_ms_median"])
    counted = float(best["bytes"])
    return {"op": op, "kernel": kernel, "dtype": best["dtype"], "shape": best["shape"],
            "harness_ms": f"{harness:.6f}", "ncu_ms": f"{ncu_ms:.6f}", "ratio": f"{harness / ncu_ms:.4f}",
            "dram_ratio": f"{dram / counted:.4f}", "ncu_minus_harness_us": f"{(ncu_ms - harness) * 1e3:.2f}",
            "kernels": max(e[2] for e in launches), "block_size": best.get("block_size", ""),
            "harness_clock": summary.row_clock(best), "dram_mb": f"{dram / 1e6:.2f}", "counted_mb": f"{counted / 1e6:.2f}",
            "gpu": best["gpu"], "git_rev": best["git_rev"],
            "ncu_sm_active_ms": f"{active:.6f}" if active == active else "",  # "" where the profile has none
            "bracketed": bracketed(harness, active, ncu_ms, tolerance)}


def bracketed(harness, active, ncu_ms, tolerance):
    """"yes" when the harness time lies between the SM-active time and ncu's duration (1 +- tolerance at each end),
    "no" when not, "" when the profile has no SM-active time."""
    if active != active:
        return ""
    return "yes" if active * (1 - tolerance) <= harness <= ncu_ms * (1 + tolerance) else "no"


def read_rows(path):
    """The rows of an ncu_check.csv (csvfile.read, strict, in this file's schema); a file of before the last two
    columns is read too (store() writes them, empty, for its rows)."""
    return csvfile.read(path, required=CSV_FIELDS[:-2], floats=(), ints=(), kernel_numbers=False, choices=None)


def store(out_dir, new_rows):
    """Writes DIR/<gpu-slug>/ncu_check.csv: the stored rows, those of the points measured again replaced."""
    by_gpu = {}
    for r in new_rows:
        by_gpu.setdefault(r["gpu"], []).append(r)
    paths = []
    for gpu, rows in by_gpu.items():
        path = os.path.join(out_dir, run_all.slugify(gpu), "ncu_check.csv")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        key = lambda r: (r["op"], r["kernel"], r["dtype"], r["shape"])  # noqa: E731
        fresh = {key(r) for r in rows}
        old = [r for r in read_rows(path) if key(r) not in fresh] if os.path.exists(path) else []
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=CSV_FIELDS, lineterminator="\n", extrasaction="ignore")
            w.writeheader()
            w.writerows(old + rows)
        paths.append(path)
    return paths


def main(argv):
    ap = cli.Parser("ncu_check", __doc__)
    ap.add_argument("--standard", action="store_true", help="the standard points (STANDARD in this script)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results"), help="results folder (default results/)")
    ap.add_argument("--no-write", action="store_true", help="print only; write no ncu_check.csv")
    ap.add_argument("--tolerance", type=float, default=0.03, help="allowed |ratio - 1| (default 0.03)")
    ap.add_argument("point", nargs=argparse.REMAINDER, help="OP KERNEL [PROGRAM ARGS ...]")
    a = ap.parse_args(argv[1:])
    if a.standard == bool(a.point):
        ap.error("give either --standard or OP KERNEL [PROGRAM ARGS ...]")
    points = STANDARD if a.standard else [(a.point[0], a.point[1] if len(a.point) > 1 else "", a.point[2:])]
    for op, kernel, _args in points:
        if op not in shapes.POINTS:
            ap.error(f"unknown op '{op}' (one of {', '.join(shapes.POINTS)})")
        if not (kernel.isdigit() or kernel in PEERS or kernel == "dispatch"):
            ap.error(f"KERNEL must be a kernel number, dispatch or one of {', '.join(PEERS)}, not '{kernel}'")
    try:
        points = [(op, dispatcher_number(op) if kernel == "dispatch" else kernel, args) for op, kernel, args in points]
    except CheckError as e:
        ap.error(str(e))
    rows, bad = [], 0
    print("| op | kernel | dtype | shape | harness ms | ncu ms | ratio | ncu - harness us | SM-active ms | bracketed |"
          " DRAM / counted |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---|---:|")
    for op, kernel, args in points:
        try:
            r = check(op, kernel, args, a.tolerance)
        except (CheckError, OSError) as e:
            print(f"ncu_check: {op} {kernel} {' '.join(args)}: {e}", file=sys.stderr)
            bad += 1
            continue
        rows.append(r)
        if not a.no_write:
            paths = store(a.out, [r])  # after every point: a run cut short keeps what it measured
        off = abs(float(r["ratio"]) - 1) > a.tolerance
        bad += off
        print(f"| {op} | {kernel} | {r['dtype']} | {r['shape']} | {float(r['harness_ms']):.4f} | "
              f"{float(r['ncu_ms']):.4f} | {float(r['ratio']):.3f}{' OUTSIDE' if off else ''} | "
              f"{float(r['ncu_minus_harness_us']):.2f} | {r['ncu_sm_active_ms'] or '-'} | {r['bracketed'] or '-'} | "
              f"{float(r['dram_ratio']):.3f} |", flush=True)
    if rows and not a.no_write:
        print(f"ncu_check: wrote {paths[0]}", file=sys.stderr)
    print(f"ncu_check: {len(rows)} point(s) measured, {bad} outside 1 +- {a.tolerance} or not measured")
    return 1 if bad else 0


if __name__ == "__main__":
    cli.run(main)
