# The backward programs' part of the GPU suite, one program's: P, the program; VARIANT, its variant's arguments beside
# --accumulate (rmsnorm_backward: --weight-offset 1; empty for none). Sourced by tests/gpu_suite_<P>.sh, from
# tests/gpu_suite.sh, which defines check_all, sanitize, planted, $QUICK and $LOG.
# Rungs: 1-4 the fp32 ladder (1-3 by atomics, 4 partials and a second kernel), 5 last_block_reduce (any dtype, any C),
# 6 row_regs_packs and 7 resident_grid (16-byte packs, rows of at most 2048 packs), 8 column_tiles (any C: a kernel of
# row scalars, then a thread a column over groups of rows), 9 dispatch (7, else 8 for rows of 2048 packs and more,
# else 5).
# Every kernel in every dtype at odd shapes (cuDNN, kernel 0, at the first of each kind), --accumulate and VARIANT,
# sums over many rows (16384: the tolerance of the sums at its tightest), the dispatcher's paths, hot launches,
# memcheck (quick) or every sanitizer (full), the planted bugs.
[ "${SUITE_STAGE:-}" = alone ] && return 0  # (no checks that compare measured times)
if [ "$QUICK" = 1 ]; then
    for dt in fp32 fp16 bf16; do
        check_all $P --dtype $dt -N 7 -C 1000
        check_ours $P --dtype $dt -N 1 -C 4104
        check_ours $P --dtype $dt -N 33 -C 33
        check_all $P --dtype $dt -N 1031 -C 768 --accumulate
        if [ -n "$VARIANT" ]; then check_all $P --dtype $dt -N 5 -C 2048 $VARIANT; fi
        # rung 8's two row-scalars paths (a warp a row to 2048 elements, a block a row beyond), odd and packed, and
        # its long rows (the dispatcher's rung past 2048 packs) with --accumulate
        check_kernels $P 5,8 --dtype $dt -N 1031 -C 1001
        check_kernels $P 5,8,9 --dtype $dt -N 300 -C 40000 --accumulate
    done
    check_ours $P --dtype fp32 -N 7 -C 1
else
    for dt in fp32 fp16 bf16; do
        for c in 1 3 31 32 33 127 768 1000 1024 4097 8192 32768; do
            for r in 1 7 1031; do
                check_all $P --dtype $dt -N $r -C $c
            done
        done
        check_all $P --dtype $dt -N 1031 -C 768 --accumulate
        check_all $P --dtype $dt -N 5 -C 4097 --accumulate
        check_kernels $P 5,8,9 --dtype $dt -N 300 -C 40000 --accumulate
        check_kernels $P 8,9 --dtype $dt -N 3 -C 131073 $VARIANT
        if [ -n "$VARIANT" ]; then check_all $P --dtype $dt -N 5 -C 2048 $VARIANT; fi
    done
fi
# sums over many rows: the rungs that sum partials (4-9) and the atomics of 3, at 16384 rows; rung 8's odd rows
for dt in fp32 bf16; do
    check_kernels $P 3,4,5,6,7,8,9 --dtype $dt -N 16384 -C 1024
done
check_kernels $P 5,6,7,8,9 --dtype fp16 -N 16384 -C 2048 --input-mean 1000 $VARIANT
check_kernels $P 4,5,8 --dtype fp32 -N 16384 -C 1001

# the dispatcher's paths: rung 7 where a row takes 16-byte packs and a block holds it, 8 for rows of 2048 packs and
# more (packed or not), else 5
expect_path $P 9 "rung 7 resident_grid" "rung 7 resident_grid" --dtype bf16 -N 4096 -C 4096
expect_path $P 9 "rung 7 resident_grid" "rung 7 resident_grid" --dtype fp32 -N 3 -C 8192
expect_path $P 9 "rung 5 last_block_reduce" "rung 5 last_block_reduce" --dtype bf16 -N 64 -C 4100
expect_path $P 9 "rung 8 column_tiles" "rung 8 column_tiles" --dtype fp32 -N 5 -C 40000
expect_path $P 9 "rung 8 column_tiles" "rung 8 column_tiles" --dtype bf16 -N 64 -C 16390
# rung 7 at its plan's block, alone and under the dispatcher: a thread a pack to 256 packs (64 packs: 64 threads),
# two packs a thread beyond (512 packs: 256)
expect_at_plan $P 9 --dtype bf16 -N 512 -C 4096
expect_at_plan $P 9 --dtype fp32 -N 512 -C 16384
for spec in "64 --dtype fp32 -N 4096 -C 256" "256 --dtype bf16 -N 512 -C 4096"; do
    read -r want args <<< "$spec"
    out=$(./$P 9 --repeats 3 $args 2>&1); rc=$?
    { log_head "$P 9 --repeats 3 $args (exit $rc)"; echo "$out"; } >> "$LOG"
    if [ $rc -eq 0 ] && echo "$out" | grep -Eq "block_size +$want \(own\).*OK.*path rung 7 resident_grid"; then
        pass "$P 9 $args: rung 7 at its plan's $want threads"
    else fail "$P 9 $args: wanted rung 7 at $want threads (exit $rc): $(echo "$out" | grep -m1 'block_size')"; fi
done

# hot (--hot): launches captured in a CUDA graph and replayed (the memsets of 1-3, the chained sums of 7 and 8), a
# replay validated; the dispatcher's three paths, then every rung
expect_path $P 9 "rung 7 resident_grid" "rung 7 resident_grid" --dtype bf16 -N 4 -C 4096 --hot
expect_path $P 9 "rung 5 last_block_reduce" "rung 5 last_block_reduce" --dtype fp32 -N 4 -C 4098 --hot
expect_path $P 9 "rung 8 column_tiles" "rung 8 column_tiles" --dtype bf16 -N 4 -C 20000 --hot
out=$(./$P 1,2,3,4,5,6,7,8 --dtype fp32 -N 64 -C 768 --hot --repeats 3 2>&1); rc=$?
{ log_head "$P 1-8 -N 64 -C 768 --hot --repeats 3 (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && ! echo "$out" | grep -q FAIL && [ "$(echo "$out" | grep -c '^best: ')" -eq 8 ]; then
    pass "$P 1-8 --hot: each rung captured, replayed and validated"
else fail "$P 1-8 --hot (exit $rc): $(echo "$out" | grep -E 'FAIL|error|skipped' | head -n 2 | tr '\n' ' ')"; fi

if [ "$QUICK" = 1 ]; then
    sanitize memcheck $P --dtype fp32 -N 7 -C 1000
    sanitize_kernel memcheck $P 7 --dtype bf16 -N 1031 -C 4104
    sanitize_kernel memcheck $P 5 --dtype fp16 -N 33 -C 33 --accumulate
    sanitize_kernel memcheck $P 8 --dtype bf16 -N 37 -C 4101 --accumulate
else
    for tool in memcheck racecheck synccheck initcheck; do
        for shape in "--dtype fp32 -N 7 -C 1000" "--dtype bf16 -N 3 -C 4104" "--dtype fp16 -N 33 -C 33 --accumulate"; do
            sanitize $tool $P $shape
        done
        sanitize_kernel $tool $P 8 --dtype bf16 -N 37 -C 4101 --accumulate
    done
fi

# planted bugs live in rungs 6 and 7's kernels (3: one row of 16384 left out of dweight, which the sums' tolerance
# must catch)
planted $P 7 -N 16384 -C 256
