// harness/gpu.h: the GPU the program runs on (its header line, a clean exit 2 without one) and the launch
// helpers: thread-block clusters, programmatic dependent launch.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

// ------------------------------------------------------------------------------------------------
// Device: header line, and a clean exit 2 when there is none.

typedef struct {
    int index;
    cudaDeviceProp prop;
    char name[256];
    char sm[16];
    char cuda[16];
    char driver[64];
} device_info_t;
static device_info_t g_dev;

// The NVIDIA driver version (580.x): /proc first, then NVML if it can be loaded; else the driver's CUDA version.
static void driver_version_string(char *out, size_t n) {
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        char line[512];
        if (fgets(line, sizeof line, f)) {
            // "NVRM version: NVIDIA UNIX ... Kernel Module [for x86_64]  580.159.04  Release Build ...":
            // the first token that starts with a digit and holds a dot
            for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
                if (isdigit((unsigned char)tok[0]) && strchr(tok, '.')) {
                    snprintf(out, n, "%s", tok);
                    fclose(f);
                    return;
                }
            }
        }
        fclose(f);
    }
    void *h = dlopen("libnvidia-ml.so.1", RTLD_LAZY);
    if (h) {
        typedef int (*init_t)(void);
        typedef int (*ver_t)(char *, unsigned);
        init_t init = (init_t)dlsym(h, "nvmlInit_v2");
        ver_t ver = (ver_t)dlsym(h, "nvmlSystemGetDriverVersion");
        if (init && ver && init() == 0 && ver(out, (unsigned)n) == 0) { dlclose(h); return; }
        dlclose(h);
    }
    int dv = 0;
    cudaDriverGetVersion(&dv);
    snprintf(out, n, "CUDA %d.%d", dv / 1000, (dv % 1000) / 10);
}

static void open_device(const program_t *prog, int index) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {  // no driver: the count is garbage, the error says why
        // With no driver at all the runtime says "CUDA driver version is insufficient": the driver version it
        // reads is 0 then, which tells the two apart.
        int dv = 0;
        if (e == cudaErrorInsufficientDriver && (cudaDriverGetVersion(&dv) != cudaSuccess || dv == 0))
            fprintf(stderr, "%s: no CUDA device (no CUDA driver found)\n", prog->binary);
        else
            fprintf(stderr, "%s: no CUDA device (%s)\n", prog->binary, cudaGetErrorString(e));
        exit(EXIT_USAGE);
    }
    if (count <= 0) {
        fprintf(stderr, "%s: no CUDA device\n", prog->binary);
        exit(EXIT_USAGE);
    }
    if (index >= count) {
        fprintf(stderr, "%s: no CUDA device %d (found %d)\n", prog->binary, index, count);
        exit(EXIT_USAGE);
    }
    e = cudaSetDevice(index);
    if (e == cudaSuccess) e = cudaFree(0);  // create the context now, so a broken device fails here
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: CUDA device %d is not usable (%s)\n", prog->binary, index, cudaGetErrorString(e));
        exit(EXIT_USAGE);
    }
    g_dev.index = index;
    CUDA_CHECK(cudaGetDeviceProperties(&g_dev.prop, index));
    snprintf(g_dev.name, sizeof g_dev.name, "%s", g_dev.prop.name);
    for (char *c = g_dev.name; *c; c++) if (*c == ',') *c = ' ';  // keep CSV fields clean
    snprintf(g_dev.sm, sizeof g_dev.sm, "sm_%d%d", g_dev.prop.major, g_dev.prop.minor);
    int rv = 0;
    cudaRuntimeGetVersion(&rv);
    snprintf(g_dev.cuda, sizeof g_dev.cuda, "%d.%d", rv / 1000, (rv % 1000) / 10);
    driver_version_string(g_dev.driver, sizeof g_dev.driver);
    printf("device %d: %s | %s | %d SMs | L2 %d MB | CUDA %s | driver %s\n", index, g_dev.name, g_dev.sm,
           g_dev.prop.multiProcessorCount, g_dev.prop.l2CacheSize >> 20, g_dev.cuda, g_dev.driver);
}

// ------------------------------------------------------------------------------------------------
// Thread-block clusters (sm_90+): a 1-D launch of `blocks` blocks in clusters of cl, and whether such
// clusters can be resident.

static cudaLaunchConfig_t cluster_config(long blocks, int bs, int cl, cudaLaunchAttribute *attr) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)blocks, 1, 1);
    cfg.blockDim = dim3(bs, 1, 1);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = 0;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = cl;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}
