#!/usr/bin/env python3
"""Cross-checks the harness's timing against Nsight Compute on one kernel and shape.

Runs the program once normally (its median of cold launches) and once under
`ncu --cache-control all --clock-control none --metrics gpu__time_duration.sum,dram__bytes.sum`
(every launch of the op's kernels), and prints both medians, their ratio, and DRAM bytes against the
bytes the harness counts.

    scripts/ncu_check.py layernorm 10 -N 16384 -C 4096 [--dtype fp32]
"""
import re
import statistics
import subprocess
import sys

# to ms and bytes; ncu writes units either way ("usecond" or "us", "Mbyte" or "MB")
UNITS = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
         "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3,
         "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9,
         "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3}


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    op, kernel, rest = argv[1], argv[2], argv[3:]
    prog = f"./{op}_forward"
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
    times, dram = [], []
    for line in res.stdout.splitlines():
        if not line.startswith('"'):
            continue
        f = [x.strip('"') for x in line.split('","')]
        if len(f) < 3 or f[-3] not in ("gpu__time_duration.sum", "dram__bytes.sum"):
            continue
        try:
            v = float(f[-1].replace(",", "")) * UNITS.get(f[-2], float("nan"))
        except ValueError:
            continue
        (times if f[-3] == "gpu__time_duration.sum" else dram).append(v)
    if not times or any(t != t for t in times):
        print("units seen:", sorted({l.split('","')[-2] for l in res.stdout.splitlines() if l.count('","') > 3}))
        print(res.stdout[-3000:], res.stderr[-3000:])
        print("ncu_check: ncu reported no durations", file=sys.stderr)
        return 1
    ncu_ms = statistics.median(times)
    dram_mb = statistics.median(dram) / 1e6 if dram else float("nan")
    print(f"{op} kernel {kernel} {' '.join(rest)}")
    print(f"  harness median        {harness_ms:.4f} ms (cold L2, CUDA events, 100 launches)")
    print(f"  ncu gpu__time_duration {ncu_ms:.4f} ms (median of {len(times)} launches, --cache-control all)")
    print(f"  ratio harness/ncu     {harness_ms / ncu_ms:.3f}")
    print(f"  DRAM bytes (ncu)      {dram_mb:.1f} MB vs {counted_mb:.1f} MB counted ({dram_mb / counted_mb:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
