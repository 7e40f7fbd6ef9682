#!/usr/bin/env bash
# The GPU suite (run on a GPU machine; `make test` runs its quick mode, `make test-full` its full mode, where they
# find a GPU). The shared checks live here; each program's own matrix lives in tests/gpu_suite_<op>.sh, sourced
# for every built program:
#   - every kernel x dtype x odd shapes with --check (a kernel that refuses a shape says `skipped: reason`); quick
#     mode: a few odd shapes a dtype, cuDNN (kernel 0) at the first shape of each kind of problem (check_all), our
#     kernels alone at the others
#   - compute-sanitizer: full mode memcheck, racecheck, synccheck, initcheck on every kernel at several small
#     shapes (and on kernel paths forced by flags); quick mode one memcheck pass of our kernels (cuDNN's engines are
#     not ours, and slow under the sanitizer) at one small odd shape a program (BatchNorm: one a layout and mode),
#     and memcheck of the rungs whose code only some shapes reach, at those shapes
#   - the dispatchers' paths (expect_path: a point in every row of each rule of regimes), in both modes
#   - the planted bugs (build/<op>_forward_bug<k>) are each reported FAIL with exit 1
# and, once: timing mode writes CSV/JSON; the device inputs against cuRAND's host generator; --phases.
# Usage: tests/gpu_suite.sh [quick|full]   (default full; quick: fewer shapes, one sanitizer pass).
# SUITE_BUGS="1 3": the planted bugs to run (their builds must exist; the Makefile passes the ones it built);
# unset: every build/<op>_forward_bug<k> there is. SUITE_OPS="rmsnorm ...": those programs only.
# Side by side: each program's checks are one part, the once-only checks another (lib.sh's part_start); they run
# at the same time on the one GPU (--check runs are small: several processes share a GPU well), and inside a part
# the compute-sanitizer runs go to the background, at most SAN_JOBS at once over the suite (default: half the
# cores; they are CPU-bound). The checks that compare measured times (--phases) run last, with the GPU to
# themselves. SUITE_SERIAL=1: one part and one sanitizer run after the other (the same checks, the same lines).
# Output: each part's lines whole, in a fixed order, under "== GPU suite: PART (N s)"; the seconds of each part
# last ("time: ..."; into $SUITE_TIMES too, where set). Logs go to $SUITE_LOG (default build/gpu_suite.log): each
# part's log in turn, each check's command after "### [T s]", T the seconds since its part started when it finished
# (the part's first line: "### [0 s] (the part P starts)"); its compute-sanitizer runs, which ran in the background,
# at its end, each header with the seconds the run took.
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
. tests/lib.sh
LOG=${SUITE_LOG:-build/gpu_suite.log}
mkdir -p "$(dirname "$LOG")" build  # the suite's scratch files live in build/
: > "$LOG"
SUITE_T0=$SECONDS
suite_start=$SECONDS
# log_head TEXT: a check's line in the log, "### [T s] TEXT" (T: the seconds since the suite, or its part, started)
log_head() { echo "### [$((SECONDS - SUITE_T0)) s] $*"; }
SANITIZER=${SANITIZER:-compute-sanitizer}
case "${1:-full}" in
quick) QUICK=1 ;;
full) QUICK=0 ;;
*) echo "usage: tests/gpu_suite.sh [quick|full]" >&2; return 2 2>/dev/null || exit 2 ;;
esac
SUITE_STAGE=  # the programs' scripts run in the parts (set to alone for their last checks, below)
SUITE_SERIAL=${SUITE_SERIAL:-0}
SAN_JOBS=${SAN_JOBS:-$(( $(nproc 2>/dev/null || echo 4) / 2 ))}
# the programs' CPU references: a quarter of the cores each (three programs' parts and the sanitizer runs share
# them), waiting threads asleep
OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( $(nproc 2>/dev/null || echo 4) / 4 ))}
[ "$OMP_NUM_THREADS" -ge 1 ] 2>/dev/null || OMP_NUM_THREADS=1
export OMP_NUM_THREADS OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
[ "$SAN_JOBS" -ge 1 ] 2>/dev/null || SAN_JOBS=1
# the parts' scratch: their output, logs and counts, the sanitizer slots
SUITE_PARTS=build/gpu_parts
PART_DIR=$SUITE_PARTS
rm -rf "$SUITE_PARTS"
mkdir -p "$SUITE_PARTS/san_slots"

