#!/usr/bin/env bash
# The odd-rows rungs (RMSNorm 9, LayerNorm 13) with w and b read as 16-byte packs, against element loads (run in
# session 40 on the tree before the element loads landed: the packs lost, NOTES); --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s39_odd_packed.sh        (GIT_REV=<commit>)

Three builds of RMSNorm and LayerNorm: the tree; results/lab/s39_<op>_odd_early_raw.patch (w and b loaded with x,
element by element, one 16-byte store a pack); and a copy of the tree with s39_odd_packed.patch (the same, w and b
read as the two aligned 16-byte packs around each pack's columns and shifted into place: harness int4_at_offset and
load_pack_offset, with a CPU test). First compute-sanitizer memcheck and racecheck on the packed build's rungs 9 and
13 at rows whose last pack needs the element-by-element fallback (C = 4097, 4099, 8195, 16385; 1-5 rows, fp32 and
bf16), then times rung 9 and 13 of the three builds at odd points, fp32 and bf16, cold (one hot), best block, two
rounds. $OUT/sanitize.log, $OUT/times.txt; a table last.
H
exit 0 ;;
"") ;;
*) echo "s39_odd_packed: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s39_odd_packed
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
for op in rmsnorm layernorm; do lab_variant ${op}_forward s39_${op}_odd_early_raw.patch ${op}_early & done
lab_tree_variant packed s39_odd_packed.patch &
wait
d=build/x/packed
for b in build/x/rmsnorm_early build/x/layernorm_early $d/rmsnorm_forward $d/layernorm_forward; do
    [ -x $b ] || { echo "s39_odd_packed: $b was not built ($OUT/build.log)" >&2; exit 1; }
done
el built
bad=0
for tool in memcheck racecheck; do
    for dt in fp32 bf16; do
        for nc in "1 4097" "3 4099" "5 8195" "2 16385"; do
            read -r n c <<< "$nc"
            for pk in "rmsnorm_forward 9" "layernorm_forward 13"; do
                read -r prog k <<< "$pk"
                out=$(compute-sanitizer --tool $tool --error-exitcode 9 $d/$prog $k --check --dtype $dt -N $n -C $c 2>&1)
                rc=$?; echo "### $tool $prog $k $dt ${n}x$c: exit $rc" >> "$OUT/sanitize.log"; echo "$out" | tail -n 5 >> "$OUT/sanitize.log"
                [ $rc -eq 0 ] || { bad=$((bad + 1)); echo "sanitize FAIL: $tool $prog $k $dt ${n}x$c (exit $rc)"; }
            done
        done
    done
done
el "sanitizers: $bad failed"
for round in 1 2; do
    for dt in fp32 bf16; do
        for nc in "1 4097" "16 4097" "4 16385" "64 16385" "1 65537" "1024 4097" "16 4097 --hot"; do
            set -- $nc
            pt="$dt $1x$2${3:+ hot}"
            for op in rmsnorm layernorm; do
                k=9; [ $op = layernorm ] && k=13
                lab_best "$pt" "$op $k" ./${op}_forward $k --dtype $dt -N $1 -C $2 ${3:-}
                lab_best "$pt" "$op early" build/x/${op}_early $k --dtype $dt -N $1 -C $2 ${3:-}
                lab_best "$pt" "$op packed" $d/${op}_forward $k --dtype $dt -N $1 -C $2 ${3:-}
            done
        done
    done
done
el done
lab_table
