#!/usr/bin/env python3
"""CI test of the harness's layout: common.h includes harness/*.h in dependency order, so no piece may declare a
function that another piece defines (a forward declaration across files: an include circle, as options.h's of
report.h's check_output_file was). Every prototype (`static ... name(...);`) must have its definition in the
same file."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "harness")
PROTO = re.compile(r"^static\s[^=;{]*?\b(\w+)\s*\([^;{]*\)\s*;", re.M | re.S)
failures = 0
for name in sorted(os.listdir(HARNESS)):
    if not name.endswith(".h"):
        continue
    text = open(os.path.join(HARNESS, name)).read()
    for m in PROTO.finditer(text):
        fn = m.group(1)
        defined = re.search(rf"^static\s[^=;{{]*?\b{fn}\s*\([^;{{]*\)\s*\{{", text, re.M | re.S)
        if not defined:
            print(f"FAIL harness/{name} declares {fn}() without defining it (a declaration across files)")
            failures += 1
print(f"{'ok' if not failures else 'FAIL'}: harness prototypes defined in their own files")
sys.exit(1 if failures else 0)
