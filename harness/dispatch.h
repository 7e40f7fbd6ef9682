// harness/dispatch.h: the dispatchers' tuned tables and their lookup (part of common.h; see there).
//
// A dispatcher (the last kernel of a ladder) chooses among the rungs by a table that scripts/tune_dispatch.py
// derives from the sweeps stored in results/: one row per measured point and kind of launch, with the rung and
// block size nearest the best there over the GPUs of that architecture: plain launches from the cold times;
// launches captured into a CUDA graph from the hot times (a decode step's launches are captured and read what the
// node before wrote, from L2), where they chose another (rung, block); launches with PDL (--pdl) from the hot+pdl
// times, where those chose another still. Where the row a kind of launch on one GPU would take at a point costs
// that GPU more than 1% and that GPU's own sweep chose another (rung, block), the point gets a row of that kind for
// that GPU alone, matched by the device's name (an H100 and an H200 share sm_90 but not every best choice; a GPU of
// that architecture that is not in results/ takes the shared rows). The script writes the rows into the program's
// source between its `tuned rows` markers, and CI checks that they still match the stored sweeps.
#pragma once

// A problem's variant: LayerNorm's and RMSNorm's plain rows, RMSNorm's fused residual add and its strided QK-norm
// view; BatchNorm's channels contiguous ([N, C] and NHWC: N*H*W rows of C) and NCHW, in training and inference.
enum { TV_PLAIN, TV_FUSED_ADD, TV_QK_VIEW, TV_BN_CL, TV_BN_NCHW, TV_BN_CL_INF, TV_BN_NCHW_INF };
// The kinds of launch a row is for (scripts/tune_dispatch.py's PLAIN, PDL, CAPTURED).
enum { TL_PLAIN = 0, TL_PDL = 1, TL_CAPTURED = 2 };

typedef struct {
    int sm;       // architecture: major * 10 + minor (90: H100, H200)
    int bytes;    // element size of x (2: fp16 and bf16 share rows)
    int variant;  // TV_*
    int full;     // 1: 16-byte packs fit the row (and its stride)
    long N, C;    // the measured point: rows, elements a row
    int launch;   // TL_*: the kind of launch the row is for
    int rung, block;
    const char *gpu;  // NULL: every GPU of the architecture; else the one GPU (cudaDeviceProp.name) the row is for
    long HW;          // BatchNorm NCHW: the values of a plane (0 elsewhere: no such dimension)
} tuned_row_t;

// The problem a dispatcher looks up.
typedef struct {
    int bytes, variant, full;
    long N, C;
    int pdl;       // g_pdl: the launches carry PDL
    long HW;       // as tuned_row_t's
    int captured;  // the launch is being captured into a CUDA graph (launch_captured())
} tuned_key_t;

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
typedef const char *(*tuned_supports_t)(const void *problem, int rung, int block);

// How far a measured point is from the problem: C decides the layout of a row (lanes, packs, blocks a row), N
// the waves, so a step of C counts twice a step of N (both on a log2 scale); a plane's size (BatchNorm NCHW: how
// a channel's values lie) counts as C does.
static double tuned_distance(const tuned_row_t *r, const tuned_key_t *k) {
    const double hw = r->HW > 0 && k->HW > 0 ? 2.0 * fabs(log2((double)k->HW / (double)r->HW)) : 0.0;
    return 2.0 * fabs(log2((double)k->C / (double)r->C)) + fabs(log2((double)k->N / (double)r->N)) + hw;
}

// Whether a shared row of architecture sm with r's element size, variant and packing holds r's point: a GPU's own
// row is read only at a point the shared table measured (never as a point of its own).
static int tuned_point_shared(const tuned_row_t *rows, int n, const tuned_row_t *r) {
    for (int i = 0; i < n; i++) {
        const tuned_row_t *o = &rows[i];
        if (!o->gpu && o->sm == r->sm && o->bytes == r->bytes && o->variant == r->variant && o->full == r->full &&
            o->N == r->N && o->C == r->C && o->HW == r->HW)
            return 1;
    }
    return 0;
}

