"""What the scripts' command lines share: a parser whose errors are one line, and argument types for paths.

A wrong path or a bad value ends the script at parse time with `NAME: what is wrong (see --help)` on stderr
and exit status 2, instead of a traceback from wherever the value is first used.
"""
import argparse
import os
import signal
import sys


class Parser(argparse.ArgumentParser):
    """argparse with the script's docstring as its --help. argparse's own error() prints the whole usage before
    the line that matters; this one prints that line alone."""

    def __init__(self, name, doc):
        super().__init__(prog=f"{name}.py", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
        self.name = name

    def error(self, message):
        print(f"{self.name}: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def readable_file(path):
    """argparse type: a file this process can read."""
    if not os.path.exists(path):
        raise argparse.ArgumentTypeError(f"no such file: {path}")
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"{path} is not a file")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"cannot read {path}")
    return path


def folder(path):
    """argparse type: a folder this process can list."""
    if not os.path.exists(path):
        raise argparse.ArgumentTypeError(f"no such folder: {path}")
    if not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path} is not a folder")
    if not os.access(path, os.R_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot read {path}")
    return path


class DataError(Exception):
    """An input file the script cannot use (csvfile.CsvError: a malformed CSV); the message names the file and
    the line. run() ends the script with it: one line, exit 2."""


def status_of(main, argv):
    """main(argv)'s exit status: its return value, its SystemExit (argparse's errors), or 2 with one line on stderr
    for an input file it cannot use (DataError). Anything else propagates (a traceback: a bug)."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except DataError as e:
        name = os.path.splitext(os.path.basename(argv[0]))[0]
        print(f"{name}: {e}", file=sys.stderr)
        return 2


def run(main):
    """A script's entry point: exits with main(sys.argv)'s status (status_of: an input file it cannot use ends it
    with one line naming the file and the line, exit 2). Output cut short by its reader (`| head`) ends the script
    quietly, as it ends a Unix tool, instead of with a BrokenPipeError traceback."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(status_of(main, sys.argv))
