#!/usr/bin/env bash
# make test / make test-full run this: the CPU tests (always, each binary at OMP_NUM_THREADS=1 and 16: its
# reference must give the same verdicts whatever the thread count of the machine), the command-line and script
# tests, then the GPU suite where a GPU is present (HAVE_GPU=1): its quick mode (make test) or its full mode
# (make test-full).
# Usage: tests/run_tests.sh [quick|full]   (default quick). SUITE_BUGS: the planted bugs built (see gpu_suite.sh).
# Each section's header gives the seconds since the start ("== [12 s] scripts"); ends with the line "N passed, N
# failed"; exits non-zero on any failure.
cd "$(dirname "$0")/.." || exit 2
MODE=${1:-quick}
case "$MODE" in
quick | full) ;;
*) echo "usage: tests/run_tests.sh [quick|full]" >&2; exit 2 ;;
esac
. tests/lib.sh
export SOURCED_BY_RUNNER=1

CPU_THREADS=${CPU_THREADS:-"1 16"}
for t in build/test_cpu*; do
    [ -x "$t" ] || continue
    for omp in $CPU_THREADS; do
        echo "== [$SECONDS s] CPU tests ($t, OMP_NUM_THREADS=$omp)"
        while IFS= read -r line; do
            case "$line" in
            PASS\ *) pass "(OMP $omp) ${line#PASS }" ;;
            FAIL\ *) fail "(OMP $omp) ${line#FAIL }" ;;
            EXIT\ 0) pass "(OMP $omp) $t exits 0" ;;
            EXIT\ *) fail "(OMP $omp) $t exited with status ${line#EXIT }" ;;
            esac
        done < <(OMP_NUM_THREADS=$omp "$t"; echo "EXIT $?")
    done
done

echo "== [$SECONDS s] command-line tests"
. tests/test_cli.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.." 2>/dev/null || true

echo "== [$SECONDS s] scripts"
# script_verdict TEST RC LOG SECONDS: its line (exit 77: skipped, the log's last line says why)
script_verdict() {
    if [ "$2" -eq 0 ]; then pass "$1 ($4 s)"
    elif [ "$2" -eq 77 ]; then skip "$1: $(tail -n 1 "$3")"
    else fail "$1: $(grep -E 'FAIL|Error|error' "$3" | head -n 5 | tr '\n' ' ')"; fi
    rm -f "$3"
}
# tests/test_peers_torch.py (torch.compile of every case: minutes on a GPU machine; skipped without PyTorch) runs
# beside the others, which do not use PyTorch; its line comes last
TORCH=tests/test_peers_torch.py
if [ -e $TORCH ]; then
    ( t0=$SECONDS; python3 $TORCH >/tmp/norm_pytorch.$$ 2>&1; echo "$? $((SECONDS - t0))" >/tmp/norm_pytorch_rc.$$ ) &
    torch_pid=$!
fi
for t in tests/test_*.py; do
    [ -e "$t" ] && [ "$t" != $TORCH ] || continue
    t0=$SECONDS
    python3 "$t" >/tmp/norm_pytest.$$ 2>&1
    script_verdict "$t" $? /tmp/norm_pytest.$$ $((SECONDS - t0))
done
if [ -e $TORCH ]; then
    wait $torch_pid
    read -r rc secs </tmp/norm_pytorch_rc.$$
    rm -f /tmp/norm_pytorch_rc.$$
    script_verdict $TORCH "${rc:-1}" /tmp/norm_pytorch.$$ "${secs:-?}"
fi

if [ "${HAVE_GPU:-0}" = 1 ]; then
    echo "== [$SECONDS s] GPU suite, $MODE (tests/gpu_suite.sh $MODE)"
    . tests/gpu_suite.sh "$MODE"
else
    echo "== [$SECONDS s] GPU suite skipped: no GPU found (run tests/gpu_suite.sh [quick|full] on a GPU machine)"
fi
echo "== [$SECONDS s] done"
summary
[ "$FAILED" -eq 0 ]
