#!/usr/bin/env bash
# make test / make test-full run this: the CPU tests (always, each binary at OMP_NUM_THREADS=1 and 16: its
# reference must give the same verdicts whatever the thread count of the machine), the command-line and script
# tests, then the GPU suite where a GPU is present (HAVE_GPU=1): its quick mode (make test) or its full mode
# (make test-full).
# Usage: tests/run_tests.sh [quick|full]   (default quick). SUITE_BUGS: the planted bugs built (see gpu_suite.sh).
# The parts are independent and run at the same time (lib.sh's part_start): every CPU-test binary at each thread
# count, the command-line tests, each script test, and the GPU suite (whose programs run side by side on the GPU,
# see gpu_suite.sh). Each part's output is kept apart and printed whole, in a fixed order (CPU tests, command line,
# scripts, GPU suite), under a header with the seconds it took ("== scripts (31 s)"). The lines before the last say
# how long each part took ("time: ..."; BUILD_S, the seconds of the build before, where the Makefile passes them);
# the last line is "N passed, N failed"; exits non-zero on any failure.
cd "$(dirname "$0")/.." || exit 2
MODE=${1:-quick}
case "$MODE" in
quick | full) ;;
*) echo "usage: tests/run_tests.sh [quick|full]" >&2; exit 2 ;;
esac
. tests/lib.sh
export SOURCED_BY_RUNNER=1
# OpenMP threads that wait sleep instead of spinning: the parts run side by side, and a spinning team holds the cores
# the others need (the GPU suite's small checks took 8-16 s each while the script tests ran, 1 s after)
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
export TEST_MODE=$MODE  # the script tests read it (quick: tests/test_peers_torch.py compiles one dtype a case)
mkdir -p build
PART_DIR=build/parts
rm -rf "$PART_DIR"
mkdir -p "$PART_DIR"

# The GPU suite first: it is the longest part (its own parts, one a program, run side by side inside it).
if [ "${HAVE_GPU:-0}" = 1 ]; then
    export SUITE_TIMES=$PART_DIR/gpu_times
    part_start gpu . tests/gpu_suite.sh "$MODE"
fi

# cpu_test BINARY OMP: the binary's PASS/FAIL lines, each with the thread count, and its exit status
cpu_test() {
    local t=$1 omp=$2 line
    while IFS= read -r line; do
        case "$line" in
        PASS\ *) pass "(OMP $omp) ${line#PASS }" ;;
        FAIL\ *) fail "(OMP $omp) ${line#FAIL }" ;;
        EXIT\ 0) pass "(OMP $omp) $t exits 0" ;;
        EXIT\ *) fail "(OMP $omp) $t exited with status ${line#EXIT }" ;;
        esac
    done < <(OMP_NUM_THREADS=$omp "$t"; echo "EXIT $?")
}
# script_test TEST: its line (exit 77: skipped, the log's last line says why; a failure: its FAIL/error lines)
# A script test that runs past SCRIPT_TIMEOUT seconds (default 300) fails, saying so: a test that blocks (one that
# starts GPU work it should not) cannot hold make test up for good.
script_test() {
    local t=$1 log=$PART_DIR/${1##*/}.log t0=$SECONDS rc
    timeout "${SCRIPT_TIMEOUT:-300}" python3 "$t" > "$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then pass "$t ($((SECONDS - t0)) s)"
    elif [ $rc -eq 77 ]; then skip "$t: $(tail -n 1 "$log")"
    elif [ $rc -eq 124 ]; then fail "$t: still running after ${SCRIPT_TIMEOUT:-300} s (SCRIPT_TIMEOUT), stopped"
    else fail "$t: $(grep -E 'FAIL|Error|error' "$log" | head -n 5 | tr '\n' ' ')"; fi
    rm -f "$log"
}
CPU_THREADS=${CPU_THREADS:-"1 16"}
cpu_parts=()
for t in build/test_cpu*; do
    [ -x "$t" ] || continue
    for omp in $CPU_THREADS; do cpu_parts+=("$t $omp"); done
done
# tests/test_peers_torch.py (torch.compile of every case: minutes on a GPU machine; skipped without PyTorch): its
# line comes last
TORCH=tests/test_peers_torch.py
script_tests=()
for t in tests/test_*.py; do
    [ -e "$t" ] && [ "$t" != $TORCH ] && script_tests+=("$t")
done
[ -e $TORCH ] && script_tests+=($TORCH)

# At most TEST_JOBS of these parts at once (default: a core each; half the cores beside the GPU suite, whose
# processes want the rest), the longest first (SLOW_FIRST, as measured: a queue that ends on a long test ends late):
# the slow script tests, the command-line tests, the CPU tests, the other script tests.
TEST_JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 4)}
[ "${HAVE_GPU:-0}" = 1 ] && TEST_JOBS=$(( TEST_JOBS / 2 > 2 ? TEST_JOBS / 2 : 2 ))
SLOW_FIRST="tests/test_peers_torch.py tests/test_fuzz_scripts.py tests/test_scripts.py tests/test_fuzz.py
            tests/test_make.py tests/test_suite_paths.py"
