// harness/measure.h: the measurement: the GPU clock (CUPTI), the L2 flush, cold and hot timing, and the copy
// that defines the speed of light.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

// ------------------------------------------------------------------------------------------------
// The clock: the GPU's own timestamps of the timed launches (CUPTI activity records), where CUPTI can record.
//
// Each timed launch runs inside a CUPTI external-correlation scope whose id names its repetition. CUPTI ties
// every kernel, memcpy and memset it records to the API call that issued it, and that call to the scope, so
// the GPU work of repetition i is known whoever launched it (our kernels, cuDNN through the driver API, a
// cudaMemcpyAsync). An op's time runs from its first activity's start to its last activity's end: the same
// quantity Nsight Compute's gpu__time_duration sums for a one-kernel op, with no launch latency and no CPU
// time in it. CUDA events around the launch stay as the second figure ("with launch").
// Where CUPTI cannot record (built without it, no permission, another profiler attached), the program says
// so once and times with the events; every CSV row names its clock.

static const char *g_clock_note;  // why the events are the clock (NULL while CUPTI records)

#if defined(HAVE_CUPTI)
#include <cupti.h>
#include <pthread.h>
#if CUPTI_API_VERSION < 130000
#error "the GPU clock reads CUDA 13's CUPTI records (CUpti_ActivityKernel10); build with CUPTI= to time with events"
#endif

typedef struct { uint32_t corr; uint64_t start, end; } gpu_activity_t;  // one kernel, memcpy or memset
typedef struct { uint32_t corr; uint64_t ext; } gpu_corr_t;            // API call -> repetition scope
static struct {
    pthread_mutex_t lock;  // CUPTI may hand buffers over from its own thread
    gpu_activity_t *act;
    size_t n_act, cap_act;
    gpu_corr_t *corr;
    size_t n_corr, cap_corr;
    size_t dropped;        // records CUPTI had no room for: the windows cannot be trusted
} g_rec = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, NULL, 0, 0, 0};
static int g_clock_state;        // 0 not opened yet, 1 CUPTI records, -1 events
static uint64_t g_clock_next_id = 1;

#define CUPTI_BUFFER_BYTES (8u << 20)
static void CUPTIAPI cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records) {
    *buf = (uint8_t *)aligned_alloc(8, CUPTI_BUFFER_BYTES);
    *size = *buf ? CUPTI_BUFFER_BYTES : 0;
    *max_records = 0;
}

template <typename T> static void grow_push(T **a, size_t *n, size_t *cap, T v) {
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 4096;
        *a = (T *)realloc(*a, *cap * sizeof(T));
        if (!*a) { fprintf(stderr, "out of host memory for CUPTI records\n"); exit(EXIT_CUDA); }
    }
    (*a)[(*n)++] = v;
}

// The three kinds of GPU activity share the fields the clock reads (under different record types).
template <typename R> static gpu_activity_t activity_of(const CUpti_Activity *rec) {
    const R *r = (const R *)rec;
    gpu_activity_t a = {r->correlationId, r->start, r->end};
    return a;
}

static void CUPTIAPI cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
    (void)size;
    pthread_mutex_lock(&g_rec.lock);
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL:
            grow_push(&g_rec.act, &g_rec.n_act, &g_rec.cap_act, activity_of<CUpti_ActivityKernel10>(r));
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            grow_push(&g_rec.act, &g_rec.n_act, &g_rec.cap_act, activity_of<CUpti_ActivityMemcpy6>(r));
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            grow_push(&g_rec.act, &g_rec.n_act, &g_rec.cap_act, activity_of<CUpti_ActivityMemset4>(r));
            break;
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)r;
            gpu_corr_t c = {e->correlationId, e->externalId};
            grow_push(&g_rec.corr, &g_rec.n_corr, &g_rec.cap_corr, c);
            break;
        }
        default: break;  // API records: needed for the correlation, not kept
        }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) g_rec.dropped += dropped;
    pthread_mutex_unlock(&g_rec.lock);
    free(buf);
}

