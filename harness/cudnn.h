// harness/cudnn.h: the vendor baseline, cuDNN (kernel 0 of every program), where the build found it.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

// ------------------------------------------------------------------------------------------------
// cuDNN, the vendor baseline (kernel 0 of every program), when the build found it (-DHAVE_CUDNN).
// Plans are built and engines chosen in kernel 0's supports(), outside the timed region; its launch()
// only executes. A cuDNN failure while planning becomes kernel 0's skip reason; while executing, an error.
// (This section follows the timing one: choosing among engine configs times each with time_cold.)
//
// Two ways in: the graph API for LayerNorm and RMSNorm (below); for BatchNorm the legacy BatchNorm API and the
// graph API's batch norm, the faster of the two (the last section, "cuDNN's legacy BatchNorm API").
//
// The graph (backend) API in C, for one normalization forward: tensor descriptors, the norm-forward
// operation, the operation graph, the engine heuristics (mode A; the fallback list when A gives nothing
// that runs), and for every engine config they return: an execution plan, its workspace and a variant
// pack, one trial execution, and (when several ran) a cold-L2 timing; the fastest plan is kept. A
// program's kernel 0 fills a cudnn_norm_t from its problem and calls cudnn_norm_prepare() in supports()
// and cudnn_plan_execute() in launch().
#ifdef HAVE_CUDNN
#include <cudnn.h>
#if CUDNN_MAJOR < 9
#error "kernel 0 needs cuDNN 9 or newer (the graph API's norm-forward node); build without cuDNN: make CUDNN_DIR="
#endif

// One handle per process, on the default stream (where every kernel and the timing events run: the programs are
// built with the per-thread default stream, which a CUDA graph can capture; cuDNN is told it by name).
static cudnnHandle_t cudnn_handle(void) {
    static cudnnHandle_t h = NULL;
    if (!h) {
        cudnnStatus_t s = cudnnCreate(&h);
        if (s == CUDNN_STATUS_SUCCESS) s = cudnnSetStream(h, cudaStreamPerThread);
        if (s != CUDNN_STATUS_SUCCESS) {
            fprintf(stderr, "cuDNN error: cudnnCreate: %s\n", cudnnGetErrorString(s));
            exit(EXIT_CUDA);
        }
    }
    return h;
}

// A status for skip reasons and the planning log: the name without CUDNN_STATUS_, in lower case, and the
// code ("not supported shape (3002)"). Lower case keeps the word FAIL (CUDNN_STATUS_EXECUTION_FAILED,
// ..._COMPILATION_FAILED) out of lines that are not validation failures: the GPU suite greps for it.
static const char *cudnn_status_text(cudnnStatus_t s) {
    static char buf[4][96];  // a few may appear in one message
    static int next = 0;
    char *out = buf[next++ % 4];
    const char *name = cudnnGetErrorString(s);
    if (strncmp(name, "CUDNN_STATUS_", 13) == 0) name += 13;
    size_t n = 0;
    for (; name[n] && n < 64; n++) out[n] = name[n] == '_' ? ' ' : (char)tolower((unsigned char)name[n]);
    snprintf(out + n, sizeof buf[0] - n, " (%d)", (int)s);
    return out;
}

// cuDNN's own words for the last error of this thread, as ": <first line>" (at most its first 125 characters,
// FAIL in lower case as above), or "" when it has none. Reading them clears them.
static const char *cudnn_last_error(void) {
    static char msg[512], out[128];
    msg[0] = 0;
    cudnnGetLastErrorString(msg, sizeof msg);
    if (!msg[0]) return "";
    // ": " and at most sizeof out - 3 characters of the message: a longer one is cut here, on purpose (the
    // precision bounds the output to the buffer, so the compiler sees no truncation to warn about)
    snprintf(out, sizeof out, ": %.*s", (int)(sizeof out - 3), msg);
    for (char *c = out; *c; c++) {
        if (*c == '\n' || *c == '\r') { *c = 0; break; }
        if (strncmp(c, "FAIL", 4) == 0) memcpy(c, "fail", 4);
    }
    return out;
}

// "9.19.0", from the library that is loaded (not the header).
static const char *cudnn_version_string(void) {
    static char v[32];
    size_t n = cudnnGetVersion();  // major * 10000 + minor * 100 + patch since cuDNN 9
    snprintf(v, sizeof v, "%zu.%zu.%zu", n / 10000, n / 100 % 100, n % 100);
    return v;
}

