// harness/partials.h: the backward programs' sums over rows (dweight, dbias) from per-block partials: a scratch of
// [parts, cols] fp32 rows, one a block, summed column by column in a fixed order, so that the sums have the same
// bits every run (the deterministic rungs).
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

// Column c of the sums is the sum of the `parts` rows of `part` [parts, cols] in a fixed order: a block takes 32
// columns x (blockDim.x / 32) slices of the rows, each slice summed in order, then the slices in order through shared
// memory. Columns below `split` go to out0[c], the others to out1[c - split] (dweight, then dbias; out1 NULL where
// split = cols). Waits for the grid before it (pdl_wait): launched as a programmatic dependent launch, its blocks may
// be resident before the kernel whose partials it sums has ended.
template <typename T>
__global__ void sum_partials_kernel(const float *__restrict__ part, long parts, long cols, long split, T *out0,
                                    T *out1) {
    __shared__ float slice[32][33];
    pdl_wait();
    const int col = threadIdx.x % 32, sl = threadIdx.x / 32, nsl = blockDim.x / 32;
    const long c = blockIdx.x * 32L + col;
    float s = 0.f;
    if (c < cols)
        for (long g = sl; g < parts; g += nsl) s += part[g * cols + c];
    slice[sl][col] = s;
    __syncthreads();
    if (sl == 0 && c < cols) {
        float t = 0.f;
        for (int i = 0; i < nsl; i++) t += slice[i][col];
        if (c < split) out0[c] = from_float<T>(t);
        else out1[c - split] = from_float<T>(t);
    }
}
#define SUM_PARTIALS_BS 1024  // 32 slices of the rows a column
// Enqueues sum_partials_kernel for outputs of dtype d; chained: as a programmatic dependent launch whatever --pdl
// (launch_kernel: the kernel before it writes the partials and lets it launch early).
static void launch_sum_partials(dtype_t d, const float *part, long parts, long cols, long split, void *out0,
                                void *out1, int chained) {
    const void *fn = d == DT_FP16   ? (const void *)sum_partials_kernel<__half>
                     : d == DT_BF16 ? (const void *)sum_partials_kernel<__nv_bfloat16>
                                    : (const void *)sum_partials_kernel<float>;
    void *args[] = {&part, &parts, &cols, &split, &out0, &out1};
    launch_kernel(fn, ceil_div(cols, 32), SUM_PARTIALS_BS, 0, args, 1, chained);
}

// ------------------------------------------------------------------------------------------------
// The plans of the backward programs' partials rungs (layernorm_backward's and rmsnorm_backward's 4-7), from the rows
// N, a row's 16-byte packs nvec and the rows of the scratch (parts).

// Rungs 4-6: a block a group of at most 32 rows, evened out (100 rows: 4 blocks of 25), as many blocks as the scratch
// holds (then more rows a block).
static int partials_rows_a_block(long N, long parts) {
    const long groups = ceil_div(N, 32);
    return (int)ceil_div(N, groups < parts ? groups : parts);
}
// Rungs 6-7, a block a row in registers: packs a thread, the fewer of 1 and 2 that cover the row with bs threads (0:
// more than 2 are needed); rung 6's block size, a pack a thread (two beyond 1024 packs), at least 128 threads.
static int regs_packs_a_thread(long nvec, int bs) { return nvec <= bs ? 1 : nvec <= 2L * bs ? 2 : 0; }
static int regs_block_size(long nvec) { return pow2_at_least(nvec <= 1024 ? (double)nvec : nvec / 2.0, 128, 1024); }
// Rung 7's block: a pack a thread to 256 packs (at least a warp: no idle lanes in a short row), two beyond (128-1024
// threads), where the R rows in flight keep a block's loads deep enough with half the threads.
static int regs_resident_block_size(long nvec) {
    return nvec <= 256 ? pow2_at_least((double)nvec, 32, 256) : pow2_at_least(nvec / 2.0, 128, 1024);
}
// Why a row of C elements of dtype d cannot run in registers at bs threads (NULL: it can): no 16-byte packs, or more
// than 2 of them a thread.
static const char *regs_row_refusal(dtype_t d, long C, int bs) {
    const int vec = 16 / (int)dtype_size(d);
    if (C % vec) return reasonf("C = %ld is not a multiple of %d (16-byte packs)", C, vec);
    if (!regs_packs_a_thread(C / vec, bs))
        return reasonf("a row of %ld packs needs more than 2 packs a thread at block size %d", C / vec, bs);
    return NULL;
}
// Rung 7: rows at a time (4 to 512 packs at up to 512 threads, 2 to 1024 packs, 1 at two packs a thread: registers),
// and its grid: the blocks of fn resident at once, but no more than give each block 8 groups of R rows (and no fewer
// than an SM's worth), nor more than the groups or the scratch's rows.
static int regs_rows_in_flight(long nvec, int bs) {
    return regs_packs_a_thread(nvec, bs) == 2 ? 1 : nvec <= 512 && bs <= 512 ? 4 : 2;
}
static long regs_resident_grid(const void *fn, int bs, long N, int R, long parts) {
    const long groups = ceil_div(N, R), sms = g_dev.prop.multiProcessorCount;
    const long want = ceil_div(groups, 8) > sms ? ceil_div(groups, 8) : sms;
    long g = persist_grid(fn, bs, groups, 0);
    g = g < want ? g : want;
    g = g < groups ? g : groups;
    return g < parts ? g : parts;
}