static const char *cupti_error(CUptiResult r) {
    const char *s = NULL;
    cuptiGetResultString(r, &s);
    return s ? s : "unknown CUPTI error";
}

// Opens the GPU clock once: 1 when CUPTI records, else 0 with g_clock_note saying why.
static int gpu_clock_open(void) {
    if (g_clock_state) return g_clock_state > 0;
    // The runtime and driver API kinds are what the external correlation records attach to.
    static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                               CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                               CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                               CUPTI_ACTIVITY_KIND_MEMSET};
    CUptiResult r = cuptiActivityRegisterCallbacks(cupti_buffer_requested, cupti_buffer_completed);
    for (size_t i = 0; r == CUPTI_SUCCESS && i < sizeof kinds / sizeof kinds[0]; i++) r = cuptiActivityEnable(kinds[i]);
    if (r != CUPTI_SUCCESS) {
        static char why[160];
        snprintf(why, sizeof why, "CUPTI cannot record: %s", cupti_error(r));
        g_clock_note = why;
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) cuptiActivityDisable(kinds[i]);
        g_clock_state = -1;
        return 0;
    }
    g_clock_state = 1;
    return 1;
}

// Drains what CUPTI holds (records of earlier work) and returns the first id of `repeats` new scopes.
static uint64_t gpu_clock_begin(int repeats) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&g_rec.lock);
    g_rec.n_act = g_rec.n_corr = 0;
    g_rec.dropped = 0;
    pthread_mutex_unlock(&g_rec.lock);
    uint64_t first = g_clock_next_id;
    g_clock_next_id += (uint64_t)repeats;
    return first;
}
static void gpu_clock_push(uint64_t id) { cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id); }
static void gpu_clock_pop(void) {
    uint64_t last;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

static int cmp_corr(const void *a, const void *b) {
    uint32_t x = ((const gpu_corr_t *)a)->corr, y = ((const gpu_corr_t *)b)->corr;
    return (x > y) - (x < y);
}

// ms[i] = repetition i's window (first start to last end), for scopes first..first+repeats-1 (after the
// device is synchronized). 0 when a repetition has no GPU activity or records were dropped: then the caller
// keeps the events for this measurement and says so.
static int gpu_clock_windows(uint64_t first, int repeats, double *ms) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&g_rec.lock);
    qsort(g_rec.corr, g_rec.n_corr, sizeof(gpu_corr_t), cmp_corr);
    uint64_t *lo = (uint64_t *)malloc(repeats * sizeof(uint64_t)), *hi = (uint64_t *)calloc(repeats, sizeof(uint64_t));
    for (int i = 0; i < repeats; i++) lo[i] = UINT64_MAX;
    for (size_t i = 0; i < g_rec.n_act; i++) {
        const gpu_activity_t *a = &g_rec.act[i];
        gpu_corr_t key = {a->corr, 0};
        const gpu_corr_t *c = (const gpu_corr_t *)bsearch(&key, g_rec.corr, g_rec.n_corr, sizeof key, cmp_corr);
        if (!c || c->ext < first || c->ext >= first + (uint64_t)repeats) continue;  // a flush, or other work
        int rep = (int)(c->ext - first);
        if (a->start < lo[rep]) lo[rep] = a->start;
        if (a->end > hi[rep]) hi[rep] = a->end;
    }
    int ok = g_rec.dropped == 0;
    for (int i = 0; i < repeats && ok; i++) {
        ok = lo[i] != UINT64_MAX && hi[i] > lo[i];
        if (ok) ms[i] = (double)(hi[i] - lo[i]) * 1e-6;
    }
    pthread_mutex_unlock(&g_rec.lock);
    free(lo);
    free(hi);
    return ok;
}
#else
static int gpu_clock_open(void) {
    g_clock_note = "built without CUPTI";
    return 0;
}
static uint64_t gpu_clock_begin(int repeats) { (void)repeats; return 0; }
static void gpu_clock_push(uint64_t id) { (void)id; }
static void gpu_clock_pop(void) {}
static int gpu_clock_windows(uint64_t first, int repeats, double *ms) { (void)first; (void)repeats; (void)ms; return 0; }
#endif