// Inside a function that returns a skip reason (const char *): return why the cuDNN call failed.
#define CUDNN_TRY(call)                                                                               \
    do {                                                                                              \
        cudnnStatus_t st_ = (call);                                                                   \
        if (st_ != CUDNN_STATUS_SUCCESS)                                                              \
            return reasonf("cuDNN %s: %s%s", #call, cudnn_status_text(st_), cudnn_last_error());      \
    } while (0)

// Where a failure is an error (executing a plan that was built and tried): exit like CUDA_CHECK.
#define CUDNN_CHECK(call)                                                                             \
    do {                                                                                              \
        cudnnStatus_t st_ = (call);                                                                   \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                            \
            fprintf(stderr, "cuDNN error at %s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    cudnnGetErrorString(st_));                                                        \
            exit(EXIT_CUDA);                                                                          \
        }                                                                                             \
    } while (0)

// Pass a helper's skip reason up (NULL: fine).
#define REASON_TRY(expr)                                                                              \
    do {                                                                                              \
        const char *why_ = (expr);                                                                    \
        if (why_) return why_;                                                                        \
    } while (0)

// Kernel 0 of every program: cuDNN picks its own launch configuration, so a --block-size is refused (NULL for
// bs = 0), before cuDNN is asked anything.
static const char *cudnn_refuse_block_size(int bs) {
    return bs ? "cuDNN picks its own launch configuration (no --block-size)" : NULL;
}

// Set one attribute; the reason names it ("cuDNN set CUDNN_ATTR_TENSOR_STRIDES: bad param (2000)").
#define CUDNN_SET(desc, attr, type, count, values) REASON_TRY(cudnn_set(desc, #attr, attr, type, count, values))
static const char *cudnn_set(cudnnBackendDescriptor_t d, const char *name, cudnnBackendAttributeName_t attr,
                             cudnnBackendAttributeType_t type, int64_t count, const void *values) {
    cudnnStatus_t s = cudnnBackendSetAttribute(d, attr, type, count, values);
    if (s == CUDNN_STATUS_SUCCESS) return NULL;
    return reasonf("cuDNN set %s: %s%s", name, cudnn_status_text(s), cudnn_last_error());
}
static const char *cudnn_finalize(cudnnBackendDescriptor_t d, const char *what) {
    cudnnStatus_t s = cudnnBackendFinalize(d);
    if (s == CUDNN_STATUS_SUCCESS) return NULL;
    return reasonf("cuDNN finalize %s: %s%s", what, cudnn_status_text(s), cudnn_last_error());
}

static cudnnDataType_t cudnn_dtype(dtype_t d) {
    return d == DT_FP16 ? CUDNN_DATA_HALF : d == DT_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

// The descriptors of one graph (tensors, operations, the graph, heuristics, engine configs), kept together:
// the execution plan refers to them, so they live as long as it does and are destroyed with it.
#define CUDNN_MAX_DESCS 48
typedef struct {
    cudnnBackendDescriptor_t d[CUDNN_MAX_DESCS];
    int n;
} cudnn_descs_t;

static const char *cudnn_create(cudnn_descs_t *keep, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out) {
    *out = NULL;
    if (keep->n == CUDNN_MAX_DESCS) return "cuDNN: more descriptors than CUDNN_MAX_DESCS";
    CUDNN_TRY(cudnnBackendCreateDescriptor(type, out));
    keep->d[keep->n++] = *out;
    return NULL;
}
static void cudnn_destroy_all(cudnn_descs_t *keep) {
    while (keep->n > 0) cudnnBackendDestroyDescriptor(keep->d[--keep->n]);
}

// A finalized tensor: nd dims and strides (in elements), data type, unique id. Device tensors say 16-byte
// alignment (the norm engines' minimum): every base pointer given to them here comes from cudaMalloc, views
// included (QK-norm's x starts at its buffer). by_value: a host scalar read at execution (epsilon).
static const char *cudnn_tensor(cudnn_descs_t *keep, cudnnBackendDescriptor_t *t, const char *name, int64_t uid,
                                cudnnDataType_t type, int nd, const int64_t *dim, const int64_t *stride,
                                bool by_value) {
    int64_t align = 16;
    REASON_TRY(cudnn_create(keep, CUDNN_BACKEND_TENSOR_DESCRIPTOR, t));
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, dim);
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, stride);
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    CUDNN_SET(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (by_value) CUDNN_SET(*t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    char what[64];
    snprintf(what, sizeof what, "tensor %s", name);
    return cudnn_finalize(*t, what);
}

// An execution plan chosen for a graph, with everything it needs: the graph's descriptors, the variant pack
// (the data pointers), the workspace. cudnn_plan_release() frees it all.
typedef struct {
    cudnn_descs_t keep;  // the graph's descriptors
    cudnnBackendDescriptor_t plan, pack;
    void *workspace;
    char path[128];      // which engine runs, for launch_t.path
} cudnn_plan_t;

static void cudnn_plan_release(cudnn_plan_t *st) {
    if (st->pack) cudnnBackendDestroyDescriptor(st->pack);
    if (st->plan) cudnnBackendDestroyDescriptor(st->plan);
    if (st->workspace) CUDA_CHECK(cudaFree(st->workspace));
    cudnn_destroy_all(&st->keep);
    st->plan = st->pack = NULL;
    st->workspace = NULL;
    st->path[0] = 0;
}

// One engine config tried: its plan, workspace and variant pack, and what came of it.
typedef struct {
    cudnnBackendDescriptor_t plan, pack;
    void *workspace;
    int64_t engine;    // global index (-1: not known)
    int rtc;           // the engine compiles its kernel at run time (NVRTC), in plan finalization
    int ran;           // the trial execution succeeded
    double ms;         // median of the timed executions (0: not timed)
} cudnn_cand_t;

static void cudnn_cand_free(cudnn_cand_t *c) {
    if (c->pack) cudnnBackendDestroyDescriptor(c->pack);
    if (c->plan) cudnnBackendDestroyDescriptor(c->plan);
    if (c->workspace) CUDA_CHECK(cudaFree(c->workspace));
    c->plan = c->pack = NULL;
    c->workspace = NULL;
}

// The engine behind a config: its global index and whether it compiles at run time (for the log only;
// a failure here just leaves them unknown).
static void cudnn_engine_info(cudnnBackendDescriptor_t cfg, cudnn_cand_t *c) {
    cudnnBackendDescriptor_t eng;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) != CUDNN_STATUS_SUCCESS) return;
    int64_t got = 0, index = -1;
    if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &eng) ==
            CUDNN_STATUS_SUCCESS && got == 1) {
        if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &index) ==
                CUDNN_STATUS_SUCCESS && got == 1)
            c->engine = index;
        cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
        if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                     CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &got, notes) == CUDNN_STATUS_SUCCESS)
            for (int64_t i = 0; i < got && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; i++)
                if (notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) c->rtc = 1;
    }
    cudnnBackendDestroyDescriptor(eng);
    cudnn_last_error();  // a failure here is no one's reason: clear cuDNN's message
}

// Plan, workspace, variant pack and one trial execution for one engine config (NULL: it ran; else why not).
// The trial writes the problem's outputs; the harness poisons them again before validating.
static const char *cudnn_try_config(cudnnBackendDescriptor_t cfg, const int64_t *uids, void *const *ptrs, int n,
                                    cudnn_cand_t *c) {
    cudnnHandle_t h = cudnn_handle();
    CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &c->plan));
    CUDNN_SET(c->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    CUDNN_SET(c->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    REASON_TRY(cudnn_finalize(c->plan, "plan"));
    int64_t ws = 0, got = 0;
    const cudnnBackendAttributeName_t WORKSPACE_SIZE = CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE;
    CUDNN_TRY(cudnnBackendGetAttribute(c->plan, WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, &ws));
    if (ws > 0) {
        cudaError_t e = cudaMalloc(&c->workspace, (size_t)ws);
        if (e != cudaSuccess) {
            c->workspace = NULL;
            cudaGetLastError();  // an allocation failure is not sticky; clear it
            return reasonf("workspace of %lld bytes: %s", (long long)ws, cudaGetErrorString(e));
        }
    }
    CUDNN_TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &c->pack));
    CUDNN_SET(c->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    CUDNN_SET(c->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs);
    CUDNN_SET(c->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &c->workspace);
    REASON_TRY(cudnn_finalize(c->pack, "variant pack"));
    cudnnStatus_t s = cudnnBackendExecute(h, c->plan, c->pack);
    if (s != CUDNN_STATUS_SUCCESS) return reasonf("cuDNN execute: %s%s", cudnn_status_text(s), cudnn_last_error());
    CUDA_CHECK(cudaDeviceSynchronize());  // a fault in cuDNN's kernel is fatal to the context: exit
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return reasonf("execute: %s", cudaGetErrorString(e));
    c->ran = 1;
    return NULL;
}

