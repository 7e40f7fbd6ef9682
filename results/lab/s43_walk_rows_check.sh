#!/usr/bin/env bash
# LayerNorm rung 16 (walk_rows) on a GPU before its merge: the GPU suite's rung-16 section and a first timing; --help.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s43_walk_rows_check.sh        (GIT_REV=<commit>; on the branch that holds rung 16)

Builds layernorm_forward, runs the rung-16 section of tests/gpu_suite_layernorm.sh in full mode (every dtype, one
row a block and many passes of the grid, 32-512 threads, --hot --pdl, --input-mean 1000, its refusals, memcheck,
racecheck, synccheck and initcheck) with the suite's own helpers, then times rungs 12 and 16 (best block, one round)
at fp32 512x4096 hot --pdl, fp32 512x8192 and bf16 2048x4096, as results/lab/s43_ln_persist.sh measured the lab
build; the pass/fail count and a table last.
H
    exit 0 ;;
"") ;;
*) echo "s43_walk_rows_check: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s43_walk_rows_check
make -j16 layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
. tests/lib.sh
LOG=$OUT/suite.log QUICK=0 SANITIZER=${SANITIZER:-compute-sanitizer}
eval "$(sed -n '/^check_path() {/,/^}/p; /^sanitize_kernel() {/,/^}/p' tests/gpu_suite.sh)"
check_one() { check_path layernorm_forward "$@"; }
eval "$(sed -n '/^check_refusals() {/,/^}/p' tests/gpu_suite_layernorm.sh)"
sed -n '/^# rung 16 (walk_rows)/,/^# kernel 13 (odd_rows)/p' tests/gpu_suite_layernorm.sh > build/x/rung16.sh
. build/x/rung16.sh
el "suite section: $(summary)"
for spec in "fp32 512 4096 --hot --pdl" "fp32 512 8192" "bf16 2048 4096"; do
    set -- $spec
    for k in 12 16; do lab_best "$1 $2x$3${4:+ ${*:4}}" "rung $k" ./layernorm_forward $k --dtype $1 -N $2 -C $3 "${@:4}"; done
done
el timed
lab_table