// ------------------------------------------------------------------------------------------------
// Timing: cold L2 before every timed launch, the GPU clock (or events) around the launch alone, warm-up,
// median and min.

typedef void (*work_fn)(void *ctx);
typedef struct {
    double median_ms, min_ms;                // the reported time, on `clock`
    double launch_median_ms, launch_min_ms;  // CUDA events around the launch ("with launch")
    int repeats;
    const char *clock;                       // "cupti" (the GPU's kernel timestamps) or "events"
    int chained;                             // hot: programmatic edges in the captured graph (time_hot)
} timing_t;

static char *g_flush;
static size_t g_flush_bytes;  // the written part: 2 x L2
static size_t g_clean_bytes;  // then 3 x L2 read from another region

// Writing the flush buffer evicts everything from L2 but leaves it full of dirty lines, whose write-back
// would then be charged to the timed kernel; reading another region afterwards turns L2 into clean lines of
// data nobody uses, so the timed launch starts from a cold, clean cache. One L2 size of reads is not enough:
// it left part of the dirty lines behind (H100, 50 MB copy: 2586 GB/s after 1 x L2 of reads, 2838 after
// 3 x L2, 2853 with no flush writes at all; results/NOTES.md), so the harness reads 3 x L2.
__global__ void flush_write_kernel(int4 *buf, size_t n, int v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = make_int4(v, v, v, v);
}
__global__ void flush_read_kernel(const int4 *buf, size_t n, int *sink) {
    int acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        int4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) *sink = acc;  // practically never; keeps the loads alive
}

