#!/usr/bin/env python3
"""Where a peer leads: the points of a random draw at which the better of cuDNN and torch.compile beats the
dispatcher, each profiled under Nsight Compute at the dispatcher's kernels.

    scripts/peer_gaps.py --seed S [--sweeps DIR] [--lead L] [--limit K] [--list] [--out CSV] [OP ...]

Reads DIR/OP_random_S.csv and its _peers.jsonl (scripts/dispatch_sweep.py --peers: cuDNN in the program's rows,
torch.compile beside them; DIR defaults to results/h200/sweeps) and takes the points where the dispatcher's median
over the better peer's is above L (default 1.03), the largest lead first, at most K an op (default 8). At each it
runs the program's dispatcher under `ncu --clock-control none --cache-control all` (the clocks as the harness times
them, caches flushed before each kernel) with the metrics below, and reads the kernels of the op's last launch (the
kernels after the last L2 flush; in a hot run, the last kernel): duration, DRAM throughput (% of peak), achieved and
theoretical occupancy, waves an SM, registers a thread, grid and block, and the two warp stall reasons that hold the
most warps (% of active warps' cycles). One row a kernel, printed and written to CSV (default DIR/peer_gaps_S.csv).
--list prints the points alone (no ncu, no GPU). Exit 1 where ncu or the program failed at a point, 2 on bad
arguments.
"""
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli  # noqa: E402
import dispatch_sweep  # noqa: E402
import ncu_check  # noqa: E402
import regimes  # noqa: E402
import shapes  # noqa: E402
import tune_dispatch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = ("layernorm", "rmsnorm", "batchnorm")
STALLS = ("long_scoreboard", "short_scoreboard", "barrier", "membar", "wait", "mio_throttle", "lg_throttle",
          "math_pipe_throttle", "not_selected", "drain", "dispatch_stall", "no_instruction", "branch_resolving")
STALL = "smsp__warp_issue_stalled_{}_per_warp_active.pct"
METRICS = {"ncu_us": "gpu__time_duration.sum", "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
           "occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
           "theoretical_pct": "sm__maximum_warps_per_active_cycle_pct", "waves": "launch__waves_per_multiprocessor",
           "registers": "launch__registers_per_thread", "grid": "launch__grid_size", "block": "launch__block_size"}
FIELDS = ["op", "dtype", "shape", "lead", "peer", "dispatch_us", "peer_us", "kernel", *METRICS, "stall_1", "stall_2"]


def gap_points(sweeps, op, seed, lead):
    """[(lead, dtype, label, args, p)] of an op's draw where the dispatcher trails the better peer by more than
    lead, largest first (p: tune_dispatch.sweep_points()'s entry); [] where the draw has no such file."""
    path = os.path.join(sweeps, f"{op}_random_{seed}.csv")
    if not os.path.exists(path):
        return []
    rows = tune_dispatch.load(path)
    if not rows:
        return []
    disp = max(int(r["kernel"]) for r in rows)
    pts = tune_dispatch.sweep_points(rows, disp, dispatch_sweep.peer_rows(path[:-4] + "_peers.jsonl"))
    drawn = len({(r["dtype"], r["shape"]) for r in rows})
    args_of = {(d, lab): args for d, args, lab in shapes.random_points(op, seed, drawn)}
    out = [(p["disp"] / p["peer"][0], key[0], key[1], args_of.get(key), p) for key, p in pts.items()
           if p.get("peer") and p["disp"] / p["peer"][0] > lead]
    return sorted(out, key=lambda x: -x[0])


