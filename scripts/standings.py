#!/usr/bin/env python3
"""Where each program stands, from a results folder: generated, never written by hand.

    scripts/standings.py results/<gpu> [OP ...] [--line]

Per op, two tables (scripts/run_all.py puts them into summary.md):
- the dispatcher against the best rung of its own ladder at every point where the dispatcher ran: its GB/s, the
  best rung's, and the dispatcher's time over the best rung's (1.00x: it picked the best; above 1.02x: it lost).
  The stored rows of a point come from several runs; where scripts/dispatch_check.py re-timed the dispatcher and
  that rung in one process (dispatch_check.csv beside the CSVs), that ratio is shown too and is the one judged,
  while the stored rows are still those it checked (its stored ratio is the one the CSVs give now);
- the standing at the throughput points: the best kernel of the ladder (1 and up) as % of the copy, and its time
  against the best of cuDNN (kernel 0) and the peers (scripts/peers.py) timed on the same clock;
- rows of odd length (the odd points, LayerNorm and RMSNorm): the dispatcher's time at an odd C over its time at
  the same rows of C + 1 (at most ODD_COST), and the best of cuDNN and the peers at the odd C.
--line prints one line per op instead (update_readme.py puts it into the README): the range of % of the copy
per dtype, the geometric mean against the best peer and the points behind it, the latency points cold and hot,
and the dispatcher's worst point against its ladder.
A ratio is a ratio of times of the same bytes (GB/s over GB/s), each taken in its own process against its own copy.
"""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import csvfile  # noqa: E402
import shapes as shapes_mod  # noqa: E402
from side_by_side import best_peer_rows, folder_peers  # noqa: E402
from summary import (CHECK_CSV, DISPATCHER, best_points, is_chained, op_results, results_folder,  # noqa: E402
                     row_clock)

REGRET = 1.02  # the dispatcher may trail its best rung by the noise, no more
ODD_COST = 1.25  # a row of odd length may cost this much more than the same rows at C + 1
BEHIND = 0.98  # "behind a peer": more than 2% slower


def dispatcher(rows):
    """The dispatcher's number: the kernel named 'dispatch' (the last number of a ladder), or None."""
    ks = {int(r["kernel"]) for r in rows if r["kernel_name"] == DISPATCHER}
    return max(ks) if ks else None


def points(rows):
    """[(dtype, shape)] in the order the CSV first shows them."""
    out = []
    for r in rows:
        if (r["dtype"], r["shape"]) not in out:
            out.append((r["dtype"], r["shape"]))
    return out


def best_rung(best, dtype, shape, exclude=()):
    """The OK row with the highest GB/s among kernels 1 and up (not in exclude) at a point, or None."""
    ok = [v for (d, s, k), v in best.items() if d == dtype and s == shape and k >= 1 and k not in exclude
          and isinstance(v, dict)]
    return max(ok, key=lambda r: float(r["gbps"])) if ok else None


def best_peer(best, pbest, dtype, shape, clock, chained=None):
    """(GB/s, name) of the fastest of cuDNN and the peers at a point, on the given clock, or None; chained True /
    False: only the rows whose hot launches chained by PDL / did not (None: every row)."""
    cands = []
    k0 = best.get((dtype, shape, 0))
    if isinstance(k0, dict) and row_clock(k0) == clock:
        cands.append((k0, "cuDNN"))
    for (d, s, name), v in pbest.items():
        if d == dtype and s == shape and isinstance(v, dict) and row_clock(v) == clock:
            cands.append((v, name))
    cands = [(float(r["gbps"]), name) for r, name in cands if chained is None or is_chained(r) == chained]
    return max(cands) if cands else None


def check_rows(folder):
    """The rows of a folder's dispatch_check.csv (scripts/dispatch_check.py), [] where there is none."""
    path = os.path.join(folder, CHECK_CSV)
    if not os.path.exists(path):
        return []
    return csvfile.read(path, required=["op", "dtype", "shape", "stored_ratio", "same_run_ratio"],
                        floats=("stored_ratio", "same_run_ratio"),
                        ints=(), kernel_numbers=False, choices={"dtype": csvfile.CHOICES["dtype"]})


def same_run_ratios(folder):
    """{(op, dtype, shape): (the stored ratio it checked, the dispatcher's time over its best rung's timed in one
    process)} from a folder's dispatch_check.csv, {} where there is none."""
    return {(r["op"], r["dtype"], r["shape"]): (float(r["stored_ratio"]), float(r["same_run_ratio"]))
            for r in check_rows(folder)}


def same_run(op, reg, checks):
    """A regret row's same-process ratio, None where the point has none or its check is stale (the stored rows
    have changed since: the check's stored ratio, written to 4 digits, is not this row's)."""
    c = checks.get((op, reg[0], reg[1]))
    return c[1] if c and f"{c[0]:.4f}" == f"{reg[4]:.4f}" else None


def judged(op, reg, checks):
    """A regret row's ratio as judged: the same-process one where the point has a check of these stored rows."""
    same = same_run(op, reg, checks)
    return reg[4] if same is None else same