// NORM_FLUSH="wA,rB" (experiments, results/NOTES.md): write A x L2, then read B x L2 of a region never written
// ("write" = "w2,r0"); the default is w2,r3.
static void flush_l2(void) {
    static int counter = 0, wpass = 2, rpass = 3;
    if (!g_flush) {
        const char *mode = getenv("NORM_FLUSH");
        if (mode && strcmp(mode, "write") == 0) rpass = 0;
        else if (mode && sscanf(mode, "w%d,r%d", &wpass, &rpass) != 2) { fprintf(stderr, "bad NORM_FLUSH\n"); exit(2); }
        size_t l2 = g_dev.prop.l2CacheSize > 0 ? (size_t)g_dev.prop.l2CacheSize : (size_t)(64 << 20);
        g_flush_bytes = (size_t)wpass * l2;
        g_clean_bytes = (size_t)rpass * l2;
        CUDA_CHECK(cudaMalloc(&g_flush, g_flush_bytes + g_clean_bytes + 16));
        CUDA_CHECK(cudaMemset(g_flush, 0, g_flush_bytes + g_clean_bytes + 16));
    }
    int blocks = g_dev.prop.multiProcessorCount * 8;
    if (g_flush_bytes) flush_write_kernel<<<blocks, 256>>>((int4 *)g_flush, g_flush_bytes / 16, ++counter);
    if (g_clean_bytes)
        flush_read_kernel<<<blocks, 256>>>((const int4 *)(g_flush + g_flush_bytes), g_clean_bytes / 16,
                                           (int *)(g_flush + g_flush_bytes + g_clean_bytes));
    CUDA_CHECK_LAUNCH();
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Sorts t[0..n) and gives its median and minimum.
static void median_min(double *t, int n, double *median, double *min) {
    qsort(t, n, sizeof(double), cmp_double);
    *min = t[0];
    *median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

// The timed loop of both modes: `repeats` repetitions of run(ctx) (0 = automatic: about 100 ms of GPU work,
// 10..200), each after an L2 flush when cold, each inside its own GPU-clock scope and between two events; a
// repetition's times are divided by `per` (the launches it holds).
static timing_t time_loop(work_fn run, void *ctx, int repeats, int cold, int per) {
    int gpu_clock = gpu_clock_open();
    if (repeats <= 0) {  // estimate from three repetitions
        cudaEvent_t e0, e1;
        CUDA_CHECK(cudaEventCreate(&e0));
        CUDA_CHECK(cudaEventCreate(&e1));
        float est = 1e30f;
        for (int i = 0; i < 3; i++) {
            if (cold) flush_l2();
            CUDA_CHECK(cudaEventRecord(e0));
            run(ctx);
            CUDA_CHECK(cudaEventRecord(e1));
            CUDA_CHECK(cudaEventSynchronize(e1));
            float ms;
            CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (ms < est) est = ms;
        }
        CUDA_CHECK(cudaEventDestroy(e0));
        CUDA_CHECK(cudaEventDestroy(e1));
        repeats = (int)(100.0 / (est > 1e-4 ? est : 1e-4));
        repeats = repeats < 10 ? 10 : repeats > 200 ? 200 : repeats;
    }
    cudaEvent_t *ev = (cudaEvent_t *)malloc(2 * (size_t)repeats * sizeof(cudaEvent_t));
    for (int i = 0; i < 2 * repeats; i++) CUDA_CHECK(cudaEventCreate(&ev[i]));
    uint64_t first = gpu_clock ? gpu_clock_begin(repeats) : 0;
    for (int i = 0; i < repeats; i++) {
        if (cold) flush_l2();
        CUDA_CHECK(cudaEventRecord(ev[2 * i]));
        if (gpu_clock) gpu_clock_push(first + i);
        run(ctx);
        if (gpu_clock) gpu_clock_pop();
        CUDA_CHECK(cudaEventRecord(ev[2 * i + 1]));
    }
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    double *launch = (double *)malloc(repeats * sizeof(double)), *gpu = (double *)malloc(repeats * sizeof(double));
    for (int i = 0; i < repeats; i++) {
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        launch[i] = ms / per;
    }
    for (int i = 0; i < 2 * repeats; i++) CUDA_CHECK(cudaEventDestroy(ev[i]));
    free(ev);
    timing_t r;
    memset(&r, 0, sizeof r);
    r.repeats = repeats;
    int on_gpu_clock = gpu_clock && gpu_clock_windows(first, repeats, gpu);
    if (gpu_clock && !on_gpu_clock)
        printf("clock: CUPTI missed GPU activity of a timed launch: this measurement uses CUDA events\n");
    r.clock = on_gpu_clock ? "cupti" : "events";
    median_min(launch, repeats, &r.launch_median_ms, &r.launch_min_ms);
    if (on_gpu_clock) {
        for (int i = 0; i < repeats; i++) gpu[i] /= per;
        median_min(gpu, repeats, &r.median_ms, &r.min_ms);
    } else {
        r.median_ms = r.launch_median_ms;
        r.min_ms = r.launch_min_ms;
    }
    free(launch);
    free(gpu);
    return r;
}

// Untimed launches before either mode times (module load, first-touch, plans or caches kept by launchers): two,
// or one where the first took longer than LONG_LAUNCH_MS. Returns the first one's time (events, ms).
#define LONG_LAUNCH_MS 100.0
static double warm_up(work_fn fn, void *ctx) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0));
    fn(ctx);
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    if (ms <= LONG_LAUNCH_MS) fn(ctx);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return ms;
}
// The repetitions of a configuration whose launch takes `ms`: `repeats`, but for a launch longer than
// LONG_LAUNCH_MS about a second's worth, at least 3 (a block size far from the right one must not cost minutes:
// its median over 3 launches is enough to rank it). Pure: the CPU tests ask it.
static int repeats_for(int repeats, double ms) {
    if (ms <= LONG_LAUNCH_MS) return repeats;
    const int cap = (int)(1000.0 / ms) > 3 ? (int)(1000.0 / ms) : 3;
    return repeats <= 0 || repeats > cap ? cap : repeats;
}
// Cold timing (the default): warm-up, then each launch after an L2 flush.
static timing_t time_cold(work_fn fn, void *ctx, int repeats) {
    const double first = warm_up(fn, ctx);
    return time_loop(fn, ctx, repeats_for(repeats, first), 1, 1);
}

