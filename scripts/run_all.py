#!/usr/bin/env python3
"""Runs every built program x kernel x dtype x standard shape (scripts/shapes.py) with the block-size sweep.

    scripts/run_all.py [--quick] [--device D|all] [--out DIR] [--no-peers] [--kernels K,K] [--dtype D]
                       [--set standard|latency|odd] [--resume] [OP ...]

- full mode (default): every standard point, fp32 and bf16 (LayerNorm and RMSNorm: the throughput points and the
  latency points, cold and hot); quick mode: each op's default shape only. The ops: layernorm, rmsnorm, batchnorm (the
  forward programs) and layernorm_backward, rmsnorm_backward (their programs' names; their peers too).
- CSV rows (the programs' schema: harness/options.h CSV_HEADER) go to DIR/<gpu-slug>/<op>.csv, the programs' output to
  <op>.log.gz (gzip'd: zcat it), and a summary.md (device header, best kernel per shape with GB/s and %SOL, failures)
  beside them.
  DIR defaults to results/.
- the peers (scripts/peers.py: PyTorch eager, torch.compile, Liger-Kernel and QuACK on the same points) into
  DIR/<gpu-slug>/peers.csv, when PyTorch is installed (else peers.py says so and writes nothing); --no-peers
  leaves them out.
- --device all: the quick suite on every GPU of the machine, each into DIR/<gpu-slug>-gpu<i>/, then flags
  any GPU whose %SOL is more than 5% below the node's median for the same points (a sick GPU in a node).
- --kernels K,K: only these kernels; their rows in an existing <op>.csv are replaced, the other kernels' rows
  kept (each row carries the git_rev that measured it), and the log is appended to.
- --dtype D (repeatable): only that dtype's points; their rows are replaced, the other points' rows kept.
- --set S (repeatable): only that set of points (scripts/shapes.py SETS); their rows are replaced, the others kept;
  the peers run the same set.
- --resume: continue a run cut short (a device's time limit): points whose rows already cover every kernel
  asked for are kept and skipped, the others (partial rows dropped) run again; the log is appended to.
  --kernels, --dtype and --resume run no peers (run scripts/peers.py for those).
One progress line per step on stderr. Exit 1 if a point failed validation or a program failed, 2 on usage.
"""
import argparse
import csv
import gzip
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import shapes as shapes_mod  # noqa: E402
import side_by_side  # noqa: E402
import standings  # noqa: E402
import summary as summary_mod  # noqa: E402


def slugify(name):
    s = name.lower()
    s = re.sub(r"^nvidia ", "", s)
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s or "unknown-gpu"


def gpus():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    res = []
    for line in out.strip().splitlines():
        idx, name = [x.strip() for x in line.split(",", 1)]
        res.append((int(idx), name))
    return res


def built_ops():
    """The ops whose program is built (the forward programs, then the backward ones)."""
    return [op for op in shapes_mod.POINTS if os.access(os.path.join(ROOT, shapes_mod.program(op)), os.X_OK)]


def drop_rows(csv_path, kernels=None, points=None):
    """Removes from an existing CSV the rows of these kernels (None: any) at these (dtype, shape) points (None:
    any); the other rows stay, rewritten in the current schema (columns a row of an older schema lacks stay
    empty), so that the program can append to the file. Returns how many rows went."""
    rows = summary_mod.load(csv_path)
    keep = [r for r in rows if not ((kernels is None or int(r["kernel"]) in kernels) and
                                    (points is None or (r["dtype"], r["shape"]) in points))]
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=summary_mod.CSV_FIELDS, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(keep)
    return len(rows) - len(keep)


def listed_dtypes(op):
    """{kernel: its dtypes} from a program's registry (`PROG --list`: one line per kernel, its number, its name, then
    the dtypes it takes, comma-separated)."""
    out = subprocess.run([os.path.join(ROOT, shapes_mod.program(op)), "--list"], capture_output=True, text=True).stdout
    return {int(m.group(1)): set(m.group(2).split(",")) for m in re.finditer(r"^\s*(\d+)\s+\S+\s+(\S+)", out, re.M)}


