#!/usr/bin/env bash
# Long rows (1024x65536, 2048x32768) on this GPU: cuDNN, the long-row rungs and the dispatcher timed, then each under
# ncu; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s45_long_rows.sh [rmsnorm|layernorm]       (GIT_REV=<commit>; both ops by default)

Issue 29 wants >= 95% of the copy at 1024x65536 and 2048x32768. The H100 is there (LayerNorm 95-98%, RMSNorm
98-100%); the H200 is not (session 45: LayerNorm fp32 1024x65536 85.6%, RMSNorm bf16 89.1%; QuACK 95.7%, cuDNN
90-93%). At each of those points, fp32 and bf16: RMSNorm kernels 0 (cuDNN), 7, 8, 10 and 13 (the dispatcher),
LayerNorm 0, 11, 12 and 17, each timed alone (its block sweep; the best block kept), then its one validated launch
at that block under ncu (caches flushed): time, DRAM throughput and bytes, warps active, registers, grid and
block, the top three stall reasons per issue. The harness's own kernels (input conversion, the flush, the copy
probes) are left out of the ncu rows. One table last; logs under $OUT. One op a call: RMSNorm took 240 s on an H200, LayerNorm over 330 s.
H
exit 0 ;;
"") OPS="rmsnorm layernorm" ;;
rmsnorm | layernorm) OPS=$1 ;;
*) echo "s45_long_rows: give rmsnorm, layernorm or nothing (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s45_long_rows
make -j16 rmsnorm_forward layernorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
lab_ncu_metrics
: > "$OUT/times.txt"
: > "$OUT/rows.txt"
for op in ${OPS}; do
    if [ $op = rmsnorm ]; then ks="0 7 8 10 13"; else ks="0 11 12 17"; fi
    for dt in fp32 bf16; do
        for pt in "1024 65536" "2048 32768"; do
            set -- $pt
            tag="$op $dt ${1}x$2"
            for k in $ks; do
                ./${op}_forward $k --dtype $dt -N $1 -C $2 --json - 2>> "$OUT/run.log" > "$OUT/k.json"
                best=$(lab_best_json "$OUT/k.json")
                [ -n "$best" ] || { echo "$tag|$k|none" >> "$OUT/times.txt"; continue; }
                set -- $pt $best
                bs=(--block-size $3)
                [ $k = 0 ] && bs=()  # cuDNN's kernel 0 takes no block size (its rows say block 0)
                "$NCU" --metrics "$M" --csv --print-units base ./${op}_forward $k --check --dtype $dt -N $1 -C $2 \
                    "${bs[@]}" > "$OUT/ncu.csv" 2>&1
                { echo "### $tag kernel $k block $3"; cat "$OUT/ncu.csv"; } >> "$OUT/ncu.log"
                python3 results/lab/ncu_rows.py "$OUT/ncu.csv" "$tag|$k|$3|$4|$5%" --longest >> "$OUT/rows.txt"
            done
        done
    done
    el "$op done"
done
echo "| point | kernel | block | us | %SOL | ncu: kernel | its ns | DRAM % of peak | DRAM MB read / written |" \
    "warps active % | regs | grid x block | stalls per issue (top 3) |"
echo "|---|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---|---|"
sed 's/^/| /; s/$/ |/' "$OUT/rows.txt"
el done