// Hot timing (--hot), a decode step's case: the inputs were just written by the kernel before (they sit in L2)
// and the launches come from a CUDA graph. HOT_LAUNCHES launches of fn are captured in one graph, the graph is
// replayed back to back with no flush, and a replay's time (first kernel start to last kernel end; events
// around it for "with launch") / HOT_LAUNCHES is the time a launch: the gaps between launches inside the graph
// are part of it, as they are of a decode step. NULL, or why fn cannot be captured (then *r is not set).
static void graph_replay(void *ctx) { CUDA_CHECK(cudaGraphLaunch(*(cudaGraphExec_t *)ctx, cudaStreamPerThread)); }
// The programmatic edges of a captured graph: where a launch carried programmatic stream serialization, its
// successor may start while it ends (PDL). Nonzero without --pdl when a library's launches take PDL on their own:
// cuDNN 9.19's norm kernels do at many points (the engine it picks in the process decides), and there its hot time
// is a chained launch's.
static int graph_programmatic_edges(cudaGraph_t g) {
    size_t n = 0;
    if (cudaGraphGetEdges(g, NULL, NULL, NULL, &n) != cudaSuccess || n == 0) {
        cudaGetLastError();  // not sticky: clear it
        return 0;
    }
    cudaGraphNode_t *from = (cudaGraphNode_t *)malloc(2 * n * sizeof(cudaGraphNode_t));
    cudaGraphEdgeData *data = (cudaGraphEdgeData *)calloc(n, sizeof(cudaGraphEdgeData));
    int k = 0;
    if (cudaGraphGetEdges(g, from, from + n, data, &n) == cudaSuccess) {
        for (size_t i = 0; i < n; i++)
            k += data[i].type == cudaGraphDependencyTypeProgrammatic || data[i].from_port != cudaGraphKernelNodePortDefault;
    } else {
        cudaGetLastError();
    }
    free(from);
    free(data);
    return k;
}
// `launches` launches of fn captured in one graph and instantiated (*ge; *chained: its programmatic edges). NULL,
// or why fn cannot be captured (nothing ran; *ge not set).
static const char *capture_launches(work_fn fn, void *ctx, int launches, cudaGraphExec_t *ge, int *chained) {
    cudaGraph_t g = NULL;
    CUDA_CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < launches; i++) fn(ctx);
    cudaError_t e = cudaStreamEndCapture(cudaStreamPerThread, &g);
    *chained = e == cudaSuccess ? graph_programmatic_edges(g) : 0;
    if (e == cudaSuccess) e = cudaGraphInstantiate(ge, g, 0);
    if (g) CUDA_CHECK(cudaGraphDestroy(g));
    if (e != cudaSuccess) {
        cudaGetLastError();  // capture errors are not sticky: clear it
        return reasonf("its launch cannot be captured in a CUDA graph (%s)", cudaGetErrorString(e));
    }
    return NULL;
}
// One launch of fn as --hot times it: captured in a graph, the graph launched once and waited for (so that what
// is validated is the path the timing replays: a dispatcher reads its rows for captured launches there). NULL, or
// why fn cannot be captured (then nothing ran).
static const char *run_captured_once(work_fn fn, void *ctx) {
    cudaGraphExec_t ge = NULL;
    int chained = 0;
    const char *why = capture_launches(fn, ctx, 1, &ge, &chained);
    if (why) return why;
    graph_replay(&ge);
    CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    CUDA_CHECK(cudaGraphExecDestroy(ge));
    return NULL;
}
static const char *time_hot(work_fn fn, void *ctx, int repeats, timing_t *r) {
    const double first = warm_up(fn, ctx);
    cudaGraphExec_t ge = NULL;
    int chained = 0;
    const char *why = capture_launches(fn, ctx, HOT_LAUNCHES, &ge, &chained);
    if (why) return why;
    graph_replay(&ge);  // warm-up replays: the graph's first upload, and the inputs into L2
    graph_replay(&ge);
    *r = time_loop(graph_replay, &ge, repeats_for(repeats, first * HOT_LAUNCHES), 0, HOT_LAUNCHES);
    r->chained = chained;
    CUDA_CHECK(cudaGraphExecDestroy(ge));
    return NULL;
}

