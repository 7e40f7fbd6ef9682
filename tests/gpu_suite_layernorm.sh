# LayerNorm's part of the GPU suite (sourced by tests/gpu_suite.sh, which defines check_all, sanitize,
# planted, $QUICK and $LOG). Quick mode: fewer shapes, one memcheck pass of every kernel but cuDNN's at fp32
# 7 x 1000, and memcheck of the rungs that were the dispatcher's paths (10, 11, 12) and of the dispatcher (14) at
# small odd shapes.
# Rungs: 1-9 the ladder, 10 subwarp_persistent, 11 cluster_row_regs, 12 latency_split (1, 2 or 4 packs a thread:
# --packs), 13 odd_rows, 14 dispatch (its rule of regimes: 7, 12 and 13, and 9 where their rungs refuse).
# Quick mode: every kernel in every dtype at three odd shapes (cuDNN, kernel 0, at the first: its plan costs
# seconds a process), every dispatcher path, and the rungs' own sections at fp32 and bf16 (DTYPES; fp16 runs the
# 16-bit code with its own conversions, which check_all covers), at fewer shapes and cluster sizes (quick_ends).
[ "${SUITE_STAGE:-}" = alone ] && return 0  # (no checks that compare measured times)
DTYPES="fp32 fp16 bf16" DTYPES16="fp16 bf16"
[ "$QUICK" = 1 ] && { DTYPES="fp32 bf16"; DTYPES16="bf16"; }
if [ "$QUICK" = 1 ]; then
    for dt in fp32 fp16 bf16; do
        check_all layernorm_forward --dtype $dt -N 7 -C 1000
        check_ours layernorm_forward --dtype $dt -N 1 -C 4097
        check_ours layernorm_forward --dtype $dt -N 7 -C 33
    done
    check_ours layernorm_forward --dtype fp32 -N 7 -C 1
else
    for dt in fp32 fp16 bf16; do
        for c in 1 3 31 32 33 127 768 1000 1024 4097 8192 65536; do
            for r in 1 7 1031; do
                check_all layernorm_forward --dtype $dt -N $r -C $c
            done
        done
    done
fi

if [ "$QUICK" = 1 ]; then
    sanitize memcheck layernorm_forward --dtype fp32 -N 7 -C 1000
    sanitize_kernel memcheck layernorm_forward 10 --dtype fp32 -N 1031 -C 500
    sanitize_kernel memcheck layernorm_forward 10 --dtype bf16 -N 1031 -C 1000
    sanitize_kernel memcheck layernorm_forward 11 --dtype bf16 -N 3 -C 40008
    sanitize_kernel memcheck layernorm_forward 11 --dtype fp32 -N 7 -C 1000 --cluster 2
    sanitize_kernel memcheck layernorm_forward 12 --dtype fp16 -N 5 -C 4104
    sanitize_kernel memcheck layernorm_forward 12 --dtype fp32 -N 1031 -C 1000
    sanitize_kernel memcheck layernorm_forward 14 --dtype bf16 -N 3 -C 4104
    sanitize_kernel memcheck layernorm_forward 13 --dtype bf16 -N 5 -C 40001
    sanitize_kernel memcheck layernorm_forward 13 --dtype fp32 -N 3 -C 4097 --cluster 4
    sanitize_kernel memcheck layernorm_forward 13 --dtype fp32 -N 300 -C 16385
else
    for tool in memcheck racecheck synccheck initcheck; do
        for shape in "--dtype fp32 -N 7 -C 1000" "--dtype bf16 -N 3 -C 4097" "--dtype fp16 -N 5 -C 33" "--dtype fp32 -N 2 -C 65536"; do
            [ "$tool" = racecheck ] && [ "$shape" = "--dtype fp32 -N 2 -C 65536" ] && continue  # slow, nothing new
            sanitize $tool layernorm_forward $shape
        done
    done
fi

