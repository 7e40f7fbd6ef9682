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


def run(main):
    """A script's entry point: exits with main(sys.argv)'s status. Output cut short by its reader (`| head`) ends
    the script quietly, as it ends a Unix tool, instead of with a BrokenPipeError traceback."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main(sys.argv))