# kernel_list PROG: SUITE_KERNELS[PROG], its kernel numbers (its --list) as K1,K2,...; asked once a program (the
# suite asks for every program before its parts start). our_kernels PROG: OURS, the same without cuDNN's kernel 0.
declare -gA SUITE_KERNELS 2>/dev/null || true
kernel_list() { [ -n "${SUITE_KERNELS[$1]:-}" ] || SUITE_KERNELS[$1]=$(./$1 --list | awk '{print $1}' | paste -sd, -); }
our_kernels() {
    local k
    kernel_list "$1"
    OURS=
    for k in ${SUITE_KERNELS[$1]//,/ }; do [ "$k" = 0 ] || OURS+=${OURS:+,}$k; done
}

# quick_ends A B ... Z: all of them; in quick mode the first and the last (of a loop over cluster sizes: the
# smallest and the largest)
quick_ends() { if [ "$QUICK" = 1 ] && [ $# -gt 2 ]; then echo "$1 ${!#}"; else echo "$*"; fi; }

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
# expect_path PROG KERNEL WANT_SM90 WANT_OLDER ARGS...: as check_path (--check, or with --hot a short timed run that
# validates a replay), and the path line holds WANT_SM90 on a GPU of sm_90 or later (clusters), WANT_OLDER on an
# older one.
expect_path() {
    local prog=$1 kernel=$2 want90=$3 want_old=$4 out rc want mode=--check
    shift 4
    case " $* " in *" --hot "*) mode="--repeats 3" ;; esac
    out=$(./$prog $kernel $mode "$@" 2>&1)
    rc=$?
    { log_head "$prog $kernel $mode $* (exit $rc)"; echo "$out"; } >> "$LOG"
    if before_sm90 "$(echo "$out" | head -n 1)"; then want=$want_old; else want=$want90; fi
    if [ $rc -eq 0 ] && echo "$out" | grep -qF "$want"; then pass "$prog $kernel $* runs '$want'"
    else fail "$prog $kernel $* (exit $rc), wanted '$want': $(echo "$out" | grep -E 'path|FAIL|skipped' | head -n 2 | tr '\n' ' ')"; fi
}

# expect_at_plan PROG DISPATCHER ARGS...: `--block-size plan` runs the rung the dispatcher picks (its path's "rung R")
# at the block size the dispatcher launches it at (the block_size of each one's CSV row), and both validate.
expect_at_plan() {
    local prog=$1 disp=$2 out rung bd br rc1 rc2 f1=build/at_plan_$1.disp.csv f2=build/at_plan_$1.rung.csv
    shift 2
    rm -f $f1 $f2
    out=$(./$prog $disp --repeats 3 --csv $f1 "$@" 2>&1)
    rc1=$?
    rung=$(echo "$out" | grep -o 'path rung [0-9]*' | head -n 1 | awk '{print $3}')
    { log_head "$prog $disp $* (exit $rc1)"; echo "$out"; } >> "$LOG"
    if [ -n "$rung" ]; then
        out=$(./$prog $rung --block-size plan --repeats 3 --csv $f2 "$@" 2>&1)
        rc2=$?
        { log_head "$prog $rung --block-size plan $* (exit $rc2)"; echo "$out"; } >> "$LOG"
    fi
    bd=$(awk -F, -v k=$disp '$2 == k && $15 == "OK" {print $6; exit}' $f1 2>/dev/null)
    br=$(awk -F, -v k=$rung '$2 == k && $15 == "OK" {print $6; exit}' $f2 2>/dev/null)
    rm -f $f1 $f2
    if [ $rc1 -eq 0 ] && [ "${rc2:-1}" -eq 0 ] && [ -n "$bd" ] && [ "$bd" = "$br" ]; then
        pass "$prog $rung --block-size plan $* runs the dispatcher's block ($bd)"
    else fail "$prog --block-size plan $*: rung '${rung:-?}' at '${br:-?}', the dispatcher at '${bd:-?}' (exit $rc1/${rc2:-?})"; fi
}

# check_kernels PROG KERNELS ARGS...: `PROG KERNELS --check ARGS` (KERNELS: all, or K1,K2,...) must exit 0 and
# list every kernel it runs as OK or skipped.
# check_all PROG ARGS...: every kernel (all), cuDNN's kernel 0 with them; check_ours PROG ARGS...: every kernel
# but cuDNN's (whose plan, built in every process that runs it, costs seconds).
check_kernels() {
    local prog=$1 ks=$2
    shift 2
    local name="$prog $ks --check $*"
    local out rc nk table bad
    out=$(./$prog $ks --check "$@" 2>&1)
    rc=$?
    { log_head "$name (exit $rc)"; echo "$out"; } >> "$LOG"
    kernel_list "$prog"
    [ "$ks" = all ] && ks=${SUITE_KERNELS[$prog]}
    nk=$(echo "$ks" | tr , '\n' | grep -c .)
    table=$(echo "$out" | sed -n '/^ranking/,$p' | grep -E '^ +- \| +[0-9]+ \|')
    bad=$(echo "$table" | grep -Ev "\\| (OK( .*)?|skipped: .+)$")
    if [ $rc -ne 0 ] || [ "$(echo "$table" | grep -c .)" -ne "$nk" ] || [ -n "$bad" ] || echo "$out" | grep -q "FAIL"; then
        fail "$name (exit $rc): $(echo "$out" | grep -E 'FAIL|wrong|error|skipped' | head -n 3 | tr '\n' ' ')"
    else
        pass "$name"
    fi
}
# In quick mode check_all runs cuDNN at the first shape of each kind of problem (a program and its arguments but
# the sizes: dtype, layout, mode, variant) and our kernels alone at the others: cuDNN's plan costs seconds a process.
declare -gA CUDNN_KINDS 2>/dev/null || true
check_all() {
    if [ "$QUICK" = 1 ]; then
        local kind=$1 a skip=0
        for a in "${@:2}"; do
            if [ $skip = 1 ]; then skip=0; continue; fi
            case $a in -N | -C | --height | --width | --block-size | --heads | --head-dim | --row-stride) skip=1 ;;
            *) kind+=" $a" ;; esac
        done
        if [ -n "${CUDNN_KINDS[$kind]:-}" ]; then check_ours "$@"; return; fi
        CUDNN_KINDS[$kind]=1
    fi
    check_kernels "$1" all "${@:2}"
}
check_ours() { our_kernels "$1"; check_kernels "$1" "$OURS" "${@:2}"; }

