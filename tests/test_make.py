#!/usr/bin/env python3
"""CI test of the Makefile's messages (no GPU, no network needed): make sass where the toolkit has no cuobjdump
stops at once with one line naming it; make profile without KERNEL profiles the op's dispatcher; make venv / make
plots where PyPI cannot be reached (pip with no index, as offline) say in one line that matplotlib is installed from
PyPI and that plots are skipped, and make plots does not fail."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import expect, status  # noqa: E402


# run from make test: the parent make's jobserver and flags stay out of these makes
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}


def make(*args, cwd=ROOT, env=None):
    r = subprocess.run(["make", "--no-print-directory", "CI=true", *args], capture_output=True, text=True, cwd=cwd,
                       env=dict(CLEAN_ENV, **(env or {})), timeout=300)
    return r.returncode, (r.stdout + r.stderr).strip().splitlines()


t0 = time.time()
rc, lines = make("sass", "CUOBJDUMP=/nonexistent/cuobjdump")
expect("make sass without cuobjdump: one line naming it, at once, non-zero",
       rc != 0 and len(lines) == 1 and "cuobjdump" in lines[0] and time.time() - t0 < 60, "\n".join(lines))

def after(words, w):
    """The word after w in words, None where w is not there or last."""
    return words[words.index(w) + 1] if w in words[:-1] else None


# make profile without KERNEL profiles the op's dispatcher, the last kernel of its --list (NCU=echo: no profiler)
for op in ("layernorm", "rmsnorm", "batchnorm", "layernorm_backward", "rmsnorm_backward"):
    prog = op if op.endswith("_backward") else f"{op}_forward"
    last = subprocess.run([os.path.join(ROOT, prog), "--list"], capture_output=True, text=True)
    want = last.stdout.strip().splitlines()[-1].split()[:2] if last.returncode == 0 and last.stdout.strip() else []
    rc, lines = make("profile", f"OP={op}", "NCU=echo")
    ran = lines[-1].split() if lines else []
    expect(f"make profile OP={op}: the dispatcher ({' '.join(want) or '--list failed'}) by default",
           rc == 0 and len(want) == 2 and want[1] == "dispatch" and after(ran, f"./{prog}") == want[0],
           f"exit {rc}: " + "\n".join(lines[-3:]))
rc, lines = make("profile", "OP=rmsnorm", "KERNEL=7", "NCU=echo")
expect("make profile OP=rmsnorm KERNEL=7 profiles kernel 7, the clocks left as they run", rc == 0 and lines and
       after(lines[-1].split(), "./rmsnorm_forward") == "7" and after(lines[-1].split(), "--clock-control") == "none",
       f"exit {rc}: " + "\n".join(lines[-3:]))

with tempfile.TemporaryDirectory() as d:
    shutil.copy(os.path.join(ROOT, "Makefile"), d)
    os.makedirs(os.path.join(d, "scripts"))
    shutil.copy(os.path.join(ROOT, "scripts", "requirements.txt"), os.path.join(d, "scripts"))
    os.makedirs(os.path.join(d, "results", "some-gpu"))
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull}
    # a Python without site-packages: where the system's Python has matplotlib, make plots would use it
    bare = os.path.join(d, "python-bare")
    with open(bare, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    os.chmod(bare, 0o755)
    rc, lines = make("venv", f"PYTHON={bare}", cwd=d, env=offline)
    expect("make venv offline: one line, saying PyPI and that plots are skipped",
           len(lines) == 1 and "PyPI" in lines[0] and "plots are skipped" in lines[0], "\n".join(lines))
    rc, lines = make("plots", f"PYTHON={bare}", cwd=d, env=offline)
    expect("make plots offline: exit 0, one line saying that plots are skipped",
           rc == 0 and len(lines) == 1 and "plots are skipped" in lines[0], f"exit {rc}: " + "\n".join(lines))
sys.exit(status())