def complete_points(rows, kernels, takes):
    """(dtype, shape) points of CSV rows that have a row (any status) of every one of these kernels that takes the
    point's dtype (takes: listed_dtypes)."""
    seen = {}
    for r in rows:
        seen.setdefault((r["dtype"], r["shape"]), set()).add(int(r["kernel"]))
    return {pt for pt, ks in seen.items() if {k for k in kernels if pt[0] in takes.get(k, ())} <= ks}


def run_op(op, out_dir, device, quick, progress, kernels=None, dtypes=None, resume=False, sets=None):
    csv_path = os.path.join(out_dir, f"{op}.csv")
    log_path = os.path.join(out_dir, f"{op}.log.gz")  # compressed: the logs are most of a results folder's bytes
    plain_log = os.path.join(out_dir, f"{op}.log")  # a folder's log from before, compressed here where it goes on
    points = [p for p in shapes_mod.points(op, quick, sets) if not dtypes or p[0] in dtypes]
    done = set()
    takes = listed_dtypes(op)
    if resume and os.path.exists(csv_path):
        # keep the points that have rows of every kernel asked for; a point cut short is run again
        done = complete_points(summary_mod.load(csv_path), kernels or sorted(takes), takes)
        drop_rows(csv_path, points={(d, label) for d, _a, label in points if (d, label) not in done})
    elif (kernels or dtypes or sets) and os.path.exists(csv_path):
        # the rows about to be measured again: these kernels (or all) at these points (or all)
        drop_rows(csv_path, kernels or None, {(d, label) for d, _a, label in points} if dtypes or sets else None)
    else:
        for p in (csv_path, log_path, plain_log):
            if os.path.exists(p):
                os.remove(p)
    if os.path.exists(plain_log):
        with open(plain_log, "rb") as f, gzip.open(log_path, "ab") as g:
            g.write(f.read())
        os.remove(plain_log)
    failed = False
    with gzip.open(log_path, "ab" if (kernels or dtypes or resume or sets) else "wb") as log:
        for i, (dtype, args, label) in enumerate(points, 1):
            if (dtype, label) in done:
                print(f"[{progress}{i}/{len(points)}] {op} {dtype} {label}: done before (--resume)", file=sys.stderr,
                      flush=True)
                continue
            # one process a point (K or K1,K2,...); a kernel given that does not take this dtype is left out
            here = [k for k in kernels if dtype in takes.get(k, ())] if kernels else None
            if here == []:
                print(f"[{progress}{i}/{len(points)}] {op} {dtype} {label}: skipped (no kernel given takes {dtype})",
                      file=sys.stderr, flush=True)
                continue
            print(f"[{progress}{i}/{len(points)}] {op} {dtype} {label}", file=sys.stderr, flush=True)
            k = ",".join(str(k) for k in here) if here else "all"
            cmd = [os.path.join(ROOT, shapes_mod.program(op)), k, "--dtype", dtype, *args,
                   "--device", str(device), "--csv", csv_path]
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            log.write(r.stdout)
            if r.returncode != 0:
                print(f"run_all: {op} kernel {k} {dtype} {label} exited {r.returncode} (see {log_path})",
                      file=sys.stderr)
                failed = True
    return csv_path, log_path, failed


