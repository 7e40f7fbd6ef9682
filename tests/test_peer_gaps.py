#!/usr/bin/env python3
"""CI test of scripts/peer_gaps.py without ncu or a GPU: the points it takes from a stored draw (the dispatcher
behind the better peer, the largest lead first, the program arguments of the draw), its parser on a fixture of
`ncu --csv --metrics` output (flushes around the op's kernels; a hot run without them), the kernel row it makes
(durations in any unit ncu shows, the two stall reasons that hold the most warps), and main() with the profile
replaced by that fixture, into a CSV."""
import contextlib
import csv
import io
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import expect, status  # noqa: E402  (puts scripts/ on the path)

import peer_gaps  # noqa: E402

SWEEPS = os.path.join(ROOT, "results", "h200", "sweeps")
SEED = 495674  # a stored draw with peers
HEAD = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",' \
       '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'


def ncu_text(kernels, flushes=True, unit="usecond", us=12.5):
    """`ncu --csv --metrics` rows: each launch of the op (its kernels) between an L2 flush and the flush of the
    writes (none in a hot run); the op's kernels with a duration, DRAM throughput, occupancy and two stalls."""
    out, i = [HEAD], 0
    for launch in range(2):
        names = (["flush_read_kernel(float const*, long)"] if flushes else []) + list(kernels) + \
                (["flush_write_kernel(float*, long)"] if flushes else [])
        for name in names:
            metrics = [("gpu__time_duration.sum", unit, f"{us if 'flush' not in name else 1.0}")]
            if "flush" not in name:
                metrics += [(peer_gaps.METRICS["dram_pct"], "%", f"{40 + launch}"),
                            (peer_gaps.METRICS["occupancy_pct"], "%", "31.5"),
                            (peer_gaps.METRICS["theoretical_pct"], "%", "50"),
                            (peer_gaps.METRICS["waves"], "", "0.25"), (peer_gaps.METRICS["registers"], "register/thread", "40"),
                            (peer_gaps.METRICS["grid"], "", "1,024"), (peer_gaps.METRICS["block"], "", "256"),
                            (peer_gaps.STALL.format("long_scoreboard"), "%", "61.2"),
                            (peer_gaps.STALL.format("barrier"), "%", "12.5"),
                            (peer_gaps.STALL.format("wait"), "%", "3.0")]
            for metric, u, value in metrics:
                out.append(f'"{i}","1","p","h","{name}","1","7","(256, 1, 1)","(1024, 1, 1)","0","9.0",'
                           f'"Command line profiler metrics","{metric}","{u}","{value}"')
            i += 1
    return "\n".join(out) + "\n"


# the points: the stored draw's, where the better peer leads the dispatcher, largest lead first, with their arguments
pts = peer_gaps.gap_points(SWEEPS, "batchnorm", SEED, 1.03)
leads = [p[0] for p in pts]
expect("gap_points: the stored draw's points past 1.03x, the largest lead first",
       len(pts) >= 2 and leads == sorted(leads, reverse=True) and all(x > 1.03 for x in leads), str(leads))
inf = [p for p in pts if p[2] == "25536x248x7x7:nchw:inf"]
expect("gap_points: a point's program arguments are the draw's (inference, NCHW, its shape)",
       len(inf) == 1 and inf[0][3] is not None and "--inference" in inf[0][3] and "nchw" in inf[0][3]
       and "25536" in inf[0][3] and "248" in inf[0][3], str(inf))
expect("gap_points: a higher lead takes fewer points, a draw that is not there none",
       len(peer_gaps.gap_points(SWEEPS, "batchnorm", SEED, 2.0)) < len(pts)
       and peer_gaps.gap_points(SWEEPS, "batchnorm", 1, 1.03) == [])

# the parser and the op's last launch
two = ["void bn_stats_kernel<float>(Args)", "void bn_apply_kernel<float>(Args)"]
launches = peer_gaps.parse_metrics(ncu_text(two))
expect("parse: one entry a kernel launch, in order", [n for n, _m in launches][:4] ==
       ["flush_read_kernel(float const*, long)", *two, "flush_write_kernel(float*, long)"] and len(launches) == 8,
       str([n for n, _m in launches]))
last = peer_gaps.last_launch(launches)
expect("last_launch: the op's kernels after the last flush, up to the flush of the writes",
       [n for n, _m in last] == two and peer_gaps.number(last[0][1], peer_gaps.METRICS["dram_pct"]) == 41.0,
       str([n for n, _m in last]))
hot = peer_gaps.last_launch(peer_gaps.parse_metrics(ncu_text(two[:1], flushes=False)))
expect("last_launch: a hot run (no flushes) gives its last kernel", [n for n, _m in hot] == two[:1], str(hot))
expect("parse: no header, no launches", peer_gaps.parse_metrics("==PROF== nothing\n") == [])

# the row: a duration in microseconds whatever unit ncu shows it in; the two stalls that hold most warps
for unit, value, want in (("usecond", 12.5, "12.500"), ("nsecond", 12500.0, "12.500"), ("msecond", 0.0125, "12.500")):
    row = peer_gaps.kernel_row(*peer_gaps.last_launch(peer_gaps.parse_metrics(ncu_text(two[:1], unit=unit, us=value)))[0])
    expect(f"kernel_row: a duration in {unit} as us", row["ncu_us"] == want, str(row))
row = peer_gaps.kernel_row(*last[0])
expect("kernel_row: the kernel's short name, grid without separators, the two largest stalls in order",
       row["kernel"] == "bn_stats_kernel<float>" and row["grid"] == "1024" and row["registers"] == "40"
       and row["stall_1"] == "long_scoreboard 61.2%" and row["stall_2"] == "barrier 12.5%", str(row))
row = peer_gaps.kernel_row("k", {})
expect("kernel_row: metrics the profile lacks are empty, not zero", row["dram_pct"] == "" and row["stall_1"] == "",
       str(row))

# main: --list profiles nothing; a run writes a row a kernel of each point's last launch
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = peer_gaps.main(["peer_gaps", "--seed", str(SEED), "--list", "batchnorm"])
expect("main --list: the points, exit 0", rc == 0 and "25536x248x7x7:nchw:inf" in out.getvalue(), out.getvalue())
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "gaps.csv")
    saved = peer_gaps.profile
    peer_gaps.profile = lambda op, dtype, args, timeout: peer_gaps.parse_metrics(ncu_text(two))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            rc = peer_gaps.main(["peer_gaps", "--seed", str(SEED), "--limit", "2", "--out", path, "batchnorm"])
    finally:
        peer_gaps.profile = saved
    with open(path) as f:
        rows = list(csv.DictReader(f))
    expect("main: exit 0, a row a kernel at each of the points (--limit 2), the fields of FIELDS",
           rc == 0 and len(rows) == 4 and list(rows[0]) == peer_gaps.FIELDS
           and rows[0]["kernel"] == "bn_stats_kernel<float>" and float(rows[0]["lead"]) >= float(rows[2]["lead"]),
           str(rows[:1]))
sys.exit(status())