// --pdl (with --hot): the launches of launch_kernel() carry programmatic stream serialization.
static int g_pdl;

// Launches fn (a __global__ function; args as for cudaLaunchKernel) as `blocks` blocks of `block` threads with
// smem bytes of dynamic shared memory on the default stream: in clusters of cl blocks when cl > 1 (sm_90+; one
// block a cluster is a plain launch, any GPU, where sm_90's cluster queries see a cluster of one), and under --pdl
// as a programmatic dependent launch: it may begin while the grid before it ends, and fn's pdl_wait() holds its
// reads and writes until that grid has finished; chained: so whatever --pdl (the backward programs' sum of partials,
// chained to the kernel that writes them). blocks_y: a 2-D grid of blocks x blocks_y (no clusters).
static void launch_kernel(const void *fn, long blocks, dim3 block, size_t smem, void **args, int cl, int chained = 0,
                          unsigned blocks_y = 1) {
    cudaLaunchAttribute attr[2];
    cudaLaunchConfig_t cfg = cluster_config(blocks, 1, cl > 1 ? cl : 1, &attr[0]);
    cfg.gridDim.y = blocks_y;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.numAttrs = cl > 1 ? 1 : 0;
    if (g_pdl || chained) {
        attr[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
        cfg.numAttrs++;
    }
    cfg.attrs = attr;
    CUDA_CHECK(cudaLaunchKernelExC(&cfg, fn, args));
}

// Thread-block clusters and distributed shared memory exist from sm_90 on: the reason a cluster path is skipped
// on a GPU of compute capability `major` (named `sm`), or NULL. (A function of the capability, so the CPU tests
// can ask it about GPUs they do not have.)
static const char *needs_sm90(int major, const char *sm) {
    return major < 9 ? reasonf("needs sm_90 (thread-block clusters; this GPU is %s)", sm) : NULL;
}

// NULL when clusters of cl blocks of fn (bs threads) can be resident, and *resident (if given) how many
// clusters the whole GPU holds at once; else why not. Cached: dispatchers ask on every launch.
// smem: the dynamic shared memory of each block (opted into beforehand where it is over 48 KB).
static const char *cluster_fits_smem(const void *fn, int bs, int cl, size_t smem, int *resident) {
    static struct { const void *fn; int bs, cl; size_t smem; int n; char why[160]; } cache[32];
    static int ncache = 0;
    const char *why_arch = needs_sm90(g_dev.prop.major, g_dev.sm);
    if (why_arch) return why_arch;
    int i = 0;
    while (i < ncache && !(cache[i].fn == fn && cache[i].bs == bs && cache[i].cl == cl && cache[i].smem == smem)) i++;
    if (i == ncache) {
        if (ncache == 32) i = 31;  // full: reuse the last slot
        else ncache++;
        cache[i].fn = fn;
        cache[i].bs = bs;
        cache[i].cl = cl;
        cache[i].smem = smem;
        cache[i].n = 0;
        cache[i].why[0] = 0;
        const char *why = block_fits(fn, bs);
        if (why) {
            snprintf(cache[i].why, sizeof cache[i].why, "%s", why);
        } else {
            cudaLaunchAttribute attr;
            cudaLaunchConfig_t cfg = cluster_config(cl, bs, cl, &attr);  // grid of one cluster
            cfg.dynamicSmemBytes = smem;
            int n = 0;
            cudaError_t e = cudaOccupancyMaxActiveClusters(&n, fn, &cfg);
            if (e != cudaSuccess) {
                cudaGetLastError();  // not sticky: clear it
                snprintf(cache[i].why, sizeof cache[i].why, "a cluster of %d blocks x %d threads cannot launch (%s)",
                         cl, bs, cudaGetErrorString(e));
            } else if (n < 1) {
                snprintf(cache[i].why, sizeof cache[i].why, "a cluster of %d blocks x %d threads does not fit the GPU",
                         cl, bs);
            } else {
                cache[i].n = n;
            }
        }
    }
    if (resident) *resident = cache[i].n;
    return cache[i].why[0] ? cache[i].why : NULL;
}
static const char *cluster_fits(const void *fn, int bs, int cl) { return cluster_fits_smem(fn, bs, cl, 0, NULL); }
// The grid of a persistent kernel: the blocks of fn (bs threads, smem bytes of dynamic shared memory) resident at
// once (occupancy calculator, cached for the last 256 configurations asked: launchers run inside the timed region, a
// launcher may weigh two instances a launch, and a dispatcher's rule asks its rungs' plans about many instances and
// block sizes) x SMs, at most blocks_needed.
static long persist_grid(const void *fn, int bs, long blocks_needed, size_t smem) {
    static struct { const void *fn; int bs, nb; size_t smem; } cache[256];
    static int ncache = 0, next = 0;
    int i = 0;
    while (i < ncache && !(cache[i].fn == fn && cache[i].bs == bs && cache[i].smem == smem)) i++;
    if (i == ncache) {
        if (ncache < 256) ncache++;
        else i = next, next = (next + 1) % 256;  // full: replace the oldest
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&cache[i].nb, fn, bs, smem));
        cache[i].fn = fn;
        cache[i].bs = bs;
        cache[i].smem = smem;
    }
    long g = (long)cache[i].nb * g_dev.prop.multiProcessorCount;
    return g < blocks_needed ? g : blocks_needed;
}
// The threads of fn (bs a block) one SM holds at once (persist_grid's occupancy).
static long sm_threads(const void *fn, int bs) {
    return persist_grid(fn, bs, LONG_MAX, 0) / g_dev.prop.multiProcessorCount * bs;
}
// One wave of blocks of fn at bs threads with smem bytes of dynamic shared memory: persist_grid's resident blocks,
// at least one an SM.
static long one_wave(const void *fn, int bs, size_t smem = 0) {
    const long g = persist_grid(fn, bs, LONG_MAX, smem);
    return g > 0 ? g : g_dev.prop.multiProcessorCount;
}
// The static shared memory of fn (a kernel's arrays), its limit of dynamic shared memory set once to all the rest a
// block can opt in to (kernels that size their dynamic shared memory to what is left).
static size_t static_smem_opt_in(const void *fn) {
    static struct { const void *fn; size_t bytes; } cache[64];
    static int n = 0;
    for (int i = 0; i < n; i++)
        if (cache[i].fn == fn) return cache[i].bytes;
    cudaFuncAttributes fa;
    CUDA_CHECK(cudaFuncGetAttributes(&fa, fn));
    CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)(g_dev.prop.sharedMemPerBlockOptin - fa.sharedSizeBytes)));
    if (n < 64) cache[n++] = {fn, fa.sharedSizeBytes};
    return fa.sharedSizeBytes;
}
// Whether the GPU holds the whole grid of `rows` rows of cl blocks of fn (bs threads each) at once: the
// occupancy calculator's clusters where cl > 1, else blocks an SM x SMs. A kernel that keeps an operand in
// registers from its loads to its stores pays for it only where the grid comes in waves (the split rungs' forms).
static bool grid_fits_at_once(const void *fn, long rows, int cl, int bs) {
    int clusters = 0;
    if (cl > 1) return !cluster_fits_smem(fn, bs, cl, 0, &clusters) && rows <= clusters;
    return persist_grid(fn, bs, rows, 0) >= rows;
}
// Of a kernel's two forms, one keeping an operand in registers from its loads through its reduction (early), one
// loading it after the reduction (late): whether the late form pays. Its extra round trip costs every block, so it
// pays only where the grid comes in waves and it holds at least twice the early form's blocks an SM (the odd-rows
// rungs, results/NOTES.md).
static bool late_form_pays(const void *early, const void *late, long rows, int cl, int bs) {
    return !grid_fits_at_once(early, rows, cl, bs) && sm_threads(late, bs) >= 2 * sm_threads(early, bs);
}
// Clusters of more than 8 blocks (the portable size) are opted into once per kernel: NULL when fn may be launched
// in clusters of cl blocks, else why not (the cluster checks above then say it cannot launch).
static const char *allow_cluster_size(const void *fn, int cl) {
    if (cl <= 8 || cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess) return NULL;
    cudaGetLastError();  // not sticky: clear it
    return "this GPU refuses clusters of more than 8 blocks";
}
// Of a rung's two instances that take the same clusters (its plan checked `base`): `alt` where `alt_pays`, with its
// cluster size opted into, else `base`.
static const void *pick_instance(const void *base, const void *alt, bool alt_pays, int cl) {
    if (!alt_pays) return base;
    allow_cluster_size(alt, cl);
    return alt;
}