// The engine configs the heuristics give in `mode` for `graph` (at most max, best predicted first).
static const char *cudnn_heuristics(cudnn_descs_t *keep, cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode,
                                    cudnnBackendDescriptor_t *cfgs, int max, int *n_out) {
    *n_out = 0;
    cudnnBackendDescriptor_t heur;
    REASON_TRY(cudnn_create(keep, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    REASON_TRY(cudnn_finalize(heur, "heuristics"));
    int64_t count = 0, got = 0;
    const cudnnBackendAttributeName_t RESULTS = CUDNN_ATTR_ENGINEHEUR_RESULTS;
    CUDNN_TRY(cudnnBackendGetAttribute(heur, RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL));  // the count
    if (count > max) count = max;
    if (count <= 0) return NULL;
    for (int64_t i = 0; i < count; i++) REASON_TRY(cudnn_create(keep, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]));
    CUDNN_TRY(cudnnBackendGetAttribute(heur, RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs));
    *n_out = (int)(got < count ? got : count);
    return NULL;
}

typedef struct {
    cudnnBackendDescriptor_t plan, pack;
    cudnnStatus_t status;  // the first failure while timing
} cudnn_exec_t;
static void cudnn_exec_work(void *ctx) {
    cudnn_exec_t *e = (cudnn_exec_t *)ctx;
    cudnnStatus_t s = cudnnBackendExecute(cudnn_handle(), e->plan, e->pack);
    if (s != CUDNN_STATUS_SUCCESS && e->status == CUDNN_STATUS_SUCCESS) e->status = s;
}

static void appendf(char *buf, size_t size, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

#define CUDNN_MAX_CONFIGS 16  // engine configs tried at most (heuristics mode A and fallback together)
#define CUDNN_PLAN_REPEATS 10 // timed executions of each config, when there is a choice to make

// From finalized operations to the fastest execution plan, kept in st (its graph's descriptors in st->keep).
// uids/ptrs: every non-virtual tensor's unique id and data pointer (a host pointer for by-value scalars; it
// must stay valid while the plan is used). Prints one line: the configs tried, each one's time or why not.
// NULL when a plan is ready, else the reason ("cuDNN has no engine for <label> (...)").
static const char *cudnn_pick_plan(cudnn_plan_t *st, cudnnBackendDescriptor_t *ops, int n_ops, const int64_t *uids,
                                   void *const *ptrs, int n_ptrs, const char *label) {
    cudnnHandle_t h = cudnn_handle();
    cudnnBackendDescriptor_t graph;
    REASON_TRY(cudnn_create(&st->keep, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
    CUDNN_SET(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n_ops, ops);
    CUDNN_SET(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    REASON_TRY(cudnn_finalize(graph, "operation graph"));

    static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    static const char *mode_names[2] = {"A", "fallback"};
    cudnn_cand_t cand[CUDNN_MAX_CONFIGS];
    int cand_mode[CUDNN_MAX_CONFIGS];
    memset(cand, 0, sizeof cand);
    int tried = 0, ran = 0;
    char log[2048] = "", first_why[160] = "";
    snprintf(log, sizeof log, "cuDNN %s plans %s:", cudnn_version_string(), label);
    for (int m = 0; m < 2 && !ran && tried < CUDNN_MAX_CONFIGS; m++) {
        cudnnBackendDescriptor_t cfgs[CUDNN_MAX_CONFIGS];
        int n = 0;
        const char *why = cudnn_heuristics(&st->keep, graph, modes[m], cfgs, CUDNN_MAX_CONFIGS - tried, &n);
        if (why) {
            appendf(log, sizeof log, " heuristics %s: %s;", mode_names[m], why);
            if (!first_why[0]) snprintf(first_why, sizeof first_why, "heuristics %s: %s", mode_names[m], why);
            continue;
        }
        appendf(log, sizeof log, " heuristics %s: %d config%s;", mode_names[m], n, n == 1 ? "" : "s");
        for (int i = 0; i < n; i++) {
            cudnn_cand_t *c = &cand[tried];
            c->engine = -1;
            cand_mode[tried] = m;
            tried++;
            cudnn_engine_info(cfgs[i], c);
            why = cudnn_try_config(cfgs[i], uids, ptrs, n_ptrs, c);
            appendf(log, sizeof log, " [%d] engine %lld%s: %s;", tried, (long long)c->engine, c->rtc ? " (rtc)" : "",
                    why ? why : "ran");
            if (why) {
                if (!first_why[0]) snprintf(first_why, sizeof first_why, "%s", why);
                cudnn_cand_free(c);
            } else {
                ran++;
                if (g_check_only) break;  // --check: the heuristics' first config that runs, untimed
            }
        }
    }
    int best = -1;
    for (int i = 0; i < tried; i++) {
        cudnn_cand_t *c = &cand[i];
        if (!c->ran) continue;
        if (ran > 1) {  // a choice to make: time each, cold L2, as the harness times kernels
            cudnn_exec_t e = {c->plan, c->pack, CUDNN_STATUS_SUCCESS};
            timing_t t = time_cold(cudnn_exec_work, &e, CUDNN_PLAN_REPEATS);
            if (e.status != CUDNN_STATUS_SUCCESS) {
                appendf(log, sizeof log, " [%d] timing: cuDNN execute: %s%s;", i + 1, cudnn_status_text(e.status),
                        cudnn_last_error());
                c->ran = 0;
                cudnn_cand_free(c);
                continue;
            }
            c->ms = t.median_ms;
            appendf(log, sizeof log, " [%d] %.4f ms;", i + 1, c->ms);
        }
        if (best < 0 || c->ms < cand[best].ms) best = i;
    }
    if (best < 0) {
        printf("%s none ran\n", log);
        if (!tried && !first_why[0])
            return reasonf("cuDNN has no engine for %s (the heuristics gave no config)", label);
        return reasonf("cuDNN has no engine for %s (%d config%s tried; %s)", label, tried, tried == 1 ? "" : "s",
                       first_why);
    }
    for (int i = 0; i < tried; i++)
        if (i != best) cudnn_cand_free(&cand[i]);
    st->plan = cand[best].plan;
    st->pack = cand[best].pack;
    st->workspace = cand[best].workspace;
    snprintf(st->path, sizeof st->path, "cuDNN %s engine %lld (config %d of %d tried, heuristics %s)",
             cudnn_version_string(), (long long)cand[best].engine, best + 1, tried, mode_names[cand_mode[best]]);
    printf("%s chose [%d]%s\n", log, best + 1, ran > 1 ? " (fastest median)" : " (the only one that ran; not timed)");
    return NULL;
}

// One normalization forward as the graph sees it: x normalized over its trailing dims, rows = the leading
// ones. Training phase: the statistics are written, fp32 (cuDNN's compute type for norms is fp32).
#define CUDNN_MAX_DIMS 5
typedef struct {
    cudnnBackendNormMode_t mode;  // CUDNN_LAYER_NORM or CUDNN_RMS_NORM
    dtype_t dtype;                // x, y, scale, bias
    int nd;                       // dims of every tensor (2..5)
    int64_t x_dim[CUDNN_MAX_DIMS], x_stride[CUDNN_MAX_DIMS];
    int64_t y_stride[CUDNN_MAX_DIMS];                          // y has x's dims
    int64_t w_dim[CUDNN_MAX_DIMS], w_stride[CUDNN_MAX_DIMS];   // scale, bias: 1 over the row dims
    int64_t s_dim[CUDNN_MAX_DIMS], s_stride[CUDNN_MAX_DIMS];   // mean, inverse std: 1 over the normalized dims
    const void *x, *scale, *bias;  // bias NULL: none
    void *y;
    float *mean, *rstd;            // mean NULL: not computed (RMSNorm); rstd = 1 / sqrt(var + eps), per row
    float eps;                     // by value: the variant pack points at cudnn_norm_state_t.built.eps
    // backward: the norm-backward node instead, from x, scale, dy and the saved statistics to dx and the sums
    // dscale, dbias (dbias NULL: none; dscale and dbias in x's dtype); y, bias and eps unused
    int backward;
    const void *dy;
    void *dx, *dscale, *dbias;
    char label[96];                // "LayerNorm fp32 8192x768", for messages
} cudnn_norm_t;

// The 4-D dims and strides of x (y has x's dims), the scale/bias and the statistics.
static void cudnn_norm_dims(cudnn_norm_t *d, const int64_t xd[4], const int64_t xs[4], const int64_t ys[4],
                            const int64_t wd[4], const int64_t ws[4], const int64_t sd[4], const int64_t ss[4]) {
    d->nd = 4;
    memcpy(d->x_dim, xd, 4 * sizeof(int64_t));
    memcpy(d->x_stride, xs, 4 * sizeof(int64_t));
    memcpy(d->y_stride, ys, 4 * sizeof(int64_t));
    memcpy(d->w_dim, wd, 4 * sizeof(int64_t));
    memcpy(d->w_stride, ws, 4 * sizeof(int64_t));
    memcpy(d->s_dim, sd, 4 * sizeof(int64_t));
    memcpy(d->s_stride, ss, 4 * sizeof(int64_t));
}
// Rows of C contiguous elements, as cuDNN's own samples describe them: x and y [rows, C, 1, 1] with strides
// (C, 1, C, C) (channels last, the size-1 dims given C), scale and bias [1, C, 1, 1] the same way, the
// statistics [rows, 1, 1, 1] with unit strides.
static void cudnn_norm_rows(cudnn_norm_t *d, long rows, long C) {
    int64_t xd[4] = {rows, C, 1, 1}, xs[4] = {C, 1, C, C}, wd[4] = {1, C, 1, 1}, sd[4] = {rows, 1, 1, 1},
            ss[4] = {1, 1, 1, 1};
    cudnn_norm_dims(d, xd, xs, xs, wd, xs, sd, ss);
}

// What a program keeps for its kernel 0: the description planned for (the cache key), and the plan or why
// there is none. The last plan of a process is kept until the process exits, deliberately (each program
// plans one problem and runs it to the end); it is released when a different description replaces it.
typedef struct {
    int planned;          // `built` has an answer below
    cudnn_norm_t built;   // compared byte for byte (callers memset a description before filling it); epsilon's
                          // by-value pointer in the variant pack points at built.eps
    char skip[256];       // why there is no plan ("" when there is one)
    cudnn_plan_t plan;
} cudnn_norm_state_t;

enum { CUDNN_UID_X = 1, CUDNN_UID_SCALE, CUDNN_UID_BIAS, CUDNN_UID_EPS, CUDNN_UID_MEAN, CUDNN_UID_RSTD, CUDNN_UID_Y,
       CUDNN_UID_DY, CUDNN_UID_DX, CUDNN_UID_DSCALE, CUDNN_UID_DBIAS };

static void cudnn_add_ptr(int64_t *uids, void **ptrs, int *n, int64_t uid, const void *p) {
    uids[*n] = uid;
    ptrs[*n] = (void *)p;
    (*n)++;
}

// The finalized norm-backward operation of d (as cudnn_norm_op below, which calls it for d->backward).
static const char *cudnn_norm_bwd_op(const cudnn_norm_t *d, cudnn_descs_t *k, cudnnBackendDescriptor_t *op_out,
                                     int64_t *uids, void **ptrs, int *n_out) {
    cudnnDataType_t io = cudnn_dtype(d->dtype), f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t x, dy, dx, scale, dscale, dbias = NULL, mean = NULL, rstd, op;
    REASON_TRY(cudnn_tensor(k, &x, "x", CUDNN_UID_X, io, d->nd, d->x_dim, d->x_stride, false));
    REASON_TRY(cudnn_tensor(k, &dy, "dy", CUDNN_UID_DY, io, d->nd, d->x_dim, d->y_stride, false));
    REASON_TRY(cudnn_tensor(k, &dx, "dx", CUDNN_UID_DX, io, d->nd, d->x_dim, d->x_stride, false));
    REASON_TRY(cudnn_tensor(k, &scale, "scale", CUDNN_UID_SCALE, io, d->nd, d->w_dim, d->w_stride, false));
    REASON_TRY(cudnn_tensor(k, &dscale, "dscale", CUDNN_UID_DSCALE, io, d->nd, d->w_dim, d->w_stride, false));
    if (d->dbias) REASON_TRY(cudnn_tensor(k, &dbias, "dbias", CUDNN_UID_DBIAS, io, d->nd, d->w_dim, d->w_stride, false));
    if (d->mean) REASON_TRY(cudnn_tensor(k, &mean, "mean", CUDNN_UID_MEAN, f32, d->nd, d->s_dim, d->s_stride, false));
    REASON_TRY(cudnn_tensor(k, &rstd, "inv variance", CUDNN_UID_RSTD, f32, d->nd, d->s_dim, d->s_stride, false));
    REASON_TRY(cudnn_create(k, CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR, &op));
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &d->mode);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    if (mean) CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mean);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rstd);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dy);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &scale);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dscale);
    if (dbias) CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dbias);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dx);
    REASON_TRY(cudnn_finalize(op, "norm-backward operation"));
    *op_out = op;

    int n = 0;
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_X, d->x);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_SCALE, d->scale);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_DY, d->dy);
    if (d->mean) cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_MEAN, d->mean);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RSTD, d->rstd);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_DX, d->dx);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_DSCALE, d->dscale);
    if (d->dbias) cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_DBIAS, d->dbias);
    *n_out = n;
    return NULL;
}

