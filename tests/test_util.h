// The CPU tests' mini framework: one line per test ("PASS name" / "FAIL name: why"), counted by
// tests/run_tests.sh. Include after the program under test.
#pragma once
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int g_pass = 0, g_fail = 0;
static void check(const char *name, int ok, const char *fmt = "", ...) {
    if (ok) {
        printf("PASS %s\n", name);
        g_pass++;
        return;
    }
    printf("FAIL %s: ", name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    g_fail++;
}
// |a - b| <= tol, relative to |b| when |b| > 1.
static int close_to(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(1.0, fabs(b)); }
// The last line of a test binary; its exit status.
static int test_summary(void) {
    printf("test_cpu: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}

// Parses a command line given as one string ("7 -N 100 --dtype bf16") with the program's own parser.
static options_t parse_line(const program_t *prog, const char *line) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", line);
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)prog->binary;
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    options_t o;
    parse_args(argc, argv, prog, &o);
    return o;
}

// Every program's registry: kernels 0..n-1 in order, each with a name, idea, limits and dtypes, and either a
// launcher or a supports() that says why it cannot run.
static void check_registry_shape(const program_t *prog, int n) {
    int ok = prog->n_kernels == n;
    for (int i = 0; i < prog->n_kernels; i++) {
        const kernel_t *k = &prog->kernels[i];
        ok &= k->number == i && k->name && k->idea && k->limits && k->dtypes;
        ok &= (k->launch != NULL) || (k->supports != NULL);
    }
    char name[128];
    snprintf(name, sizeof name, "registry: kernels 0..%d in order, each with a name, idea, limits and dtypes", n - 1);
    check(name, ok);
}

// Every program's kernel 0, the cuDNN slot, without a GPU: 'cudnn', all dtypes, its own launch configuration;
// with cuDNN a launcher and a --block-size refused before cuDNN is asked (supports() reads no problem then);
// without it no launcher and the reason "built without cuDNN".
static void check_cudnn_slot(const kernel_t *k0) {
    check("kernel 0: the cuDNN slot ('cudnn', all dtypes, picks its own launch configuration)",
          k0->number == 0 && strcmp(k0->name, "cudnn") == 0 && k0->dtypes == DT_ALL && k0->own_block == 1 &&
              k0->supports != NULL);
#ifdef HAVE_CUDNN
    const char *why = k0->supports(NULL, 256);
    check("kernel 0: cuDNN's launcher in a cuDNN build; a --block-size is refused before cuDNN is asked",
          k0->launch != NULL && why && strstr(why, "--block-size"), "%s", why ? why : "NULL");
#else
    const char *why = k0->supports(NULL, 0);
    check("kernel 0: without cuDNN, no launcher and the reason 'built without cuDNN'",
          k0->launch == NULL && why && strcmp(why, "built without cuDNN") == 0, "%s", why ? why : "NULL");
#endif
}

// A backward program's registry (layernorm_backward, rmsnorm_backward): kernels 1-4 fp32 only, 5 to the dispatcher
// every dtype; 4 to the dispatcher deterministic (their validation compares two launches' bits) and --list says so,
// the atomics of 1-3 not; the dispatcher the default and the last; its rule's rows run rungs 5 and up, the last row
// taking every problem (a rung with no limits, all dtypes).
static void check_backward_registry(const program_t *prog, const regime_t *rule, int rows, int dispatcher) {
    check_registry_shape(prog, dispatcher + 1);
    check_cudnn_slot(&prog->kernels[0]);
    int teaching = 1, det = 1;
    for (int i = 1; i <= dispatcher; i++) {
        const kernel_t *k = &prog->kernels[i];
        teaching &= k->dtypes == (i <= 4 ? DT_BIT(DT_FP32) : DT_ALL);
        det &= (strstr(k->limits, "deterministic") != NULL) == (i >= 4) && k->deterministic == (i >= 4);
    }
    check("registry: 1-4 are fp32 only, the rest run fp32, fp16 and bf16", teaching);
    check("registry: 4 on are deterministic (their validation compares two launches' bits) and --list says so; the "
          "atomics of 1-3 are not", det);
    check("registry: the default kernel is the dispatcher, the last",
          prog->default_kernel == dispatcher && dispatcher == prog->n_kernels - 1);
    const regime_t *last = &rule[rows - 1];
    int rungs_ok = last->bytes == 0 && last->packs16 < 0 && last->packs_hi == RG_ANY && last->rows_hi == RG_ANY &&
                   prog->kernels[last->rung].dtypes == DT_ALL && prog->kernels[last->rung].supports == NULL;
    for (int i = 0; i < rows; i++) rungs_ok &= rule[i].rung >= 5 && rule[i].rung < dispatcher;
    check("regimes: every row runs a rung from 5 below the dispatcher; the last takes every problem (a rung with no "
          "limits, all dtypes)", rungs_ok);
}
// The plans of the backward programs' registers rungs, 6 row_regs_packs and 7 resident_grid (harness/partials.h, the
// same in both programs): each program's plan_problem (make), row_regs_bs, row_regs_packs, resident_rows,
// resident_bs, plan_resident_grid and supports_row_regs, which the program defines before this file is included.
template <typename P> static void check_registers_plans(P (*make)(dtype_t, long, long)) {
    P a = make(DT_BF16, 4096, 1024), b = make(DT_FP32, 4096, 3072), c = make(DT_FP16, 64, 16384),
      d = make(DT_BF16, 64, 16384 + 8);
    // bf16 1024: 128 packs -> 1 a thread, 128 threads, 4 rows at a time; fp32 3072: 768 packs -> 1, 1024, 2 rows;
    // fp16 16384: 2048 packs -> 2, 1024, 1 row; bf16 16392: 2049 packs -> more than 2 a thread at 1024: refused
    check("plan: rung 6: a pack a thread to 1024 packs, 2 to 2048; 128-1024 threads; 7 at those blocks: 4 rows at a "
          "time to 512 packs, 2 to 1024, else 1",
          row_regs_bs(&a) == 128 && row_regs_packs(&a, 128) == 1 && resident_rows(&a, 128) == 4 &&
              row_regs_bs(&b) == 1024 && row_regs_packs(&b, 1024) == 1 && resident_rows(&b, 1024) == 2 &&
              row_regs_bs(&c) == 1024 && row_regs_packs(&c, 1024) == 2 && resident_rows(&c, 1024) == 1,
          "%d %d %d", row_regs_bs(&a), row_regs_bs(&b), row_regs_bs(&c));
    // rung 7's own plan: fp32 128 (32 packs) -> 32 threads, 4 rows; bf16 1024 (128) -> 128, 4 rows; fp32 3072 (768)
    // -> 512 threads at two packs, 1 row; fp16 16384 (2048) -> 1024 at two, 1 row
    P e = make(DT_FP32, 4096, 128);
    check("plan: rung 7: a pack a thread to 256 packs (at least 32 threads), two packs a thread beyond",
          resident_bs(&e) == 32 && resident_rows(&e, 32) == 4 && resident_bs(&a) == 128 && resident_rows(&a, 128) == 4 &&
              resident_bs(&b) == 512 && row_regs_packs(&b, 512) == 2 && resident_rows(&b, 512) == 1 &&
              resident_bs(&c) == 1024 && row_regs_packs(&c, 1024) == 2 && plan_resident_grid(&c) == 1024,
          "%d %d %d %d", resident_bs(&e), resident_bs(&a), resident_bs(&b), resident_bs(&c));
    const char *why = supports_row_regs(&d, 1024);
    check("plan: a row of more than 2048 packs is refused by 6 and 7, saying why", why && strstr(why, "2 packs"), "%s",
          why ? why : "NULL");
    P odd = make(DT_BF16, 64, 1001);
    why = supports_row_regs(&odd, 256);
    check("plan: a row that does not take 16-byte packs is refused by 6 and 7", why && strstr(why, "16-byte"), "%s",
          why ? why : "NULL");
}
// The plan of the backward programs' rung 8, column_tiles (harness/partials.h, the same in both programs; the
// program's plan_column_tiles): its row-scalars kernel a warp a row to 2048 elements, a block a row beyond; its tiles
// a thread a column, 32-256 threads; its groups of rows no more than the scratch's rows nor gridDim.y's, at least 16
// rows a group, and about 3 waves of blocks (at least the SMs where the rows and the scratch allow). wave: 132 SMs x 8
// blocks.
template <typename P> static void check_column_tiles_plan(P (*make)(dtype_t, long, long)) {
    P a = make(DT_FP32, 16384, 16384), b = make(DT_BF16, 8, 3), c = make(DT_FP16, 300, 40000);
    check("plan: rung 8's row scalars: a warp a row to 2048 elements (256 threads, 8 rows a block), a block a row "
          "beyond (about 32 elements a thread, 128-1024 threads)",
          means_warp_a_row(2048) && !means_warp_a_row(2049) && means_block_size(2048) == 256 &&
              means_blocks(1001, 8) == 126 && means_blocks(7, 1) == 7 && means_block_size(2049) == 128 &&
              means_block_size(16384) == 512 && means_block_size(1L << 20) == 1024,
          "%d %d %d", means_block_size(2049), means_block_size(16384), means_block_size(1L << 20));
    check("plan: rung 8's tiles: a thread a column, 256 threads, down to a warp for short rows",
          plan_column_tiles(&a) == 256 && plan_column_tiles(&b) == 32 && plan_column_tiles(&c) == 256 &&
              tiles_block_size(100) == 128 && tiles_block_size(1001) == 256,
          "%d %d %d", plan_column_tiles(&a), plan_column_tiles(&b), plan_column_tiles(&c));
    // (N, C, the scratch's rows, the blocks of a wave): fp32 16384 x 16384 (64 tiles: 50 groups of 328 rows, 3.03
    // waves); 300 x 40000 (157 tiles: 19 groups of 16 rows); 8 rows of 131072 (512 tiles, one group); 10^6 rows of 256
    // with 10 partials (10 groups); 10^7 rows of 1 at a wave of 10^5 blocks (gridDim.y's 65535)
    const long sms = 132, wave = sms * 8, cases[][4] = {{16384, 16384, 16384, wave}, {300, 40000, 300, wave},
        {8, 131072, 8, wave}, {1000000, 256, 10, wave}, {10000000, 1, 10000000, 100000}, {7, 1, 7, wave}};
    int ok = 1;
    char why[256] = "";
    for (const auto &k : cases) {
        const long N = k[0], C = k[1], parts = k[2], tiles = ceil_div(C, tiles_block_size(C));
        const int rows = tiles_rows_a_group(N, tiles, parts, k[3]);
        const long groups = ceil_div(N, rows), blocks = groups * tiles;
        const int fits = rows >= 1 && groups <= parts && groups <= 65535 && (rows >= 16 || groups == 1) &&
                         blocks <= 4 * k[3] && (blocks >= sms || N * tiles < 16 * sms || groups == parts);
        if (!fits && !why[0]) snprintf(why, sizeof why, "%ld x %ld: %d rows a group, %ld groups", N, C, rows, groups);
        ok &= fits;
    }
    const int r1 = tiles_rows_a_group(16384, 64, 16384, wave), r2 = tiles_rows_a_group(300, 157, 300, wave);
    check("plan: rung 8's groups of rows: at most the scratch's rows and 65535, at least 16 rows a group, 3 waves "
          "of blocks at most 4, at least the SMs where the rows and the scratch allow (16384 x 16384: 50 groups of 328 rows)",
          ok && r1 == 328 && ceil_div(16384, r1) == 50 && r2 == 16, "%s (16384 x 16384: %d rows a group)", why, r1);
}
