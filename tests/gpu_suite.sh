#!/usr/bin/env bash
# The GPU suite (run on a GPU machine; `make test` runs its quick mode, `make test-full` its full mode, where they
# find a GPU). The shared checks live here; each program's own matrix lives in tests/gpu_suite_<op>.sh, sourced
# for every built program:
#   - every kernel x dtype x odd shapes with --check (a kernel that refuses a shape says `skipped: reason`)
#   - compute-sanitizer: full mode memcheck, racecheck, synccheck, initcheck on every kernel at several small
#     shapes (and on kernel paths forced by flags); quick mode one memcheck pass on every kernel at one small
#     odd shape a program (BatchNorm: one [N, C] and one NCHW shape, as no kernel but 8 and 0 runs both)
#   - the planted bugs (build/<op>_forward_bug<k>) are each reported FAIL with exit 1
# and, once: timing mode writes CSV/JSON; the device inputs against cuRAND's host generator.
# Usage: tests/gpu_suite.sh [quick|full]   (default full; quick: fewer shapes, one sanitizer pass).
# SUITE_BUGS="1 3": the planted bugs to run (their builds must exist; the Makefile passes the ones it built);
# unset: every build/<op>_forward_bug<k> there is. Logs go to $SUITE_LOG (default build/gpu_suite.log), each
# check's command after "### [T s]", the seconds since the suite started when it finished.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
. tests/lib.sh
LOG=${SUITE_LOG:-build/gpu_suite.log}
mkdir -p "$(dirname "$LOG")" build  # the suite's scratch files live in build/
: > "$LOG"
SUITE_T0=$SECONDS
# log_head TEXT: a check's line in the log, "### [T s] TEXT" (T: the seconds since the suite started)
log_head() { echo "### [$((SECONDS - SUITE_T0)) s] $*"; }
SANITIZER=${SANITIZER:-compute-sanitizer}
case "${1:-full}" in
quick) QUICK=1 ;;
full) QUICK=0 ;;
*) echo "usage: tests/gpu_suite.sh [quick|full]" >&2; return 2 2>/dev/null || exit 2 ;;
esac

# check_path PROG KERNEL ARGS...: `PROG KERNEL ARGS --check` exits 0 with no FAIL line and says which path ran.
# With --hot (a timing mode, which --check is not) it runs timed with 3 repeats: each point is validated first.
check_path() {
    local prog=$1 out rc mode=--check
    shift
    case " $* " in *" --hot "*) mode="--repeats 3" ;; esac
    out=$(./$prog "$@" $mode 2>&1)
    rc=$?
    { log_head "$prog $* $mode (exit $rc)"; echo "$out"; } >> "$LOG"
    if [ $rc -eq 0 ] && ! echo "$out" | grep -q FAIL && echo "$out" | grep -q "path "; then
        pass "$prog $* ($(echo "$out" | grep -o 'path [^|]*' | head -n 1))"
    else
        fail "$prog $* (exit $rc): $(echo "$out" | grep -E 'FAIL|error|skipped' | head -n 2 | tr '\n' ' ')"
    fi
}
# before_sm90 OUTPUT: true where a program's output (its first line, the device header) names a GPU before sm_90.
before_sm90() { echo "$1" | head -n 1 | grep -Eq "\| sm_([0-8][0-9]) \|"; }
# expect_path_gpu PROG KERNEL WANT_H100 WANT_H200 WANT_SM90 WANT_OLDER ARGS...: as check_path (with --check), and
# the path line holds the WANT of this GPU: the H100 (80GB HBM3) and the H200 each their own (a point whose tuned
# row is one GPU's alone), another sm_90+ GPU (clusters) WANT_SM90, an older one WANT_OLDER.
expect_path_gpu() {
    local prog=$1 kernel=$2 want_h100=$3 want_h200=$4 want90=$5 want_old=$6 out rc want first
    shift 6
    out=$(./$prog $kernel --check "$@" 2>&1)
    rc=$?
    { log_head "$prog $kernel --check $* (exit $rc)"; echo "$out"; } >> "$LOG"
    first=$(echo "$out" | head -n 1)
    if before_sm90 "$first"; then want=$want_old
    elif echo "$first" | grep -q "NVIDIA H100 80GB HBM3 |"; then want=$want_h100
    elif echo "$first" | grep -q "NVIDIA H200 |"; then want=$want_h200
    else want=$want90; fi
    if [ $rc -eq 0 ] && echo "$out" | grep -qF "$want"; then pass "$prog $kernel $* runs '$want'"
    else fail "$prog $kernel $* (exit $rc), wanted '$want': $(echo "$out" | grep -E 'path|FAIL|skipped' | head -n 2 | tr '\n' ' ')"; fi
}
# expect_path PROG KERNEL WANT_SM90 WANT_OLDER ARGS...: the same where every sm_90+ GPU wants WANT_SM90.
expect_path() { expect_path_gpu "$1" "$2" "$3" "$3" "$3" "$4" "${@:5}"; }