// The finalized norm-forward (or, d->backward, norm-backward) operation of d (its descriptors kept in k), and the
// variant pack's unique ids and data pointers (uids/ptrs hold 8; *n gets the count). Needs no GPU.
static const char *cudnn_norm_op(const cudnn_norm_t *d, cudnn_descs_t *k, cudnnBackendDescriptor_t *op_out,
                                 int64_t *uids, void **ptrs, int *n_out) {
    if (d->backward) return cudnn_norm_bwd_op(d, k, op_out, uids, ptrs, n_out);
    cudnnDataType_t io = cudnn_dtype(d->dtype), f32 = CUDNN_DATA_FLOAT;
    int64_t ones[CUDNN_MAX_DIMS] = {1, 1, 1, 1, 1};
    cudnnBackendDescriptor_t x, y, scale, bias = NULL, eps, mean = NULL, rstd, op;
    REASON_TRY(cudnn_tensor(k, &x, "x", CUDNN_UID_X, io, d->nd, d->x_dim, d->x_stride, false));
    REASON_TRY(cudnn_tensor(k, &y, "y", CUDNN_UID_Y, io, d->nd, d->x_dim, d->y_stride, false));
    REASON_TRY(cudnn_tensor(k, &scale, "scale", CUDNN_UID_SCALE, io, d->nd, d->w_dim, d->w_stride, false));
    if (d->bias) REASON_TRY(cudnn_tensor(k, &bias, "bias", CUDNN_UID_BIAS, io, d->nd, d->w_dim, d->w_stride, false));
    REASON_TRY(cudnn_tensor(k, &eps, "epsilon", CUDNN_UID_EPS, f32, d->nd, ones, ones, true));
    if (d->mean) REASON_TRY(cudnn_tensor(k, &mean, "mean", CUDNN_UID_MEAN, f32, d->nd, d->s_dim, d->s_stride, false));
    REASON_TRY(cudnn_tensor(k, &rstd, "inv variance", CUDNN_UID_RSTD, f32, d->nd, d->s_dim, d->s_stride, false));

    cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_TRAINING;  // training: the statistics are written
    REASON_TRY(cudnn_create(k, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, &op));
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &d->mode);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    if (mean) CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mean);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rstd);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &scale);
    if (bias) CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bias);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &eps);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    REASON_TRY(cudnn_finalize(op, "norm-forward operation"));
    *op_out = op;

    int n = 0;
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_X, d->x);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_SCALE, d->scale);
    if (d->bias) cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_BIAS, d->bias);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_EPS, &d->eps);  // by value: a host pointer
    if (d->mean) cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_MEAN, d->mean);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RSTD, d->rstd);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_Y, d->y);
    *n_out = n;
    return NULL;
}

// The norm graph of st->built, then its plan.
static const char *cudnn_norm_build(cudnn_norm_state_t *st) {
    cudnnBackendDescriptor_t op;
    int64_t uids[8];
    void *ptrs[8];
    int n = 0;
    REASON_TRY(cudnn_norm_op(&st->built, &st->plan.keep, &op, uids, ptrs, &n));
    return cudnn_pick_plan(&st->plan, &op, 1, uids, ptrs, n, st->built.label);
}

