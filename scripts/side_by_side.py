#!/usr/bin/env python3
"""The best kernel of each program beside its peers, per standard shape and dtype.

    scripts/side_by_side.py results/<gpu> [OP ...]

For every <op>.csv of the folder (and peers.csv beside it, from scripts/peers.py): at each shape and dtype,
the best kernel of the ladder (kernels 1 and up), cuDNN (kernel 0), torch, torch.compile, Liger-Kernel and QuACK,
each in GB/s and %SOL (each against the copy measured in its own process), and the ratio of the best kernel's GB/s
to the best peer's (the fastest of them; all count the same bytes, so the ratio is a ratio of times). A peer
that did not run shows why (skipped, FAIL, or "-" where it has no row). Exit 1 when a peer row counts
different bytes from the program's row of the same point, or was timed on another clock (GPU kernel
timestamps against CUDA events): the two would not be comparable (such a cell is marked and left out of the
ratio).
The latency points (scripts/shapes.py's latency set) get a table of their own, in microseconds: per shape, the
copy of the same bytes, the best kernel and the best of cuDNN and the peers, cold and hot, and the best kernel
with programmatic dependent launch (hot+pdl, which only the programs have); the ratios are times: best peer's
over the best kernel's (> 1: ahead), and the best kernel's over the copy's in the same mode.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import shapes as shapes_mod  # noqa: E402
from summary import best_points, is_chained, load, op_results, results_folder, row_clock  # noqa: E402

CLOCK_MARK = "†"  # a peer cell timed on another clock than the program's row
PEER_COLUMNS = [("cuDNN", None), ("torch", "torch"), ("torch.compile", "torch.compile"), ("Liger", "liger"),
                ("QuACK", "quack")]


def best_peer_rows(peers, op):
    """(dtype, shape, peer) -> best OK row, or a status string."""
    out = {}
    for r in peers:
        if r["op"] != op:
            continue
        key = (r["dtype"], r["shape"], r["kernel"])
        cur = out.get(key)
        if r["status"] == "OK":
            if not isinstance(cur, dict) or float(r["gbps"]) > float(cur["gbps"]):
                out[key] = r
        elif cur is None:
            out[key] = r["status"]
    return out


def table(op, rows, peers):
    """(markdown lines, problems) for one op, its standard points (the latency points: latency_table)."""
    best = best_points(rows)
    pbest = best_peer_rows(peers, op)
    points = []
    lat = shapes_mod.off_standard_labels(op)  # few rows: their own tables; the tuning points: no peers
    for r in rows:
        if r["shape"] not in lat and (r["dtype"], r["shape"]) not in points:
            points.append((r["dtype"], r["shape"]))
    head = "| dtype | shape | best kernel | GB/s | %SOL |"
    rule = "|---|---|---|---:|---:|"
    for name, _ in PEER_COLUMNS:
        head += f" {name} GB/s | %SOL |"
        rule += "---:|---:|"
    head += " best kernel / best peer |"
    rule += "---:|"
    out, problems = [head, rule], []
    for dtype, shape in points:
        mine = [v for (d, s, k), v in best.items() if d == dtype and s == shape and k >= 1 and isinstance(v, dict)]
        if mine:
            b = max(mine, key=lambda r: float(r["gbps"]))
            line = (f"| {dtype} | {shape} | {b['kernel']} {b['kernel_name']} | {float(b['gbps']):.0f} | "
                    f"{float(b['sol_pct']):.1f}% |")
        else:
            b = None
            line = f"| {dtype} | {shape} | none OK | - | - |"
        peer_gbps = []
        for name, key in PEER_COLUMNS:
            p = best.get((dtype, shape, 0)) if key is None else pbest.get((dtype, shape, key))
            if isinstance(p, dict):
                g = float(p["gbps"])
                same_clock = b is None or row_clock(p) == row_clock(b)
                if same_clock:
                    peer_gbps.append(g)
                    line += f" {g:.0f} | {float(p['sol_pct']):.1f}% |"
                else:  # shown, marked, and left out of the ratio
                    line += f" {g:.0f}{CLOCK_MARK} | {float(p['sol_pct']):.1f}%{CLOCK_MARK} |"
                    problems.append(f"clocks differ: {op} {dtype} {shape}: {name} timed on {row_clock(p)}, the program on "
                                    f"{row_clock(b)}")
                if key is not None and b is not None and abs(float(p["bytes"]) - float(b["bytes"])) > 0.5:
                    problems.append(f"bytes differ: {op} {dtype} {shape}: {name} counts {p['bytes']} bytes, the program "
                                    f"{b['bytes']}")
            else:
                line += f" {'skipped' if p == 'SKIP' else (p or '-')} | |"
        if b is not None and peer_gbps:
            line += f" {float(b['gbps']) / max(peer_gbps):.2f}x |"
        else:
            line += " - |"
        out.append(line)
    if any(pr.startswith("clocks differ") for pr in problems):
        out.append("")
        out.append(f"{CLOCK_MARK} timed on another clock than the best kernel's row (GPU kernel timestamps against CUDA "
                   "events): not comparable, left out of the last column.")
    return out, problems


def us(r):
    """A row's median time in microseconds."""
    return 1e3 * float(r["time_ms_median"])