// ------------------------------------------------------------------------------------------------
// Rung 8, column_tiles (both programs): a kernel of row scalars (the means dx needs), a warp or a block a row; then a
// 2-D grid of column tiles (a thread a column) x groups of rows, chained to it by PDL, each block a partial; then
// their sum, chained too.

// A warp takes a row of the row-scalars kernel to 2048 elements (16 fp32 packs a lane at most), a block beyond.
static int means_warp_a_row(long C) { return C <= 2048; }
// The row-scalars kernel's block: 8 warps (8 rows) where a warp takes a row, else about 32 elements a thread of its
// row (128-1024 threads).
static int means_block_size(long C) { return means_warp_a_row(C) ? 256 : pow2_at_least(C / 32.0, 128, 1024); }
// Its grid: N rows at `rows` a block (the block's warps, or 1 for a block a row).
static long means_blocks(long N, int rows) { return ceil_div(N, rows); }
// The column tiles: a thread a column, 256 threads (a power of two from a warp up, where C is shorter).
static int tiles_block_size(long C) { return pow2_at_least((double)C, 32, 256); }
// Rows a group at least: a partial written and read again (8 bytes a sum a column) then costs at most half a byte a
// sum an element of x.
#define TILES_MIN_ROWS 16
// Rows a group of the tiles' grid: enough groups for about 3 waves of blocks over the `tiles` column tiles (wave: the
// blocks resident at once), each of at least TILES_MIN_ROWS rows, no more than the scratch's rows (parts) nor than
// gridDim.y's 65535; evened out.
static int tiles_rows_a_group(long N, long tiles, long parts, long wave) {
    long g = ceil_div(3 * wave, tiles);
    const long cap = ceil_div(N, TILES_MIN_ROWS) < parts ? ceil_div(N, TILES_MIN_ROWS) : parts;
    g = g < cap ? g : cap;
    g = g < 65535 ? g : 65535;
    return (int)ceil_div(N, g > 0 ? g : 1);
}
// The launches of rung 8 but the sum: the row-scalars kernel (means_fn: a warp a row where means_warp_a_row), then
// tiles_fn chained to it, of bs threads a tile, rows_a_group rows a group (args: the one argument both take); the
// groups of rows, the partials to sum.
static long launch_means_then_tiles(const void *means_fn, const void *tiles_fn, void **args, long N, long C, int bs,
                                    int rows_a_group) {
    const int mbs = means_block_size(C);
    launch_kernel(means_fn, means_blocks(N, means_warp_a_row(C) ? mbs / 32 : 1), mbs, 0, args, 1);
    const long groups = ceil_div(N, rows_a_group);
    launch_kernel(tiles_fn, ceil_div(C, bs), bs, 0, args, 1, 1, (unsigned)groups);
    return groups;
}