// Kernel 0's supports() for a norm: plan d, or return the answer cached for it (the same description again,
// as for every supports() call on one problem, neither plans nor times anew). NULL when a plan is ready.
static const char *cudnn_norm_prepare(cudnn_norm_state_t *st, const cudnn_norm_t *d) {
    if (st->planned && memcmp(&st->built, d, sizeof *d) == 0) return st->skip[0] ? st->skip : NULL;
    cudnn_plan_release(&st->plan);
    memcpy(&st->built, d, sizeof *d);  // the plan's description: epsilon's by-value pointer points in here
    st->planned = 1;
    st->skip[0] = 0;
    const char *why = cudnn_norm_build(st);
    if (!why) return NULL;
    snprintf(st->skip, sizeof st->skip, "%s", why);
    cudnn_plan_release(&st->plan);
    return st->skip;
}

// Kernel 0's launch(): execute the plan on the default stream; say which engine ran.
static void cudnn_plan_execute(const cudnn_plan_t *p, launch_t *l) {
    if (!p->plan || !p->pack) {
        fprintf(stderr, "cuDNN error: kernel 0 launched without a plan (supports() did not plan this problem)\n");
        exit(EXIT_CUDA);
    }
    CUDNN_CHECK(cudnnBackendExecute(cudnn_handle(), p->plan, p->pack));
    l->block_used = 0;
    snprintf(l->path, sizeof l->path, "%s", p->path);
}

// ------------------------------------------------------------------------------------------------
// cuDNN's legacy BatchNorm API (batchnorm_forward's kernel 0): cudnnBatchNormalizationForwardTraining, the Ex
// form cudnnBatchNormalizationForwardTrainingEx (the one with the fast NHWC kernels of
// CUDNN_BATCHNORM_SPATIAL_PERSISTENT; it takes a workspace and a reserve space of the sizes cuDNN asks for) and
// cudnnBatchNormalizationForwardInference. cuDNN 9 marks these legacy functions deprecated (the graph API's
// norm-forward node is the successor) but still ships them. The headers mark them deprecated only where
// CUDNN_WARN_DEPRECATED is defined; the pragmas around this section keep even that build free of warnings.
// A program's kernel 0 refuses a --block-size (cudnn_refuse_block_size), fills a cudnn_bn_t from its problem and
// calls cudnn_bn_supports() in supports() (the shapes cuDNN is not asked about, cudnn_bn_precheck, then
// cudnn_bn_prepare) and cudnn_bn_execute() in its launch().
//
// Descriptors: x and y are [N, C, H, W] in the given format (CUDNN_TENSOR_NCHW or _NHWC), dtype fp32, fp16 or
// bf16. Where H*W = 1 NCHW and NHWC describe the same memory, and both formats are tried, the given one first.
// gamma, beta and the statistics use the descriptor cudnnDeriveBNTensorDescriptor gives (1 x C x 1 x 1, fp32 for
// all three dtypes; checked, since the buffers are fp32 vectors of C).
// Candidates (call x mode x format): training tries ForwardTraining and ForwardTrainingEx (bnOps
// CUDNN_BATCHNORM_OPS_BN, no z, no activation) with CUDNN_BATCHNORM_SPATIAL and _SPATIAL_PERSISTENT, plus
// ForwardTraining with CUDNN_BATCHNORM_PER_ACTIVATION where H*W = 1 (the same computation then, and PyTorch's
// choice for 2-D input); inference tries ForwardInference with the same modes. Both phases also try the graph API's
// norm-forward operation in CUDNN_BATCH_NORM mode ("Graph NHWC" or "Graph NCHW": the problem's own format;
// cudnn_bn_graph), its engine chosen by cudnn_pick_plan. cudnn_bn_prepare (outside the timed
// region) runs each candidate once (cuDNN's status, then the CUDA error state), times every one that ran with
// time_cold (10 cold-L2 launches) and keeps the fastest median; it prints one line per candidate (its time, or
// why it did not run). cudnn_bn_execute runs the chosen one. SPATIAL_PERSISTENT may round differently; it is held
// to the same tolerance. NORM_CUDNN_BN="ForwardTrainingEx SPATIAL_PERSISTENT" (any of the call, mode and format
// words) limits the candidates to those whose words match, so that each can be validated on its own (the GPU
// suite does).
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#pragma nv_diagnostic push
#pragma nv_diag_suppress 1444, 1215  // "declared deprecated" in nvcc's front end

// One BatchNorm forward as these functions see it, the problem's own buffers included. Callers memset it before
// filling it: the plan cache compares it byte for byte.
typedef struct {
    long N, C, H, W;                 // x and y: [N, C, H, W] (int dimensions and strides in the descriptors)
    cudnnTensorFormat_t format;      // of x and y: CUDNN_TENSOR_NCHW or CUDNN_TENSOR_NHWC
    dtype_t dtype;                   // x and y; gamma, beta and the statistics are fp32 vectors of C
    int training;                    // 1: ForwardTraining(Ex); 0: ForwardInference, which writes y alone
    float eps, momentum;             // momentum: exponentialAverageFactor
    const void *x;
    void *y;
    const float *gamma, *beta;
    float *save_mean, *save_invstd;  // training: resultSaveMean, resultSaveInvVariance (1/sqrt(var + eps))
    float *run_mean, *run_var;       // read; in training updated in place (the variance unbiased)
} cudnn_bn_t;

typedef enum {
    CUDNN_BN_CALL_TRAIN = 0,
    CUDNN_BN_CALL_TRAIN_EX = 1,
    CUDNN_BN_CALL_INFER = 2,
    CUDNN_BN_CALL_GRAPH = 3  // the graph API's norm-forward operation in CUDNN_BATCH_NORM mode (either phase)
} cudnn_bn_call_t;
static const char *const k_cudnn_bn_call_names[4] = {"ForwardTraining", "ForwardTrainingEx", "ForwardInference",
                                                     "Graph"};
static const char *const k_cudnn_bn_call_fns[4] = {"cudnnBatchNormalizationForwardTraining",
                                                   "cudnnBatchNormalizationForwardTrainingEx",
                                                   "cudnnBatchNormalizationForwardInference",
                                                   "cudnnBackendExecute (batch norm forward)"};