def copy_us(r):
    """The copy of the row's bytes, measured beside it, in microseconds."""
    return float(r["bytes"]) / float(r["sol_gbps"]) / 1e3 if float(r["sol_gbps"] or 0) > 0 else float("nan")


def latency_table(op, rows, peers):
    """Markdown lines of an op's latency points (empty when it has no rows of them): per dtype and shape, in microseconds, the
    copy, the best kernel (1 and up) and the best of cuDNN and the peers in each mode, and the ratios."""
    lat = shapes_mod.POINTS.get(op, {}).get("latency", [])
    if not lat:
        return []
    best = best_points(rows)
    pbest = best_peer_rows(peers, op)

    def mine(dtype, label):
        ok = [v for (d, s, k), v in best.items() if d == dtype and s == label and k >= 1 and isinstance(v, dict)]
        return min(ok, key=us) if ok else None

    def peer(dtype, label):  # its name says "chained" where its hot launches chained by PDL
        cands = [(v, "cuDNN") for v in [best.get((dtype, label, 0))] if isinstance(v, dict)]
        cands += [(v, k) for (d, s, k), v in pbest.items() if d == dtype and s == label and isinstance(v, dict)]
        cands = [(us(v), name + (" (chained)" if is_chained(v) else "")) for v, name in cands]
        return min(cands) if cands else None

    def cell(x):
        return f"{x:.2f}" if x is not None else "-"

    def ratio(a, b):
        return f"{a / b:.2f}x" if a is not None and b else "-"

    bases = [label for args, label in lat if "--hot" not in args]
    out = ["| dtype | shape | cold: copy us | best kernel us | best peer us | peer / kernel | kernel / copy | "
           "hot: copy us | best kernel us | +PDL us | best peer us | peer / kernel | kernel / copy |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for dtype in shapes_mod.DTYPES:
        for base in bases:
            cold, hot, pdl = mine(dtype, base), mine(dtype, base + ":hot"), mine(dtype, base + ":hot:pdl")
            if not (cold or hot or pdl):
                continue
            pc, ph = peer(dtype, base), peer(dtype, base + ":hot")
            kc = us(cold) if cold else None
            kh = min([us(r) for r in (hot, pdl) if r] or [None]) if (hot or pdl) else None
            copy_c = copy_us(cold) if cold else None
            copy_h = min([copy_us(r) for r in (hot, pdl) if r]) if (hot or pdl) else None
            out.append(f"| {dtype} | {base} | {cell(copy_c)} | {cell(kc)} | "
                       f"{cell(pc[0]) + ' ' + pc[1] if pc else '-'} | {ratio(pc[0] if pc else None, kc)} | "
                       f"{ratio(kc, copy_c)} | {cell(copy_h)} | {cell(us(hot) if hot else None)} | "
                       f"{cell(us(pdl) if pdl else None)} | {cell(ph[0]) + ' ' + ph[1] if ph else '-'} | "
                       f"{ratio(ph[0] if ph else None, kh)} | {ratio(kh, copy_h)} |")
    if len(out) == 2:
        return []  # no latency rows measured
    out.append("")
    out.append("Hot: the ratios take the faster of the plain and the PDL launch, and the faster of the copy's two "
               "(the copy kernel takes PDL too). The PyTorch peers have no PDL launch; cuDNN skips --pdl, but its hot "
               "launches chain by PDL on their own where the program says so (on an H100: C <= 8192, not the long rows).")
    return out


def folder_peers(folder):
    """The rows of folder/peers.csv (scripts/peers.py), or [] where there is none."""
    ppath = os.path.join(folder, "peers.csv")
    return load(ppath, kernel_numbers=False) if os.path.exists(ppath) else []


def folder_tables(folder, ops=None):
    """{op: (lines, problems, latency lines)} for a results folder: table() and latency_table() of each op."""
    peers = folder_peers(folder)
    return {op: table(op, rows, peers) + (latency_table(op, rows, peers),)
            for op, rows in op_results(folder) if not ops or op in ops}


def main(argv):
    ap = cli.Parser("side_by_side", __doc__)
    ap.add_argument("folder", type=results_folder, help="a results folder, results/<gpu>")
    ap.add_argument("ops", nargs="*", help="only these ops (default: every <op>.csv of the folder)")
    a = ap.parse_args(argv[1:])
    tables = folder_tables(a.folder, a.ops)
    absent = [op for op in a.ops if op not in tables]
    if absent or not tables:
        ap.error(f"no rows of {' '.join(absent) or 'any op'} in {a.folder}")
    bad = False
    for op, (lines, problems, lat) in tables.items():
        print(f"\n{op}:\n")
        print("\n".join(lines))
        if lat:
            print(f"\n{op}, latency points:\n")
            print("\n".join(lat))
        for p in problems:
            print(f"side_by_side: not comparable: {p}", file=sys.stderr)
            bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    cli.run(main)