// The program's timing mode: hot (--hot) or cold. NULL, or why fn cannot be timed so.
static int g_hot;
static const char *time_mode(work_fn fn, void *ctx, int repeats, timing_t *r) {
    if (g_hot) return time_hot(fn, ctx, repeats, r);
    *r = time_cold(fn, ctx, repeats);
    return NULL;
}

// ------------------------------------------------------------------------------------------------
// Speed of light: a device-to-device copy of the same byte count (half read, half written), timed the
// same way; the fastest of cudaMemcpyAsync and a 16-byte vectorized copy kernel with streaming (evict-first)
// or plain access. The kernel moves one 16-byte vector a thread, a block per 256 vectors: on an H100 that beat
// a grid-stride loop with four loads a thread (and a one-wave grid) by 5-11% at 25-134 MB and matched
// cudaMemcpyAsync at 537 MB (results/NOTES.md). The plain form is there because LayerNorm's and RMSNorm's
// kernels measured faster with plain access: the copy they are held to gets the same choice.

typedef struct { void *src, *dst; size_t bytes; } copy_ctx_t;

template <bool CS> __global__ void copy16_kernel(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
    pdl_wait();  // --pdl: the copy overlaps its launches as the kernels do
    pdl_trigger();
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        if (CS) __stcs(dst + i, __ldcs(src + i));  // streaming (evict-first)
        else dst[i] = src[i];                      // plain
    }
}
static void copy_memcpy(void *ctx) {
    copy_ctx_t *c = (copy_ctx_t *)ctx;
    CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice));
}
template <bool CS> static void copy_kernel(void *ctx) {
    copy_ctx_t *c = (copy_ctx_t *)ctx;
    size_t n = c->bytes / 16;
    const int4 *src = (const int4 *)c->src;
    int4 *dst = (int4 *)c->dst;
    void *args[] = {&src, &dst, &n};
    launch_kernel((const void *)copy16_kernel<CS>, ceil_div((long)n, 256), 256, 0, args, 1);
}

// The phase probes (--phases): a read-only and a write-only kernel over half the bytes each, shaped like the copy
// kernel (one 16-byte vector a thread, a block per 256 vectors) and timed the same way. An op that cannot write
// before it has read everything (BatchNorm training: every row adds to every channel's sums) is bounded by read
// then write, not by the copy, whose reads and writes overlap. The read kernel keeps its loads by storing only
// where the vectors' XOR equals a value they never take (the buffer is filled with one byte), as a real
// reduction keeps its loads by writing its sum.
template <bool CS>
__global__ void read16_kernel(const int4 *__restrict__ src, int4 *__restrict__ sink, size_t n, int never) {
    pdl_wait();
    pdl_trigger();
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        int4 v = CS ? __ldcs(src + i) : src[i];
        if ((v.x ^ v.y ^ v.z ^ v.w) == never) *sink = v;
    }
}
template <bool CS> __global__ void write16_kernel(int4 *__restrict__ dst, size_t n) {
    pdl_wait();
    pdl_trigger();
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const int4 v = make_int4(0x3c3c3c3c, 0x3c3c3c3c, 0x3c3c3c3c, 0x3c3c3c3c);
    if (i < n) {
        if (CS) __stcs(dst + i, v);
        else dst[i] = v;
    }
}
template <bool CS> static void read_kernel(void *ctx) {
    copy_ctx_t *c = (copy_ctx_t *)ctx;
    size_t n = c->bytes / 16;
    const int4 *src = (const int4 *)c->src;
    int4 *sink = (int4 *)c->dst;
    int never = 1;  // the source holds 0x3c in every byte: each vector's XOR is 0
    void *args[] = {&src, &sink, &n, &never};
    launch_kernel((const void *)read16_kernel<CS>, ceil_div((long)n, 256), 256, 0, args, 1);
}
template <bool CS> static void write_kernel(void *ctx) {
    copy_ctx_t *c = (copy_ctx_t *)ctx;
    size_t n = c->bytes / 16;
    int4 *dst = (int4 *)c->dst;
    void *args[] = {&dst, &n};
    launch_kernel((const void *)write16_kernel<CS>, ceil_div((long)n, 256), 256, 0, args, 1);
}

