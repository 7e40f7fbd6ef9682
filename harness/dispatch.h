// harness/dispatch.h: the dispatchers' rule of regimes and its lookup (part of common.h; see there).
//
// A dispatcher (the last kernel of a ladder) chooses among the rungs by a short table of regimes that
// scripts/tune_dispatch.py derives from a dense sweep of the rungs (scripts/dispatch_sweep.py --set dense, with the
// random draws that have checked a rule folded into it) and writes into the program's source between its `regimes`
// markers; CI checks that the table is still the one the stored sweeps give. Each rung's plan (kernel_t.plan) sets
// the block size it runs at.
#pragma once

// A problem's variant: LayerNorm's and RMSNorm's plain rows, RMSNorm's fused residual add and its strided QK-norm
// view; BatchNorm's channels contiguous ([N, C] and NHWC: N*H*W rows of C) and NCHW, in training and inference.
enum { TV_PLAIN, TV_FUSED_ADD, TV_QK_VIEW, TV_BN_CL, TV_BN_NCHW, TV_BN_CL_INF, TV_BN_NCHW_INF };
// The kinds of launch a row is for: plain (cold), with PDL (captured, --pdl), captured into a CUDA graph.
enum { TL_PLAIN = 0, TL_PDL = 1, TL_CAPTURED = 2 };

// Whether the calling thread's launches are being captured into a CUDA graph (the programs launch on the
// per-thread default stream): the one sign a dispatcher has of a decode step's launch, whose inputs are in L2.
static int launch_captured(void) {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(cudaStreamPerThread, &st) != cudaSuccess) {
        cudaGetLastError();  // not sticky: clear it
        return 0;
    }
    return st == cudaStreamCaptureStatusActive;
}

// Whether a rung takes the problem at a block size: its supports_ check (NULL: yes).
typedef const char *(*regime_supports_t)(const void *problem, int rung, int block);

// A rung's check through its registry entry: its dtypes, then its supports_ (NULL there: it runs any problem).
static const char *registry_supports(const kernel_t *k, const void *problem, dtype_t d, int bs) {
    if (!(k->dtypes & DT_BIT(d))) return "not this dtype";
    return k->supports ? k->supports(problem, bs) : NULL;
}

// ------------------------------------------------------------------------------------------------
// The rule of regimes. A dispatcher's rule is a short table that scripts/tune_dispatch.py --regimes derives from a
// sweep that covers the space (scripts/dispatch_sweep.py --set dense) and checks on random draws: each row a region
// of the problem space in what a kernel author reasons with, and the rung it runs; the rung's own plan (its
// registry entry's plan) sets its block size. No row names a GPU or a measured point: the device enters through
// its SMs (rows an SM: the waves) and through what each rung's plan and supports_ check read of it.
#define RG_ANY 1e30          // an open upper bound
#define TLB(x) (1u << (x))   // a launch kind's bit (TL_*)
#define TVB(x) (1u << (x))   // a variant's bit (TV_*)
typedef struct {
    int bytes;                  // element size of x: 4 or 2; 0 either
    int packs16;                // 1: a row (and its stride) takes 16-byte packs, 0: it does not, -1 either
    unsigned variants;          // TVB(TV_*) of the variants it holds; 0 every variant
    unsigned launches;          // TLB(TL_*) of the kinds of launch it holds; 0 every kind
    double packs_lo, packs_hi;  // 16-byte packs a row (C x bytes / 16; BatchNorm: of its C channels) in [lo, hi)
    double rows_lo, rows_hi;    // rows an SM (rows / SMs; BatchNorm: N*H*W, NCHW N*C) in [lo, hi)
    double plane_lo, plane_hi;  // BatchNorm NCHW: the plane H*W in [lo, hi) (1 elsewhere)
    int rung;
    const char *when;  // the region in words
} regime_t;

// A problem as the rule sees it.
typedef struct {
    int bytes, packs16, variant, launch;
    double packs, rows_sm, plane;
} regime_key_t;

// The key of a problem: element size, packing, variant (TV_*), C (elements a row, or channels), rows and plane; the
// kind of launch from the capture state and --pdl, rows an SM from this device's SMs.
static regime_key_t regime_key(int bytes, int packs16, int variant, long C, long rows, long plane) {
    regime_key_t k;
    k.bytes = bytes;
    k.packs16 = packs16;
    k.variant = variant;
    k.launch = launch_captured() ? (g_pdl ? TL_PDL : TL_CAPTURED) : TL_PLAIN;
    k.packs = (double)C * bytes / 16.0;
    k.rows_sm = (double)rows / (double)g_dev.prop.multiProcessorCount;
    k.plane = (double)plane;
    return k;
}

