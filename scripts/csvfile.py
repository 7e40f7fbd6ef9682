"""The one CSV reader of the scripts: strict, so that a malformed file ends a script with one line naming the
file and the line (exit 2, through cli.run) instead of a traceback or, worse, a row silently left out.

    rows = csvfile.read(path)                        # a program's results CSV (harness/options.h CSV_HEADER)
    rows = csvfile.read(path, kernel_numbers=False)  # the same schema with peers in the kernel column (peers.csv)
    rows = csvfile.read(path, required=[...], floats=(), ints=(), choices=None)   # another schema (ncu_check.csv)

A row is malformed when it has more or fewer fields than the header (a line cut short), when a number column
(floats, ints, and the kernel column of a program's CSV) holds anything but a finite number (the newer columns of
EMPTY_OK may be empty), or when a column of
CHOICES (status, dtype, clock, chained) holds another value. Blank lines are skipped. Returns [dict] as csv.DictReader
would.
"""
import csv
import math
import re

import cli

# The programs' CSV schema (harness/options.h CSV_HEADER), in order. The last four columns (NEWER) came later: a
# file without the first three was timed with CUDA events (summary.row_clock); a row without chained is not known
# to chain its hot launches (standings.py).
NEWER = ["time_ms_launch_median", "time_ms_launch_min", "clock", "chained"]
CSV_FIELDS = ["op", "kernel", "kernel_name", "dtype", "shape", "block_size", "time_ms_median", "time_ms_min", "bytes",
              "gbps", "sol_gbps", "sol_pct", "max_abs_err", "max_rel_err", "status", "gpu", "sm", "cuda",
              "git_rev"] + NEWER
REQUIRED = CSV_FIELDS[:-len(NEWER)]  # the columns every results CSV has
FLOATS = ("time_ms_median", "time_ms_min", "bytes", "gbps", "sol_gbps", "sol_pct", "max_abs_err", "max_rel_err",
          "time_ms_launch_median", "time_ms_launch_min")
INTS = ("block_size",)
# the newer columns: empty in the rows of an older file rewritten in the new schema (peers.py, run_all.py)
EMPTY_OK = ("time_ms_launch_median", "time_ms_launch_min")
# the values a column can hold (where the header has it)
CHOICES = {"status": ("OK", "FAIL", "SKIP"), "dtype": ("fp32", "fp16", "bf16"), "clock": ("", "cupti", "events"),
           "chained": ("", "yes", "no")}


class CsvError(cli.DataError):
    """A CSV that cannot be read as its schema; the message names the file and the line."""


# ASCII digits only, no spaces or underscores (int() and float() take " 5", "1_000" and other scripts' digits)
_INT = re.compile(r"-?[0-9]+\Z")
_FLOAT = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\Z")


def _number(text, integer):
    if not (_INT if integer else _FLOAT).match(text):
        return None
    v = int(text) if integer else float(text)
    return v if integer or math.isfinite(v) else None


def read(path, required=REQUIRED, floats=FLOATS, ints=INTS, kernel_numbers=True, choices=CHOICES,
         empty_ok=EMPTY_OK):
    """[dict] of the rows of path; CsvError on the first thing that is wrong (see the module's docstring)."""
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise CsvError(f"{path}: empty file (no header)")
            missing = [c for c in required if c not in header]
            if missing:
                raise CsvError(f"{path} line 1: not the expected header (no column {', '.join(missing[:3])}"
                               + (", ...)" if len(missing) > 3 else ")"))
            ints = tuple(ints) + (("kernel",) if kernel_numbers else ())
            checks = [(c, c in ints) for c in tuple(floats) + ints if c in header]
            rows = []
            for fields in reader:
                if not fields:
                    continue
                where = f"{path} line {reader.line_num}"
                if len(fields) != len(header):
                    raise CsvError(f"{where}: {len(fields)} fields where the header has {len(header)} (a line cut short?)")
                r = dict(zip(header, fields))
                for c, integer in checks:
                    if _number(r[c], integer) is None and not (r[c] == "" and c in empty_ok):
                        raise CsvError(f"{where}: {c} '{r[c][:40]}' is not {'an integer' if integer else 'a number'}"
                                       + (" (a peers CSV? this reads a program's rows)" if c == "kernel" else ""))
                for c, allowed in (choices or {}).items():
                    if c in r and r[c] not in allowed:
                        raise CsvError(f"{where}: {c} '{r[c][:40]}' is not one of "
                                       f"{', '.join(a or '(empty)' for a in allowed)}")
                rows.append(r)
            return rows
    except UnicodeDecodeError as e:
        raise CsvError(f"{path}: not a text file ({e.reason} at byte {e.start})")
    except csv.Error as e:
        raise CsvError(f"{path}: not a CSV ({e})")
    except OSError as e:
        raise CsvError(f"{path}: cannot read it ({e.strerror})")
