# Shared by the test scripts: one line per test, counted at the end.
PASSED=${PASSED:-0}
FAILED=${FAILED:-0}
SKIPPED=${SKIPPED:-0}
pass() { echo "PASS $*"; PASSED=$((PASSED + 1)); }
skip() { echo "SKIP $*"; SKIPPED=$((SKIPPED + 1)); }
fail() { echo "FAIL $*"; FAILED=$((FAILED + 1)); }
# expect NAME WANT_RC CMD...: runs CMD, keeps its output in $OUTPUT, checks the exit status.
expect() {
    local name=$1 want=$2
    shift 2
    OUTPUT=$("$@" 2>&1)
    local rc=$?
    if [ "$rc" -eq "$want" ]; then pass "$name"; return 0; fi
    fail "$name (exit $rc, wanted $want): $(echo "$OUTPUT" | tail -n 3 | tr '\n' ' ')"
    return 1
}
# contains NAME PATTERN: $OUTPUT matches the extended regex PATTERN.
contains() {
    if echo "$OUTPUT" | grep -Eq -- "$2"; then pass "$1"; else fail "$1: no match for /$2/ in: $(echo "$OUTPUT" | head -n 3 | tr '\n' ' ')"; fi
}
summary() { if [ "$SKIPPED" -gt 0 ]; then echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"; else echo "$PASSED passed, $FAILED failed"; fi; }
