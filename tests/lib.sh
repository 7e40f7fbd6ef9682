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

# Parts that run at the same time, each counted as if it had run alone:
#   part_start NAME CMD...   runs CMD (a function, a command, `. script`) in the background, in a subshell with
#                            counters of its own; its output goes to $PART_DIR/NAME.out
#   part_collect NAME [HEADER]  waits for it, prints "== HEADER (N s)" where HEADER is given, then its output, and
#                            adds its counts to this shell's; a part that ended before its last line (an exit, a
#                            crash) is one FAIL. PART_SECS[NAME]: the seconds it took; PART_T0[NAME]: $SECONDS
#                            when it started. Each part says on stderr when it ends ("(part NAME: done in N s)").
# Collecting in a fixed order keeps the output in that order, whatever order the parts finish in.
PART_DIR=${PART_DIR:-build/parts}
declare -gA PART_PID PART_SECS PART_T0 2>/dev/null || true
part_start() {
    local name=$1
    shift
    mkdir -p "$PART_DIR"
    rm -f "$PART_DIR/$name.out" "$PART_DIR/$name.counts"
    (
        # (the names: CMD may set PART_DIR, a sourced script its own variables)
        __part_counts=$PART_DIR/$name.counts __part_t0=$SECONDS
        PASSED=0 FAILED=0 SKIPPED=0
        "$@"
        echo "$PASSED $FAILED $SKIPPED $((SECONDS - __part_t0))" > "$__part_counts"
        # as it ends, on the terminal (the outputs come in a fixed order, later): a run cut short shows what ran
        echo "   (part $name: done in $((SECONDS - __part_t0)) s, $FAILED failed)" >&3
    ) 3>&2 > "$PART_DIR/$name.out" 2>&1 < /dev/null &
    PART_PID[$name]=$!
    PART_T0[$name]=$SECONDS
}
# part_start_capped MAX NAME CMD...: part_start, once fewer than MAX of the parts started this way still run
declare -ga PART_CAPPED 2>/dev/null || true
part_start_capped() {
    local max=$1 pid live
    shift
    while :; do
        live=()
        for pid in "${PART_CAPPED[@]}"; do kill -0 "$pid" 2>/dev/null && live+=("$pid"); done
        PART_CAPPED=("${live[@]}")
        [ "${#PART_CAPPED[@]}" -lt "$max" ] && break
        sleep 0.2
    done
    part_start "$@"
    PART_CAPPED+=("${PART_PID[$1]}")
}
part_collect() {
    local name=$1 header=${2:-} p f s secs
    [ -n "${PART_PID[$name]:-}" ] && wait "${PART_PID[$name]}"
    unset "PART_PID[$name]"
    if read -r p f s secs < "$PART_DIR/$name.counts" 2>/dev/null && [ -n "$secs" ]; then
        PART_SECS[$name]=$secs
        [ -n "$header" ] && echo "== $header ($secs s)"
        cat "$PART_DIR/$name.out"
        PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
    else
        PART_SECS[$name]='?'
        [ -n "$header" ] && echo "== $header"
        cat "$PART_DIR/$name.out" 2>/dev/null
        fail "$name: ended before its last check (its output above)"
    fi
    rm -f "$PART_DIR/$name.out" "$PART_DIR/$name.counts"
}
