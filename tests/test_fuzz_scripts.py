#!/usr/bin/env python3
"""Seeded fuzz test of the scripts that read results CSVs (summary, compare, side_by_side, update_readme, plot)
with generated malformed CSVs: lines cut short or with extra fields, numbers that are not numbers (in gbps, in
every numeric column), kernels that are names, unknown statuses, bytes that are not UTF-8, NUL bytes, unbalanced
quotes, headers missing columns or alone, empty files, blank lines, very long fields.

Each script must exit 0, or exit non-zero with exactly one line on stderr (compare.py's FAIL verdict: its report
on stdout, stderr empty), never with a traceback; a file with a malformed row (a line cut short, a number that is
not one) must be refused with one line naming the file and the line. FUZZ_SEED (default 28) and FUZZ_FILES
(default 120) reproduce a run. The scripts run in this process (cli.status_of, as cli.run runs them: an exception
that escapes is a traceback), the first files' also in a process of their own. plot.py sees a tenth of the
files, and none where matplotlib is not installed (run under the project's .venv Python, where there is one).
"""
import contextlib
import importlib
import io
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
try:
    import matplotlib  # noqa: F401
except ImportError:  # plot.py needs it: the project's venv, where there is one
    if os.path.exists(VENV_PYTHON) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(ROOT, ".venv")):
        os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import FIELDS  # noqa: E402  (puts scripts/ on the path too)

import cli  # noqa: E402
import csvfile  # noqa: E402

SEED = int(os.environ.get("FUZZ_SEED", "28"))
N_FILES = int(os.environ.get("FUZZ_FILES", "120"))
NUMERIC = ["block_size", "time_ms_median", "time_ms_min", "bytes", "gbps", "sol_gbps", "sol_pct", "max_abs_err",
           "max_rel_err", "time_ms_launch_median", "time_ms_launch_min"]


def good_rows(rnd):
    """A valid layernorm CSV's rows (lists of strings): kernels 0-3 at two shapes, a sweep of block sizes."""
    rows = []
    for shape in ("8192x768", "1024x65536"):
        for k in range(4):
            for bs in ((0,) if k == 0 else (64, 128, 256)):
                g = rnd.uniform(100, 3000)
                st = rnd.choice(["OK", "OK", "OK", "SKIP", "FAIL"])
                rows.append(["layernorm", str(k), f"k{k}", "fp32", shape, str(bs), "0.02", "0.019", "50397184",
                             f"{g:.2f}", "3000.00", f"{g / 30:.2f}", "1.0e-06", "1.0e-06", st, "Fixture GPU", "sm_90",
                             "13.0", "abc", "0.021", "0.020", "cupti", ""])
    return rows


def as_text(header, rows):
    return "\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n"


def malformed(rnd):
    """(text or bytes, line number of a row that must be refused or None, what was done)."""
    header, rows = list(FIELDS), good_rows(rnd)
    i = rnd.randrange(len(rows))
    line = i + 2
    kind = rnd.randrange(16)
    if kind == 0:  # a line cut short: at a comma or inside a field
        text = ",".join(rows[i])
        cut = rnd.randrange(1, len(text) - 1)
        rows[i] = text[:cut].split(",")
        must = line if len(rows[i]) != len(header) else None
        return as_text(header, rows), must, "a line cut short"
    if kind == 1:  # a field too many
        rows[i].append("extra")
        return as_text(header, rows), line, "an extra field"
    if kind == 2:  # a number that is not one
        col = rnd.choice(["gbps"] * 3 + NUMERIC)
        bad = ["x", "nan", "inf", "-inf", "1e999", "١٢", "12abc", "0x10", "--"]
        rows[i][header.index(col)] = rnd.choice(bad if col in csvfile.EMPTY_OK else bad + [""])  # the newer may be empty
        return as_text(header, rows), line, f"{col} not a number"
    if kind == 3:  # a kernel that is a name
        rows[i][1] = rnd.choice(["torch.compile", "", "1.5", "x"])
        return as_text(header, rows), line, "kernel not a number"
    if kind == 4:
        col = rnd.choice(["status", "chained"])
        rows[i][header.index(col)] = rnd.choice(["ok", "PASS", "FAILED", "Yes", "1"])
        return as_text(header, rows), line, f"an unknown {col}"
    if kind == 5:  # bytes that are not UTF-8
        return as_text(header, rows).encode() + b"\xff\xfe\x80garbage\n", None, "not UTF-8"
    if kind == 6:
        t = as_text(header, rows)
        p = rnd.randrange(len(t))
        return t[:p] + "\0" + t[p:], None, "a NUL byte"
    if kind == 7:  # an unbalanced quote
        rows[i][2] = '"k' + rows[i][2]
        return as_text(header, rows), None, "an unbalanced quote"
    if kind == 8:  # a header without some columns
        drop = rnd.sample(range(len(header)), rnd.randint(1, 3))
        header = [h for j, h in enumerate(header) if j not in drop]
        rows = [[v for j, v in enumerate(r) if j not in drop] for r in rows]
        return as_text(header, rows), None, "columns missing"
    if kind == 9:
        return as_text(header, []), None, "the header alone"
    if kind == 10:
        return rnd.choice(["", "\n", "\n\n\n", "op\n"]), None, "empty"
    if kind == 11:  # blank lines and CRLF: still valid
        return as_text(header, rows).replace("\n", rnd.choice(["\r\n", "\n\n"])), None, "blank lines, CRLF"
    if kind == 12:  # a very long field
        rows[i][2] = "n" * rnd.choice([1000, 200000])
        return as_text(header, rows), None, "a very long field"
    if kind == 13:  # the file cut short in its last line
        t = as_text(header, rows).rstrip("\n")
        return t[:len(t) - rnd.randrange(1, 40)], None, "the last line cut short"
    if kind == 14:  # a duplicated header line in the middle
        rows.insert(i, list(header))
        return as_text(header, rows), line, "a header line among the rows"
    return as_text(header, rows), None, "valid"  # kind 15