// The row to run: among the rows of architecture sm with the problem's element size, variant and packing, those
// shared by every GPU and this device's own (matched by name), the nearest measured point's first row whose rung
// takes the problem at the row's block size (req_bs, a --block-size given, replaces it); NULL where no row does
// (the dispatcher then uses its fallback rules). Plain launches read the plain rows only; a captured launch reads
// the captured rows too, a PDL launch the PDL rows too. At one point the most specific row comes first: this
// device's PDL row, the shared PDL row, its captured row, the shared captured row, its plain row, the shared plain
// row (the table has a row only where the choice differs from the next one a launch would take). The last answer
// is kept: a dispatcher looks up inside the timed region, and the supports_ checks ask the runtime.
static const tuned_row_t *tuned_pick_arch(const tuned_row_t *rows, int n, const tuned_key_t *k, int req_bs,
                                          const void *problem, tuned_supports_t supports, int sm) {
    static const tuned_row_t *c_rows = NULL, *c_pick = NULL;
    static tuned_key_t c_key;
    static int c_bs = -1, c_sm = -1;
    if (c_rows == rows && c_bs == req_bs && c_sm == sm && c_key.bytes == k->bytes && c_key.variant == k->variant &&
        c_key.full == k->full && c_key.N == k->N && c_key.C == k->C && c_key.HW == k->HW && c_key.pdl == k->pdl &&
        c_key.captured == k->captured)
        return c_pick;
    const tuned_row_t *pick = NULL;
    unsigned char *tried = (unsigned char *)calloc((size_t)n, 1);
    for (;;) {  // nearest first; a row whose rung refuses the problem is passed over
        int best = -1;
        double bd = 0;
        for (int i = 0; i < n; i++) {
            const tuned_row_t *r = &rows[i];
            if (tried[i] || r->sm != sm || r->bytes != k->bytes || r->variant != k->variant || r->full != k->full ||
                (r->launch == TL_PDL && !k->pdl) || (r->launch == TL_CAPTURED && !k->captured) ||
                (r->gpu && (strcmp(r->gpu, g_dev.prop.name) || !tuned_point_shared(rows, n, r))))
                continue;
            // at one point: PDL, captured, plain, each this device's own row before the shared one
            double d = tuned_distance(r, k) + (r->launch == TL_PDL ? 0.0 : r->launch == TL_CAPTURED ? 2e-4 : 4e-4) +
                       (r->gpu ? 0.0 : 1e-4);
            if (best < 0 || d < bd) best = i, bd = d;
        }
        if (best < 0) break;
        tried[best] = 1;
        if (!supports(problem, rows[best].rung, req_bs ? req_bs : rows[best].block)) {
            pick = &rows[best];
            break;
        }
    }
    free(tried);
    c_key = *k;
    c_rows = rows;
    c_bs = req_bs;
    c_sm = sm;
    c_pick = pick;
    return pick;
}

// tuned_pick_arch on the rows of this device's architecture.
static const tuned_row_t *tuned_pick(const tuned_row_t *rows, int n, const tuned_key_t *k, int req_bs,
                                     const void *problem, tuned_supports_t supports) {
    return tuned_pick_arch(rows, n, k, req_bs, problem, supports, g_dev.prop.major * 10 + g_dev.prop.minor);
}

// The architecture of the rows nearest this device's (its own where it has rows; else the nearest below it, else
// above); 0 for no rows.
static int tuned_nearest_arch(const tuned_row_t *rows, int n) {
    const int sm = g_dev.prop.major * 10 + g_dev.prop.minor;
    int best = 0;
    for (int i = 0; i < n; i++) {
        const int r = rows[i].sm;
        if (!best || (r <= sm && (best > sm || r > best)) || (best > sm && r > sm && r < best)) best = r;
    }
    return best;
}

// What the dispatcher's path says of a row: "tuned NxC" (NxCxHW with planes), " PDL" or " captured" for those rows,
// " (this GPU)"
// for a GPU's own row.
static void tuned_describe(const tuned_row_t *t, char *buf, size_t n) {
    char hw[24] = "";
    if (t->HW > 0) snprintf(hw, sizeof hw, "x%ld", t->HW);
    snprintf(buf, n, "tuned %ldx%ld%s%s%s", t->N, t->C, hw,
             t->launch == TL_PDL ? " PDL" : t->launch == TL_CAPTURED ? " captured" : "", t->gpu ? " (this GPU)" : "");
}

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
                                   tuned_supports_t supports, int *at) {
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
