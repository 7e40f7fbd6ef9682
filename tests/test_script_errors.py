#!/usr/bin/env python3
"""CI tests of how the scripts meet files they cannot use: one line naming the file and the line, a non-zero
exit, never a traceback, never a row silently left out (scripts/csvfile.py, the one strict reader); compare.py's
verdict when it compared nothing; plot.py on a folder with no rows; summary.py on peers.csv."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import FIELDS, expect, status, write_csv  # noqa: E402

S = os.path.join(ROOT, "scripts")
PLOT_PYTHON = next((p for p in (os.path.join(ROOT, ".venv", "bin", "python"),) if os.path.exists(p)), sys.executable)


def run(script, *args, python=sys.executable):
    r = subprocess.run([python, os.path.join(S, script), *args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def one_line(err, *needles):
    lines = err.strip().splitlines()
    return len(lines) == 1 and all(n in lines[0] for n in needles) and "Traceback" not in err


with tempfile.TemporaryDirectory() as d:
    good = os.path.join(d, "good", "layernorm.csv")
    write_csv(good, "GPU A", "sm_90", [10, 40, 80, 95])
    with open(good) as f:
        lines = f.read().splitlines()

    def variant(name, edit):
        """A results folder whose layernorm.csv is the good one with `edit` applied to its lines."""
        folder = os.path.join(d, name)
        os.makedirs(folder)
        with open(os.path.join(folder, "layernorm.csv"), "w") as f:
            f.write("\n".join(edit(list(lines))) + "\n")
        return folder, os.path.join(folder, "layernorm.csv")

    # item 7: a line cut short (line 4 of the file), and a gbps that is not a number (line 3)
    cut_dir, cut = variant("cut", lambda ls: ls[:3] + [ls[3][:len(ls[3]) // 2]] + ls[4:])
    gi = FIELDS.index("gbps")
    bad_dir, bad = variant("badgbps", lambda ls: ls[:2] + [",".join(v if i != gi else "fast" for i, v in
                                                                      enumerate(ls[2].split(",")))] + ls[3:])
    readme = os.path.join(d, "README.md")
    with open(readme, "w") as f:
        f.write("<!-- ladder:layernorm -->\n<!-- /ladder:layernorm -->\n")
    for what, folder, path, line in (("a line cut short", cut_dir, cut, 4), ("gbps 'fast'", bad_dir, bad, 3)):
        for script, args, python in (("summary.py", [path], sys.executable),
                                     ("compare.py", [good, path], sys.executable),
                                     ("compare.py", [path, good], sys.executable),
                                     ("side_by_side.py", [folder], sys.executable),
                                     ("update_readme.py", [folder, "--readme", readme, "--check"], sys.executable),
                                     ("plot.py", [folder, "--out", os.path.join(d, "plots")], PLOT_PYTHON)):
            rc, out, err = run(script, *args, python=python)
            if script == "plot.py" and "matplotlib is not installed" in err:
                expect(f"{script} on {what}: (matplotlib missing) one line, no traceback", rc != 0 and one_line(err), err)
                continue
            expect(f"{script} on {what}: exit 2 with one line naming {os.path.basename(path)} line {line}",
                   rc == 2 and one_line(err, path, f"line {line}"), f"exit {rc}: {err.strip()[-300:]}")

    # summary.py and side_by_side.py dropped a malformed row silently and named another best block: a row with
    # a field missing is refused, not skipped
    short_dir, short = variant("short", lambda ls: ls[:2] + [",".join(ls[2].split(",")[:-1])] + ls[3:])
    for script, args in (("summary.py", [short]), ("side_by_side.py", [short_dir])):
        rc, out, err = run(script, *args)
        expect(f"{script}: a row with a field missing is refused, not left out", rc == 2 and one_line(err, "line 3"),
               f"exit {rc}: {out[-200:]} {err[-200:]}")

    # item 6: summary.py on a peers CSV (its argument check accepts the schema): one line, not int('torch.compile')
    peers = os.path.join(d, "peers.csv")
    with open(peers, "w") as f:
        f.write(lines[0] + "\n" + lines[1].replace(",0,k0,", ",torch.compile,layer_norm,", 1) + "\n")
    rc, out, err = run("summary.py", peers)
    expect("summary.py on peers.csv: one line naming the file and the kernel column, exit 2",
           rc == 2 and one_line(err, peers, "line 2", "kernel 'torch.compile'"), f"exit {rc}: {err.strip()[-300:]}")
    stored = os.path.join(ROOT, "results", "h100-80gb-hbm3", "peers.csv")
    if os.path.exists(stored):
        rc, out, err = run("summary.py", stored)
        expect("summary.py on the stored peers.csv: one line, no traceback", rc != 0 and one_line(err, "peers.csv"),
               err.strip()[-300:])

    # item 8: nothing compared is not a pass: a header-only NEW, and two CSVs of different ops
    header_only = os.path.join(d, "empty", "layernorm.csv")
    os.makedirs(os.path.dirname(header_only))
    with open(header_only, "w") as f:
        f.write(lines[0] + "\n")
    rc, out, err = run("compare.py", good, header_only)
    expect("compare.py with a header-only NEW: not PASS, exit 1", rc == 1 and "PASS" not in out
           and "nothing compared" in out, out[:300])
    rms = os.path.join(d, "rms", "rmsnorm.csv")
    os.makedirs(os.path.dirname(rms))
    with open(rms, "w") as f:
        f.write("\n".join([lines[0]] + [l.replace("layernorm,", "rmsnorm,", 1) for l in lines[1:]]) + "\n")
    rc, out, err = run("compare.py", good, rms)
    expect("compare.py layernorm.csv against rmsnorm.csv: not PASS, exit 1",
           rc == 1 and "PASS" not in out and "nothing compared" in out, out[:300])
    rc, out, err = run("compare.py", good, good)
    expect("compare.py: a file against itself still passes", rc == 0 and "verdict: PASS" in out, out[:300])

    # item 9: plot.py on a folder whose CSV has only a header: one line saying so, exit 1
    rc, out, err = run("plot.py", os.path.dirname(header_only), "--out", os.path.join(d, "plots2"), python=PLOT_PYTHON)
    expect("plot.py on a header-only folder: one line on stderr, exit 1", rc == 1 and one_line(err, "plot:"),
           f"exit {rc}: {out!r} {err!r}")

    # the stored results all read
    for gpu in ("h100-80gb-hbm3", "h200"):
        folder = os.path.join(ROOT, "results", gpu)
        if os.path.isdir(folder):
            rc, out, err = run("side_by_side.py", folder)
            expect(f"side_by_side.py reads results/{gpu}", rc in (0, 1) and "Traceback" not in err, err[-300:])
sys.exit(status())