static const char *cudnn_format_name(cudnnTensorFormat_t f) { return f == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW"; }
static const char *cudnn_bn_mode_name(cudnnBatchNormMode_t m) {
    return m == CUDNN_BATCHNORM_SPATIAL_PERSISTENT ? "SPATIAL_PERSISTENT"
           : m == CUDNN_BATCHNORM_SPATIAL          ? "SPATIAL"
                                                   : "PER_ACTIVATION";
}

// One candidate: what it calls, its descriptors (x and y share xd: same shape, dtype and format), the Ex
// call's workspace and reserve space.
typedef struct {
    cudnn_bn_call_t call;
    cudnnBatchNormMode_t mode;
    cudnnTensorFormat_t format;
    char name[64];  // "ForwardTrainingEx SPATIAL_PERSISTENT NHWC"
    cudnnTensorDescriptor_t xd, bnd;
    void *ws, *reserve;
    size_t ws_bytes, reserve_bytes;
    cudnn_plan_t graph;  // CUDNN_BN_CALL_GRAPH: its plan, variant pack and workspace
    float *invstd;       // CUDNN_BN_CALL_GRAPH in inference: 1/sqrt(running_var + eps), which that phase takes
} cudnn_bn_cand_t;

static void cudnn_bn_cand_free(cudnn_bn_cand_t *c) {
    if (c->xd) cudnnDestroyTensorDescriptor(c->xd);
    if (c->bnd) cudnnDestroyTensorDescriptor(c->bnd);
    if (c->ws) CUDA_CHECK(cudaFree(c->ws));
    if (c->reserve) CUDA_CHECK(cudaFree(c->reserve));
    if (c->invstd) CUDA_CHECK(cudaFree(c->invstd));
    cudnn_plan_release(&c->graph);
    c->xd = c->bnd = NULL;
    c->ws = c->reserve = NULL;
    c->invstd = NULL;
    c->ws_bytes = c->reserve_bytes = 0;
}

// One execution of candidate c on the problem's buffers, on the default stream (cudnn_handle's stream).
static cudnnStatus_t cudnn_bn_run(const cudnn_bn_cand_t *c, const cudnn_bn_t *d) {
    const float one = 1.f, zero = 0.f;  // y = 1 * result + 0 * y: y is not read
    cudnnHandle_t h = cudnn_handle();
    double eps = (double)d->eps, factor = (double)d->momentum;  // the fp32 values the other kernels use
    switch (c->call) {
    case CUDNN_BN_CALL_TRAIN:
        return cudnnBatchNormalizationForwardTraining(h, c->mode, &one, &zero, c->xd, d->x, c->xd, d->y, c->bnd,
                                                      d->gamma, d->beta, factor, d->run_mean, d->run_var, eps,
                                                      d->save_mean, d->save_invstd);
    case CUDNN_BN_CALL_TRAIN_EX:
        return cudnnBatchNormalizationForwardTrainingEx(h, c->mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero, c->xd, d->x,
                                                        NULL, NULL, c->xd, d->y, c->bnd, d->gamma, d->beta, factor,
                                                        d->run_mean, d->run_var, eps, d->save_mean, d->save_invstd,
                                                        NULL, c->ws, c->ws_bytes, c->reserve, c->reserve_bytes);
    case CUDNN_BN_CALL_INFER:
        return cudnnBatchNormalizationForwardInference(h, c->mode, &one, &zero, c->xd, d->x, c->xd, d->y, c->bnd,
                                                       d->gamma, d->beta, d->run_mean, d->run_var, eps);
    default:
        return cudnnBackendExecute(h, c->graph.plan, c->graph.pack);
    }
}

// A cuDNN status as a reason that names the function ("cudnnBatchNormalizationForwardTrainingEx: not supported
// (3000): <cuDNN's message>"); NULL on success.
static const char *cudnn_bn_status(const char *what, cudnnStatus_t s) {
    if (s == CUDNN_STATUS_SUCCESS) return NULL;
    return reasonf("%s: %s%s", what, cudnn_status_text(s), cudnn_last_error());
}
static const char *cudnn_bn_device_buffer(void **buf, size_t bytes, const char *what) {
    if (!bytes) return NULL;
    cudaError_t e = cudaMalloc(buf, bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();  // not sticky: clear it
        *buf = NULL;
        return reasonf("%s of %zu bytes: %s", what, bytes, cudaGetErrorString(e));
    }
    CUDA_CHECK(cudaMemset(*buf, 0, bytes));  // defined contents (initcheck), whatever cuDNN reads
    return NULL;
}

// The graph API's candidate: one norm-forward operation in CUDNN_BATCH_NORM mode, x and y [N, C, H, W] with the
// strides of d's format, scale, bias and the statistics [1, C, 1, 1] fp32, epsilon and momentum by value (pointers
// into d, which the caller keeps). Training writes y, the saved mean and inverse std, and the running statistics
// (their previous and next tensors are the same buffers: updated in place, as the legacy calls do). Inference takes
// the mean and the inverse std, not the variance: c->invstd = 1/sqrt(running_var + eps) is computed once here,
// outside any timed region (a deployed model folds it the same way). cudnn_pick_plan chooses among the engine
// configs the heuristics give (each tried, the fastest kept) and prints its line.
static __global__ void cudnn_bn_invstd_kernel(const float *var, float eps, float *out, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = 1.f / sqrtf(var[i] + eps);
}
enum {
    CUDNN_UID_MOMENTUM = CUDNN_UID_Y + 1,
    CUDNN_UID_RUN_MEAN_IN,
    CUDNN_UID_RUN_VAR_IN,
    CUDNN_UID_RUN_MEAN_OUT,
    CUDNN_UID_RUN_VAR_OUT
};
static const char *cudnn_bn_graph(cudnn_bn_cand_t *c, const cudnn_bn_t *d) {
    cudnn_descs_t *k = &c->graph.keep;
    cudnnDataType_t io = cudnn_dtype(d->dtype), f32 = CUDNN_DATA_FLOAT;
    const int64_t N = d->N, C = d->C, H = d->H, W = d->W;
    const int64_t xd[4] = {N, C, H, W};
    const int64_t nchw[4] = {C * H * W, H * W, W, 1}, nhwc[4] = {H * W * C, 1, W * C, C};
    const int64_t *xs = c->format == CUDNN_TENSOR_NHWC ? nhwc : nchw;
    const int64_t vd[4] = {1, C, 1, 1}, vs[4] = {C, 1, C, C}, ones[4] = {1, 1, 1, 1};
    cudnnBackendDescriptor_t x, y, scale, bias, eps, mean, rstd, op;
    REASON_TRY(cudnn_tensor(k, &x, "x", CUDNN_UID_X, io, 4, xd, xs, false));
    REASON_TRY(cudnn_tensor(k, &y, "y", CUDNN_UID_Y, io, 4, xd, xs, false));
    REASON_TRY(cudnn_tensor(k, &scale, "scale", CUDNN_UID_SCALE, f32, 4, vd, vs, false));
    REASON_TRY(cudnn_tensor(k, &bias, "bias", CUDNN_UID_BIAS, f32, 4, vd, vs, false));
    REASON_TRY(cudnn_tensor(k, &eps, "epsilon", CUDNN_UID_EPS, f32, 4, ones, ones, true));
    REASON_TRY(cudnn_tensor(k, &mean, "mean", CUDNN_UID_MEAN, f32, 4, vd, vs, false));
    REASON_TRY(cudnn_tensor(k, &rstd, "inv variance", CUDNN_UID_RSTD, f32, 4, vd, vs, false));
    cudnnBackendNormMode_t mode = CUDNN_BATCH_NORM;
    cudnnBackendNormFwdPhase_t phase = d->training ? CUDNN_NORM_FWD_TRAINING : CUDNN_NORM_FWD_INFERENCE;
    REASON_TRY(cudnn_create(k, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, &op));
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mean);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rstd);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &scale);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bias);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &eps);
    CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    int64_t uids[12];
    void *ptrs[12];
    int n = 0;
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_X, d->x);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_Y, d->y);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_SCALE, d->gamma);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_BIAS, d->beta);
    cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_EPS, &d->eps);  // by value: a host pointer
    if (d->training) {
        cudnnBackendDescriptor_t mom, rm_in, rv_in, rm_out, rv_out;
        REASON_TRY(cudnn_tensor(k, &mom, "momentum", CUDNN_UID_MOMENTUM, f32, 4, ones, ones, true));
        REASON_TRY(cudnn_tensor(k, &rm_in, "running mean (in)", CUDNN_UID_RUN_MEAN_IN, f32, 4, vd, vs, false));
        REASON_TRY(cudnn_tensor(k, &rv_in, "running var (in)", CUDNN_UID_RUN_VAR_IN, f32, 4, vd, vs, false));
        REASON_TRY(cudnn_tensor(k, &rm_out, "running mean (out)", CUDNN_UID_RUN_MEAN_OUT, f32, 4, vd, vs, false));
        REASON_TRY(cudnn_tensor(k, &rv_out, "running var (out)", CUDNN_UID_RUN_VAR_OUT, f32, 4, vd, vs, false));
        CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mom);
        CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rm_in);
        CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rv_in);
        CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rm_out);
        CUDNN_SET(op, CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rv_out);
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_MEAN, d->save_mean);
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RSTD, d->save_invstd);
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_MOMENTUM, &d->momentum);  // by value
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RUN_MEAN_IN, d->run_mean);
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RUN_VAR_IN, d->run_var);
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RUN_MEAN_OUT, d->run_mean);  // in place
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RUN_VAR_OUT, d->run_var);
    } else {
        REASON_TRY(cudnn_bn_device_buffer((void **)&c->invstd, (size_t)C * sizeof(float), "inverse std"));
        cudnn_bn_invstd_kernel<<<(unsigned)((C + 255) / 256), 256>>>(d->run_var, d->eps, c->invstd, C);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_MEAN, d->run_mean);
        cudnn_add_ptr(uids, ptrs, &n, CUDNN_UID_RSTD, c->invstd);
    }
    REASON_TRY(cudnn_finalize(op, "batch norm-forward operation"));
    char label[96];
    snprintf(label, sizeof label, "BatchNorm %s %s %ldx%ldx%ldx%ld %s", d->training ? "training" : "inference",
             dtype_name(d->dtype), d->N, d->C, d->H, d->W, cudnn_format_name(c->format));
    return cudnn_pick_plan(&c->graph, &op, 1, uids, ptrs, n, label);
}