# check_all PROG ARGS...: `PROG all --check ARGS` must exit 0 and list every kernel as OK or skipped.
check_all() {
    local prog=$1
    shift
    local name="$prog all --check $*"
    local out rc
    out=$(./$prog all --check "$@" 2>&1)
    rc=$?
    { log_head "$name (exit $rc)"; echo "$out"; } >> "$LOG"
    local nk table bad
    nk=$(./$prog --list | wc -l)
    table=$(echo "$out" | sed -n '/^ranking/,$p' | grep -E '^ +- \| +[0-9]+ \|')
    bad=$(echo "$table" | grep -Ev "\\| (OK( .*)?|skipped: .+)$")
    if [ $rc -ne 0 ] || [ "$(echo "$table" | grep -c .)" -ne "$nk" ] || [ -n "$bad" ] || echo "$out" | grep -q "FAIL"; then
        fail "$name (exit $rc): $(echo "$out" | grep -E 'FAIL|wrong|error|skipped' | head -n 3 | tr '\n' ' ')"
    else
        pass "$name"
    fi
}

# sanitize TOOL PROG ARGS...: compute-sanitizer TOOL on `PROG all --check ARGS`, clean and exit 0.
# sanitize_kernel TOOL PROG KERNEL ARGS...: the same for one kernel.
sanitize_kernel() {
    local tool=$1 prog=$2 kernel=$3
    shift 3
    local out rc
    out=$("$SANITIZER" --tool $tool --error-exitcode 9 ./$prog $kernel --check "$@" 2>&1)
    rc=$?
    { log_head "$SANITIZER --tool $tool $prog $kernel --check $* (exit $rc)"; echo "$out"; } >> "$LOG"
    if [ $rc -eq 0 ] && echo "$out" | grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \(0 errors"; then
        pass "$tool clean: $prog $kernel --check $*"
    else
        fail "$tool: $prog $kernel --check $* (exit $rc): $(echo "$out" | grep -E 'ERROR|Error|error' | head -n 3 | tr '\n' ' ')"
    fi
}
sanitize() { sanitize_kernel "$1" "$2" all "${@:3}"; }
# sanitize_shapes PROG KERNEL SHAPE...: KERNEL at each SHAPE (one quoted argument list) under memcheck, and in full
# mode under initcheck too
sanitize_shapes() {
    local prog=$1 kernel=$2 tool shape
    shift 2
    for tool in memcheck initcheck; do
        [ "$QUICK" = 1 ] && [ $tool = initcheck ] && continue
        for shape in "$@"; do sanitize_kernel $tool $prog $kernel $shape; done
    done
}

# planted PROG KERNEL ARGS...: every planted-bug build of PROG (build/PROG_bug<k> for k in $SUITE_BUGS, else
# every build/PROG_bug<k> there is) must report FAIL and exit 1 for `KERNEL --check ARGS`.
planted() {
    local prog=$1 kernel=$2
    shift 2
    local bug out rc bugs=() k
    if [ -n "${SUITE_BUGS:-}" ]; then
        for k in $SUITE_BUGS; do bugs+=("build/${prog}_bug$k"); done
    else
        bugs=(build/${prog}_bug[0-9])
    fi
    for bug in "${bugs[@]}"; do
        [ -x "$bug" ] || { fail "planted-bug build missing: $bug (make plant)"; continue; }
        out=$(./$bug $kernel --check "$@" 2>&1)
        rc=$?
        { log_head "$bug $kernel --check $* (exit $rc)"; echo "$out"; } >> "$LOG"
        if [ $rc -eq 1 ] && echo "$out" | grep -q "FAIL"; then pass "planted bug caught: $bug $*"; else fail "planted bug missed: $bug $* (exit $rc)"; fi
    done
}

if ! command -v "$SANITIZER" >/dev/null; then fail "$SANITIZER not found"; fi
# SUITE_OPS="rmsnorm ..." limits the run to those programs (and skips the once-only checks below unless
# layernorm is among them).
in_ops() { [ -z "${SUITE_OPS:-}" ] || case " $SUITE_OPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
for prog in $(ls *_forward.cu | sed 's/\.cu$//'); do
    op=${prog%_forward}
    in_ops "$op" || continue
    [ -x "./$prog" ] || { fail "$prog: not built"; continue; }
    [ -f "tests/gpu_suite_$op.sh" ] || { fail "$prog: no tests/gpu_suite_$op.sh"; continue; }
    echo "== [$SECONDS s] GPU suite: $prog"
    . "tests/gpu_suite_$op.sh"
done
echo "== [$SECONDS s] GPU suite: the shared checks"

if in_ops layernorm; then
# timing mode: CSV with the programs' schema (harness/options.h CSV_HEADER), JSON Lines that parse
tmp=build/suite_timing
rm -f $tmp.csv $tmp.jsonl
out=$(./layernorm_forward 17 -N 2048 -C 1024 --repeats 20 --csv $tmp.csv --json $tmp.jsonl 2>&1); rc=$?
echo "$out" >> "$LOG"
if [ $rc -eq 0 ] && echo "$out" | grep -Eq "^speed of light: device copy [0-9.]+ GB/s" && echo "$out" | grep -Eq "GB/s \| +[0-9.]+% SOL"; then
    pass "timing mode prints SOL, GB/s and %SOL"
else fail "timing mode output (exit $rc)"; fi
python3 - "$tmp.csv" "$tmp.jsonl" <<'PY' && pass "CSV schema, clock and launch times; JSON Lines" || fail "CSV schema or JSON Lines"
import csv, json, sys
want = ("op,kernel,kernel_name,dtype,shape,block_size,time_ms_median,time_ms_min,bytes,gbps,sol_gbps,sol_pct,"
        "max_abs_err,max_rel_err,status,gpu,sm,cuda,git_rev,time_ms_launch_median,time_ms_launch_min,clock,"
        "chained").split(",")
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and list(rows[0].keys()) == want, rows[0].keys() if rows else "no rows"
assert all(r["status"] == "OK" and float(r["gbps"]) > 0 and float(r["sol_gbps"]) > 0 for r in rows), rows
# the clock of the kernel window: CUPTI's kernel timestamps, or CUDA events where CUPTI could not record
assert all(r["clock"] in ("cupti", "events") for r in rows), [r["clock"] for r in rows]
assert all(r["chained"] == "" for r in rows), [r["chained"] for r in rows]  # cold rows: no graph, nothing chained
# the events around the launch include the launch, the kernel window does not: never much below it (5% for noise)
assert all(float(r["time_ms_launch_median"]) >= 0.95 * float(r["time_ms_median"]) for r in rows), \
    [(r["time_ms_median"], r["time_ms_launch_median"], r["clock"]) for r in rows]
assert rows[0]["shape"] == "2048x1024" and rows[0]["op"] == "layernorm"
js = [json.loads(l) for l in open(sys.argv[2])]
assert len(js) == len(rows) and js[0]["kernel"] == 17 and js[0]["detail"] and js[0]["chained"] == ""
PY
# the ranking's note of a kernel is the path of its best block size, not of the last one the sweep ran
out=$(./layernorm_forward 14,15 --dtype bf16 -N 64 -C 4096 --repeats 10 2>&1); rc=$?
echo "$out" >> "$LOG"
echo "$out" | python3 -c '
import re, sys
best, path, kernel, rank = {}, {}, None, {}
for line in sys.stdin:
    m = re.search(r"\| kernel (\d+) ", line)
    if m: kernel = int(m.group(1))
    m = re.match(r"block_size +(\d+) .*\| OK \| path (.*)$", line.rstrip())
    if m: path[(kernel, int(m.group(1)))] = m.group(2)
    m = re.match(r"best: block_size (\d+) ", line)
    if m: best[kernel] = int(m.group(1))
    m = re.match(r" +\d+ \| +(\d+) \| \S+ +\| +(\d+) \|.*\| (.*)$", line.rstrip())
    if m: rank[int(m.group(1))] = (int(m.group(2)), m.group(3))
ok = sorted(best) == [14, 15] and all(rank.get(k) == (b, path.get((k, b))) for k, b in best.items())
sys.exit(0 if ok else 1)' && [ $rc -eq 0 ] && pass "ranking: each kernel's note is its best block's path" \
    || fail "ranking: a kernel's note is not its best block's path (exit $rc; $LOG)"
# hot rows say whether their launches chained by PDL: ours with --pdl yes, without no; cuDNN's as its output says
rm -f $tmp.hot.csv
out=$( { ./layernorm_forward 17 -N 4 -C 4096 --hot --repeats 20 --csv $tmp.hot.csv &&
         ./layernorm_forward 17 -N 4 -C 4096 --hot --pdl --repeats 20 --csv $tmp.hot.csv &&
         ./layernorm_forward 0 -N 4 -C 4096 --hot --repeats 20 --csv $tmp.hot.csv; } 2>&1); rc=$?
echo "$out" >> "$LOG"
own=$(echo "$out" | grep -c "chain by programmatic dependent launch on their own")
python3 - "$tmp.hot.csv" "$own" <<'PY' && pass "CSV chained column: hot rows, --pdl, cuDNN as its output says" || fail "CSV chained column (exit $rc)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ours = [r for r in rows if r["kernel"] == "17"]
assert ours and all(r["status"] == "OK" for r in ours), ours
assert all(r["chained"] == ("yes" if r["shape"].endswith(":pdl") else "no") for r in ours), \
    [(r["shape"], r["chained"]) for r in ours]
cudnn = [r for r in rows if r["kernel"] == "0" and r["status"] == "OK"]
assert all(r["chained"] == ("yes" if int(sys.argv[2]) else "no") for r in cudnn), (sys.argv[2], cudnn)
PY

# device inputs == host generator
out=$(./build/test_gpu_inputs 2>&1); rc=$?
echo "$out" >> "$LOG"
if [ $rc -eq 0 ]; then pass "device inputs: host copy exact, within 1e-5 of cuRAND's host generator"; else fail "device vs host inputs: $(echo "$out" | grep FAIL | head -n 2 | tr '\n' ' ')"; fi
fi

# scripts/peers.py's PyTorch side (make test runs it with the other script tests; standalone runs need it here)
if [ "${SOURCED_BY_RUNNER:-0}" != 1 ]; then
    out=$(python3 tests/test_peers_torch.py 2>&1); rc=$?
    echo "$out" >> "$LOG"
    if [ $rc -eq 0 ]; then pass "peers.py on PyTorch: eager, torch.compile, Liger and QuACK validate, corrupted outputs fail"
    elif [ $rc -eq 77 ]; then skip "peers.py on PyTorch: $(echo "$out" | tail -n 1)"
    else fail "peers.py on PyTorch: $(echo "$out" | grep FAIL | head -n 3 | tr '\n' ' ')"; fi
fi

[ "${SOURCED_BY_RUNNER:-0}" = 1 ] || { summary; [ "$FAILED" -eq 0 ]; }