def run_in_process(module, args):
    """(exit status, stdout, stderr) of a script's main, run here as cli.run runs it (a traceback: the exception's
    last line, status "traceback")."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.status_of(module.main, [module.__file__] + args)
        except Exception as e:  # what would have been a traceback
            print(f"Traceback: {type(e).__name__}: {e}", file=sys.stderr)
            rc = 1
    return rc, out.getvalue(), err.getvalue()


def run_subprocess(args):
    try:
        r = subprocess.run([sys.executable] + args, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "timeout", "", ""
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def judge(script, must_line, path, rc, out, err):
    errs = err.strip().splitlines()
    if rc == "timeout":
        return "hung"
    if "Traceback" in err or "Traceback" in out:
        return "a traceback: " + err.strip().splitlines()[-1][:200] if err.strip() else "a traceback"
    if rc < 0:
        return f"killed by signal {-rc}"
    if must_line is not None:
        if rc == 0:
            return f"a malformed row (line {must_line}) was not refused"
        if not (len(errs) == 1 and path in errs[0] and f"line {must_line}" in errs[0]):
            return f"the refusal does not name {path} line {must_line}: {err.strip()[:300]!r}"
    if rc != 0:
        compare_fail = script == "compare" and rc == 1 and "verdict: FAIL" in out and not errs
        if not compare_fail and len(errs) != 1:
            return f"exit {rc} with {len(errs)} lines on stderr: {err.strip()[:300]!r}"
    return None


def main():
    rnd = random.Random(SEED)
    modules = {name: importlib.import_module(name) for name in ("summary", "compare", "side_by_side", "update_readme")}
    try:
        modules["plot"] = importlib.import_module("plot") if importlib.import_module("matplotlib") else None
    except ImportError:
        print("(plot.py left out: matplotlib is not installed for this Python)")
    failures, n = [], 0
    with tempfile.TemporaryDirectory(prefix="norm_fuzz_scripts_") as tmp:
        base = os.path.join(tmp, "base")
        os.makedirs(base)
        base_csv = os.path.join(base, "layernorm.csv")
        with open(base_csv, "w") as f:
            f.write(as_text(FIELDS, good_rows(random.Random(1))))
        readme = os.path.join(tmp, "README.md")
        with open(readme, "w") as f:
            f.write("# no markers\n")
        for i in range(N_FILES):
            content, must, what = malformed(rnd)
            folder = os.path.join(tmp, f"case{i}")
            os.makedirs(folder)
            path = os.path.join(folder, "layernorm.csv")
            with open(path, "wb") as f:
                f.write(content if isinstance(content, bytes) else content.encode())
            cmds = [("summary", [path]), ("compare", [base_csv, path]), ("compare", [path, base_csv]),
                    ("side_by_side", [folder]), ("update_readme", [folder, "--readme", readme, "--check"])]
            if "plot" in modules and i % 10 == 0:
                cmds.append(("plot", [folder, "--out", os.path.join(tmp, f"plots{i}")]))
            for script, args in cmds:
                # the first files also through the real entry point, in a process of their own
                if i < 3:
                    rc, out, err = run_subprocess([os.path.join(SCRIPTS, f"{script}.py")] + args)
                else:
                    rc, out, err = run_in_process(modules[script], args)
                n += 1
                # compare reads peers' files too: a kernel that is a name is no malformed row there
                line = None if script == "compare" and what == "kernel not a number" else must
                why = judge(script, line, path, rc, out, err)
                if why:
                    failures.append(f"{script} on {what}: {why}\n    python3 scripts/{script}.py {' '.join(args)}")
        if failures:  # keep the files for a look
            keep = os.path.join(ROOT, "build", "fuzz_scripts_failure")
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(tmp, keep, ignore=shutil.ignore_patterns("plots*"))
    for f in failures[:20]:
        print(f"FAIL {f}")
    if failures:
        print(f"FAIL {len(failures)} of {n} runs (FUZZ_SEED={SEED} FUZZ_FILES={N_FILES}; the files: "
              "build/fuzz_scripts_failure)")
        return 1
    print(f"ok: {n} runs on {N_FILES} generated CSVs, seed {SEED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