// A legacy candidate's descriptors, and the Ex call's workspace and reserve space.
static const char *cudnn_bn_legacy(cudnn_bn_cand_t *c, const cudnn_bn_t *d) {
    cudnnHandle_t h = cudnn_handle();
    CUDNN_TRY(cudnnCreateTensorDescriptor(&c->xd));
    CUDNN_TRY(cudnnSetTensor4dDescriptor(c->xd, c->format, cudnn_dtype(d->dtype), (int)d->N, (int)d->C, (int)d->H,
                                         (int)d->W));
    CUDNN_TRY(cudnnCreateTensorDescriptor(&c->bnd));
    REASON_TRY(
        cudnn_bn_status("cudnnDeriveBNTensorDescriptor", cudnnDeriveBNTensorDescriptor(c->bnd, c->xd, c->mode)));
    cudnnDataType_t t;
    int n, ch, hh, ww, sn, sc, sh, sw;
    CUDNN_TRY(cudnnGetTensor4dDescriptor(c->bnd, &t, &n, &ch, &hh, &ww, &sn, &sc, &sh, &sw));
    if (t != CUDNN_DATA_FLOAT || n != 1 || ch != (int)d->C || hh != 1 || ww != 1 || sc != 1)
        return reasonf("cuDNN's statistics descriptor is not an fp32 vector of C (type %d, %dx%dx%dx%d, C stride %d)",
                       (int)t, n, ch, hh, ww, sc);
    if (c->call == CUDNN_BN_CALL_TRAIN_EX) {
        REASON_TRY(cudnn_bn_status("cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize",
                                   cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                                       h, c->mode, CUDNN_BATCHNORM_OPS_BN, c->xd, NULL, c->xd, c->bnd, NULL,
                                       &c->ws_bytes)));
        REASON_TRY(cudnn_bn_status("cudnnGetBatchNormalizationTrainingExReserveSpaceSize",
                                   cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
                                       h, c->mode, CUDNN_BATCHNORM_OPS_BN, NULL, c->xd, &c->reserve_bytes)));
        REASON_TRY(cudnn_bn_device_buffer(&c->ws, c->ws_bytes, "workspace"));
        REASON_TRY(cudnn_bn_device_buffer(&c->reserve, c->reserve_bytes, "reserve space"));
    }
    return NULL;
}

// Descriptors, buffers and one trial execution of c (NULL: it ran; else why not). The trial writes the
// problem's outputs and updates the running statistics; the harness poisons and resets them before validating.
static const char *cudnn_bn_cand_prepare(cudnn_bn_cand_t *c, const cudnn_bn_t *d) {
    REASON_TRY(c->call == CUDNN_BN_CALL_GRAPH ? cudnn_bn_graph(c, d) : cudnn_bn_legacy(c, d));
    REASON_TRY(cudnn_bn_status(k_cudnn_bn_call_fns[c->call], cudnn_bn_run(c, d)));
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
        cudaGetLastError();
        return reasonf("%s: %s", k_cudnn_bn_call_fns[c->call], cudaGetErrorString(e));
    }
    return NULL;
}

// time_cold's work: one execution; the first failing status is kept (checked after timing).
typedef struct {
    const cudnn_bn_cand_t *c;
    const cudnn_bn_t *d;
    cudnnStatus_t status;
} cudnn_bn_work_t;
static void cudnn_bn_work(void *ctx) {
    cudnn_bn_work_t *w = (cudnn_bn_work_t *)ctx;
    cudnnStatus_t s = cudnn_bn_run(w->c, w->d);
    if (s != CUDNN_STATUS_SUCCESS && w->status == CUDNN_STATUS_SUCCESS) w->status = s;
}

// NORM_CUDNN_BN: every word in it must be one of the candidate's call, mode and format words.
static int cudnn_bn_cand_selected(const cudnn_bn_cand_t *c, const char *only) {
    if (!only || !*only) return 1;
    char words[256];
    snprintf(words, sizeof words, "%s", only);
    const char *fmt = cudnn_format_name(c->format);
    for (char *w = strtok(words, " ,"); w; w = strtok(NULL, " ,"))
        if (strcmp(w, k_cudnn_bn_call_names[c->call]) && strcmp(w, cudnn_bn_mode_name(c->mode)) && strcmp(w, fmt))
            return 0;
    return 1;
}

// What a program keeps for its kernel 0: the description planned for (the cache key), and the candidate chosen or
// why there is none. The last one of a process is kept until the process exits, deliberately (each program plans
// one problem and runs it to the end); it is released when a different description replaces it.
typedef struct {
    int planned;         // `built` has an answer below
    cudnn_bn_t built;    // compared byte for byte (callers memset a description before filling it)
    char skip[256];      // "" when a candidate was chosen
    cudnn_bn_cand_t best;
} cudnn_bn_state_t;

static void cudnn_bn_release(cudnn_bn_state_t *st) {
    cudnn_bn_cand_free(&st->best);
    st->planned = 0;
    st->skip[0] = 0;
}

// The shapes kernel 0 skips before cuDNN is asked (no GPU and no cuDNN call: the CPU tests call it): NULL or the
// reason. N*C*H*W >= 2^31 (int dimensions and strides; PyTorch sends such problems to its own kernels); eps below
// CUDNN_BN_MIN_EPSILON (0 in cuDNN 9); training with N*H*W = 1, where cuDNN applies M / (M - 1) and writes NaN into
// running_var (tensorflow/tensorflow#34062 and PR #40338, cudnn.torch#199), a different convention from the
// program's. NORM_CUDNN_BN_M1=run lifts that rule: the GPU suite then expects running_var alone wrong, with NaN, and
// says "drop the rule" if cuDNN matches.
static const char *cudnn_bn_precheck(const cudnn_bn_t *d) {
    const long M = d->N * d->H * d->W;
    if ((double)M * (double)d->C >= 2147483648.0)
        return "N*C*H*W >= 2^31: cuDNN's BatchNorm API describes tensors with 32-bit int dimensions and strides";
    if ((double)d->eps < CUDNN_BN_MIN_EPSILON)
        return reasonf("eps %g is below cuDNN's minimum CUDNN_BN_MIN_EPSILON = %g", (double)d->eps,
                       (double)CUDNN_BN_MIN_EPSILON);
    const char *m1 = getenv("NORM_CUDNN_BN_M1");  // "run": ask cuDNN anyway (the GPU suite checks the claim)
    if (d->training && M == 1 && !(m1 && strcmp(m1, "run") == 0))
        return "N*H*W = 1: cuDNN's running_var update divides by M - 1 = 0 (NaN); this program leaves running_var "
               "unchanged";
    return NULL;
}

