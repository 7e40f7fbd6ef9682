# RMSNorm's part of the GPU suite (sourced by tests/gpu_suite.sh, which defines check_all, sanitize,
# planted, pass/fail, $QUICK and $LOG). Each check_all is one process that validates every kernel at every
# block size. The largest points (1031 x 65536, the default QK-norm view of 4096 tokens) dominate the
# runtime; the full matrix is meant to take about two minutes on an H100 (not yet measured).
# Quick mode: every kernel in every dtype and variant at a few odd shapes (cuDNN, kernel 0, runs plain rows: at
# one of them, its plan costs seconds a process), every dispatcher path, and the kernels' own sections at fp32
# and bf16 (DTYPES; fp16 runs the 16-bit code with its own conversions, which check_all covers), at fewer shapes
# and cluster sizes (quick_ends).
[ "${SUITE_STAGE:-}" = alone ] && return 0  # (no checks that compare measured times)
DTYPES="fp32 fp16 bf16"
[ "$QUICK" = 1 ] && DTYPES="fp32 bf16"
ROWS="1 7 1031"
COLS="1 3 31 33 127 1000 4097 65536"
FUSED_ROWS="7 1031"
FUSED_COLS="1 33 1000 4097 65536"
OFFSET_COLS="3 1000 4097"
QK_TOKENS="7 1031"
QK_VIEWS=("--heads 3 --head-dim 64 --row-stride 200"   # stride not a multiple of H*D, 16-byte packs still fit
          "--heads 5 --head-dim 33 --row-stride 170"   # odd head_dim: scalar packs
          "--heads 2 --head-dim 256 --row-stride 513"  # odd stride: scalar packs although D = 256
          "--heads 4 --head-dim 96")                   # default stride 3*H*D
if [ "$QUICK" = 1 ]; then
    ROWS="7"; COLS="1000"; FUSED_ROWS="7"; FUSED_COLS="33 4097"; OFFSET_COLS="1000"; QK_TOKENS="7"
    QK_VIEWS=("--heads 3 --head-dim 64 --row-stride 200" "--heads 5 --head-dim 33 --row-stride 170")
fi

for dt in fp32 fp16 bf16; do
    for c in $COLS; do
        for r in $ROWS; do
            [ "$c" = 65536 ] && [ "$r" = 1031 ] && [ "$dt" = fp16 ] && continue  # fp32 and bf16 cover the largest point
            check_all rmsnorm_forward --dtype $dt -N $r -C $c
        done
    done
    if [ "$QUICK" = 1 ]; then  # plain rows without cuDNN: an odd C at one row, a short odd C
        check_ours rmsnorm_forward --dtype $dt -N 1 -C 4097
        check_ours rmsnorm_forward --dtype $dt -N 7 -C 33
    fi
    # --fused-add: the residual is an output too (restored before every validation launch)
    for c in $FUSED_COLS; do
        for r in $FUSED_ROWS; do
            [ "$c" = 65536 ] && [ "$r" = 1031 ] && continue
            check_all rmsnorm_forward --dtype $dt -N $r -C $c --fused-add
        done
    done
    for c in $OFFSET_COLS; do
        check_all rmsnorm_forward --dtype $dt -N 7 -C $c --weight-offset 1
    done
    check_all rmsnorm_forward --dtype $dt -N 7 -C 4096 --fused-add --weight-offset -0.5
    # QK-norm: the strided [tokens, H, D] view
    for view in "${QK_VIEWS[@]}"; do
        for t in $QK_TOKENS; do
            check_all rmsnorm_forward --dtype $dt -N $t $view
        done
    done
    [ "$QUICK" = 1 ] || check_all rmsnorm_forward --dtype $dt --heads 32 --head-dim 128  # 4096 tokens, q inside qkv
    check_all rmsnorm_forward --dtype $dt -N 9 --heads 8 --head-dim 128 --weight-offset 1
done
# no mean subtraction, no cancellation: every kernel passes with inputs far from zero
check_all rmsnorm_forward --dtype fp32 -N 64 -C 768 --input-mean 1000

