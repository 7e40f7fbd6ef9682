#!/usr/bin/env bash
# The lean rungs (RMSNorm 12, LayerNorm 14) at 1 pack a thread against themselves at 2, at the latency points where
# the peers still lead; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s38_one_pack.sh        (GIT_REV=<commit>)

Builds RMSNorm and LayerNorm with results/lab/s38_rmsnorm_one_pack.patch and s38_layernorm_one_pack.patch
(LEAN_PACKS 1: the row over twice the threads, fp32 rows up to 32768) and times the lean rung of each, as built and
patched, at the cold latency points of 4096-8192 elements (and hot at 64 x 4096), fp32 and bf16, best block size,
two rounds. $OUT/times.txt holds the times; a table is printed last.
H
exit 0 ;;
"") ;;
*) echo "s38_one_pack: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s38_one_pack
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
lab_variant rmsnorm_forward s38_rmsnorm_one_pack.patch rms_one_pack &
lab_variant layernorm_forward s38_layernorm_one_pack.patch ln_one_pack &
wait
[ -x build/x/rms_one_pack ] && [ -x build/x/ln_one_pack ] || exit 1
el built
for round in 1 2; do
    for dt in fp32 bf16; do
        for nc in "1 4096" "16 4096" "64 4096" "128 4096" "512 4096" "1 8192" "128 8192" "64 4096 --hot"; do
            set -- $nc
            pt="$dt $1x$2${3:+ hot}"
            lab_best "$pt" "RMSNorm 12" ./rmsnorm_forward 12 --dtype $dt -N $1 -C $2 ${3:-}
            lab_best "$pt" "RMSNorm 1 pack" build/x/rms_one_pack 12 --dtype $dt -N $1 -C $2 ${3:-}
            lab_best "$pt" "LayerNorm 14" ./layernorm_forward 14 --dtype $dt -N $1 -C $2 ${3:-}
            lab_best "$pt" "LayerNorm 1 pack" build/x/ln_one_pack 14 --dtype $dt -N $1 -C $2 ${3:-}
        done
    done
done
el done
lab_table
