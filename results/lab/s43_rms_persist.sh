#!/usr/bin/env bash
# RMSNorm rung 8 at many rows of 4096-8192: w read once a block (a grid that walks the rows); --help.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s43_rms_persist.sh        (GIT_REV=<commit>)

s43_ln_persist.sh found LayerNorm's rung 12 faster at many rows of 4096-8192 where a grid of resident blocks walks
the rows with w and b read once a block (fp32 512x4096 hot, chained: 4.66 -> 4.03 us; ncu: L1 load sectors 790K ->
537K, RMSNorm's rung 8 524K). s43_rms_persist.patch does the same to RMSNorm's rung 8 (-DV_PERSIST: w read once a
block). Prediction: less than LayerNorm gains (one weight array, not two): 0-5% at 512x4096-8192 hot. One call:
--check of the variant (fp32/bf16/fp16, 1-8192 rows), memcheck and racecheck of it and of LayerNorm's variant at
1000 rows; rung 8 stock and persistent, best block, two rounds, at the points s43_ln_persist.sh timed; a table last.
H
    exit 0 ;;
"") ;;
*) echo "s43_rms_persist: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s43_rms_persist
make -j16 rmsnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 &
lab_variant rmsnorm_forward s43_rms_persist.patch rms_persist -DV_PERSIST &
lab_variant layernorm_forward s43_ln_persist.patch ln_persist -DV_PERSIST &
wait
for b in ./rmsnorm_forward build/x/rms_persist build/x/ln_persist; do
    [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }
done
el built
for a in "--dtype fp32 -N 1000 -C 4096" "--dtype bf16 -N 8192 -C 4096" "--dtype fp16 -N 513 -C 8192" \
         "--dtype fp32 -N 1 -C 4096" "--dtype bf16 -N 3 -C 2048" "--dtype fp32 -N 512 -C 4096 --input-mean 1000 --input-std 0.01"; do
    out=$(build/x/rms_persist 8 $a --check 2>&1)
    echo "check rms_persist $a: exit $?, $(echo "$out" | grep -c FAIL) FAIL, $(echo "$out" | grep -c 'path persistent') persistent"
done
for v in "rms_persist 8" "ln_persist 12"; do
    set -- $v
    for tool in memcheck racecheck; do
        lab_sanitize $tool $1 build/x/$1 $2 --dtype fp32 -N 1000 -C 4096 --block-size 256
    done
done
el checked
for round in 1 2; do
    for dt in fp32 bf16; do
        for spec in "128 4096" "512 4096" "512 4096 --hot" "512 4096 --hot --pdl" "2048 4096" "2048 4096 --hot" \
                    "16384 4096" "512 8192" "512 8192 --hot"; do
            set -- $spec
            pt="$dt $1x$2${3:+ ${*:3}}"
            lab_best "$pt" "8 stock" ./rmsnorm_forward 8 --dtype $dt -N $1 -C $2 "${@:3}"
            lab_best "$pt" "8 persist" build/x/rms_persist 8 --dtype $dt -N $1 -C $2 "${@:3}"
        done
    done
done
el timed
lab_table