# compute-sanitizer; quick mode: one memcheck pass (every kernel but cuDNN's runs at fp32 7 x 1000), and kernel 8 at an odd
# C of 16-byte packs (one block a row) and at a row over a cluster of 16 blocks
sanitize_kernel memcheck rmsnorm_forward 8 --dtype bf16 -N 3 -C 4104
sanitize_kernel memcheck rmsnorm_forward 8 --dtype fp32 -N 1 -C 65536
if [ "$QUICK" = 1 ]; then
    sanitize memcheck rmsnorm_forward --dtype fp32 -N 7 -C 1000
else
    for tool in memcheck racecheck synccheck initcheck; do
        for shape in "--dtype fp32 -N 7 -C 1000" "--dtype bf16 -N 3 -C 4097 --fused-add" \
                     "--dtype fp16 -N 5 --heads 3 --head-dim 64 --row-stride 200"; do
            sanitize $tool rmsnorm_forward $shape
        done
    done
fi

# planted bugs live in kernel 5; bug 4 (residual not written back) needs --fused-add, which catches all four.
# -C 1000: the register path at every block size; -C 4097 at 256 threads: the shared-memory path.
planted rmsnorm_forward 5 -N 7 -C 1000 --fused-add
planted rmsnorm_forward 5 -N 3 -C 4097 --fused-add --block-size 256