# sanitize_kernel TOOL PROG KERNEL ARGS...: compute-sanitizer TOOL on `PROG KERNEL --check ARGS`, clean and exit 0.
# Inside a part (SAN_PART set) the run goes to the background (san_job) and its line comes at the part's end
# (sanitize_collect), in the order of the calls, its log too: its header says the seconds it ran itself.
sanitize_kernel() {
    local tool=$1 prog=$2 kernel=$3
    shift 3
    if [ -n "${SAN_PART:-}" ]; then
        SAN_N=$((SAN_N + 1))
        SAN_QUEUE+=("san.$SAN_PART.$SAN_N")
        part_start "san.$SAN_PART.$SAN_N" san_job "$SUITE_PARTS/san.$SAN_PART.$SAN_N.log" "$tool" "$prog" "$kernel" "$@"
        return 0
    fi
    local out rc t0=$SECONDS
    out=$("$SANITIZER" --tool $tool --error-exitcode 9 ./$prog $kernel --check "$@" 2>&1)
    rc=$?
    { log_head "$SANITIZER --tool $tool $prog $kernel --check $* (exit $rc, $((SECONDS - t0)) s)"; echo "$out"; } >> "$LOG"
    if [ $rc -eq 0 ] && echo "$out" | grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \(0 errors"; then
        pass "$tool clean: $prog $kernel --check $*"
    else
        fail "$tool: $prog $kernel --check $* (exit $rc): $(echo "$out" | grep -E 'ERROR|Error|error' | head -n 3 | tr '\n' ' ')"
    fi
}
# san_job LOG ARGS...: sanitize_kernel ARGS in the foreground, into LOG, in one of the SAN_JOBS slots (a directory
# under $SUITE_PARTS/san_slots made while the run holds it: mkdir is atomic, so the parts share the slots safely)
san_job() {
    local i
    LOG=$1
    shift
    SAN_PART=
    while :; do
        for ((i = 1; i <= SAN_JOBS; i++)); do mkdir "$SUITE_PARTS/san_slots/$i" 2>/dev/null && break 2; done
        sleep 0.2
    done
    sanitize_kernel "$@"
    rmdir "$SUITE_PARTS/san_slots/$i"
}
# sanitize_collect: the part's sanitizer runs, waited for: their lines and their logs, in the order of the calls
sanitize_collect() {
    local name
    for name in "${SAN_QUEUE[@]}"; do
        part_collect "$name"
        cat "$SUITE_PARTS/$name.log" >> "$LOG" 2>/dev/null
        rm -f "$SUITE_PARTS/$name.log"
    done
    SAN_QUEUE=()
}
# sanitize TOOL PROG ARGS...: sanitize_kernel on every kernel: quick mode our kernels (cuDNN's engines under the
# sanitizer take minutes and are not ours to mend), full mode all of them, cuDNN's with them.
sanitize() {
    local k=all
    if [ "$QUICK" = 1 ]; then our_kernels "$2"; k=$OURS; fi
    sanitize_kernel "$1" "$2" "$k" "${@:3}"
}
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

# SUITE_OPS="rmsnorm ..." limits the run to those programs (and skips the once-only checks below unless
# layernorm is among them).
in_ops() { [ -z "${SUITE_OPS:-}" ] || case " $SUITE_OPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# suite_op OP: the part of one program, tests/gpu_suite_OP.sh: its log apart (the seconds in it from the part's
# start), its sanitizer runs in the background beside its other checks
suite_op() {
    LOG=$SUITE_PARTS/$1.log
    SUITE_T0=$SECONDS
    log_head "(the part $1 starts)" > "$LOG"
    [ "$SUITE_SERIAL" = 1 ] || SAN_PART=$1
    SAN_N=0 SAN_QUEUE=()
    . "tests/gpu_suite_$1.sh"
    sanitize_collect
}

# suite_shared: the once-only checks (on LayerNorm), a part of their own
suite_shared() {
LOG=$SUITE_PARTS/shared.log
SUITE_T0=$SECONDS
log_head "(the part shared starts)" > "$LOG"
# timing mode: CSV with the programs' schema (harness/options.h CSV_HEADER), JSON Lines that parse
tmp=build/suite_timing
rm -f $tmp.csv $tmp.jsonl
out=$(./layernorm_forward 14 -N 2048 -C 1024 --repeats 20 --csv $tmp.csv --json $tmp.jsonl 2>&1); rc=$?
{ log_head "layernorm_forward 14 -N 2048 -C 1024 --repeats 20 --csv --json (exit $rc)"; echo "$out"; } >> "$LOG"
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
assert len(js) == len(rows) and js[0]["kernel"] == 14 and js[0]["detail"] and js[0]["chained"] == ""
PY
# the ranking's note of a kernel is the path of its best block size, not of the last one the sweep ran
out=$(./layernorm_forward 11,12 --dtype bf16 -N 64 -C 4096 --repeats 10 2>&1); rc=$?
{ log_head "layernorm_forward 11,12 --dtype bf16 -N 64 -C 4096 --repeats 10 (exit $rc)"; echo "$out"; } >> "$LOG"
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
ok = sorted(best) == [11, 12] and all(rank.get(k) == (b, path.get((k, b))) for k, b in best.items())
sys.exit(0 if ok else 1)' && [ $rc -eq 0 ] && pass "ranking: each kernel's note is its best block's path" \
    || fail "ranking: a kernel's note is not its best block's path (exit $rc; $LOG)"
# hot rows say whether their launches chained by PDL: ours with --pdl yes, without no; cuDNN's as its output says
rm -f $tmp.hot.csv
out=$( { ./layernorm_forward 14 -N 4 -C 4096 --hot --repeats 20 --csv $tmp.hot.csv &&
         ./layernorm_forward 14 -N 4 -C 4096 --hot --pdl --repeats 20 --csv $tmp.hot.csv &&
         ./layernorm_forward 0 -N 4 -C 4096 --hot --repeats 20 --csv $tmp.hot.csv; } 2>&1); rc=$?
{ log_head "layernorm_forward 14 and 0 -N 4 -C 4096 --hot [--pdl] --csv (exit $rc)"; echo "$out"; } >> "$LOG"
own=$(echo "$out" | grep -c "chain by programmatic dependent launch on their own")
python3 - "$tmp.hot.csv" "$own" <<'PY' && pass "CSV chained column: hot rows, --pdl, cuDNN as its output says" || fail "CSV chained column (exit $rc)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ours = [r for r in rows if r["kernel"] == "14"]
assert ours and all(r["status"] == "OK" for r in ours), ours
assert all(r["chained"] == ("yes" if r["shape"].endswith(":pdl") else "no") for r in ours), \
    [(r["shape"], r["chained"]) for r in ours]
cudnn = [r for r in rows if r["kernel"] == "0" and r["status"] == "OK"]
assert all(r["chained"] == ("yes" if int(sys.argv[2]) else "no") for r in cudnn), (sys.argv[2], cudnn)
PY

# device inputs == host generator
out=$(./build/test_gpu_inputs 2>&1); rc=$?
{ log_head "build/test_gpu_inputs (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ]; then pass "device inputs: host copy exact, within 1e-5 of cuRAND's host generator"; else fail "device vs host inputs: $(echo "$out" | grep FAIL | head -n 2 | tr '\n' ' ')"; fi
}

# run_part NAME CMD...: starts the part NAME (SUITE_SERIAL=1: and waits for it to end)
suite_parts=()
run_part() {
    part_start "$1" "${@:2}"
    suite_parts+=("$1")
    [ "$SUITE_SERIAL" = 1 ] && wait "${PART_PID[$1]}"
}

if ! command -v "$SANITIZER" >/dev/null; then fail "$SANITIZER not found"; fi
ops=()
for prog in $(ls *_forward.cu *_backward.cu 2>/dev/null | sed 's/\.cu$//'); do
    op=${prog%_forward}  # a forward program's part is its op (layernorm), a backward one's its name
    in_ops "$op" || continue
    [ -x "./$prog" ] || { fail "$prog: not built"; continue; }
    [ -f "tests/gpu_suite_$op.sh" ] || { fail "$prog: no tests/gpu_suite_$op.sh"; continue; }
    kernel_list "$prog"
    ops+=("$op")
done
for op in "${ops[@]}"; do run_part "$op" suite_op "$op"; done
in_ops layernorm && run_part shared suite_shared
suite_times=()
for part in "${suite_parts[@]}"; do
    if [ "$part" = shared ]; then part_collect shared "GPU suite: the shared checks"
    elif [ -f "$part.cu" ]; then part_collect "$part" "GPU suite: $part"
    else part_collect "$part" "GPU suite: ${part}_forward"; fi
    cat "$SUITE_PARTS/$part.log" >> "$LOG" 2>/dev/null
    suite_times+=("$part ${PART_SECS[$part]} s")
done

# The checks that compare measured times with each other: each program's script again, SUITE_STAGE=alone (the
# parts ran it with SUITE_STAGE unset), after every part has ended. In the log, their seconds from the suite's start.
alone_t0=$SECONDS
echo "== GPU suite: the checks that compare measured times, the GPU to themselves"
SUITE_T0=$suite_start
log_head "(the checks that compare measured times start)" >> "$LOG"
for op in "${ops[@]}"; do SUITE_STAGE=alone; . "tests/gpu_suite_$op.sh"; done
SUITE_STAGE=
suite_times+=("timed alone $((SECONDS - alone_t0)) s")

# scripts/peers.py's PyTorch side (make test runs it with the other script tests; standalone runs need it here)
if [ "${SOURCED_BY_RUNNER:-0}" != 1 ]; then
    out=$(python3 tests/test_peers_torch.py 2>&1); rc=$?
    echo "$out" >> "$LOG"
    if [ $rc -eq 0 ]; then pass "peers.py on PyTorch: eager, torch.compile, Liger and QuACK validate, corrupted outputs fail"
    elif [ $rc -eq 77 ]; then skip "peers.py on PyTorch: $(echo "$out" | tail -n 1)"
    else fail "peers.py on PyTorch: $(echo "$out" | grep FAIL | head -n 3 | tr '\n' ' ')"; fi
fi

times_line=$(printf '%s, ' "${suite_times[@]}")
times_line=${times_line%, }
[ -n "${SUITE_TIMES:-}" ] && echo "$times_line" > "$SUITE_TIMES"
[ "${SOURCED_BY_RUNNER:-0}" = 1 ] || { echo "time: GPU suite $((SECONDS - suite_start)) s ($times_line)"; summary; [ "$FAILED" -eq 0 ]; }
