#!/usr/bin/env python3
"""CI test of scripts/ncu_check.py without ncu or a GPU: its parser on a fixture of `ncu --csv` output (the SM
metrics in the units ncu scales them to), and main() with the measurement replaced by that fixture, into a
results folder that holds an ncu_check.csv of before the last two columns: the file written has
ncu_sm_active_ms and bracketed, filled for the point measured, empty for the row kept."""
import contextlib
import csv
import io
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import expect, status  # noqa: E402  (puts scripts/ on the path)

import ncu_check  # noqa: E402

HEAD = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",' \
       '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'


def ncu_text(clock_unit="cycle/nsecond", clock=1.98, launches=ncu_check.NCU_REPEATS):
    """`ncu --csv` rows: each launch an L2 flush, the op's kernel, the flush of the writes."""
    out, i = [HEAD], 0
    for _ in range(launches):
        for name, us, mb, cycles in (("flush_read_kernel(float const*, long)", 30.0, 100.0, "60,000"),
                                     ("void ln_kernel<float>(Params)", 15.0, 50.0, "20,000"),
                                     ("flush_write_kernel(float*, long)", 1.0, 1.0, "100")):
            for metric, unit, value in (("gpu__time_duration.sum", "usecond", f"{us}"),
                                        ("dram__bytes.sum", "Mbyte", f"{mb}"),
                                        ("sm__cycles_active.max", "cycle", cycles),
                                        ("sm__cycles_elapsed.avg.per_second", clock_unit, f"{clock}")):
                out.append(f'"{i}","1","p","h","{name}","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line '
                           f'profiler metrics","{metric}","{unit}","{value}"')
            i += 1
    return "\n".join(out) + "\n"


# the parser: SM-active time = busiest SM's cycles / SM clock, whatever unit ncu shows the clock in
for unit, value in (("cycle/nsecond", 1.98), ("cycle/usecond", 1980.0), ("cycle/second", 1.98e9), ("GHz", 1.98),
                    ("Mhz", 1980.0)):
    launches = ncu_check.parse_ncu_csv(ncu_text(unit, value, 1))
    active = launches[1][3]
    expect(f"parse: SM-active ms from cycles and a clock in {unit}", abs(active - 20000 / 1.98e9 * 1e3) < 1e-9,
           str(launches[1]))
launches = ncu_check.parse_ncu_csv(ncu_text("furlong/fortnight", 1.0, 1))
expect("parse: a clock unit it does not know gives no SM-active time (NaN), not a wrong one",
       launches[1][3] != launches[1][3], str(launches[1]))

# each kernel's launch from the Grid Size and Block Size columns; a peer's profile is the timed run's kernels or an error
launches = ncu_check.parse_ncu_csv(ncu_text(launches=1))
expect("parse: (blocks, threads a block) from Grid Size and Block Size", launches[1][4] == (8, 256), str(launches[1]))
expect("parse: no launch where ncu gives no Grid Size", ncu_check.launch_dims("(8, 1, 1)") is None
       and ncu_check.launch_dims("(8, 2, 1)", "(32, 4, 1)") == (16, 128) and ncu_check.launch_dims("n/a", "(1, 1, 1)") is None)
expect("same_launches: the timed run's kernels profiled", ncu_check.same_launches([[1024, 64]], [(1024, 64)]) is None)
why = ncu_check.same_launches([[1024, 64]], [(32768, 64)])
expect("same_launches: another grid under ncu (torch.compile's choice made again) is named",
       why is not None and "<<<32768, 64>>>" in why and "<<<1024, 64>>>" in why, str(why))
expect("same_launches: another number of kernels is another call", ncu_check.same_launches([[8, 32]], [(8, 32), (1, 32)])
       is not None)
expect("same_launches: nothing to compare where the timing's trace had no launches, or ncu none",
       ncu_check.same_launches(None, [(8, 32)]) is None and ncu_check.same_launches([[8, 32]], [None]) is None)

# main(): the point measured from the fixture; the file written in the full schema
best = {"op": "layernorm", "kernel": "10", "dtype": "fp32", "shape": "8x8", "time_ms_median": "0.0150", "bytes": "5e7",
        "gpu": "Fixture GPU", "git_rev": "x", "block_size": "256", "clock": "cupti", "status": "OK"}
ncu_check.check_program = lambda op, kernel, args: (best, ncu_check.after_flushes(
    ncu_check.parse_ncu_csv(ncu_text()), ncu_check.NCU_REPEATS))
with tempfile.TemporaryDirectory() as d:
    folder = os.path.join(d, "fixture-gpu")
    os.makedirs(folder)
    old_fields = ncu_check.CSV_FIELDS[:-2]
    with open(os.path.join(folder, "ncu_check.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=old_fields, lineterminator="\n")
        w.writeheader()
        w.writerow({k: "1" for k in old_fields} | {"op": "rmsnorm", "kernel": "8", "dtype": "bf16", "shape": "4x4",
                                                   "gpu": "Fixture GPU"})
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = ncu_check.main(["ncu_check.py", "--out", d, "layernorm", "10", "-N", "8", "-C", "8"])
    with open(os.path.join(folder, "ncu_check.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
        f.seek(0)
        header = next(csv.reader(f))
    expect("main: exit 0 (ratio 1.0 within the tolerance)", rc == 0, out.getvalue())
    expect("main: the file has ncu_sm_active_ms and bracketed, last", header[-2:] == ["ncu_sm_active_ms", "bracketed"],
           str(header))
    new = [r for r in rows if r["op"] == "layernorm"]
    old = [r for r in rows if r["op"] == "rmsnorm"]
    expect("main: the point's row has the SM-active time and bracketed 'yes'",
           len(new) == 1 and abs(float(new[0]["ncu_sm_active_ms"]) - 0.010101) < 1e-5 and new[0]["bracketed"] == "yes",
           str(new))
    expect("main: the stored row is kept, its new columns empty",
           len(old) == 1 and old[0]["ncu_sm_active_ms"] == "" and old[0]["bracketed"] == "", str(old))
    expect("main: the table shows the SM-active time", "0.010101" in out.getvalue() and "| yes |" in out.getvalue(),
           out.getvalue())
sys.exit(status())
