#!/usr/bin/env python3
"""Seeded fuzz test of the three programs' command lines (no GPU needed: every run sees no GPU).

For each program, FUZZ_N (default 2000) generated argument lists: numbers at and past every limit, unknown and
repeated flags, flags in every order, kernel numbers read from `PROG --list` (valid, past the last, lists with
duplicates, empty items, 300-character lists), non-ASCII and very long strings, and for --csv/--json files that
are folders, FIFOs with and without a reader, missing folders, existing files of the other kind, -, /dev/null.
Each argument list is built from pieces whose verdict the generator knows (valid, refused, or unknown: the
program's own options with odd values), so that each run is checked against what it must do:
  - exit 0 only with --help/--list, and their output (usage / one kernel a line);
  - exit 2 with exactly one error line and the usage hint, where any piece is refused (a refused kernel never
    runs as another kernel: a line the generator knows to be invalid never reaches the device);
  - exit 2 with the one no-device line, where every piece is valid (there is no GPU: a valid command line ends
    there);
  - never a hang (10 s), a signal, a traceback or another exit status.
Runs in parallel (a thread pool). FUZZ_SEED (default 28) and FUZZ_N reproduce a run; FUZZ_BIN_DIR: where the
programs are (default: the repository root). A failing case prints the command line to run again.
"""
import os
import random
import re
import shlex
import stat
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN_DIR = os.environ.get("FUZZ_BIN_DIR", ROOT)
SEED = int(os.environ.get("FUZZ_SEED", "28"))
N = int(os.environ.get("FUZZ_N", "2000"))
PROGRAMS = ["layernorm_forward", "rmsnorm_forward", "batchnorm_forward"]
ENV = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # hides any GPU: the no-device path on every machine
CSV_HEADER = None  # the programs' header, from tests/fixture_csv (scripts/summary.py CSV_FIELDS)
INT_MAX = 2147483647
DT_MAX = {"fp32": 3.4028234663852886e38, "fp16": 65504.0, "bf16": 3.3895313892515355e38}

V, X, U = "valid", "refused", "unknown"


class Piece:
    """Some arguments and what they do: verdict V/X/U, and the state they set (applied in order: the last of a
    repeated option wins, as getopt gives it)."""

    def __init__(self, args, verdict=V, **sets):
        self.args, self.verdict, self.sets = list(args), verdict, sets


def program_info(prog):
    """(kernels {number: set of dtypes}, extra options [(name, takes a value)], default rows, default cols)."""
    exe = os.path.join(BIN_DIR, prog)
    lst = subprocess.run([exe, "--list"], capture_output=True, text=True, env=ENV, timeout=30).stdout
    kernels = {}
    for line in lst.splitlines():
        m = re.match(r"\s*(\d+)\s+\S+\s+(\S+)", line)
        if m:
            kernels[int(m.group(1))] = set(m.group(2).split(","))
    hlp = subprocess.run([exe, "--help"], capture_output=True, text=True, env=ENV, timeout=30).stdout
    after_device = hlp.split("--device D", 1)[1]
    extra = [(m.group(1), bool(m.group(2))) for m in re.finditer(r"^  --([a-z-]+)( [A-Z])?", after_device, re.M)
             if m.group(1) != "help"]
    rows = int(re.search(r"-N, --rows N .*\(default (\d+)\)", hlp).group(1))
    cols = int(re.search(r"-C, --cols C .*\(default (\d+)\)", hlp).group(1))
    return kernels, extra, rows, cols