static int regime_holds(const regime_t *r, const regime_key_t *k) {
    return (!r->bytes || r->bytes == k->bytes) && (r->packs16 < 0 || r->packs16 == k->packs16) &&
           (!r->variants || (r->variants & TVB(k->variant))) && (!r->launches || (r->launches & TLB(k->launch))) &&
           k->packs >= r->packs_lo && k->packs < r->packs_hi && k->rows_sm >= r->rows_lo && k->rows_sm < r->rows_hi &&
           k->plane >= r->plane_lo && k->plane < r->plane_hi;
}

// The row to run: the first that holds the problem and whose rung takes it (supports: at req_bs, 0 for the rung's
// plan); its index in *at; NULL where none does (a table ends in rows whose rungs take every problem of their
// variants). The last answer is kept: a dispatcher looks up inside the timed region, and supports_ checks ask the
// runtime.
static const regime_t *regime_pick(const regime_t *rows, int n, const regime_key_t *k, int req_bs, const void *problem,
                                   regime_supports_t supports, int *at) {
    static const regime_t *c_rows = NULL, *c_pick = NULL;
    static const void *c_problem = NULL;
    static regime_key_t c_key;
    static int c_bs = -1, c_at = -1;
    if (c_rows == rows && c_problem == problem && c_bs == req_bs && !memcmp(&c_key, k, sizeof *k)) {
        *at = c_at;
        return c_pick;
    }
    const regime_t *pick = NULL;
    int i = 0;
    for (; i < n; i++)
        if (regime_holds(&rows[i], k) && !supports(problem, rows[i].rung, req_bs)) {
            pick = &rows[i];
            break;
        }
    c_rows = rows;
    c_problem = problem;
    c_key = *k;
    c_bs = req_bs;
    c_pick = pick;
    c_at = *at = pick ? i : -1;
    return pick;
}

// A rung's block size for a problem: req_bs where given (--block-size), else its plan's (0 for a kernel that picks
// its own); and whether the rung takes the problem there (its registry_supports).
static int rung_block(const kernel_t *k, const void *problem, int req_bs) {
    return req_bs ? req_bs : k->plan ? k->plan(problem) : 0;
}
static const char *rung_supports(const kernel_t *k, const void *problem, dtype_t d, int req_bs) {
    return registry_supports(k, problem, d, rung_block(k, problem, req_bs));
}

// The dispatcher's launch of the row its rule picked (r, 1-based index at; NULL: a table whose last rows do not take
// every problem, a bug: the error and exit 3): the row's rung on problem pp at rung_block (l->block_size: a
// --block-size given, 0 for the rung's plan); its path "rung R name: <the rung's path> [regime I<note>]".
static const char *const NO_REGIME = "no regime of k_regimes takes the problem (its last rows should take every one)";
static void regime_launch(const regime_t *r, int at, const kernel_t *k, const void *pp, launch_t *l, const char *note) {
    if (!r) {
        fprintf(stderr, "dispatch: %s\n", NO_REGIME);
        exit(EXIT_CUDA);
    }
    launch_t sub;
    memset(&sub, 0, sizeof sub);
    sub.block_size = rung_block(k, pp, l->block_size);
    k->launch(pp, &sub);
    l->block_used = sub.block_used ? sub.block_used : sub.block_size;
    snprintf(l->path, sizeof l->path, "rung %d %.20s%s%.110s [regime %d%s]", r->rung, k->name, sub.path[0] ? ": " : "",
             sub.path, at, note);
}

// x (rows, blocks, threads) over this device's SMs: the waves a plan reasons with.
static double per_sm(double x) {
    const int sms = g_dev.prop.multiProcessorCount;
    return x / (sms > 0 ? sms : 1);
}
// The least power of two >= x within [lo, hi] (lo and hi powers of two): the plans' block sizes.
static int pow2_at_least(double x, int lo, int hi) {
    int b = lo;
    while (b < x && b < hi) b *= 2;
    return b;
}
// The largest power of two <= x, within [lo, hi].
static int pow2_down(double x, int lo, int hi) {
    int b = lo;
    while (b < hi && 2.0 * b <= x) b *= 2;
    return b;
}
// The power of two nearest x on a log scale, within [lo, hi] (lo and hi powers of two).
static int pow2_nearest(double x, int lo, int hi) {
    int b = lo;
    while (b < hi && x >= b * 1.41421356) b *= 2;
    return b;
}
// A plan's block size bs where the rung's supports_ takes it, else the nearest power of two in [32, 1024] it takes
// (half before double, at each distance); bs itself where none does (the dispatcher's check then passes over the
// rung).
static int plan_fit(const void *pp, int bs, const char *(*supports)(const void *, int)) {
    if (!supports(pp, bs)) return bs;
    for (int d = 2; d <= 32; d *= 2) {
        if (bs / d >= 32 && !supports(pp, bs / d)) return bs / d;
        if (bs * d <= 1024 && !supports(pp, bs * d)) return bs * d;
    }
    return bs;
}