typedef struct { double gbps, ms; double bytes; const char *method; } sol_t;

// The copy's buffers for an op that moves `bytes`: half of them read (src, every byte 0x3c), half written (dst),
// rounded up to whole 16-byte vectors. The probes use the same pair.
static copy_ctx_t copy_buffers(double bytes) {
    copy_ctx_t c;
    c.bytes = (size_t)ceil_div((long)(bytes / 2), 16) * 16;
    c.src = dev_alloc(c.bytes);
    c.dst = dev_alloc(c.bytes);
    CUDA_CHECK(cudaMemset(c.src, 0x3c, c.bytes));
    return c;
}
static void free_copy_buffers(copy_ctx_t *c) {
    CUDA_CHECK(cudaFree(c->src));
    CUDA_CHECK(cudaFree(c->dst));
}

// The fastest of fns[0..n) on the context, timed in the program's mode; the rate counts `bytes`.
static sol_t fastest_of(void (**fns)(void *), const char **names, int n, copy_ctx_t *c, double bytes, int repeats,
                        const char *what) {
    sol_t s;
    s.bytes = bytes;
    s.ms = 1e30;
    for (int k = 0; k < n; k++) {
        timing_t t;
        memset(&t, 0, sizeof t);
        const char *why = time_mode(fns[k], c, repeats, &t);
        if (why) {
            fprintf(stderr, "%s: the %s %s\n", what, names[k], why);
            exit(EXIT_CUDA);
        }
        if (t.median_ms < s.ms) {
            s.ms = t.median_ms;
            s.method = names[k];
        }
    }
    s.gbps = s.bytes / (s.ms * 1e-3) / 1e9;
    return s;
}

static sol_t measure_sol(double bytes, int repeats) {
    copy_ctx_t c = copy_buffers(bytes);
    void (*fns[3])(void *) = {copy_memcpy, copy_kernel<true>, copy_kernel<false>};
    const char *names[3] = {"cudaMemcpyAsync", "copy kernel", "copy kernel, plain access"};
    sol_t s = fastest_of(fns, names, 3, &c, 2.0 * c.bytes, repeats, "speed of light");
    free_copy_buffers(&c);
    return s;
}

// --phases: the read-only and the write-only probe over half the bytes each (streaming or plain access, the
// faster), in the program's timing mode.
static void measure_phases(double bytes, int repeats, sol_t *rd, sol_t *wr) {
    copy_ctx_t c = copy_buffers(bytes);
    void (*rfns[2])(void *) = {read_kernel<true>, read_kernel<false>};
    void (*wfns[2])(void *) = {write_kernel<true>, write_kernel<false>};
    const char *rnames[2] = {"read kernel", "read kernel, plain access"};
    const char *wnames[2] = {"write kernel", "write kernel, plain access"};
    *rd = fastest_of(rfns, rnames, 2, &c, (double)c.bytes, repeats, "phases");
    *wr = fastest_of(wfns, wnames, 2, &c, (double)c.bytes, repeats, "phases");
    free_copy_buffers(&c);
}