class Gen:
    def __init__(self, prog, info, rnd, tmp):
        self.prog, self.rnd, self.tmp = prog, rnd, tmp
        self.kernels, self.extra, self.def_rows, self.def_cols = info
        self.files = 0

    def path(self, stem):
        self.files += 1
        return os.path.join(self.tmp, f"{self.prog}-{self.files}-{stem}")

    # ---- the pieces
    def kernel(self):
        r, ks = self.rnd, sorted(self.kernels)
        last = ks[-1]
        c = r.randrange(14)
        if c < 4:
            k = r.choice(ks)
            return Piece([str(k)], kernel=k)
        if c == 4:
            return Piece(["all"], kernel="all")
        if c == 5:
            pick = r.sample(ks, r.randint(2, min(4, len(ks))))
            return Piece([",".join(map(str, pick))], kernel=tuple(pick))
        bad = [str(last + 1), str(last + 100), "-1", "99", "2147483648", "1.0", " 1", "1 ", "٣", "fast", "", "0x1",
               f"{ks[1]},{ks[1]}", f"{ks[0]},,{ks[1]}", f",{ks[1]}", f"{ks[1]},", ",",
               "7," + "0" * 300 + "99", f"{ks[1]},{last + 1}", "1" * 40, "ALL"]
        return Piece([r.choice(bad)], X, kernel="bad")

    def number(self, opt, name, good, bad, **key):
        if self.rnd.random() < 0.6:
            v = self.rnd.choice(good)
            return Piece([opt, str(v)], **{k: (v if f is None else f(v)) for k, f in key.items()})
        return Piece([opt, self.rnd.choice(bad)], X)

    def piece(self):
        r = self.rnd
        c = r.randrange(100)
        big_ints = ["0", "-1", "-4", "2147483648", "9223372036854775808", "1e3", "0x10", " 5", "5 ", "5x", "",
                    "٣", "NaN", "inf", "1" * 5000]
        if c < 8:
            return self.number("-N", "rows", [1, 7, 4096, "+5", 1 << 20, INT_MAX], big_ints, rows=lambda v: int(v))
        if c < 16:
            return self.number(r.choice(["-C", "--cols"]), "cols", [1, 33, 768, 65536, INT_MAX], big_ints,
                               cols=lambda v: int(v))
        if c < 20:
            opt = r.choice(["-B", "-T"])
            p = self.number(opt, opt, [1, 4, 64, 65536, INT_MAX], big_ints, **{opt[1]: lambda v: int(v)})
            return p
        if c < 27:
            p = Piece(["--dtype", r.choice(["fp32", "fp16", "bf16"])])
            p.sets["dtype"] = p.args[1]
            if r.random() < 0.3:
                return Piece(["--dtype", r.choice(["fp64", "FP32", "fp３２", "", " fp16", "bf16 ", "half"])], X,
                             expect="dtype")
            return p
        if c < 32:
            return self.number("--block-size", "block size", [32, 64, 256, 1024, 992],
                               ["0", "31", "48", "1056", "2048", "-32", " 64", "64.0", "x"], bs=None)
        if c < 36:
            return self.number("--repeats", "repeats", [1, 5, 100000], ["0", "100001", "-1", "1e2", " 3"], rep=None)
        if c < 40:
            return self.number("--seed", "seed", [0, 1, 1234, 18446744073709551615],
                               ["-1", " -1", " 5", "5 ", "18446744073709551616", "1.5", "x", ""], seed=None)
        if c < 45:
            return self.number("--input-mean", "input mean", [0, 1, -3.5, 1000, 60000, 3e38, -3e38],
                               ["nan", "inf", "-inf", "1e39", "-1e39", " 1", "1e400", "x", ""], mean=float)
        if c < 50:
            return self.number("--input-std", "input std", [0, 1, 0.5, 1e4, 1e37],
                               ["-1", "nan", "inf", "1e39", " 1", "x", ""], std=float)
        if c < 55:
            return Piece(["--check"], check=True)
        if c < 59:
            return Piece(["--hot"], hot=True)
        if c < 62:
            return Piece(["--pdl"], pdl=True)
        if c < 64:
            return self.number("--device", "device", [0, 1, 1023], ["-1", "1024", "x", " 0"], device=None)
        if c < 72:
            return self.out_file("--csv")
        if c < 78:
            return self.out_file("--json")
        if c < 81:
            return self.number("--eps", "eps", [0, 1e-5, 1e-6, 3e38], ["-1", "1e39", "nan", "inf", " 1", "x"],
                               eps=None)
        if c < 88:  # the program's own options with odd values: anything but a crash, a hang or a second line
            name, val = r.choice(self.extra)
            args = [f"--{name}"]
            if val:
                args.append(r.choice(["0", "1", "2", "16", "-1", "nchw", "nhwc", "nc", "x", "", "1e39", "56", "64",
                                      "4", "0.5", " 1", "2147483648", "ü" * 3]))
            elif r.random() < 0.2:
                args = [f"--{name}=1"]  # takes no argument
                return Piece(args, X)
            return Piece(args, U)
        if c < 92:
            bad = ["--bogus", "-z", "--check=1", "--hot=1", "--list=2", "---", "--ROWS", "-Nx", "--rows=", "--dtype=",
                   "--ünknown", "-" * 300, "--" + "a" * 5000, "-N=5"]
            # --: ends the options; -: a positional; --cs: an abbreviation of --csv, which takes the next argument
            a = r.choice(bad + ["--", "-", "--cs"])
            return Piece([a], X) if a in bad else Piece([a], U, reparses=a != "-")
        if c < 95:
            return Piece([r.choice(["--help", "-h"])], help=True)
        if c < 98:
            return Piece(["--list"], list=True)
        return Piece(["x" * r.choice([1, 300, 5000])], X)  # a positional that is no kernel

    def out_file(self, opt):
        r = self.rnd
        kind = r.randrange(13)
        if kind == 0:
            p = self.path("new.csv")
            return Piece([opt, p], file=(opt, p, True))
        if kind == 1:
            return Piece([opt, "-"], file=(opt, "-", True))
        if kind == 2:
            return Piece([opt, "/dev/null"], file=(opt, "/dev/null", True))
        if kind == 3:
            d = self.path("dir")
            os.mkdir(d)
            return Piece([opt, d], file=(opt, d, False))
        if kind == 4:
            f = self.path("fifo")
            os.mkfifo(f)
            return Piece([opt, f], file=(opt, f, False))  # no reader: refused, not waited on
        if kind == 5:
            f = self.path("fifo-read")
            os.mkfifo(f)
            return Piece([opt, f], file=(opt, f, True), reader=f)  # a reader: a stream
        if kind == 6:
            return Piece([opt, self.path("no-such-dir") + "/x.csv"], file=(opt, "missing", False))
        if kind == 7:  # an existing file of the other kind (or an old CSV)
            f = self.path("other")
            with open(f, "w") as fh:
                fh.write('{"op":"layernorm"}\n' if opt == "--csv" else CSV_HEADER + "\n")
            return Piece([opt, f], file=(opt, f, False))
        if kind == 8:  # an existing file of its own kind
            f = self.path("same")
            with open(f, "w") as fh:
                fh.write(CSV_HEADER + "\n" if opt == "--csv" else '{"op":"layernorm"}\n')
            return Piece([opt, f], file=(opt, f, True))
        if kind == 9:
            return Piece([opt, r.choice(["--check", "-N", "--hot", "-x", "--json", "--csv"])], X)
        if kind == 10:
            return Piece([opt, ""], X)
        if kind == 11:  # non-ASCII and long names (over NAME_MAX: cannot be created)
            if r.random() < 0.5:
                p = self.path("résumé-ü-名前.csv")
                return Piece([opt, p], file=(opt, p, True))
            p = self.path("n" * 300)
            return Piece([opt, p], file=(opt, p, False))
        # kind 12: a read-only file (refused, but root may write it anyway)
        f = self.path("readonly")
        with open(f, "w"):
            pass
        os.chmod(f, stat.S_IRUSR)
        return Piece([opt, f], U) if os.geteuid() == 0 else Piece([opt, f], file=(opt, f, False))

    def command(self):
        r = self.rnd
        pieces = [self.piece() for _ in range(r.choice([0, 1, 1, 2, 2, 3, 3, 4, 5, 7]))]
        if r.random() < 0.55:
            pieces.insert(r.randrange(len(pieces) + 1), self.kernel())
        if r.random() < 0.3 and pieces:  # a repeated piece
            pieces.insert(r.randrange(len(pieces) + 1), r.choice(pieces))
        if r.random() < 0.03:  # an option that needs a value, last: nothing to take
            pieces.append(Piece([r.choice(["--dtype", "-N", "--csv", "--seed", "-C"])], X))
        return pieces


