#!/usr/bin/env bash
# LayerNorm's lean rung (14) at one pack a thread against two, at the cold latency points where Liger leads;
# --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s40_ln_one_pack.sh        (GIT_REV=<commit>)

Builds LayerNorm and a copy with results/lab/s38_layernorm_one_pack.patch (LEAN_PACKS 1: the row over twice the
threads), then times rung 14 of both at latency points of 4096-8192 elements (cold;
16 x 4096 also hot), fp32 and bf16, best block size (printed), two rounds. Is a one-pack rung worth a place in the
ladder (the table choosing it where it wins)? $OUT/times.txt; a table last.
H
exit 0 ;;
"") ;;
*) echo "s40_ln_one_pack: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s40_ln_one_pack
make -j16 layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 &
lab_variant layernorm_forward s38_layernorm_one_pack.patch layernorm_one_pack &
wait
[ -x layernorm_forward ] && [ -x build/x/layernorm_one_pack ] || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
for round in 1 2; do
    for dt in bf16 fp32; do
        for nc in "1 4096" "4 4096" "16 4096" "64 4096" "128 4096" "512 4096" "1 8192" "16 8192" "64 8192" "16 4096 --hot"; do
            set -- $nc
            pt="$dt $1x$2${3:+ hot}"
            lab_best "$pt" "rung 14" ./layernorm_forward 14 --dtype $dt -N $1 -C $2 ${3:-}
            lab_best "$pt" "one pack" build/x/layernorm_one_pack 14 --dtype $dt -N $1 -C $2 ${3:-}
        done
    done
done
el done
lab_table
