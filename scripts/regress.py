#!/usr/bin/env python3
"""`make regress`: the quick suite on this GPU, compared with the stored results, with a verdict and plots.

    scripts/regress.py [--device D] [--threshold 0.05]

Runs scripts/run_all.py --quick (the built programs with stored results; the others are named and left out) into
build/regress/<gpu-slug>/, then scripts/compare.py against
results/<gpu-slug>/ (the same GPU model: compared in GB/s) or, when there is none, against the stored GPU
of the same architecture (sm_XX: compared in %SOL), and checks that each dispatcher of the new run is within
2% of the best rung of its own ladder at every point it ran (scripts/standings.py); then checks each dispatcher
on a fresh random draw of shapes (scripts/dispatch_sweep.py --set random --targets, --count points an op, its
seed printed) against its own rungs in one process. Draws the plots of the new run where matplotlib is available
(the Makefile's venv). Exit 0 when all three pass.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import compare as compare_mod  # noqa: E402
import run_all as run_all_mod  # noqa: E402
import standings  # noqa: E402
import summary as summary_mod  # noqa: E402


def folder_sm(folder):
    """The sm column of the first CSV row in a results folder, or None."""
    for name in sorted(os.listdir(folder)):
        if summary_mod.is_program_csv(name):
            for r in summary_mod.load(os.path.join(folder, name)):
                return r.get("sm")
    return None


def find_baseline(results_dir, slug, sm):
    """(folder, why): results/<slug> when it exists, else a stored GPU with the same sm, else (None, why)."""
    same = os.path.join(results_dir, slug)
    if os.path.isdir(same) and folder_sm(same):
        return same, f"stored results of the same GPU ({slug}): compared in GB/s"
    if os.path.isdir(results_dir):
        for d in sorted(os.listdir(results_dir)):
            p = os.path.join(results_dir, d)
            if os.path.isdir(p) and sm and folder_sm(p) == sm:
                return p, f"no stored results for {slug}; using {d} (same architecture {sm}): compared in %SOL"
    return None, f"no stored results for {slug} or any {sm} GPU in {results_dir}"


def dispatch_check(folder):
    """1 (and one line each) where a dispatcher trails the best rung of its ladder by more than 2% in a folder."""
    lost = [(op, r) for op, rows in summary_mod.op_results(folder) for r in standings.regret_rows(rows)
            if r[4] > standings.REGRET]
    for op, (dtype, shape, _d, b, ratio) in lost:
        print(f"regress: {op} {dtype} {shape}: the dispatcher takes {ratio:.3f}x the time of rung {b['kernel']} "
              f"{b['kernel_name']}")
    print(f"regress: dispatchers against their ladders: {'FAIL' if lost else 'PASS'}")
    return 1 if lost else 0


def checked_ops(results):
    """The built ops with stored results to compare with (an <op>.csv in a GPU folder of results); an op without
    any is named and left out (a regression check needs a baseline: scripts/run_all.py OP records one)."""
    ops = []
    for op in run_all_mod.built_ops():
        if any(os.path.exists(os.path.join(results, d, f"{op}.csv")) for d in sorted(os.listdir(results))):
            ops.append(op)
        else:
            print(f"regress: {op}: no stored results (results/<gpu>/{op}.csv) to compare with: not checked")
    return ops


def main(argv):
    ap = cli.Parser("regress", __doc__)
    ap.add_argument("--device", default="0", help="GPU index (default 0)")
    ap.add_argument("--threshold", type=float, default=0.05, help="slowdown that counts (default 0.05 = 5%%)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "regress"), help="where the new run goes")
    ap.add_argument("--count", type=int, default=20, help="random points an op for the dispatchers (default 20)")
    a = ap.parse_args(argv[1:])
    if a.count < 1:
        ap.error(f"--count {a.count}: at least 1")
    found = [g for g in run_all_mod.gpus() if str(g[0]) == a.device]
    if not found:
        print("regress: no GPU (nvidia-smi lists none with that index)", file=sys.stderr)
        return 2
    slug = run_all_mod.slugify(found[0][1])
    ops = checked_ops(os.path.join(ROOT, "results"))
    rc_run = run_all_mod.main(["run_all", "--quick", "--device", a.device, "--out", a.out, *ops])
    new = os.path.join(a.out, slug)
    if rc_run == 2 or not os.path.isdir(new):
        return 2
    base, why = find_baseline(os.path.join(ROOT, "results"), slug, folder_sm(new))
    print(f"\nregress: {why}")
    if not base:
        return 1
    rc_cmp = compare_mod.main(["compare", base, new, "--threshold", str(a.threshold)])
    rc_disp = dispatch_check(new)
    rc_draw = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "dispatch_sweep.py"), "--set", "random",
                              "--count", str(a.count), "--targets", "--device", a.device,
                              "--out", os.path.join(new, "sweeps"), *ops]).returncode
    print(f"regress: dispatchers on a random draw: {'PASS' if rc_draw == 0 else 'FAIL'}")
    venv_python = os.path.join(ROOT, ".venv", "bin", "python")
    python = venv_python if os.path.exists(venv_python) else sys.executable
    if subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode == 0:
        subprocess.run([python, os.path.join(ROOT, "scripts", "plot.py"), new])
    else:
        print("regress: no plots (no matplotlib here, and `make venv` could not install it)")
    return 1 if rc_run or rc_cmp or rc_disp or rc_draw else 0


if __name__ == "__main__":
    cli.run(main)
