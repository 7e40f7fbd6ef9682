#!/usr/bin/env bash
# RMSNorm rung 8 (latency_split) with less code: does a cold launch pay for its instructions? --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s37_rms_code.sh        (GIT_REV=<commit>)

Builds rmsnorm_forward as it is and, from results/lab/s37_rms_split_code.patch, three variants of rung 8: p2 (at
most 2 packs a thread: 472 instead of 736 sm_90 instructions in bf16), nopdl (the --pdl load order compiled out:
656) and both (448). Times rung 8 (best block, two rounds, cold unless :hot) at few-row points of 4096 and 8192
elements in every build; one table.
H
exit 0 ;;
"") ;;
*) echo "s37_rms_code: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s37_rms_code
make -j16 rmsnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
lab_variant rmsnorm_forward s37_rms_split_code.patch p2 -DSPLIT_PACKS_LAB=2 &
lab_variant rmsnorm_forward s37_rms_split_code.patch nopdl -DLAB_PDL=0 &
lab_variant rmsnorm_forward s37_rms_split_code.patch both -DSPLIT_PACKS_LAB=2 -DLAB_PDL=0 &
wait
el built
PTS=("bf16 -N 1 -C 4096" "bf16 -N 64 -C 4096" "bf16 -N 1 -C 8192" "bf16 -N 128 -C 8192" "fp32 -N 1 -C 4096"
     "fp32 -N 64 -C 4096" "fp32 -N 16 -C 8192" "bf16 -N 64 -C 4096 --hot")
rm -f "$OUT/times.txt"
for round in 1 2; do
    for pt in "${PTS[@]}"; do
        set -- $pt; dt=$1; shift
        lab_best "$pt" base ./rmsnorm_forward 8 --dtype "$dt" "$@"
        for v in p2 nopdl both; do lab_best "$pt" $v build/x/$v 8 --dtype "$dt" "$@"; done
    done
    el "round $round"
done
lab_table