# the dispatcher (12) says which rung ran: one problem well inside each row of its rule of regimes that a problem can
# reach (packs a row and rows an SM at least 1.5x from the row's edges, so that a GPU of 100-170 SMs lands in the
# same row); before sm_90 the cluster rungs (7, 8 over several blocks, 10) refuse and a later row runs
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype bf16 -N 512 -C 4096 --fused-add
expect_path rmsnorm_forward 12 "rung 4 block2d_vec" "rung 4 block2d_vec" --dtype bf16 -N 8192 -C 4096 --fused-add
expect_path rmsnorm_forward 12 "rung 7 cluster_dsmem" "rung 4 block2d_vec" --dtype fp32 -N 16 -C 65536 --fused-add
expect_path rmsnorm_forward 12 "rung 9 odd_rows" "rung 9 odd_rows" --dtype fp32 -N 64 -C 4097
expect_path rmsnorm_forward 12 "rung 4 block2d_vec" "rung 4 block2d_vec" --dtype fp32 -N 4 -C 262147
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 16 -C 512 --hot --pdl
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 64 -C 4096
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 4 block2d_vec" --dtype fp32 -N 64 -C 16384
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype bf16 -N 512 \
    -C 128 --hot
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype bf16 -N 512 -C 128
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype fp32 -N 512 -C 64
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 512 -C 1024
expect_path rmsnorm_forward 12 "rung 6 subwarp_rows" "rung 6 subwarp_rows" --dtype bf16 -N 32768 -C 512
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 32768 -C 2048
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype bf16 -N 512 -C 16384
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype bf16 -N 8192 -C 8192
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 8192 -C 8192
expect_path rmsnorm_forward 12 "rung 10 cluster_cp_async" "rung 4 block2d_vec" --dtype bf16 -N 512 -C 131072
# the rule's other rows, a shape well inside each (on 100-170 SMs; the rung each runs is its row's in
# rmsnorm_forward.cu): decode steps, few rows, many rows, cold and captured
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype fp32 -N 1 -C 64
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype fp32 -N 1 -C 65536
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 1 -C 65536
expect_path rmsnorm_forward 12 "rung 10 cluster_cp_async" "rung " --dtype fp32 -N 1 -C 262144
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 1 -C 256 --hot
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung " --dtype fp32 -N 16 -C 78848
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 8 -C 64 --hot
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype fp32 -N 8 -C 131072
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype bf16 -N 512 -C 64 --hot
expect_path rmsnorm_forward 12 "rung 6 subwarp_rows" "rung 6 subwarp_rows" --dtype fp32 -N 4096 -C 128
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 512 -C 4096
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 512 -C 4096
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype bf16 -N 4096 -C 16384 --hot
expect_path rmsnorm_forward 12 "rung 10 cluster_cp_async" "rung " --dtype fp32 -N 512 -C 32768
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung " --dtype fp32 -N 512 -C 2048 --hot
expect_path rmsnorm_forward 12 "rung 8 latency_split" "rung 8 latency_split" --dtype fp32 -N 4096 -C 2048
# the fused add: one row, tens of rows, thousands; then captured launches of long rows; before sm_90 a cluster rung's
# row runs another rung
expect_path rmsnorm_forward 12 "rung 7 cluster_dsmem" "rung " --dtype fp32 -N 1 -C 32768 --fused-add
expect_path rmsnorm_forward 12 "rung 7 cluster_dsmem" "rung " --dtype fp32 -N 64 -C 65536 --fused-add
expect_path rmsnorm_forward 12 "rung 4 block2d_vec" "rung 4 block2d_vec" --dtype bf16 -N 256 -C 98304 --fused-add
expect_path rmsnorm_forward 12 "rung 4 block2d_vec" "rung 4 block2d_vec" --dtype fp32 -N 256 -C 49152 --fused-add
expect_path rmsnorm_forward 12 "rung 6 subwarp_rows" "rung 6 subwarp_rows" --dtype fp32 -N 8192 -C 64 --fused-add
# the fused add's rows by packs a row and rows an SM: decode-sized, a few rows an SM, many; odd rows (no 16-byte packs)
# beside aligned ones; captured launches
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype bf16 -N 8 -C 4096 --fused-add
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype bf16 -N 256 -C 256 --fused-add
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype bf16 -N 256 -C 1536 --fused-add
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 8192 -C 801 --fused-add
expect_path rmsnorm_forward 12 "rung 6 subwarp_rows" "rung 6 subwarp_rows" --dtype fp32 -N 8192 -C 800 --fused-add
expect_path rmsnorm_forward 12 "rung 4 block2d_vec" "rung 4 block2d_vec" --dtype fp32 -N 64 -C 6001 --fused-add
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 64 -C 6001 --fused-add --hot
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 64 -C 65 --fused-add
expect_path rmsnorm_forward 12 "rung 6 subwarp_rows" "rung 6 subwarp_rows" --dtype fp32 -N 8192 -C 65 --fused-add
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 8 -C 1001 --fused-add
expect_path rmsnorm_forward 12 "rung 7 cluster_dsmem" "rung 4 block2d_vec" --dtype fp32 -N 8 -C 8191 --fused-add
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype bf16 -N 256 -C 1001 --fused-add
expect_path rmsnorm_forward 12 "rung 4 block2d_vec" "rung 4 block2d_vec" --dtype bf16 -N 4096 -C 1001 --fused-add
expect_path rmsnorm_forward 12 "rung 6 subwarp_rows" "rung 6 subwarp_rows" --dtype fp32 -N 4096 -C 201 --fused-add
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 4096 -C 801 --fused-add
expect_path rmsnorm_forward 12 "rung 6 subwarp_rows" "rung 6 subwarp_rows" --dtype fp32 -N 8192 -C 129
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 64 -C 6000 --fused-add
expect_path rmsnorm_forward 12 "rung 5 block_row_cache" "rung 5 block_row_cache" --dtype fp32 -N 64 -C 6000 --fused-add --hot
expect_path rmsnorm_forward 12 "rung 7 cluster_dsmem" "rung 4 block2d_vec" --dtype fp32 -N 64 -C 65536 --fused-add --hot
expect_path rmsnorm_forward 12 "rung 10 cluster_cp_async" "rung " --dtype fp32 -N 512 -C 32768 --hot
expect_path rmsnorm_forward 12 "rung 10 cluster_cp_async" "rung " --dtype fp32 -N 512 -C 131072 --hot
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype bf16 -N 64 --heads 32 \
    --head-dim 128
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype bf16 -N 4096 --heads 32 --head-dim 128
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype fp32 -N 64 --heads 32 \
    --head-dim 128
expect_path rmsnorm_forward 12 "rung 4 block2d_vec" "rung 4 block2d_vec" --dtype fp16 -N 5 --heads 3 --head-dim 64 \
    --row-stride 201