# kernel 7 loads w and b with x where a lane holds at most 4 16-byte packs (C <= 512 fp32, <= 1024 16-bit), else after
# the sums; with them held, 16-bit blocks of 1024 threads do not fit and say skipped
sanitize_shapes layernorm_forward 7 "--dtype bf16 -N 1031 -C 1000" "--dtype fp32 -N 7 -C 500" "--dtype fp16 -N 33 -C 136" \
    "--dtype fp32 -N 5 -C 1024"
out=$(./layernorm_forward 7 --check --dtype bf16 -N 7 -C 1024 --block-size 1024 2>&1); rc=$?
{ log_head "layernorm 7 at 1024 threads (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && echo "$out" | grep -q "skipped: "; then pass "layernorm 7 says skipped for bf16 blocks of 1024 threads"
else fail "layernorm 7 bf16 at 1024 threads (exit $rc): $(echo "$out" | grep -E 'skipped|FAIL|OK' | head -n 2 | tr '\n' ' ')"; fi

# planted bugs live in kernel 6
planted layernorm_forward 6 -N 7 -C 1000
planted layernorm_forward 6 -N 1 -C 33

# the single-pass variance (kernel 4) loses precision when |mean| >> std; two-pass kernels do not
out=$(./layernorm_forward 4 --check --input-mean 1000 -N 64 -C 768 2>&1); rc=$?
{ log_head "kernel 4 --input-mean 1000 (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 1 ] && echo "$out" | grep -q FAIL; then pass "layernorm 4 at --input-mean 1000 is reported FAIL"; else fail "layernorm 4 at --input-mean 1000 not reported (exit $rc)"; fi
TWO_PASS="3 5 6 7 8 9 10 11 12 13 14"
if [ "$QUICK" = 1 ]; then
    # quick: all of them in one process (kernel 10, fp32 C <= 512, says skipped at 768: alone at 512)
    check_kernels layernorm_forward "$(echo $TWO_PASS | tr ' ' ,)" --input-mean 1000 -N 64 -C 768
    check_path layernorm_forward 10 --input-mean 1000 -N 64 -C 512
else
    for k in $TWO_PASS; do
        cols=768
        [ $k = 10 ] && cols=512  # kernel 10: fp32 C <= 512 (128 16-byte packs)
        out=$(./layernorm_forward $k --check --input-mean 1000 -N 64 -C $cols 2>&1); rc=$?
        { log_head "layernorm $k --input-mean 1000 (exit $rc)"; echo "$out"; } >> "$LOG"
        # (a block size that cannot hold the row says skipped: kernel 6 at 32 threads; one OK line at least)
        if [ $rc -eq 0 ] && echo "$out" | grep -q "| OK"; then pass "layernorm $k at --input-mean 1000 passes"; else fail "layernorm $k at --input-mean 1000 (exit $rc)"; fi
    done
fi

# the dispatcher (14) with --cluster K forced (every cluster size): few rows take rung 12 (latency_split), 1031
# rows rung 11 (cluster_row_regs), or 9 where K does not fit them; odd shapes: rows that end inside a block, blocks
# of a cluster that hold nothing, rows beyond one block; with --input-mean 1000 too
check_one() { check_path layernorm_forward "$@"; }
# check_cl: a case that needs thread-block clusters (rungs 11 and 12 alone with CL > 1): checked on sm_90+; before,
# the rung must say it is skipped ('needs sm_90')
LN_SM=$(./layernorm_forward 14 --check -N 1 -C 8 2>&1 | head -n 1 | grep -Eo "\| sm_[0-9]+ \|" | tr -dc 0-9)
check_cl() {
    if [ "${LN_SM:-90}" -ge 90 ]; then check_one "$@"; return; fi
    local out
    out=$(./layernorm_forward "$@" --check 2>&1)
    if echo "$out" | grep -q "needs sm_90"; then pass "layernorm $* skipped before sm_90"; else fail "layernorm $*: not skipped before sm_90"; fi
}
CL_SHAPES="-N 7 -C 3000|-N 1031 -C 4104|-N 3 -C 12000|-N 2 -C 65536|-N 1 -C 131072"
[ "$QUICK" = 1 ] && CL_SHAPES="-N 7 -C 3000|-N 2 -C 65536"
IFS='|' read -r -a cl_shapes <<< "$CL_SHAPES"
for dt in fp32 bf16; do
    for shape in "${cl_shapes[@]}"; do
        for k in $(quick_ends 1 2 4 8 16); do
            check_one 14 --dtype $dt $shape --cluster $k
        done
        check_one 14 --dtype $dt $shape --cluster 8 --block-size 1024
    done
done
check_one 14 --dtype fp16 -N 7 -C 3000 --cluster 4
check_one 14 --dtype fp32 -N 64 -C 65536 --input-mean 1000
check_one 14 --dtype bf16 -N 64 -C 8192 --cluster 4 --input-mean 1000
# the same two rungs alone, at row counts the dispatcher does not give them: rung 12 with many rows, rung 11 with
# few, each with its own plan and with --cluster K (the sizes that fit it: 11 takes up to 8, 12 up to 16)
for dt in $DTYPES; do
    check_one 12 --dtype $dt -N 1031 -C 4104
    check_cl 12 --dtype $dt -N 300 -C 32768
    check_one 11 --dtype $dt -N 7 -C 3000
    check_cl 11 --dtype $dt -N 2 -C 65536
    check_cl 11 --dtype $dt -N 3 -C 40008
done
for shape in "${cl_shapes[@]}"; do
    [ "$shape" = "-N 1 -C 131072" ] && continue  # beyond 11's 8 blocks x 256 threads x 8 packs
    check_one 11 --dtype bf16 $shape --cluster 1
    for k in $(quick_ends 2 4 8); do check_cl 11 --dtype bf16 $shape --cluster $k; done
done
for shape in "-N 7 -C 3000" "-N 1031 -C 4104" "-N 3 -C 12000"; do
    [ "$shape" = "-N 3 -C 12000" ] || check_one 12 --dtype fp32 $shape --cluster 1  # 12000: more than 512 x 4 packs
    for k in $(quick_ends 2 4 8 16); do check_cl 12 --dtype fp32 $shape --cluster $k; done
done
check_cl 11 --dtype fp32 -N 1031 -C 4104 --block-size 512 --cluster 2
check_one 12 --dtype bf16 -N 5 -C 8200 --block-size 384
check_cl 11 --dtype fp32 -N 64 -C 65536 --input-mean 1000
check_cl 12 --dtype bf16 -N 64 -C 8192 --cluster 4 --input-mean 1000
[ "$QUICK" = 1 ] || for tool in memcheck racecheck synccheck; do
    sanitize_kernel $tool layernorm_forward 14 --cluster 4 -N 3 -C 3000
    sanitize_kernel $tool layernorm_forward 14 --cluster 4 -N 200 -C 3000
    sanitize_kernel $tool layernorm_forward 11 --cluster 4 -N 3 -C 3000
    sanitize_kernel $tool layernorm_forward 12 --cluster 4 -N 200 -C 3000
done

# rung 12 (latency_split) by the dispatcher's rule (rows x blocks a row <= SMs): one block a row, and clusters of
# 2 .. 16 blocks (fp32 C = 16384 .. 131072 at these rows), every dtype, odd C, the row's first element far from
# its mean in units of its standard deviation (the shifted sums' weak case)
LAT_SHAPES="-N 1 -C 4096|-N 3 -C 4104|-N 40 -C 16384|-N 20 -C 32768|-N 10 -C 65536|-N 1 -C 65536|-N 8 -C 128256|-N 1 -C 131072|-N 2 -C 8"
[ "$QUICK" = 1 ] && LAT_SHAPES="-N 3 -C 4104|-N 1 -C 65536|-N 8 -C 128256"
IFS='|' read -r -a lat_shapes <<< "$LAT_SHAPES"
for dt in $DTYPES; do
    for shape in "${lat_shapes[@]}"; do
        check_one 14 --dtype $dt $shape
    done
done
# the same kernel launched as a programmatic dependent launch (--hot --pdl) takes its other load order (w and b
# before the wait for the grid before, x after it)
PDL_SHAPES=("-N 3 -C 4104" "-N 1 -C 65536" "-N 8 -C 128256")
[ "$QUICK" = 1 ] && PDL_SHAPES=("-N 3 -C 4104" "-N 8 -C 128256")
for dt in fp32 bf16; do
    for shape in "${PDL_SHAPES[@]}"; do
        check_one 14 --dtype $dt $shape --hot --pdl
        if [ "$shape" = "-N 3 -C 4104" ]; then check_one 12 --dtype $dt $shape --hot --pdl; else check_cl 12 --dtype $dt $shape --hot --pdl; fi
    done
done
check_one 12 --dtype fp32 -N 1031 -C 4104 --hot --pdl
# check_refusals K WHAT ARGS1 ARGS2 TEXT1 TEXT2: kernel K says `skipped: TEXT1` at ARGS1 and `skipped: TEXT2` at
# ARGS2 (--check; both exit 0)
check_refusals() {
    local k=$1 what=$2 out rc
    out=$(./layernorm_forward $k --check $3 2>&1; ./layernorm_forward $k --check $4 2>&1); rc=$?
    { log_head "layernorm $k refusals (exit $rc)"; echo "$out"; } >> "$LOG"
    if [ $rc -eq 0 ] && echo "$out" | grep -qF "skipped: $5" && echo "$out" | grep -qF "skipped: $6"; then
        pass "layernorm $k says skipped for $what"
    else fail "layernorm $k refusals (exit $rc): $(echo "$out" | grep -E 'skipped|FAIL' | head -n 2 | tr '\n' ' ')"; fi
}
# rung 12 at each packs a thread (--packs 1, 2, 4: each its own instances), every dtype, every block size (a sweep of
# blocks a row): one row, a row over a cluster (fp32 4098 packs: 4 blocks of 512 x 2 packs), many rows; memcheck at
# 1 and 2 packs
PACK_SHAPES=("-N 1 -C 4096" "-N 2 -C 16392" "-N 1031 -C 1032")
[ "$QUICK" = 1 ] && PACK_SHAPES=("-N 2 -C 16392")
for packs in 1 2 4; do
    for dt in fp32 fp16 bf16; do
        for shape in "${PACK_SHAPES[@]}"; do check_one 12 --packs $packs --dtype $dt $shape; done
    done
done
sanitize_kernel memcheck layernorm_forward 12 --packs 1 --dtype bf16 -N 3 -C 4104
sanitize_kernel memcheck layernorm_forward 12 --packs 2 --dtype fp32 -N 5 -C 12296
check_one 12 --packs 1 --input-mean 1000 -N 64 -C 768
check_one 12 --packs 2 --input-mean 1000 -N 64 -C 768
# rung 12 at 2 packs a thread (--packs 2), each launch order its own instance. One block a row, clusters of 2 .. 16
# blocks (fp32 C = 65536 over 16 blocks of 512: the longest row it takes at 2), every dtype, many rows, --cluster
# forced, launched alone and chained (--hot --pdl), the row's first element far from its mean; its refusals (no
# 16-byte packs, fp32 rows over 65536) say skipped
SHAPES=("-N 1 -C 4096" "-N 3 -C 4104" "-N 20 -C 32768" "-N 1 -C 65536" "-N 2 -C 8" "-N 1031 -C 1032")
[ "$QUICK" = 1 ] && SHAPES=("-N 3 -C 4104" "-N 20 -C 32768" "-N 1031 -C 1032")
for dt in $DTYPES; do
    for shape in "${SHAPES[@]}"; do
        check_one 12 --packs 2 --dtype $dt $shape
    done
    check_one 12 --packs 2 --dtype $dt -N 3 -C 12296 --hot --pdl
done
check_one 12 --packs 2 --dtype bf16 -N 8 -C 128256 --hot --pdl
check_one 12 --packs 2 --dtype fp32 -N 4 -C 8192 --input-mean 1000 --input-std 0.01
for k in $(quick_ends 1 2 4 8 16); do check_cl 12 --packs 2 --dtype bf16 -N 3 -C 8184 --cluster $k; done  # 1023 packs: one block of 512 x 2 holds them
check_refusals "12 --packs 2" "rows without 16-byte packs and fp32 rows over 65536" "-N 3 -C 4097" "-N 1 -C 131072" \
    "needs 16-byte packs" "the row (32768 16-byte packs) fits no plan of <= 2 packs a thread"
# rung 12 at 1 pack a thread (--packs 1). One block a row, clusters of 2 .. 16 blocks (fp32 C = 32768 over 16 blocks
# of 512: the longest row it takes at 1; bf16 4096 over 8 blocks of 64), every dtype, many rows, launched alone and
# chained (--hot --pdl), the row's first element far from its mean; its refusals say skipped
SHAPES=("-N 1 -C 4096" "-N 3 -C 4104" "-N 20 -C 16384" "-N 1 -C 32768" "-N 2 -C 8" "-N 1031 -C 1032")
[ "$QUICK" = 1 ] && SHAPES=("-N 3 -C 4104" "-N 1 -C 32768" "-N 1031 -C 1032")
for dt in $DTYPES; do
    for shape in "${SHAPES[@]}"; do
        check_one 12 --packs 1 --dtype $dt $shape
    done
    check_one 12 --packs 1 --dtype $dt -N 3 -C 12296 --hot --pdl
    check_one 12 --packs 1 --dtype $dt -N 16 -C 4096 --block-size 64
done
check_one 12 --packs 1 --dtype fp32 -N 4 -C 8192 --input-mean 1000 --input-std 0.01
for k in $(quick_ends 1 2 4 8 16); do check_cl 12 --packs 1 --dtype bf16 -N 3 -C 4088 --cluster $k; done  # 511 packs: one block of 512 holds them
check_refusals "12 --packs 1" "rows without 16-byte packs and fp32 rows over 32768" "-N 3 -C 4097" "-N 1 -C 65536" \
    "needs 16-byte packs" "the row (16384 16-byte packs) fits no plan of <= 1 pack a thread"
[ "$QUICK" = 1 ] && sanitize_kernel memcheck layernorm_forward 12 --packs 1 --dtype bf16 -N 3 -C 4104
[ "$QUICK" = 1 ] || for tool in memcheck racecheck synccheck initcheck; do
    sanitize_kernel $tool layernorm_forward 12 --packs 1 --dtype bf16 -N 3 -C 4104
    sanitize_kernel $tool layernorm_forward 12 --packs 1 --dtype fp32 -N 2 -C 32768
done
# kernel 13 (odd_rows): rows that start off a 16-byte boundary (odd C), a head, packs and a tail; one block a row,
# clusters of 2 .. 16 blocks (fp32 C = 131075: the longest row it takes), rows shorter than a pack, every dtype,
# many rows (1031: more blocks than SMs), --cluster forced, a mean far from 0
SHAPES=("-N 1 -C 4097" "-N 3 -C 4099" "-N 64 -C 16385" "-N 1 -C 65537" "-N 5 -C 131075" "-N 7 -C 5"
        "-N 1031 -C 1001" "-N 3 -C 4097 --cluster 4")
[ "$QUICK" = 1 ] && SHAPES=("-N 3 -C 4099" "-N 5 -C 131075" "-N 7 -C 5" "-N 1031 -C 1001")
for dt in $DTYPES; do
    for shape in "${SHAPES[@]}"; do
        check_one 13 --dtype $dt $shape
    done
done
check_one 13 --dtype bf16 -N 3 -C 4099 --hot --pdl
check_one 13 --dtype fp32 -N 16 -C 8193 --input-mean 1000 --input-std 0.01
# kernel 13's two fp32 forms: more rows than the GPU holds at once, where w and b after the sum double the blocks
# an SM holds (512 threads: 1 against 3), load them after the sum (as 16 bits always do); a grid the GPU holds at
# once keeps them with x (fp32 rows of 16385 take a cluster: sm_90 on)
expect_path layernorm_forward 13 "; w, b after the sum" "needs sm_90" --dtype fp32 -N 300 -C 16385
expect_path layernorm_forward 13 "; w, b with x" "needs sm_90" --dtype fp32 -N 16 -C 16385
expect_path layernorm_forward 13 "; w, b after the sum" "; w, b after the sum" --dtype bf16 -N 16 -C 16385
[ "$QUICK" = 1 ] || for tool in memcheck racecheck synccheck initcheck; do
    sanitize_kernel $tool layernorm_forward 13 --dtype fp32 -N 300 -C 16385
    sanitize_kernel $tool layernorm_forward 13 --dtype fp32 -N 300 -C 65537
done
check_one 14 --dtype fp32 -N 4 -C 8192 --input-mean 1000 --input-std 0.01
check_one 14 --dtype bf16 -N 4 -C 65536 --input-mean 100
# The dispatcher's rule of regimes, a point well inside each region a problem reaches first (its features 1.5x or
# more from the region's bounds at 100-170 SMs); before sm_90 a rung whose plan needs a cluster refuses, and the
# region's next row (rung 9) runs.
# few rows of >= 90.5 16-byte packs: rung 12. A single long row (fp32 65536: 4 packs a thread over 8 blocks); one row
# of 1024 packs (1 pack a thread over clusters; before sm_90 2 packs in one block); rows of >= 2048 packs at more
# than 5.7 rows an SM: rung 11 (rung 9 before sm_90)
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 9 block_reread" -N 1 -C 65536
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype fp32 -N 1 -C 4096
expect_path layernorm_forward 14 "rung 11 cluster_row_regs" "rung 9 block_reread" --dtype fp32 -N 1536 -C 8192
[ "$QUICK" = 1 ] || for tool in memcheck racecheck synccheck initcheck; do
    sanitize_kernel $tool layernorm_forward 14 -N 1 -C 65536
    sanitize_kernel $tool layernorm_forward 14 --dtype bf16 -N 3 -C 4104
    sanitize_kernel $tool layernorm_forward 12 --dtype bf16 -N 1031 -C 4104
    sanitize_kernel $tool layernorm_forward 12 --packs 2 --dtype bf16 -N 3 -C 4104
    sanitize_kernel $tool layernorm_forward 12 --packs 2 --dtype fp32 -N 2 -C 65536
done

# hot timing (inputs in L2, launches replayed from a CUDA graph) and programmatic dependent launch: the
# dispatcher and the copy time per launch, kernel 0 (cuDNN) is captured too, and --pdl skips it
tmp=build/suite_layernorm_hot
rm -f $tmp.csv
out=$(./layernorm_forward 0,14 -N 4 -C 4096 --hot --repeats 5 --csv $tmp.csv 2>&1; ./layernorm_forward 0,14 -N 4 -C 4096 --hot --pdl --repeats 5 --csv $tmp.csv 2>&1); rc=$?
{ log_head "layernorm hot timing (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && echo "$out" | grep -q "hot, graph replay, PDL" && grep -q ",14,dispatch,fp32,4x4096:hot,.*,OK," $tmp.csv \
   && grep -q ",14,dispatch,fp32,4x4096:hot:pdl,.*,OK," $tmp.csv && grep -q ",0,cudnn,fp32,4x4096:hot:pdl,.*,SKIP," $tmp.csv; then
    pass "layernorm --hot and --hot --pdl: per-launch times, CSV shapes 4x4096:hot and 4x4096:hot:pdl, cuDNN skipped under --pdl"
else fail "layernorm --hot / --pdl (exit $rc): $(echo "$out" | grep -E 'FAIL|error|skipped' | head -n 2 | tr '\n' ' ')"; fi

# the dispatcher at 16-bit C = 65536 with hundreds of rows: rung 12 as a cluster of 8 blocks of 256 threads a row
# (in its packed form where more clusters than fit at once); the re-read kernel (9) before; --input-mean 1000 too
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 9 block_reread" --dtype bf16 -N 200 -C 65536
check_one 14 --dtype fp16 -N 300 -C 65536 --input-mean 1000
# many rows of >= 256 packs (here 512, 248 rows an SM on 132 SMs): rung 12
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype bf16 -N 32768 -C 4096
# few rows of 128 packs: rung 12 at 1 pack a thread, one block a row
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype bf16 -N 16 -C 1024
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype fp32 -N 16 -C 512
# rows of < 64 packs at more than 5.7 rows an SM: rung 7 (here 65536 rows of 32 packs, and 1024 of them hot and
# chained by PDL)
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype bf16 -N 65536 -C 256
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype bf16 -N 1024 -C 256 --hot --pdl
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 1024 -C 128 --hot --pdl
# rows without 16-byte packs: rung 13 (here one block a row)
expect_path layernorm_forward 14 "rung 13 odd_rows" "rung 13 odd_rows" --dtype fp32 -N 1024 -C 4097
# the rule's other rows, a shape well inside each (on 100-170 SMs; the rung each runs is its row's in
# layernorm_forward.cu); before sm_90 a row past one block runs rung 9
expect_path layernorm_forward 14 "rung 6 block_row_regs" "rung 6 block_row_regs" --dtype bf16 -N 1 -C 65
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype bf16 -N 1 -C 256
expect_path layernorm_forward 14 "rung 13 odd_rows" "rung 13 odd_rows" --dtype bf16 -N 512 -C 65
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 64 -C 64
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype fp32 -N 1 -C 1024
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype bf16 -N 4096 -C 64
expect_path layernorm_forward 14 "rung 12 latency_split" "rung " --dtype fp32 -N 1 -C 131072
expect_path layernorm_forward 14 "rung 9 block_reread" "rung 9 block_reread" --dtype fp32 -N 768 -C 131072
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype bf16 -N 4096 -C 4096
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype bf16 -N 1 -C 98304
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 9 block_reread" --dtype bf16 -N 1 -C 131072
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 9 block_reread" --dtype bf16 -N 64 -C 131072
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 9 block_reread" --dtype bf16 -N 1 -C 262144
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 1 -C 64
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 64 -C 512
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype fp32 -N 512 -C 1024
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 9 block_reread" --dtype fp32 -N 256 -C 65536
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 2048 -C 512
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 8192 -C 65
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 4096 -C 512
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 16384 -C 512
expect_path layernorm_forward 14 "rung 11 cluster_row_regs" "rung 9 block_reread" --dtype fp32 -N 8192 -C 8192
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype bf16 -N 1536 -C 4096
expect_path layernorm_forward 14 "rung 11 cluster_row_regs" "rung 11 cluster_row_regs" --dtype bf16 -N 8192 -C 16384

# rung 10 (subwarp_persistent, C <= 128 16-byte packs), alone and through the dispatcher: many passes of the
# resident grid over the rows, a last pass that ends inside a block, every lanes-per-row width (C = 4 .. 512),
# other block sizes; 16-bit rows (w and b kept in registers) up to C = 1024; and C = 768, which the dispatcher
# keeps off rung 10
SHAPES=("-N 100003 -C 500" "-N 65537 -C 32" "-N 30001 -C 4" "-N 50001 -C 512 --block-size 128"
        "-N 40000 -C 256 --block-size 64" "-N 20011 -C 128 --input-mean 1000" "-N 20011 -C 64 --block-size 1024")
[ "$QUICK" = 1 ] && SHAPES=("-N 100003 -C 500" "-N 30001 -C 4" "-N 50001 -C 512 --block-size 128"
                            "-N 20011 -C 128 --input-mean 1000")
for k in 10 14; do
    for shape in "${SHAPES[@]}"; do check_one $k --dtype fp32 $shape; done
done
check_one 10 --dtype fp32 -N 7 -C 8 --block-size 32
SHAPES=("-N 100003 -C 256" "-N 65537 -C 32" "-N 7 -C 8" "-N 1031 -C 1000" "-N 20011 -C 1024 --block-size 256"
        "-N 20011 -C 128 --input-mean 1000")
[ "$QUICK" = 1 ] && SHAPES=("-N 100003 -C 256" "-N 7 -C 8" "-N 20011 -C 1024 --block-size 256")
for dt in $DTYPES16; do
    for shape in "${SHAPES[@]}"; do
        check_one 10 --dtype $dt $shape
    done
done
check_one 10 --dtype bf16 -N 64 -C 256 --hot --pdl
check_one 14 --dtype fp32 -N 100003 -C 768
check_one 14 --dtype bf16 -N 100003 -C 512
# fp32 100003x128 through the dispatcher: rows of < 90.5 packs, many an SM: rung 7
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 100003 -C 128
# the rule's other rows (each row a problem reaches first has a check; tests/test_suite_paths.py)
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype bf16 -N 32 -C 256
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype fp16 -N 300 -C 384
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype fp32 -N 12 -C 200
expect_path layernorm_forward 14 "rung 6 block_row_regs" "rung 6 block_row_regs" --dtype fp32 -N 64 -C 601
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 2048 -C 201
expect_path layernorm_forward 14 "rung 13 odd_rows" "rung 13 odd_rows" --dtype fp32 -N 2048 -C 601
expect_path layernorm_forward 14 "rung 13 odd_rows" "rung 13 odd_rows" --dtype fp32 -N 8 -C 129
expect_path layernorm_forward 14 "rung 13 odd_rows" "rung 13 odd_rows" --dtype fp32 -N 64 -C 4097
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype fp32 -N 8192 -C 2048
expect_path layernorm_forward 14 "rung 11 cluster_row_regs" "rung 9 block_reread" --dtype fp32 -N 2048 -C 6144
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 12 latency_split" --dtype bf16 -N 400 -C 1024
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype bf16 -N 16384 -C 1024
expect_path layernorm_forward 14 "rung 12 latency_split" "rung 9 block_reread" --dtype bf16 -N 512 -C 32768
expect_path layernorm_forward 14 "rung 9 block_reread" "rung 9 block_reread" --dtype fp32 -N 4 -C 262144
expect_path layernorm_forward 14 "rung 7 subwarp_regs_vec" "rung 7 subwarp_regs_vec" --dtype fp32 -N 180000 -C 256
# --block-size plan: the rung the dispatcher picks, alone at the dispatcher's block (a decode step, a prefill, odd C)
expect_at_plan layernorm_forward 14 --dtype bf16 -N 4 -C 4096 --hot
expect_at_plan layernorm_forward 14 --dtype fp32 -N 8192 -C 768
expect_at_plan layernorm_forward 14 --dtype bf16 -N 300 -C 5123
[ "$QUICK" = 1 ] || for tool in memcheck racecheck synccheck; do
    sanitize_kernel $tool layernorm_forward 14 -N 5003 -C 256
    sanitize_kernel $tool layernorm_forward 10 -N 5003 -C 256 --block-size 128
    sanitize_kernel $tool layernorm_forward 10 --dtype bf16 -N 5003 -C 1000 --block-size 128
done