def expected(pieces, kernels, def_rows, def_cols, prog):
    """'refuse', 'nodev', 'help' or 'any' for a list of pieces (see the module's docstring)."""
    if any(p.sets.get("reparses") for p in pieces):  # the pieces after it are read otherwise: no verdict
        return "any"
    if any(p.verdict == X for p in pieces):
        return "refuse"
    if any(p.verdict == U for p in pieces):
        return "any"
    s = {"dtype": "fp32", "mean": 0.0, "std": 1.0}
    files = {}
    n_pos = 0
    for p in pieces:
        for k, v in p.sets.items():
            if k == "file":
                files[v[0]] = v
            elif k == "kernel":
                n_pos += 1
                s[k] = v
            else:
                s[k] = v
    if n_pos > 1:
        return "refuse"
    if s.get("help") or s.get("list"):
        return "help" if n_pos == 0 else "refuse"
    bt = "B" in s or "T" in s
    if bt and (prog == "batchnorm_forward" or "rows" in s):
        return "refuse"
    rows = s.get("rows", def_rows)
    if bt:
        rows = s.get("B", 8) * s.get("T", 1024)
        if rows > INT_MAX:
            return "refuse"
    if s.get("pdl") and not s.get("hot"):
        return "refuse"
    if s.get("hot") and s.get("check"):
        return "refuse"
    if abs(s["mean"]) + 6 * s["std"] > DT_MAX[s["dtype"]]:
        return "refuse"
    k = s.get("kernel")
    if isinstance(k, int) and s["dtype"] not in kernels[k]:
        return "refuse"
    cols = s.get("cols", def_cols)
    if rows * cols > 4e9:
        return "refuse"
    c, j = files.get("--csv"), files.get("--json")
    if c and j and c[1] == j[1] and c[1] != "/dev/null":  # one file for both formats (/dev/null takes anything)
        return "refuse"
    if any(not f[2] for f in files.values()):
        return "refuse"
    return "nodev"