# the QK view's rows of many heads (the rule's qk row: rung 11 at every row count)
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype fp32 -N 1024 --heads 8 --head-dim 32
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype bf16 -N 1024 --heads 8 --head-dim 128
expect_path rmsnorm_forward 12 "rung 11 subwarp_persistent" "rung 11 subwarp_persistent" --dtype bf16 -N 2048 --heads 32 --head-dim 128
# --block-size plan: the rung the dispatcher picks, alone at the dispatcher's block (few rows, the fused add, many)
expect_at_plan rmsnorm_forward 12 --dtype bf16 -N 16 -C 2560
expect_at_plan rmsnorm_forward 12 --dtype bf16 -N 2048 -C 4096 --fused-add
expect_at_plan rmsnorm_forward 12 --dtype fp16 -N 65536 -C 264
# kernel 8's rows: one block a row, clusters of 2 .. 16 blocks, every dtype, odd C; --fused-add and the QK-norm view
# at few rows take the other kernels (and kernel 8 says skipped). Quick mode: the dispatcher alone (every shape is in
# check_all's kernel 8 otherwise).
check_disp() { check_path rmsnorm_forward 12 "$@"; }
SHAPES=("-N 1 -C 4096" "-N 3 -C 4104" "-N 40 -C 16384" "-N 20 -C 32768" "-N 10 -C 65536" "-N 1 -C 65536"
        "-N 8 -C 128256" "-N 1 -C 131072" "-N 2 -C 8" "-N 3 -C 4104 --weight-offset 1" "-N 3 -C 4104 --fused-add"
        "-N 2 --heads 4 --head-dim 128")
[ "$QUICK" = 1 ] && SHAPES=("-N 3 -C 4104" "-N 40 -C 16384" "-N 8 -C 128256" "-N 2 -C 8" "-N 3 -C 4104 --fused-add"
                            "-N 2 --heads 4 --head-dim 128")
for dt in $DTYPES; do
    for shape in "${SHAPES[@]}"; do
        if [ "$QUICK" = 1 ]; then check_disp --dtype $dt $shape; else check_all rmsnorm_forward --dtype $dt $shape; fi
    done
done
# --hot: the launches are captured in a graph and validated through one replay of a captured launch; fp32 4x8192
# (2048 packs a row) is in the plain rows of rung 8: at 2 packs a thread a row over 8 blocks of 128 threads; before
# sm_90 at 4, in one block of 512
out=$(./rmsnorm_forward 12 -N 4 -C 8192 --hot --repeats 5 2>&1); rc=$?
{ log_head "rmsnorm_forward 12 -N 4 -C 8192 --hot (exit $rc)"; echo "$out"; } >> "$LOG"
if before_sm90 "$(echo "$out" | head -n 1)"; then want="path rung 8 latency_split: a row over 1 block"; else want="path rung 8 latency_split: a row over 8 blocks of 128 threads"; fi
if [ $rc -eq 0 ] && echo "$out" | grep -q "$want" && ! echo "$out" | grep -q "| FAIL"; then
    pass "rmsnorm 12 --hot: a captured launch runs its regime's rung, validated ('$want')"
else fail "rmsnorm 12 --hot (exit $rc), wanted '$want': $(echo "$out" | grep -E 'path|FAIL|skipped' | head -n 2 | tr '\n' ' ')"; fi
# kernel 9 (odd_rows): rows that start off a 16-byte boundary (odd C), a head, packs and a tail; one block a row,
# clusters of 2 .. 16 blocks (fp32 C = 131075: the longest row it takes), rows shorter than a pack, every dtype,
# and at many rows (1031: more blocks than SMs)
SHAPES=("-N 1 -C 4097" "-N 3 -C 4099" "-N 64 -C 16385" "-N 1 -C 65537" "-N 5 -C 131075" "-N 7 -C 5"
        "-N 1031 -C 1001" "-N 2 -C 4097 --weight-offset 1")
[ "$QUICK" = 1 ] && SHAPES=("-N 3 -C 4099" "-N 5 -C 131075" "-N 7 -C 5" "-N 1031 -C 1001")
for dt in $DTYPES; do
    for shape in "${SHAPES[@]}"; do
        check_path rmsnorm_forward 9 --dtype $dt $shape
    done
