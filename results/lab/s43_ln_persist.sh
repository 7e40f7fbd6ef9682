#!/usr/bin/env bash
# LayerNorm rung 12 at many rows of 4096-8192: w and b read once a block (a grid that walks the rows); --help.
set -u
case "${1:-}" in
-h | --help)
    cat <<'H'
usage: results/lab/s43_ln_persist.sh        (GIT_REV=<commit>)

At fp32 512x4096 hot LayerNorm's rung 12 takes 5.01 us (4.67 chained by PDL), RMSNorm's rung 8 of the same design
4.44 (3.79) and cuDNN's LayerNorm 4.05 (chained); cold 5.92 against cuDNN's 5.70 (H100). A block a row reads its
row's w and b as well as x: at 4096 fp32 columns 32 KB of w and b a row beside 16 KB of x, from L2 or L1. Hypothesis:
that traffic, not latency, is what LayerNorm pays over RMSNorm (its gap grows with PDL, which hides the weights'
latency). s43_ln_persist.patch: -DV_PERSIST, where the row fits one block (CL = 1), a grid of the blocks resident at
once walks the rows (row, row + grid, ...), w and b loaded once into registers, the next row's x loaded before this
row is summed (-DV_PACKED_FORM: the bounded instance, 64 registers). One call:
1. builds the stock program, both variants and RMSNorm; --check of the variants at fp32/bf16/fp16, 1-8192 rows,
   cold, hot and --pdl; memcheck and racecheck at 1000 rows (the grid walks several rows a block);
2. times rung 12 (stock at its own block sizes, the variants at theirs), best block, two rounds, at 1-16384 rows of
   4096 and 512x8192, cold, hot and hot --pdl, fp32 and bf16, with cuDNN (kernel 0) and RMSNorm's rung 8 at the
   hot points in the same process: $OUT/times.txt;
3. Nsight Compute at fp32 512x4096 hot (no flush): L2 sectors read by L1, L1 hit rate, duration, of the stock rung
   12, the persistent variant and RMSNorm's rung 8; a table last.
H
    exit 0 ;;
"") ;;
*) echo "s43_ln_persist: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s43_ln_persist
make -j16 layernorm_forward rmsnorm_forward GIT_REV="$REV" >> "$OUT/build.log" 2>&1 &
lab_variant layernorm_forward s43_ln_persist.patch ln_persist -DV_PERSIST &
lab_variant layernorm_forward s43_ln_persist.patch ln_persist_packed -DV_PERSIST -DV_PACKED_FORM &
wait
for b in ./layernorm_forward ./rmsnorm_forward build/x/ln_persist build/x/ln_persist_packed; do
    [ -x $b ] || { tail -n 20 "$OUT/build.log"; exit 1; }
done
el built
for v in ln_persist ln_persist_packed; do
    for a in "--dtype fp32 -N 1000 -C 4096" "--dtype bf16 -N 8192 -C 4096" "--dtype fp16 -N 513 -C 8192" \
             "--dtype fp32 -N 1 -C 4096" "--dtype bf16 -N 3 -C 2048" "--dtype fp32 -N 700 -C 4096 --hot" \
             "--dtype bf16 -N 700 -C 4096 --hot --pdl" "--dtype fp32 -N 512 -C 4096 --input-mean 1000 --input-std 0.01"; do
        out=$(build/x/$v 12 $a --check 2>&1)
        echo "check $v $a: exit $?, $(echo "$out" | grep -c FAIL) FAIL, $(echo "$out" | grep -c 'path persistent') persistent"
    done
    for tool in memcheck racecheck; do
        lab_sanitize $tool $v build/x/$v 12 --dtype fp32 -N 1000 -C 4096 --block-size 256
    done
done
el checked
for round in 1 2; do
    for dt in fp32 bf16; do
        for spec in "1 4096" "128 4096" "128 4096 --hot" "512 4096" "512 4096 --hot" "512 4096 --hot --pdl" \
                    "2048 4096" "2048 4096 --hot" "16384 4096" "512 8192" "512 8192 --hot"; do
            set -- $spec
            pt="$dt $1x$2${3:+ ${*:3}}"
            lab_best "$pt" "12 stock" ./layernorm_forward 12 --dtype $dt -N $1 -C $2 "${@:3}"
            lab_best "$pt" "12 persist" build/x/ln_persist 12 --dtype $dt -N $1 -C $2 "${@:3}"
            lab_best "$pt" "12 persist packed" build/x/ln_persist_packed 12 --dtype $dt -N $1 -C $2 "${@:3}"
            if [ $round = 1 ] && [ "${3:-}" = --hot ]; then
                lab_best "$pt" "cuDNN LN" ./layernorm_forward 0 --dtype $dt -N $1 -C $2 "${@:3}"
                lab_best "$pt" "RMS 8" ./rmsnorm_forward 8 --dtype $dt -N $1 -C $2 "${@:3}"
            fi
        done
    done
done
el timed
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,launch__registers_per_thread,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active
prof() {  # NAME KERNEL-REGEX BLOCK COMMAND...
    local name=$1 re=$2 bs=$3; shift 3
    "$NCU" --metrics $M --cache-control none -k regex:$re --launch-skip 3 -c 1 --csv "$@" --dtype fp32 -N 512 -C 4096 \
        --hot --block-size $bs --repeats 5 > "$OUT/ncu_$name.csv" 2> "$OUT/ncu_$name.err"
    python3 - "$OUT/ncu_$name.csv" "$name" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if len(rows) < 2:
    print("| %s | no profile |" % sys.argv[2]); sys.exit()
h = rows[0]; v = {}
for r in rows[1:]:
    v[r[h.index("Metric Name")]] = r[h.index("Metric Value")]
k = ["gpu__time_duration.sum", "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
     "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sector_hit_rate.pct", "launch__registers_per_thread",
     "launch__grid_size", "sm__warps_active.avg.pct_of_peak_sustained_active"]
print("| %s | %s |" % (sys.argv[2], " | ".join(v.get(x, "-") for x in k)))
PY
}
echo "| fp32 512x4096 hot, ncu | duration | L2 sectors read by L1 | written | L1 global load sectors | L1 hit % | registers | grid | warps active % |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
prof ln12_stock_128 latency_split 128 ./layernorm_forward 12
prof ln12_stock_256 latency_split 256 ./layernorm_forward 12
prof ln12_persist_256 latency_split 256 build/x/ln_persist 12
prof rms8_128 latency_split 128 ./rmsnorm_forward 8
el ncu
lab_table