def regret_rows(rows):
    """[(dtype, shape, dispatcher row, best rung row, ratio)] at every point where both ran."""
    disp = dispatcher(rows)
    if disp is None:
        return []
    best = best_points(rows)
    out = []
    for dtype, shape in points(rows):
        d = best.get((dtype, shape, disp))
        b = best_rung(best, dtype, shape, exclude=(disp,))
        if isinstance(d, dict) and b is not None:
            out.append((dtype, shape, d, b, float(b["gbps"]) / float(d["gbps"])))
    return out


def regret_table(op, rows, checks):
    out = ["| dtype | shape | dispatcher GB/s | best rung | GB/s | dispatcher time / best rung's | in one process |",
           "|---|---|---:|---|---:|---:|---:|"]
    for reg in regret_rows(rows):
        dtype, shape, d, b, ratio = reg
        mark = " **lost**" if judged(op, reg, checks) > REGRET else ""
        same = same_run(op, reg, checks)
        out.append(f"| {dtype} | {shape} | {float(d['gbps']):.0f} | {b['kernel']} {b['kernel_name']} | "
                   f"{float(b['gbps']):.0f} | {ratio:.3f}x | {f'{same:.3f}x' if same else '-'}{mark} |")
    return out if len(out) > 2 else []


def standing_rows(op, rows, peers):
    """[(dtype, shape, best kernel row, (peer GB/s, peer name) or None)] at the throughput points."""
    best = best_points(rows)
    pbest = best_peer_rows(peers, op)
    few = shapes_mod.off_standard_labels(op)  # few rows (times, not % of the copy) and the tuning points
    out = []
    for dtype, shape in points(rows):
        if shape in few:
            continue
        b = best_rung(best, dtype, shape)
        if b is not None:
            out.append((dtype, shape, b, best_peer(best, pbest, dtype, shape, row_clock(b))))
    return out


def standing_table(op, rows, peers):
    out = ["| dtype | shape | best kernel | %SOL | best of cuDNN and the peers | its %SOL | ours over it |",
           "|---|---|---|---:|---|---:|---:|"]
    for dtype, shape, b, p in standing_rows(op, rows, peers):
        if p:
            psol = float(b["sol_pct"]) * p[0] / float(b["gbps"])  # the peer's GB/s against our row's copy
            out.append(f"| {dtype} | {shape} | {b['kernel']} {b['kernel_name']} | {float(b['sol_pct']):.1f}% | {p[1]} | "
                       f"{psol:.1f}% | {float(b['gbps']) / p[0]:.2f}x |")
        else:
            out.append(f"| {dtype} | {shape} | {b['kernel']} {b['kernel_name']} | {float(b['sol_pct']):.1f}% | - | - | - |")
    return out if len(out) > 2 else []


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def odd_rows(op, rows, peers):
    """[(dtype, rows, C, dispatcher row at C, dispatcher row at C + 1, best peer (GB/s, name) at C or None)] at the
    odd points whose C is odd and where the dispatcher ran at both."""
    disp = dispatcher(rows)
    best = best_points(rows)
    pbest = best_peer_rows(peers, op)
    out = []
    for args, label in shapes_mod.POINTS.get(op, {}).get("odd", []):
        n, c = (int(v) for v in label.split("x"))
        if c % 2 == 0:
            continue
        for dtype in shapes_mod.DTYPES:
            d, e = best.get((dtype, label, disp)), best.get((dtype, f"{n}x{c + 1}", disp))
            if isinstance(d, dict) and isinstance(e, dict):
                out.append((dtype, n, c, d, e, best_peer(best, pbest, dtype, label, row_clock(d))))
    return out


def odd_table(op, rows, peers):
    out = ["| dtype | rows x C | dispatcher us | at C + 1 us | C over C + 1 | best of cuDNN and the peers us |",
           "|---|---|---:|---:|---:|---|"]
    for dtype, n, c, d, e, p in odd_rows(op, rows, peers):
        ratio = float(d["time_ms_median"]) / float(e["time_ms_median"])
        mark = " **over**" if ratio > ODD_COST else ""
        peer = f"{float(d['bytes']) / p[0] / 1e3:.2f} {p[1]}" if p else "-"
        out.append(f"| {dtype} | {n}x{c} | {1e3 * float(d['time_ms_median']):.2f} | "
                   f"{1e3 * float(e['time_ms_median']):.2f} | {ratio:.2f}x{mark} | {peer} |")
    return out if len(out) > 2 else []