done
check_path rmsnorm_forward 9 --dtype bf16 -N 3 -C 4099 --hot --pdl
# kernel 9's two forms: more rows than the GPU holds at once, where w after the sum doubles the blocks an SM holds
# (bf16 at 512 threads: 1 against 2), load w after the sum; fp32 (2 blocks either way) and a grid the GPU holds at
# once keep w with x (fp32 rows of 16385 take a cluster: sm_90 on)
expect_path rmsnorm_forward 9 "; w after the sum" "; w after the sum" --dtype bf16 -N 300 -C 16385
expect_path rmsnorm_forward 9 "; w with x" "needs sm_90" --dtype fp32 -N 300 -C 16385
expect_path rmsnorm_forward 9 "; w with x" "; w with x" --dtype bf16 -N 16 -C 16385
check_path rmsnorm_forward 9 --dtype fp32 -N 16 -C 8193 --input-mean 1000
# kernel 10 (cluster_cp_async): the row's slices copied into shared memory; its rule (one block up to 64 KB of a
# row, then 2-16 blocks) and every cluster size forced, slices that do not divide the row (the last block short,
# blocks with nothing: fp32 C = 8 over 16 blocks), the QK view, every dtype; its refusals (fused add, no 16-byte
# packs) say skipped
SHAPES=("-N 1 -C 65536" "-N 7 -C 131072" "-N 1031 -C 4104" "-N 3 -C 40008 --weight-offset 1")
[ "$QUICK" = 1 ] && SHAPES=("-N 7 -C 131072" "-N 1031 -C 4104")
for dt in $DTYPES; do
    for shape in "${SHAPES[@]}"; do
        check_path rmsnorm_forward 10 --dtype $dt $shape
    done
    for k in $(quick_ends 1 2 4 8 16); do check_path rmsnorm_forward 10 --dtype $dt -N 3 -C 12296 --cluster $k; done
    check_path rmsnorm_forward 10 --dtype $dt -N 2 -C 8 --cluster 16
    check_path rmsnorm_forward 10 --dtype $dt -N 7 --heads 4 --head-dim 128
done
check_path rmsnorm_forward 10 --dtype bf16 -N 3 -C 65536 --hot --pdl
check_path rmsnorm_forward 10 --dtype fp32 -N 16 -C 32768 --input-mean 1000
out=$(./rmsnorm_forward 10 --check -N 3 -C 4096 --fused-add 2>&1; ./rmsnorm_forward 10 --check -N 3 -C 4097 2>&1); rc=$?
{ log_head "rmsnorm 10 refusals (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c 'skipped: no --fused-add')" -ge 1 ] && echo "$out" | grep -q "skipped: needs 16-byte packs"; then
    pass "rmsnorm 10 says skipped for --fused-add and for rows without 16-byte packs"
else fail "rmsnorm 10 refusals (exit $rc): $(echo "$out" | grep -E 'skipped|FAIL' | head -n 2 | tr '\n' ' ')"; fi
# kernel 11 (subwarp_persistent): resident blocks walking the rows. Fewer rows than one pass of the grid, many
# passes with a short last one (100003 rows), rows from 1 to 4 packs a lane, the QK view, the weight offset,
# every dtype, inputs far from zero, launched hot with --pdl; its refusals (fused add, no 16-byte packs, rows of
# more than 4 packs a lane) say skipped
SHAPES=("-N 1 -C 128" "-N 7 -C 512" "-N 100003 -C 256" "-N 1031 -C 32" "-N 3 -C 8"
        "-N 7 --heads 3 --head-dim 64 --row-stride 200" "-N 33 -C 256 --weight-offset 1")
[ "$QUICK" = 1 ] && SHAPES=("-N 1 -C 128" "-N 100003 -C 256" "-N 3 -C 8" "-N 7 --heads 3 --head-dim 64 --row-stride 200")
for dt in $DTYPES; do
    for shape in "${SHAPES[@]}"; do
        check_path rmsnorm_forward 11 --dtype $dt $shape
    done