def run_one(prog, pieces, cwd):
    args = [a for p in pieces for a in p.args]
    readers = []
    for p in pieces:
        if "reader" in p.sets:  # a reader on the FIFO (non-blocking open: no writer needed yet)
            readers.append(os.open(p.sets["reader"], os.O_RDONLY | os.O_NONBLOCK))
    try:
        r = subprocess.run([os.path.join(BIN_DIR, prog)] + args, capture_output=True, env=ENV, cwd=cwd, timeout=10)
        return args, r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return args, "timeout", "", ""
    finally:
        for fd in readers:
            os.close(fd)


def judge(prog, want, rc, out, err):
    """None when the run did what it must, else why not."""
    both = (out + err).rstrip("\n")
    lines = both.split("\n") if both else []
    if rc == "timeout":
        return "hung (10 s)"
    if rc < 0:
        return f"killed by signal {-rc}"
    if "Traceback" in both or "Segmentation" in both:
        return "a traceback or a crash message"
    nodev = len(lines) == 1 and re.match(rf"^{prog}: no CUDA device", lines[0]) is not None
    refused = (len(lines) == 2 and lines[0].startswith(f"{prog}: ") and "no CUDA device" not in lines[0]
               and lines[1] == f"Try './{prog} --help'.")
    helped = rc == 0 and not err and (out.startswith(f"usage: ./{prog} ")
                                      or all(re.match(r"^ ?\d+  ", l) for l in out.splitlines()) and out)
    if rc == 0 and not helped:
        return "exit 0 without --help/--list output"
    if rc not in (0, 2):
        return f"exit status {rc}"
    if rc == 2 and not (nodev or refused):
        return "exit 2 without exactly one error line (+ the usage hint) or the no-device line"
    if want == "refuse" and not refused:
        return "not refused (an invalid command line went on)" if nodev or rc == 0 else "not refused"
    if want == "nodev" and not nodev:
        return "a valid command line did not reach the device"
    if want == "help" and not helped:
        return "--help/--list did not print and exit 0"
    return None


def main():
    global CSV_HEADER
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from fixture_csv import FIELDS
    CSV_HEADER = ",".join(FIELDS)
    missing = [p for p in PROGRAMS if not os.access(os.path.join(BIN_DIR, p), os.X_OK)]
    if missing:
        print(f"FAIL not built: {' '.join(missing)}")
        return 1
    rnd = random.Random(SEED)
    failures, counts, lock = [], {}, threading.Lock()
    with tempfile.TemporaryDirectory(prefix="norm_fuzz_") as tmp, ThreadPoolExecutor(max_workers=8) as pool:
        jobs = []
        for prog in PROGRAMS:
            info = program_info(prog)
            gen = Gen(prog, info, rnd, tmp)
            for _ in range(N):
                pieces = gen.command()
                want = expected(pieces, info[0], info[2], info[3], prog)
                jobs.append((prog, want, pool.submit(run_one, prog, pieces, tmp)))
        for prog, want, fut in jobs:
            args, rc, out, err = fut.result()
            why = judge(prog, want, rc, out, err)
            with lock:
                counts[prog, want] = counts.get((prog, want), 0) + 1
                if why:
                    failures.append(f"{prog} (expected {want}): {why}: CUDA_VISIBLE_DEVICES= ./{prog} "
                                    f"{shlex.join(args)[:400]}\n    exit {rc}: {(out + err).strip()[:300]!r}")
    for prog in PROGRAMS:
        c = {w: counts.get((prog, w), 0) for w in ("refuse", "nodev", "help", "any")}
        print(f"{prog}: {sum(c.values())} command lines ({', '.join(f'{v} {k}' for k, v in c.items())})")
    for f in failures[:25]:
        print(f"FAIL {f}")
    if failures:
        print(f"FAIL {len(failures)} of {len(jobs)} runs (FUZZ_SEED={SEED} FUZZ_N={N})")
        return 1
    print(f"ok: {len(jobs)} runs, seed {SEED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