for t in $SLOW_FIRST; do
    [[ " ${script_tests[*]} " == *" $t "* ]] && part_start_capped "$TEST_JOBS" "py.${t##*/}" script_test "$t"
done
part_start_capped "$TEST_JOBS" cli . tests/test_cli.sh
for tp in "${cpu_parts[@]}"; do
    t=${tp% *} omp=${tp##* }
    part_start_capped "$TEST_JOBS" "cpu.${t##*/}.$omp" cpu_test "$t" "$omp"
done
for t in "${script_tests[@]}"; do
    [[ " $SLOW_FIRST " == *" $t "* ]] || part_start_capped "$TEST_JOBS" "py.${t##*/}" script_test "$t"
done

# collected in order; a group's time: from its first part's start to its last part's end
span() {  # span NAME...: those seconds, from PART_T0 and PART_SECS
    local first= last=0 n e
    for n in "$@"; do
        [ "${PART_SECS[$n]:-?}" = '?' ] && continue
        e=$(( ${PART_T0[$n]} + ${PART_SECS[$n]} ))
        [ -z "$first" ] || [ "${PART_T0[$n]}" -lt "$first" ] && first=${PART_T0[$n]}
        [ "$e" -gt "$last" ] && last=$e
    done
    echo $(( last - ${first:-0} ))
}
cpu_names=()
for tp in "${cpu_parts[@]}"; do
    t=${tp% *} omp=${tp##* }
    cpu_names+=("cpu.${t##*/}.$omp")
    part_collect "cpu.${t##*/}.$omp" "CPU tests ($t, OMP_NUM_THREADS=$omp)"
done
part_collect cli "command-line tests"
echo "== scripts"
py_names=()
for t in "${script_tests[@]}"; do
    py_names+=("py.${t##*/}")
    part_collect "py.${t##*/}"
done

if [ "${HAVE_GPU:-0}" = 1 ]; then
    part_collect gpu "GPU suite, $MODE (tests/gpu_suite.sh $MODE)"
    gpu="GPU suite ${PART_SECS[gpu]} s"
    [ -s "$SUITE_TIMES" ] && gpu="$gpu ($(cat "$SUITE_TIMES"))"
else
    echo "== GPU suite skipped: no GPU found (run tests/gpu_suite.sh [quick|full] on a GPU machine)"
    gpu="GPU suite skipped"
fi
echo "== done"
in_all="the tests $SECONDS s (their parts at the same time)"
[ -n "${BUILD_S:-}" ] && in_all="$in_all, build and tests $((BUILD_S + SECONDS)) s"
echo "time: ${BUILD_S:+build $BUILD_S s, }CPU tests $(span "${cpu_names[@]}") s, command-line ${PART_SECS[cli]} s," \
     "scripts $(span "${py_names[@]}") s, $gpu; $in_all"
summary
[ "$FAILED" -eq 0 ]
