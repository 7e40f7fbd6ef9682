#!/usr/bin/env python3
"""The dispatcher and its best rung timed in one process, where the stored rows say the dispatcher lost.

    scripts/dispatch_check.py results/<gpu> [OP ...] [--threshold 1.02] [--rounds 3] [--no-write]

The stored rows of results/<gpu>/<op>.csv come from several runs: a rung's sweep and the dispatcher's row may be
minutes or days apart, and a 2-10 us point moves by a few percent from one process to the next, so a
dispatcher that runs the very rung it trails can look 3-7% behind it. For every point where the stored dispatcher
trails its best stored rung by more than the threshold (scripts/standings.py), this runs that rung (its block
size sweep) and the dispatcher in one process of the program, --rounds + 1 times, and takes the median over the
rounds of each process's ratio: the dispatcher's time over the rung's time at the block that the process before
chose. (The fastest of a sweep is the minimum of several noisy times, biased low against the dispatcher's one
configuration; a block chosen in one process and timed in the next is not.) Rows go to
results/<gpu>/dispatch_check.csv (op, dtype, shape, rung, rung_block, rung_ms, dispatch_ms, stored_ratio,
same_run_ratio, rounds, gpu, git_rev; a point checked again replaces its row; written after every point);
scripts/standings.py reports the same-process ratio where a point has one. Needs the built programs and the GPU
the folder is for (refused otherwise). Exit 1 when a same-process ratio is still over the threshold.
"""
import csv
import io
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import run_all  # noqa: E402  (slugify, gpus)
import shapes  # noqa: E402
import standings  # noqa: E402
from summary import CHECK_CSV, op_results, results_folder  # noqa: E402

FIELDS = ["op", "dtype", "shape", "rung", "rung_block", "rung_ms", "dispatch_ms", "stored_ratio", "same_run_ratio",
          "rounds", "gpu", "git_rev"]


def point_args(op, label):
    """The program arguments of a stored point's label (scripts/shapes.py), or None for a label of no set."""
    for _dtype, args, lab in shapes.points(op):
        if lab == label:
            return args
    return None


def one_process(op, dtype, args, rung, disp):
    """The OK CSV rows of one process running the rung's block-size sweep and the dispatcher."""
    exe = os.path.join(ROOT, f"{op}_forward")
    r = subprocess.run([exe, f"{rung},{disp}", "--dtype", dtype, *args, "--csv", "-"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{os.path.basename(exe)} {rung},{disp} {dtype} {' '.join(args)} exited {r.returncode}: "
                           f"{(r.stderr.strip().splitlines() or [''])[-1][:200]}")
    return [x for x in csv.DictReader(io.StringIO(r.stdout)) if x["status"] == "OK"]


def rounds_of(procs, rung, disp, what):
    """From the rows of successive processes (one_process): for every process after the first, (the rung's ms at
    the block the process before found fastest, that block, the dispatcher's ms, git_rev)."""
    out, chosen = [], None
    for rows in procs:
        rung_ms = {int(x["block_size"]): float(x["time_ms_median"]) for x in rows if int(x["kernel"]) == rung}
        dr = [x for x in rows if int(x["kernel"]) == disp]
        if not rung_ms or not dr:
            raise RuntimeError(f"{what}: no OK row of kernel {rung if not rung_ms else disp}")
        if chosen is not None:
            if chosen not in rung_ms:
                raise RuntimeError(f"{what}: kernel {rung} at block {chosen} ran in one process, not in the next")
            out.append((rung_ms[chosen], chosen, float(dr[0]["time_ms_median"]), dr[0]["git_rev"]))
        chosen = min(rung_ms, key=rung_ms.get)
    return out


def summarize(rounds):
    """Of rounds_of()'s rounds: the median of the dispatcher's time over the rung's, and the round at it (rung ms,
    block, dispatcher ms, git_rev)."""
    return (statistics.median(dm / rm for rm, _bs, dm, _rev in rounds),
            sorted(rounds, key=lambda x: x[2] / x[0])[len(rounds) // 2])


def main(argv):
    ap = cli.Parser("dispatch_check", __doc__)
    ap.add_argument("folder", type=results_folder, help="a results folder, results/<gpu>")
    ap.add_argument("ops", nargs="*", help="only these ops (default: every op with a dispatcher)")
    ap.add_argument("--threshold", type=float, default=standings.REGRET, help="default 1.02")
    ap.add_argument("--rounds", type=int, default=3, help="processes per point (default 3)")
    ap.add_argument("--no-write", action="store_true", help="print the rows, write nothing")
    a = ap.parse_args(argv[1:])
    if a.rounds < 1:
        ap.error(f"--rounds takes a count >= 1, got {a.rounds}")
    slug = os.path.basename(os.path.normpath(a.folder))
    here = [run_all.slugify(name) for _i, name in run_all.gpus()]
    if slug not in here:
        ap.error(f"{a.folder} is for GPU '{slug}', and this machine has {', '.join(here) or 'no GPU'}")
    path = os.path.join(a.folder, CHECK_CSV)
    old = standings.check_rows(a.folder)
    out, worst = [], 0.0

    def write():  # after every point: a run cut short keeps what it measured
        new = {(r["op"], r["dtype"], r["shape"]) for r in out}
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
            w.writeheader()
            w.writerows([r for r in old if (r["op"], r["dtype"], r["shape"]) not in new] + out)

    for op, rows in op_results(a.folder):
        if a.ops and op not in a.ops:
            continue
        disp = standings.dispatcher(rows)
        for dtype, shape, d, b, ratio in standings.regret_rows(rows):
            args = point_args(op, shape) if ratio > a.threshold else None
            if args is None:
                continue
            procs = [one_process(op, dtype, args, int(b["kernel"]), disp) for _ in range(a.rounds + 1)]
            rounds = rounds_of(procs, int(b["kernel"]), disp, f"{op} {dtype} {shape}")
            same, (rm, bs, dm, rev) = summarize(rounds)
            worst = max(worst, same)
            out.append({"op": op, "dtype": dtype, "shape": shape, "rung": b["kernel"], "rung_block": bs,
                        "rung_ms": f"{rm:.6f}", "dispatch_ms": f"{dm:.6f}", "stored_ratio": f"{ratio:.4f}",
                        "same_run_ratio": f"{same:.4f}", "rounds": a.rounds, "gpu": d["gpu"], "git_rev": rev})
            print(f"{op} {dtype} {shape}: stored {ratio:.3f}x, in one process {same:.3f}x (rung {b['kernel']} at "
                  f"{bs}: {1e3 * rm:.2f} us, dispatcher {1e3 * dm:.2f} us)", flush=True)
            if not a.no_write:
                write()
    over = sum(float(r["same_run_ratio"]) > a.threshold for r in out)
    print(f"dispatch_check: {len(out)} points re-timed; {over} still over {a.threshold:.2f}x" +
          (f" (worst {worst:.3f}x)" if out else ""))
    return 1 if over else 0


if __name__ == "__main__":
    cli.run(main)
