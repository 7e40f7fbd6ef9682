#!/usr/bin/env bash
# BatchNorm training with channel groups normalized while later groups are read (an experiment); --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s36_bn_overlap.sh [time|check]     (GIT_REV=<commit>; default: check, then time)

Builds batchnorm_forward as it is and, from results/lab/s36_bn_group_overlap.patch, build/x/bn_overlap (kernel 15,
group_overlap: kernel 10's grid and sums with the channels of a column in K15_GROUPS groups, each normalized by a
block as soon as every block of the column has summed it, while the block reads on).
check: --check of kernel 15 at 1, 2, 4 and 8 groups over odd shapes, every dtype, NHWC, --input-mean 1000 (every
block size, each validated after the previous one's timed launches), then compute-sanitizer memcheck, racecheck
and synccheck at one small shape.
time: kernels 10, 12 and 15 (1, 2, 4, 8 groups) at five training points, fp32 and bf16, two rounds, best block
each, % of the copy measured in the same process; one table.
H
exit 0 ;;
"" | time | check) ;;
*) echo "s36_bn_overlap: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s36_bn_overlap
make -j16 batchnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
lab_variant batchnorm_forward s36_bn_group_overlap.patch bn_overlap || exit 1
el built
B=build/x/bn_overlap
if [ "${1:-}" != time ]; then
    bad=0
    for ng in 1 2 4 8; do
        for a in "--dtype bf16 -N 65536 -C 256" "--dtype fp32 -N 4097 -C 1000" "--dtype fp16 -N 333 -C 520" \
                 "--dtype bf16 -N 7001 -C 2056" "--dtype fp32 --layout nhwc -N 3 -C 40 --height 7 --width 5" \
                 "--dtype bf16 -N 1 -C 64" "--dtype fp32 -N 16384 -C 1024 --input-mean 1000" "--dtype bf16 -N 4096 -C 4096"; do
            K15_GROUPS=$ng $B 15 --check $a > "$OUT/check.txt" 2>&1
            rc=$?
            if [ $rc -ne 0 ] || grep -q "FAIL" "$OUT/check.txt"; then
                bad=1; echo "CHECK FAILED (exit $rc): K15_GROUPS=$ng $a"; grep -E "FAIL|mismatch|error" "$OUT/check.txt" | head -n 4
            fi
        done
        # timed launches between the validations of successive block sizes: the counters must come back to zero
        K15_GROUPS=$ng $B 15 --dtype bf16 -N 20000 -C 768 --repeats 20 > "$OUT/sweep_$ng.txt" 2>&1 ||
            { bad=1; echo "SWEEP FAILED: K15_GROUPS=$ng"; grep FAIL "$OUT/sweep_$ng.txt" | head -n 3; }
    done
    el "checked (bad=$bad)"
    SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    for tool in memcheck racecheck synccheck; do
        K15_GROUPS=4 timeout 120 "$SAN" --tool $tool --error-exitcode 9 $B 15 --check --dtype bf16 -N 1031 -C 1000 \
            --block-size 256 > "$OUT/san_$tool.txt" 2>&1
        echo "$tool: exit $? ($(grep -c "ERROR SUMMARY: 0 errors" "$OUT/san_$tool.txt") clean summaries)"
    done
    el sanitized
fi
[ "${1:-}" = check ] && exit 0
PTS=("bf16 -N 65536 -C 256" "bf16 -N 16384 -C 1024" "bf16 -N 4096 -C 4096" "bf16 --layout nhwc -N 32 -C 256 --height 56 --width 56"
     "fp32 -N 65536 -C 256" "fp32 -N 16384 -C 1024" "fp32 --layout nhwc -N 32 -C 256 --height 56 --width 56")
rm -f "$OUT/times.txt"
for round in 1 2; do
    for pt in "${PTS[@]}"; do
        set -- $pt; dt=$1; shift
        lab_best "$pt" 10 ./batchnorm_forward 10 --dtype "$dt" "$@"
        lab_best "$pt" 12 ./batchnorm_forward 12 --dtype "$dt" "$@"
        for ng in 1 2 4 8; do lab_best "$pt" "15 x$ng" env K15_GROUPS=$ng $B 15 --dtype "$dt" "$@"; done
    done
    el "round $round"
done
lab_table