// The whole 16-byte packs in the middle of a row of C elements that may start anywhere (RowParts, in
// harness/device_helpers.h): at most C / VEC, whatever its head; one at least (split_row_plan's unit).
static long row_parts_packs(dtype_t d, long C) {
    long vec = 16 / (long)dtype_size(d);
    return C / vec > 0 ? C / vec : 1;
}
// split_row_plan's blocks a row when --cluster does not set them (below; pure: the CPU tests ask it for a GPU of
// `sms` SMs).
static int split_row_blocks(long N, long nvec, int packs, int max_bs, int req_bs, int sms) {
    const int per_block = req_bs ? req_bs : max_bs;
    int cl = 1;
    while (cl < 16 && (long)cl * per_block * packs < nvec) cl *= 2;
    while (!req_bs && cl > 1 && cl < 16 && N * cl * 2 <= sms) cl *= 2;
    return cl;
}
// The fewest threads (a multiple of 32) of each of cl blocks that hold a row of nvec packs at `packs` a thread.
static int split_fewest_threads(long nvec, int cl, int packs) {
    return (int)(32 * ceil_div(ceil_div(nvec, (long)cl * packs), 32));
}
// The threads a block of a split row needs at the blocks a block size bs gives it (split_row_blocks at req_bs = bs):
// the fewest multiple of 32 that hold the row, so that no thread is left without a pack where the row is no power of
// two (a plan's power of two at bf16 C = 5120: 256 threads x 4 packs for 640 packs; 160 hold them).
static int split_row_threads(long nvec, int packs, int bs) {
    const int t = split_fewest_threads(nvec, split_row_blocks(0, nvec, packs, bs, bs, 0), packs);
    return t < bs ? t : bs;
}
// The latency paths' plan (LayerNorm's and RMSNorm's dispatchers): a row of nvec packs over a cluster of CL
// blocks of bs threads that hold up to `packs` packs each. Its own rule (req_bs 0): CL = the fewest of 1, 2, .., 16
// whose blocks of <= max_bs threads hold the row (a cluster launch costs time: never more blocks than the row
// needs), then, for a row that needs a cluster anyway, twice the blocks while rows x 2 CL fit the SMs; threads: the
// fewest that hold a block's share. A block size given (req_bs): CL = the fewest blocks of that size that hold the
// row, so a sweep of block sizes is a sweep of blocks a row (the row's threads stay the same): a few rows of 16-32
// KB run up to 1.3x faster over 4 blocks than over the one block of 512 threads the rule gives (an SM's own load
// rate bounds a block), which the sweep finds and the dispatcher's table keeps. req_cl (--cluster) forces CL.
// fn_of(d, cl) is the kernel of a cluster size, for the residency check (16 blocks need the non-portable cluster
// attribute). Returns the block size, 0 where the row does not fit; the cluster size in *cl_out. The last plan is
// kept: dispatchers ask on every launch, inside the timed loop.
typedef const void *(*cluster_kernel_of_t)(dtype_t d, int cl);
static int split_row_plan_uncached(dtype_t d, long N, long nvec, int packs, int max_bs, int req_bs, int req_cl,
                                   cluster_kernel_of_t fn_of, int *cl_out);