#define CUDNN_BN_MAX_CANDS 12
#define CUDNN_BN_REPEATS 10

// Kernel 0's supports() for BatchNorm, after the program's own shape rules: every candidate for d tried and
// timed, the fastest kept in st (NULL), or why none ran. Asked again for the same description, the answer is
// returned without trying anything anew.
static const char *cudnn_bn_prepare(cudnn_bn_state_t *st, const cudnn_bn_t *d) {
    if (st->planned && memcmp(&st->built, d, sizeof *d) == 0) return st->skip[0] ? st->skip : NULL;
    cudnn_bn_release(st);
    st->planned = 1;
    memcpy(&st->built, d, sizeof *d);  // padding included: the cache compares bytes
    d = &st->built;

    // the candidates, in this order: the layout's own format first
    cudnn_bn_cand_t cand[CUDNN_BN_MAX_CANDS];
    int n = 0;
    memset(cand, 0, sizeof cand);
    cudnnTensorFormat_t formats[2] = {d->format,
                                      d->format == CUDNN_TENSOR_NCHW ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW};
    int n_formats = d->H * d->W == 1 ? 2 : 1;  // H*W = 1: both formats describe the same memory
    cudnn_bn_call_t calls[2] = {CUDNN_BN_CALL_TRAIN, CUDNN_BN_CALL_TRAIN_EX};
    int n_calls = 2;
    if (!d->training) {
        calls[0] = CUDNN_BN_CALL_INFER;
        n_calls = 1;
    }
    cudnnBatchNormMode_t modes[3] = {CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
                                     CUDNN_BATCHNORM_PER_ACTIVATION};
    const char *only = getenv("NORM_CUDNN_BN");
    for (int f = 0; f < n_formats; f++)
        for (int ci = 0; ci < n_calls; ci++)
            for (int m = 0; m < 3; m++) {
                // PER_ACTIVATION: H*W = 1 only (there it is the spatial computation), plain calls, NCHW as PyTorch
                if (m == 2 &&
                    (d->H * d->W != 1 || calls[ci] == CUDNN_BN_CALL_TRAIN_EX || formats[f] != CUDNN_TENSOR_NCHW))
                    continue;
                if (n == CUDNN_BN_MAX_CANDS - 1) continue;  // 9 at most (and the graph's): never
                cudnn_bn_cand_t *c = &cand[n];
                c->call = calls[ci];
                c->mode = modes[m];
                c->format = formats[f];
                snprintf(c->name, sizeof c->name, "%s %s %s", k_cudnn_bn_call_names[c->call],
                         cudnn_bn_mode_name(c->mode), cudnn_format_name(c->format));
                if (cudnn_bn_cand_selected(c, only)) n++;
            }
    {  // the graph API's norm-forward operation, in the problem's own format
        cudnn_bn_cand_t *c = &cand[n];
        c->call = CUDNN_BN_CALL_GRAPH;
        c->mode = CUDNN_BATCHNORM_SPATIAL;  // (what it computes; it takes no mode)
        c->format = d->format;
        snprintf(c->name, sizeof c->name, "Graph %s", cudnn_format_name(c->format));
        if (cudnn_bn_cand_selected(c, only)) n++;
    }
    if (!n) {
        snprintf(st->skip, sizeof st->skip, "NORM_CUDNN_BN='%s' matches no cuDNN candidate here", only ? only : "");
        return st->skip;
    }

    // try and time each, keep the fastest
    const char *ver = cudnn_version_string();
    int ran = 0, best = -1;
    double best_ms = 0;
    char first_why[160] = "";
    for (int i = 0; i < n; i++) {
        cudnn_bn_cand_t *c = &cand[i];
        const char *why = cudnn_bn_cand_prepare(c, d);
        double ms = 0;
        if (!why) {
            cudnn_bn_work_t w = {c, d, CUDNN_STATUS_SUCCESS};
            if (g_check_only) {  // --check: the first candidate that runs, untimed
                cudnn_bn_work(&w);
                CUDA_CHECK(cudaDeviceSynchronize());
            } else {
                ms = time_cold(cudnn_bn_work, &w, CUDNN_BN_REPEATS).median_ms;
            }
            if (w.status != CUDNN_STATUS_SUCCESS) why = cudnn_bn_status(k_cudnn_bn_call_fns[c->call], w.status);
        }
        if (why) {
            printf("cuDNN %s batchnorm candidate [%d/%d] %s: did not run: %s\n", ver, i + 1, n, c->name, why);
            if (!first_why[0]) snprintf(first_why, sizeof first_why, "[%d] %s: %s", i + 1, c->name, why);
            cudnn_bn_cand_free(c);
        } else {
            if (g_check_only)
                printf("cuDNN %s batchnorm candidate [%d/%d] %s: ran (--check: the first that runs, untimed)\n", ver,
                       i + 1, n, c->name);
            else
                printf("cuDNN %s batchnorm candidate [%d/%d] %s: %.4f ms (median of %d, cold L2)\n", ver, i + 1, n,
                       c->name, ms, CUDNN_BN_REPEATS);
            ran++;
            if (best < 0 || ms < best_ms) {
                if (best >= 0) cudnn_bn_cand_free(&cand[best]);
                best = i;
                best_ms = ms;
            } else {
                cudnn_bn_cand_free(c);
            }
        }
        fflush(stdout);
        if (g_check_only && best >= 0) break;
    }
    if (best < 0) {
        snprintf(st->skip, sizeof st->skip, "cuDNN %s ran none of its %d BatchNorm candidate%s (first %s)", ver, n,
                 n == 1 ? "" : "s", first_why);
        return st->skip;
    }
    st->best = cand[best];
    printf("cuDNN %s batchnorm chose [%d/%d] %s (%s)\n", ver, best + 1, n, cand[best].name,
           ran > 1 ? "the fastest median" : "the only candidate that ran");
    return NULL;
}

// Kernel 0's supports() for BatchNorm, after cudnn_refuse_block_size: the shapes cudnn_bn_precheck skips, then
// cudnn_bn_prepare.
static const char *cudnn_bn_supports(cudnn_bn_state_t *st, const cudnn_bn_t *d) {
    REASON_TRY(cudnn_bn_precheck(d));
    return cudnn_bn_prepare(st, d);
}

// Kernel 0's launch(): run the candidate chosen for d on the default stream; say which one ran.
static void cudnn_bn_execute(const cudnn_bn_state_t *st, const cudnn_bn_t *d, launch_t *l) {
    if (!st->planned || st->skip[0] || memcmp(&st->built, d, sizeof *d) != 0) {
        fprintf(stderr, "cuDNN error: kernel 0 launched without a plan (supports() did not plan this problem)\n");
        exit(EXIT_CUDA);
    }
    CUDNN_CHECK(cudnn_bn_run(&st->best, &st->built));
    l->block_used = 0;
    if (st->best.call == CUDNN_BN_CALL_GRAPH) {  // "cuDNN 9.x Graph NHWC, engine 3 (config 1 of 2 tried, ...)"
        const char *e = strstr(st->best.graph.path, "engine");
        snprintf(l->path, sizeof l->path, "cuDNN %.16s %.40s, %.56s", cudnn_version_string(), st->best.name,
                 e ? e : st->best.graph.path);
    } else
        snprintf(l->path, sizeof l->path, "cuDNN %s %s", cudnn_version_string(), st->best.name);
}

#pragma nv_diagnostic pop
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif  // HAVE_CUDNN
