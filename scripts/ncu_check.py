#!/usr/bin/env python3
"""Cross-checks the harness's timing against Nsight Compute on one kernel and shape.

Runs the program once normally (its median of cold launches; for a kernel that sweeps block sizes, again at
its best block size alone, and ncu runs that one too) and once under
`ncu --cache-control all --clock-control none --metrics gpu__time_duration.sum,dram__bytes.sum`
(every launch of the op's kernels, summed per launch of the op), and prints both medians, their ratio, and DRAM bytes against the
bytes the harness counts.

    scripts/ncu_check.py layernorm 10 -N 16384 -C 4096 [--dtype fp32]
"""
import csv
import io
import re
import statistics
import subprocess
import sys

# to ms and bytes; ncu writes units either way ("usecond" or "us", "Mbyte" or "MB")
UNITS = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
         "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3,
         "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9,
         "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3}


def best_block(out):
    """The block size of the harness's `best:` line when it swept several (one `block_size` line: None)."""
    if len(re.findall(r"^block_size", out, re.M)) < 2:
        return None
    m = re.search(r"^best: block_size +([0-9]+)", out, re.M)
    return m.group(1) if m else None


def parse_ncu_csv(text):
    """[(kernel name, ms, bytes)] per kernel launch, in launch order, from `ncu --csv` with the two metrics."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    head = next((i for i, r in enumerate(rows) if "Metric Name" in r and "ID" in r), None)
    if head is None:
        return []
    h = rows[head]
    col = {k: h.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
    by_id = {}
    for r in rows[head + 1:]:
        if len(r) < len(h):
            continue
        try:
            v = float(r[col["Metric Value"]].replace(",", "")) * UNITS.get(r[col["Metric Unit"]], float("nan"))
        except ValueError:
            continue
        e = by_id.setdefault(int(r[col["ID"]]), [r[col["Kernel Name"]], float("nan"), float("nan")])
        if r[col["Metric Name"]] == "gpu__time_duration.sum":
            e[1] = v
        elif r[col["Metric Name"]] == "dram__bytes.sum":
            e[2] = v
    return [tuple(by_id[i]) for i in sorted(by_id)]


def per_op_launch(launches):
    """[(ms, bytes)] per launch of the op: an op of K kernels (BatchNorm: partials, finalize, normalize) launches
    them in the same order every time, so each group of K consecutive launches, K = launches / launches of the
    first kernel, is summed. A single-kernel op gives its launches unchanged."""
    if not launches:
        return []
    k = len(launches) // sum(1 for n, _t, _b in launches if n == launches[0][0])
    if k < 1 or len(launches) % k:
        return []
    return [(sum(t for _n, t, _b in launches[i:i + k]), sum(b for _n, _t, b in launches[i:i + k]))
            for i in range(0, len(launches), k)]


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    op, kernel, rest = argv[1], argv[2], argv[3:]
    prog = f"./{op}_forward"
    out = subprocess.run([prog, kernel, "--repeats", "100", *rest], capture_output=True, text=True).stdout
    bs = best_block(out)
    if bs and "--block-size" not in rest:
        # a kernel that sweeps block sizes: measure (and profile) its best one alone, so that both sides time
        # the same launches (ncu would otherwise see every block size of the sweep)
        rest = [*rest, "--block-size", bs]
        out = subprocess.run([prog, kernel, "--repeats", "100", *rest], capture_output=True, text=True).stdout
    m = re.search(r"\| ([0-9.]+) ms \(min ([0-9.]+)\) \|", out)
    counted = re.search(r"\| ([0-9.]+) MB counted", out)
    if not m or not counted:
        print(out)
        print("ncu_check: could not read the harness's median", file=sys.stderr)
        return 1
    harness_ms = float(m.group(1))
    counted_mb = float(counted.group(1))
    cmd = ["ncu", "--csv", "--cache-control", "all", "--clock-control", "none", "-k", f"regex:{op}_",
           "--metrics", "gpu__time_duration.sum,dram__bytes.sum", prog, kernel, "--repeats", "30", *rest]
    res = subprocess.run(cmd, capture_output=True, text=True)
    launches = parse_ncu_csv(res.stdout)
    groups = per_op_launch(launches)
    if not groups or any(t != t for t, _b in groups):
        print(res.stdout[-3000:], res.stderr[-3000:])
        print("ncu_check: ncu reported no durations", file=sys.stderr)
        return 1
    ncu_ms = statistics.median(t for t, _b in groups)
    dram_mb = statistics.median(b for _t, b in groups) / 1e6
    per = len(launches) // len(groups)
    print(f"{op} kernel {kernel} {' '.join(rest)}")
    print(f"  harness median        {harness_ms:.4f} ms (cold L2, CUDA events, 100 launches)")
    print(f"  ncu gpu__time_duration {ncu_ms:.4f} ms (median of {len(groups)} op launches of {per} kernel(s) each, "
          f"--cache-control all)")
    print(f"  ratio harness/ncu     {harness_ms / ncu_ms:.3f}")
    print(f"  DRAM bytes (ncu)      {dram_mb:.1f} MB vs {counted_mb:.1f} MB counted ({dram_mb / counted_mb:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