def write_summary(out_dir, ops_done):
    """DIR/summary.md, the full tables of a results folder (the README shows one ladder table per op): per op,
    the device line, the ladder at each of its LADDER_SHAPES, the best kernel of the ladder (1 and up) at every
    point, the side-by-side table with cuDNN and the peers, and the validation failures."""
    note = summary_mod.folder_note(out_dir)  # a folder that is not the README's GPU says what it records
    lines = [note] if note else []
    side = side_by_side.folder_tables(out_dir)
    stand = standings.folder_standings(out_dir)
    for op, csv_path, log_path in ops_done:
        header = ""
        with summary_mod.open_log(log_path) if os.path.exists(log_path) else open(os.devnull) as f:
            for line in f:
                if line.startswith("device "):
                    header = line.strip()
                    break
        rows = summary_mod.load(csv_path) if os.path.exists(csv_path) else []
        lines.append(f"# {op}\n")
        if header:
            lines.append(f"`{header}`\n")
        if not rows:
            lines.append("no rows\n")
            continue
        for shape in shapes_mod.LADDER_SHAPES.get(op, []):
            if any(r["shape"] == shape for r in rows):
                lines.append(summary_mod.ladder(rows, shape).strip() + "\n\n")
        lines.append("Best kernel of the ladder (1 and up) at every point:\n")
        lines.append(summary_mod.best_table([r for r in rows if r["kernel"] != "0"]).strip() + "\n")
        if op in side:
            lines.append("\nSide by side with cuDNN (kernel 0) and the peers (scripts/side_by_side.py):\n\n")
            lines.append("\n".join(side[op][0]) + "\n")
        if op in side and side[op][2]:
            lines.append("\nThe latency points, in microseconds (scripts/side_by_side.py):\n\n")
            lines.append("\n".join(side[op][2]) + "\n")
        if op in stand:
            line, reg, st, odd = stand[op]
            lines.append(f"\nWhere it stands: {line}\n")
            if reg:
                lines.append("\nThe dispatcher against the best rung of its ladder (scripts/standings.py):\n\n")
                lines.append("\n".join(reg) + "\n")
            if st:
                lines.append("\nThe best kernel against the best of cuDNN and the peers (scripts/standings.py):\n\n")
                lines.append("\n".join(st) + "\n")
            if odd:
                lines.append("\nRows of odd length, the dispatcher at C against C + 1 (scripts/standings.py):\n\n")
                lines.append("\n".join(odd) + "\n")
        regions = summary_mod.regions_section(csv_path)
        if regions:
            lines.append("\n" + regions)
        fails = [r for r in rows if r["status"] == "FAIL"]
        lines.append(f"\nvalidation failures: {len(fails)}\n")
        for r in fails[:20]:
            lines.append(f"- kernel {r['kernel']} {r['kernel_name']} {r['dtype']} {r['shape']} block {r['block_size']}\n")
        lines.append("\n")
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write("".join(lines))


def rewrite_summaries(root):
    """summary.md of every results folder under root, from the CSVs and logs it holds."""
    if not os.path.isdir(root):
        print(f"run_all: no such folder: {root}", file=sys.stderr)
        return 2
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        ops = [op for op in shapes_mod.POINTS if os.path.exists(os.path.join(folder, f"{op}.csv"))]
        if os.path.isdir(folder) and ops:
            write_summary(folder, [(op, os.path.join(folder, f"{op}.csv"), summary_mod.log_path(folder, op) or "")
                                   for op in ops])
            print(f"run_all: rewrote {os.path.join(folder, 'summary.md')}", file=sys.stderr)
    return 0


def sick_gpus(dirs, threshold=0.05):
    """%SOL of each GPU against the node's median for the same (op, kernel, dtype, shape, block) points."""
    per_point = {}
    for gpu, d in dirs:
        for name in os.listdir(d):
            if not (summary_mod.is_program_csv(name) or name == "peers.csv"):  # the programs' schema, peers too
                continue
            for r in summary_mod.load(os.path.join(d, name), kernel_numbers=False):
                if r["status"] != "OK":
                    continue
                key = (r["op"], r["kernel"], r["dtype"], r["shape"], r["block_size"])
                per_point.setdefault(key, {})[gpu] = float(r["sol_pct"])
    ratios = {gpu: [] for gpu, _ in dirs}
    for vals in per_point.values():
        if len(vals) < 2:
            continue
        med = statistics.median(vals.values())
        for gpu, v in vals.items():
            if med > 0:
                ratios[gpu].append(v / med)
    report = []
    for gpu, rs in ratios.items():
        r = statistics.median(rs) if rs else float("nan")
        report.append((gpu, r, r < 1 - threshold))
    return report


