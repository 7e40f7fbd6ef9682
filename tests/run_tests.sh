#!/usr/bin/env bash
# make test runs this: the CPU tests (always), then the GPU suite where a GPU is present (HAVE_GPU=1).
# Ends with the line "N passed, N failed"; exits non-zero on any failure.
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
export SOURCED_BY_RUNNER=1

for t in build/test_cpu*; do
    [ -x "$t" ] || continue
    echo "== CPU tests ($t)"
    while IFS= read -r line; do
        case "$line" in
        PASS\ *) pass "${line#PASS }" ;;
        FAIL\ *) fail "${line#FAIL }" ;;
        EXIT\ 0) pass "$t exits 0" ;;
        EXIT\ *) fail "$t exited with status ${line#EXIT }" ;;
        esac
    done < <("$t"; echo "EXIT $?")
done

echo "== command-line tests"
. tests/test_cli.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." 2>/dev/null || true

echo "== scripts"
for t in tests/test_*.py; do
    [ -e "$t" ] || continue
    python3 "$t" >/tmp/norm_pytest.$$ 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then pass "$t"
    elif [ $rc -eq 77 ]; then skip "$t: $(tail -n 1 /tmp/norm_pytest.$$)"
    else fail "$t: $(grep -E 'FAIL|Error|error' /tmp/norm_pytest.$$ | head -n 5 | tr '\n' ' ')"; fi
    rm -f /tmp/norm_pytest.$$
done

if [ "${HAVE_GPU:-0}" = 1 ]; then
    echo "== GPU suite (tests/gpu_suite.sh)"
    . tests/gpu_suite.sh
else
    echo "== GPU suite skipped: no GPU found (run tests/gpu_suite.sh on a GPU machine)"
fi
summary
[ "$FAILED" -eq 0 ]
