#!/usr/bin/env bash
# The odd-rows rungs (RMSNorm 9, LayerNorm 13) with w (and b) loaded with x, before the sum, and with one 16-byte
# store a pack; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s39_odd_early.sh        (GIT_REV=<commit>)

Both odd-rows rungs load w (LayerNorm: and b) element by element after the sum, pack after pack, and their
store_pack became 4-byte stores (SASS). Builds two variants of each program: results/lab/s39_<op>_odd_raw.patch
(store_raw: one STG.128 a pack) and s39_<op>_odd_early_raw.patch (also w and b loaded with x, before the sum), and
times rung 9 (RMSNorm) and 13 (LayerNorm) of the three builds at odd points, fp32 and bf16, cold (one hot),
best block, two rounds. $OUT/times.txt; a table last.
H
exit 0 ;;
"") ;;
*) echo "s39_odd_early: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s39_odd_early
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
for op in rmsnorm layernorm; do
    for v in raw early_raw; do lab_variant ${op}_forward s39_${op}_odd_$v.patch ${op}_odd_$v & done
done
wait
for b in rmsnorm_odd_raw rmsnorm_odd_early_raw layernorm_odd_raw layernorm_odd_early_raw; do [ -x build/x/$b ] || exit 1; done
el built
for round in 1 2; do
    for dt in fp32 bf16; do
        for nc in "1 4097" "16 4097" "64 4097" "4 16385" "64 16385" "1 65537" "1024 4097" "16 4097 --hot"; do
            set -- $nc
            pt="$dt $1x$2${3:+ hot}"
            for op in rmsnorm layernorm; do
                k=9; [ $op = layernorm ] && k=13
                lab_best "$pt" "$op $k" ./${op}_forward $k --dtype $dt -N $1 -C $2 ${3:-}
                for v in raw early_raw; do
                    lab_best "$pt" "$op $v" build/x/${op}_odd_$v $k --dtype $dt -N $1 -C $2 ${3:-}
                done
            done
        done
    done
done
el done
lab_table