def kernel_list(text):
    """argparse type: --kernels K,K -> [K, K]."""
    try:
        return [int(k) for k in text.split(",") if k.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants comma-separated kernel numbers, got '{text}'") from None


def main(argv):
    ap = cli.Parser("run_all", __doc__)
    ap.add_argument("ops", nargs="*", help="ops (default: every program built)")
    ap.add_argument("--quick", action="store_true", help="each op's default shape only")
    ap.add_argument("--device", default="0", help="GPU index, or 'all' (quick suite on every GPU)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results"), help="results folder (default results/)")
    ap.add_argument("--no-peers", action="store_true",
                    help="skip scripts/peers.py (PyTorch eager, torch.compile, Liger-Kernel, QuACK)")
    ap.add_argument("--kernels", type=kernel_list, default=[], help="comma-separated kernel numbers (default: all)")
    ap.add_argument("--dtype", action="append", choices=shapes_mod.DTYPES,
                    help="only this dtype's points (repeatable; default: all)")
    ap.add_argument("--set", action="append", choices=shapes_mod.SETS, dest="sets",
                    help="only this set of points (repeatable; default: every set)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the points already in the CSVs (with a row of every kernel asked for), run the rest")
    ap.add_argument("--summary-only", action="store_true",
                    help="run nothing: rewrite summary.md of every folder of --out from its CSVs (no GPU needed)")
    a = ap.parse_args(argv[1:])
    if a.summary_only:
        return rewrite_summaries(a.out)
    unknown = [op for op in a.ops if op not in shapes_mod.POINTS]
    if unknown:
        ap.error(f"no standard points for {' '.join(unknown)} (one of {', '.join(shapes_mod.POINTS)})")
    found = gpus()
    if not found:
        print("run_all: no GPU (nvidia-smi lists none)", file=sys.stderr)
        return 2
    ops = a.ops or built_ops()
    missing = [op for op in ops if not os.access(os.path.join(ROOT, shapes_mod.program(op)), os.X_OK)]
    if missing or not ops:
        print(f"run_all: not built: {' '.join(missing) or '(no programs)'} (run make)", file=sys.stderr)
        return 2
    if a.device == "all":
        devices, quick = found, True
    else:
        devices = [g for g in found if str(g[0]) == a.device]
        quick = a.quick
        if not devices:
            print(f"run_all: no GPU {a.device} (found {len(found)})", file=sys.stderr)
            return 2
    failed = False
    dirs = []
    for idx, name in devices:
        slug = slugify(name) + (f"-gpu{idx}" if a.device == "all" else "")
        out_dir = os.path.join(a.out, slug)
        os.makedirs(out_dir, exist_ok=True)
        done = []
        for op in ops:
            csv_path, log_path, f = run_op(op, out_dir, idx, quick, f"gpu{idx} " if a.device == "all" else "",
                                           a.kernels, a.dtype, a.resume, a.sets)
            failed |= f
            done.append((op, csv_path, log_path))
        peer_sets = [x for x in a.sets or [] if x not in shapes_mod.PROGRAMS_ONLY]  # the peers run no tuning points
        if (a.device != "all" and not a.no_peers and not a.kernels and not a.dtype and not a.resume
                and (peer_sets or not a.sets)):
            peer_ops = list(ops)  # every program has its peers
            cmd = [sys.executable, os.path.join(ROOT, "scripts", "peers.py"), "--device", str(idx), "--out", a.out,
                   *(["--quick"] if quick else []), *[f"--set={x}" for x in peer_sets], *peer_ops]
            if peer_ops and subprocess.run(cmd).returncode != 0:
                print("run_all: peers.py reported failures (see peers.log)", file=sys.stderr)
                failed = True
        write_summary(out_dir, done)
        dirs.append((f"{idx} {name}", out_dir))
        print(f"run_all: wrote {out_dir}", file=sys.stderr)
    if a.device == "all" and len(dirs) > 1:
        print("\nper-GPU %SOL against the node's median (same points):")
        for gpu, r, sick in sick_gpus(dirs):
            print(f"  GPU {gpu}: {r:.3f} x median{'   <-- more than 5% below the node: check this GPU' if sick else ''}")
            failed |= sick
    if failed:
        print("run_all: validation failures or slow GPUs (see above and the logs)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    cli.run(main)