static int split_row_plan(dtype_t d, long N, long nvec, int packs, int max_bs, int req_bs, int req_cl,
                          cluster_kernel_of_t fn_of, int *cl_out) {
    static struct { dtype_t d; long N, nvec; int packs, max_bs, req_bs, req_cl; cluster_kernel_of_t fn_of; int bs, cl; } c;
    static int have = 0;
    if (!have || c.d != d || c.N != N || c.nvec != nvec || c.packs != packs || c.max_bs != max_bs ||
        c.req_bs != req_bs || c.req_cl != req_cl || c.fn_of != fn_of) {
        c.d = d; c.N = N; c.nvec = nvec; c.packs = packs; c.max_bs = max_bs; c.req_bs = req_bs; c.req_cl = req_cl;
        c.fn_of = fn_of;
        c.cl = 0;
        c.bs = split_row_plan_uncached(d, N, nvec, packs, max_bs, req_bs, req_cl, fn_of, &c.cl);
        have = 1;
    }
    if (c.bs) *cl_out = c.cl;
    return c.bs;
}
static int split_row_plan_uncached(dtype_t d, long N, long nvec, int packs, int max_bs, int req_bs, int req_cl,
                                   cluster_kernel_of_t fn_of, int *cl_out) {
    int cl = req_cl ? req_cl : split_row_blocks(N, nvec, packs, max_bs, req_bs, g_dev.prop.multiProcessorCount);
    int bs = req_bs ? req_bs : split_fewest_threads(nvec, cl, packs);
    if (bs > max_bs || (long)bs * cl * packs < nvec || (double)N * cl > 2147483647.0) return 0;
    if (cl > 1) {
        const void *fn = fn_of(d, cl);
        if (needs_sm90(g_dev.prop.major, g_dev.sm)) return 0;
        if (allow_cluster_size(fn, cl) || cluster_fits(fn, bs, cl)) return 0;
    }
    *cl_out = cl;
    return bs;
}