done
check_path rmsnorm_forward 11 --dtype bf16 -N 5000 -C 1024
check_path rmsnorm_forward 11 --dtype fp32 -N 4096 -C 512 --input-mean 1000
check_path rmsnorm_forward 11 --dtype bf16 -N 64 -C 768 --hot --pdl
out=$(./rmsnorm_forward 11 --check -N 3 -C 256 --fused-add 2>&1; ./rmsnorm_forward 11 --check -N 3 -C 257 2>&1;
      ./rmsnorm_forward 11 --check -N 3 -C 1024 2>&1); rc=$?
{ log_head "rmsnorm 11 refusals (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && echo "$out" | grep -q "skipped: no fused add" && echo "$out" | grep -q "skipped: needs 16-byte packs" &&
   echo "$out" | grep -q "skipped: row of 1024 is more than 32 lanes x 4 packs"; then
    pass "rmsnorm 11 says skipped for --fused-add, rows without 16-byte packs and fp32 rows over 512"
else fail "rmsnorm 11 refusals (exit $rc): $(echo "$out" | grep -E 'skipped|FAIL' | head -n 3 | tr '\n' ' ')"; fi
[ "$QUICK" = 1 ] && sanitize_kernel memcheck rmsnorm_forward 11 --dtype bf16 -N 1031 -C 1000
# kernel 6 loads w with x where a lane holds at most 4 packs (16-byte or narrower, with the fused add too), else
# after the sum (a warp's row of up to 8 packs)
sanitize_shapes rmsnorm_forward 6 "--dtype bf16 -N 1031 -C 1000 --fused-add" "--dtype fp32 -N 7 -C 500" \
    "--dtype fp16 -N 33 -C 130" "--dtype bf16 -N 5 -C 2048"
# kernel 8 alone runs at any row count (more rows than SMs: the dispatcher would not pick it)
check_path rmsnorm_forward 8 --dtype bf16 -N 1031 -C 4104
# launched as a programmatic dependent launch (--hot --pdl): kernel 8's other load order (w before the wait for
# the grid before, x after it), through the dispatcher and alone
PDL_SHAPES=("-N 3 -C 4104" "-N 1 -C 65536" "-N 8 -C 128256")
[ "$QUICK" = 1 ] && PDL_SHAPES=("-N 3 -C 4104" "-N 8 -C 128256")
for dt in fp32 bf16; do
    for shape in "${PDL_SHAPES[@]}"; do check_disp --dtype $dt $shape --hot --pdl; done
done
check_path rmsnorm_forward 8 --dtype bf16 -N 3 -C 4104 --hot --pdl
# kernel 8 at each packs a thread (--packs 2: each launch order its own instance; 4: the order an argument), every
# dtype, at a few shapes: one block a row, clusters of 2 .. 16 blocks (fp32 C = 65536 over 16 blocks of 512 x 2: the
# longest row 2 packs take), a pack or two a thread, many rows, the weight offset; launched alone and chained
# (--hot --pdl); at --packs 2 its refusals (fused add, the QK view, no 16-byte packs, fp32 rows over 65536) say skipped
SHAPES=("-N 1 -C 4096" "-N 3 -C 4104" "-N 20 -C 32768" "-N 1 -C 65536" "-N 2 -C 8" "-N 1031 -C 1032"
        "-N 3 -C 4104 --weight-offset 1")
[ "$QUICK" = 1 ] && SHAPES=("-N 3 -C 4104" "-N 20 -C 32768" "-N 1031 -C 1032")
for dt in $DTYPES; do
    for packs in 2 4; do
        for shape in "${SHAPES[@]}"; do
            check_path rmsnorm_forward 8 --packs $packs --dtype $dt $shape
        done
        check_path rmsnorm_forward 8 --packs $packs --dtype $dt -N 3 -C 12296 --hot --pdl
    done
done
check_path rmsnorm_forward 8 --packs 2 --dtype bf16 -N 8 -C 128256 --hot --pdl
check_path rmsnorm_forward 8 --packs 2 --dtype fp32 -N 16 -C 8192 --input-mean 1000
for k in $(quick_ends 1 2 4 8 16); do check_path rmsnorm_forward 8 --packs 2 --dtype bf16 -N 3 -C 8184 --cluster $k; done  # 1023 packs: one block of 512 x 2 holds them
out=$(./rmsnorm_forward 8 --packs 2 --check -N 3 -C 4096 --fused-add 2>&1; ./rmsnorm_forward 8 --packs 2 --check -N 3 -C 4097 2>&1;
      ./rmsnorm_forward 8 --packs 2 --check -N 3 --heads 4 --head-dim 128 2>&1; ./rmsnorm_forward 8 --packs 2 --check -N 1 -C 131072 2>&1); rc=$?
{ log_head "rmsnorm 8 --packs 2 refusals (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && echo "$out" | grep -q "skipped: plain rows only: no --fused-add" &&
   echo "$out" | grep -q "skipped: needs 16-byte packs" && echo "$out" | grep -q "skipped: plain rows only: no QK-norm view" &&
   echo "$out" | grep -q "skipped: row of 131072 exceeds 16 blocks x 512 threads x 2 packs of 4"; then
    pass "rmsnorm 8 --packs 2 says skipped for --fused-add, the QK view, rows without 16-byte packs and fp32 rows over 65536"
else fail "rmsnorm 8 --packs 2 refusals (exit $rc): $(echo "$out" | grep -E 'skipped|FAIL' | head -n 4 | tr '\n' ' ')"; fi
sanitize_kernel memcheck rmsnorm_forward 8 --packs 2 --dtype bf16 -N 3 -C 4104
[ "$QUICK" = 1 ] || for tool in memcheck racecheck synccheck initcheck; do
    sanitize_kernel $tool rmsnorm_forward 12 -N 1 -C 65536
    sanitize_kernel $tool rmsnorm_forward 12 --dtype bf16 -N 3 -C 4104
    sanitize_kernel $tool rmsnorm_forward 8 --packs 2 --dtype fp32 -N 2 -C 65536
    sanitize_kernel $tool rmsnorm_forward 8 --packs 4 --dtype bf16 -N 3 -C 4104
    sanitize_kernel $tool rmsnorm_forward 11 --dtype bf16 -N 1031 -C 1000
    sanitize_kernel $tool rmsnorm_forward 11 --dtype fp32 -N 7 --heads 3 --head-dim 64 --row-stride 200
    sanitize_kernel $tool rmsnorm_forward 10 --dtype bf16 -N 3 -C 4104 --cluster 4
    sanitize_kernel $tool rmsnorm_forward 10 --dtype fp32 -N 5 -C 40000 --cluster 16
    sanitize_kernel $tool rmsnorm_forward 8 --dtype fp16 -N 1031 -C 1032
    sanitize_kernel $tool rmsnorm_forward 9 --dtype bf16 -N 5 -C 40001
    sanitize_kernel $tool rmsnorm_forward 9 --dtype bf16 -N 1031 -C 16385
    sanitize_kernel $tool rmsnorm_forward 9 --dtype fp16 -N 300 -C 65537
done
[ "$QUICK" = 1 ] && sanitize_kernel memcheck rmsnorm_forward 9 --dtype bf16 -N 5 -C 40001
[ "$QUICK" = 1 ] && sanitize_kernel memcheck rmsnorm_forward 9 --dtype bf16 -N 300 -C 16385
[ "$QUICK" = 1 ] && sanitize_kernel memcheck rmsnorm_forward 10 --dtype fp32 -N 5 -C 40000 --cluster 16
tmp=build/suite_rmsnorm_hot
rm -f $tmp.csv
out=$(./rmsnorm_forward 12 -N 4 -C 4096 --dtype bf16 --hot --pdl --repeats 5 --csv $tmp.csv 2>&1); rc=$?
{ log_head "rmsnorm hot timing (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && grep -q ",12,dispatch,bf16,4x4096:hot:pdl,.*,OK," $tmp.csv; then
    pass "rmsnorm --hot --pdl: a per-launch time, CSV shape 4x4096:hot:pdl"
else fail "rmsnorm --hot --pdl (exit $rc): $(echo "$out" | grep -E 'FAIL|error|skipped' | head -n 2 | tr '\n' ' ')"; fi

# timing mode with the residual updated in place by every timed launch
tmp=build/suite_rmsnorm_timing
rm -f $tmp.csv
out=$(./rmsnorm_forward 12 -N 2048 -C 1024 --fused-add --weight-offset 1 --repeats 20 --csv $tmp.csv 2>&1); rc=$?
{ log_head "rmsnorm timing (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && echo "$out" | grep -Eq "GB/s \| +[0-9.]+% SOL" && grep -q ",2048x1024:add:off1," $tmp.csv; then
    pass "rmsnorm timing mode (fused add, offset): GB/s, %SOL, CSV shape 2048x1024:add:off1"
else fail "rmsnorm timing mode (exit $rc)"; fi