def latency_counts(op, rows, peers, mode):
    """(ahead, points, geometric mean of peer time / ours) at the latency points of a mode ('' cold, ':hot'). Hot,
    like meets like: a peer whose launches did not chain meets ours without PDL; a peer whose hot row says its
    launches chained by PDL on their own (cuDNN's, at many points) meets the faster of ours without and with --pdl
    (the ':pdl' rows). A point's ratio is the lesser of the two."""
    best = best_points(rows)
    pbest = best_peer_rows(peers, op)
    ratios = []
    for args, label in shapes_mod.POINTS.get(op, {}).get("latency", []):
        if "--hot" in args:  # the cold entry names the point; mode picks its label
            continue
        lab = label + mode
        for dtype in shapes_mod.DTYPES:
            b = best_rung(best, dtype, lab)
            if not b:
                continue
            plain = best_peer(best, pbest, dtype, lab, row_clock(b), chained=False)
            chained = best_peer(best, pbest, dtype, lab, row_clock(b), chained=True)
            with_pdl = best_rung(best, dtype, lab + ":pdl")
            if with_pdl and row_clock(with_pdl) == row_clock(b) and float(with_pdl["gbps"]) > float(b["gbps"]):
                ours_chained = with_pdl
            else:
                ours_chained = b
            r = [float(b["gbps"]) / plain[0]] if plain else []
            r += [float(ours_chained["gbps"]) / chained[0]] if chained else []
            if r:
                ratios.append(min(r))
    return sum(r >= 1.0 for r in ratios), len(ratios), geomean(ratios)


def op_line(op, rows, peers, checks=None):
    """One line: where the op stands on this folder's GPU."""
    gpu = rows[0]["gpu"]
    st = standing_rows(op, rows, peers)
    groups = []
    for word, pick in (("training", lambda s: ":inf" not in s), ("inference", lambda s: ":inf" in s)):
        parts = []
        for dtype in shapes_mod.DTYPES:
            sols = [float(b["sol_pct"]) for d, sh, b, _p in st if d == dtype and pick(sh)]
            if sols:
                parts.append(f"{min(sols):.0f}-{max(sols):.0f}% ({dtype})")
        if parts:
            groups.append((word + " " if any(":inf" in sh for _d, sh, _b, _p in st) else "") + ", ".join(parts))
    line = (f"**{gpu}**: the best kernel runs at " + "; ".join(groups) + f" of the copy over {len(st)} throughput "
            "points")
    ratios = [(float(b["gbps"]) / p[0], d, s) for d, s, b, p in st if p]
    if ratios:
        behind = [r for r in ratios if r[0] < BEHIND]
        worst = min(ratios)
        line += (f"; against the best of cuDNN and the peers {geomean([r[0] for r in ratios]):.2f}x in geometric mean, "
                 f"behind by more than 2% at {len(behind)} of {len(ratios)}")
        if behind:
            line += f" (least {worst[0]:.2f}x, {worst[1]} {worst[2]})"
    for mode, word in (("", "cold"), (":hot", "hot")):
        ahead, n, g = latency_counts(op, rows, peers, mode)
        if n:
            line += f"; latency points {word}: ahead at {ahead} of {n} ({g:.2f}x)"
    odd = [(float(d["time_ms_median"]) / float(e["time_ms_median"]), dt, f"{n}x{c}")
           for dt, n, c, d, e, _p in odd_rows(op, rows, peers)]
    if odd:
        worst = max(odd)
        line += (f"; rows of odd length: at most {worst[0]:.2f}x the time at C + 1 ({worst[1]} {worst[2]}) over "
                 f"{len(odd)} points")
    reg = [(judged(op, r, checks or {}), r[0], r[1]) for r in regret_rows(rows)]
    if reg:
        worst = max(reg)
        lost = sum(r[0] > REGRET for r in reg)
        line += (f"; the dispatcher trails its best rung by more than 2% at {lost} of {len(reg)} points "
                 f"(worst {worst[0]:.2f}x, {worst[1]} {worst[2]})")
    return line + "."


def folder_standings(folder, ops=None):
    """{op: (line, regret table lines, standing table lines, odd rows table lines)} for a results folder."""
    peers = folder_peers(folder)
    checks = same_run_ratios(folder)
    return {op: (op_line(op, rows, peers, checks), regret_table(op, rows, checks), standing_table(op, rows, peers),
                 odd_table(op, rows, peers))
            for op, rows in op_results(folder) if not ops or op in ops}


def main(argv):
    ap = cli.Parser("standings", __doc__)
    ap.add_argument("folder", type=results_folder, help="a results folder, results/<gpu>")
    ap.add_argument("ops", nargs="*", help="only these ops (default: every <op>.csv of the folder)")
    ap.add_argument("--line", action="store_true", help="one line per op")
    a = ap.parse_args(argv[1:])
    res = folder_standings(a.folder, a.ops)
    absent = [op for op in a.ops if op not in res]
    if absent or not res:
        ap.error(f"no rows of {' '.join(absent) or 'any op'} in {a.folder}")
    for op, (line, reg, st, odd) in res.items():
        if a.line:
            print(f"{op}: {line}")
            continue
        print(f"\n{op}: {line}\n")
        if reg:
            print("The dispatcher against the best rung of its ladder:\n")
            print("\n".join(reg) + "\n")
        if st:
            print("The best kernel against the best of cuDNN and the peers, throughput points:\n")
            print("\n".join(st) + "\n")
        if odd:
            print("Rows of odd length, the dispatcher at C against C + 1:\n")
            print("\n".join(odd))
    return 0


if __name__ == "__main__":
    cli.run(main)