def parse_metrics(text):
    """[(kernel name, {metric: (value, unit)})] per kernel launch, in launch order, of `ncu --csv --metrics`."""
    h, rows = ncu_check.metric_rows(text)
    if h is None:
        return []
    col = {k: h.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
    by_id = {}
    for r in rows:
        e = by_id.setdefault(int(r[col["ID"]]), (r[col["Kernel Name"]], {}))
        e[1][r[col["Metric Name"]]] = (r[col["Metric Value"]].replace(",", ""), r[col["Metric Unit"]])
    return [by_id[i] for i in sorted(by_id)]


def last_launch(launches):
    """The kernels of the op's last launch: those after the last L2 flush (up to the flush of the writes), or the
    last kernel where the run has no flush (a hot run)."""
    flushes = [i for i, (name, _m) in enumerate(launches) if ncu_check.is_flush(name, "read")]
    if not flushes:
        return launches[-1:]
    out = []
    for name, m in launches[flushes[-1] + 1:]:
        if ncu_check.is_flush(name, "write"):
            break
        out.append((name, m))
    return out


def number(m, metric):
    """A metric's value as a float (a duration in us), None where the profile lacks it."""
    value, unit = m.get(metric, (None, ""))
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v * ncu_check.UNITS[unit] * 1e3 if metric == METRICS["ncu_us"] and unit in ncu_check.UNITS else v


def kernel_row(name, m):
    """The CSV fields of one profiled kernel."""
    row = {"kernel": name.split("(")[0].replace("void ", "")[:80]}
    for field, metric in METRICS.items():
        v = number(m, metric)
        row[field] = "" if v is None else f"{v:.3f}" if field in ("ncu_us", "waves") else f"{v:.1f}" \
            if field.endswith("pct") else f"{v:.0f}"
    stalls = sorted(((number(m, STALL.format(s)) or 0.0, s) for s in STALLS), reverse=True)
    for i in (1, 2):
        pct, s = stalls[i - 1]
        row[f"stall_{i}"] = f"{s} {pct:.1f}%" if pct > 0 else ""
    return row


def profile(op, dtype, args, timeout):
    """The ncu launches of the dispatcher at a point, or raises RuntimeError with the reason."""
    exe = os.path.join(ROOT, f"{op}_forward")
    disp = str(regimes.registry(op)["dispatch"])  # the registry's last kernel, read from the source
    metrics = ",".join(list(METRICS.values()) + [STALL.format(s) for s in STALLS])
    cmd = ["ncu", "--clock-control", "none", "--cache-control", "all", "--csv", "--metrics", metrics, exe, disp,
           "--dtype", dtype, *args, "--repeats", "3"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise RuntimeError("ncu not found on PATH")
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"ncu ran past {timeout} s")
    launches = parse_metrics(r.stdout)
    if r.returncode != 0 or not launches:
        raise RuntimeError(f"ncu exited {r.returncode}: {(r.stderr.strip().splitlines() or [''])[-1][:200]}")
    return launches


def main(argv):
    ap = cli.Parser("peer_gaps", __doc__)
    ap.add_argument("ops", nargs="*", help="ops (default all three)")
    ap.add_argument("--seed", type=int, required=True, help="the draw's seed (its files OP_random_SEED*)")
    ap.add_argument("--sweeps", type=cli.folder, default=os.path.join(ROOT, "results", "h200", "sweeps"),
                    help="folder of the draw (default results/h200/sweeps)")
    ap.add_argument("--lead", type=float, default=1.03, help="the peer's lead that counts (default 1.03)")
    ap.add_argument("--limit", type=int, default=8, help="points an op at most (default 8)")
    ap.add_argument("--list", action="store_true", help="print the points alone (no ncu)")
    ap.add_argument("--out", help="the CSV (default SWEEPS/peer_gaps_SEED.csv)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a point's profile at most (default 120)")
    a = ap.parse_args(argv[1:])
    bad = [op for op in a.ops if op not in OPS]
    if bad:
        ap.error(f"unknown op {bad[0]!r}: {', '.join(OPS)}")
    if a.lead < 1 or a.limit < 1:
        ap.error("--lead at least 1, --limit at least 1")
    ops = a.ops or list(OPS)
    found = {op: gap_points(a.sweeps, op, a.seed, a.lead)[:a.limit] for op in ops}
    if not any(os.path.exists(os.path.join(a.sweeps, f"{op}_random_{a.seed}.csv")) for op in ops):
        ap.error(f"no draw of seed {a.seed} in {a.sweeps} (OP_random_{a.seed}.csv)")
    rows, fails = [], []
    for op in ops:
        for lead, dtype, label, args, p in found[op]:
            what = f"{op} {dtype} {label}: the dispatcher {p['disp'] * 1e3:.2f} us, {p['peer'][1]} {p['peer'][0] * 1e3:.2f} us " \
                   f"({lead:.3f}x); best rung {p['best'][1]} at {p['best'][2]} threads {p['best'][0] * 1e3:.2f} us"
            print(what, flush=True)
            if a.list:
                continue
            if args is None:
                fails.append(f"{op} {dtype} {label}: not a point of the draw of seed {a.seed}")
                continue
            try:
                launches = last_launch(profile(op, dtype, args, a.timeout))
            except RuntimeError as e:
                fails.append(f"{op} {dtype} {label}: {e}")
                continue
            for name, m in launches:
                row = {"op": op, "dtype": dtype, "shape": label, "lead": f"{lead:.3f}", "peer": p["peer"][1],
                       "dispatch_us": f"{p['disp'] * 1e3:.2f}", "peer_us": f"{p['peer'][0] * 1e3:.2f}",
                       **kernel_row(name, m)}
                print(f"    {row['kernel']}: {row['ncu_us']} us, DRAM {row['dram_pct']}% of peak, occupancy "
                      f"{row['occupancy_pct']}% (theoretical {row['theoretical_pct']}%), {row['waves']} waves, "
                      f"{row['registers']} registers, <<<{row['grid']}, {row['block']}>>>; stalls: {row['stall_1']}, "
                      f"{row['stall_2']}", flush=True)
                rows.append(row)
    if not any(found.values()):
        print(f"no point where a peer leads the dispatcher by more than {a.lead:.2f}x")
    if rows:
        out = a.out or os.path.join(a.sweeps, f"peer_gaps_{a.seed}.csv")
        with open(out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        print(f"{len(rows)} kernels -> {os.path.relpath(out, ROOT)}")
    for f in fails:
        print(f"FAIL {f}")
    return 1 if fails else 0


if __name__ == "__main__":
    cli.run(main)
