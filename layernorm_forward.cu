/*
LayerNorm forward: y = (x - mean) * rstd * weight + bias over the last dimension (C) of x[rows, C],
rstd = 1 / sqrt(var + eps), biased variance, eps 1e-5 (--eps). Outputs y (dtype of x) and the per-row
statistics mean and rstd (fp32), as a training forward pass saves them for the backward pass.

Kernels (`./layernorm_forward --list` prints the same registry; the CPU tests check that they agree):
   0  cudnn               cuDNN 9 graph API norm-forward (training phase), fastest of the heuristics' engine configs
   1  thread_per_row      one thread per row, three loops over the row
   2  three_launch        block per row: shared-memory tree for the mean, again for rstd, then one element per thread
   3  warp_per_row        one warp per row, cooperative-groups reductions, two-pass variance, streaming hints
   4  warp_single_pass    as 3 with var = E[x^2] - E[x]^2 in one pass: fast to write, loses precision
   5  block_per_row       one block per row: warp shuffles, then across warps through shared memory
   6  block_row_regs      one block per row with the row held in registers: x read once, two-pass on registers
   7  subwarp_regs_vec    a warp or part of one per row, row in registers, two group sums, 16-byte packs
   8  block_smem_welford  one block per row, row cached in shared memory, Welford all-reduce, occupancy block size
   9  block_reread        one block per row, no cache: Welford pass then a normalize pass that re-reads x
  10  subwarp_persistent  7's layout in a grid of resident blocks that walk the rows, the next row loaded early; 16-bit w, b kept
  11  cluster_row_regs    row in registers in 16-byte packs, split over a thread-block cluster when one block cannot hold it
  12  latency_split       a row over 1-16 blocks, w and b loaded with x, one reduction round
  13  odd_rows            rows of any length: a head to the first 16-byte boundary, 16-byte packs, a tail; a row over 1-16 blocks
  14  lean_split          12's row at <= 2 packs a thread, the launch order compiled in: less code at a cold start
  15  lean_one_pack       14's row at 1 pack a thread: twice the threads, the least work a thread before the sum
  16  walk_rows           12's row a block in a grid of resident blocks that walk the rows: w, b read once a block
  17  dispatch            a rule of regimes picks the rung, the rung's plan its block size; says which ran

Run:
  make && ./layernorm_forward 7                 validate kernel 7, sweep block sizes, time each
  ./layernorm_forward all --dtype bf16          every kernel, ranked
  ./layernorm_forward 17 -N 16384 -C 4096 --check
  ./layernorm_forward 12 -N 4 -C 65536 --cluster 8    a row over 8 blocks (--cluster: kernels 11-15, 17)
  ./layernorm_forward 13 -N 4 -C 32769 --dtype bf16   rows of odd length
  ./layernorm_forward --list                    the registry (no GPU needed)
Build it alone (make does this for the GPU it finds; -arch: your GPU's, sm_90 for an H100/H200, where the
cluster kernels have their code):
  nvcc -O3 -std=c++17 --default-stream per-thread -arch=sm_90 -Xcompiler -fopenmp -o layernorm_forward layernorm_forward.cu -lcurand -lgomp -ldl
  CUPTI (the GPU's own clock for the timing; else CUDA events): add -DHAVE_CUPTI -lcupti, and where the toolkit
    keeps CUPTI apart, -I<cuda>/extras/CUPTI/include -L<cuda>/extras/CUPTI/lib64
  cuDNN (kernel 0): add -DHAVE_CUDNN -lcudnn (-I/-L to cuDNN where it is not in the toolkit's directories)
Kernels 1-5 are the fp32 teaching ladder; 6-17 run fp32, fp16 and bf16 with fp32 arithmetic, except 10 (fp32
only: where it measured better than 7).
Kernel 0 is the vendor baseline where the build found cuDNN (else it says `skipped: built without cuDNN`): its
plan is built, and every engine config the heuristics give is tried (and timed, when several run), before
validation and outside the timed region; its planning line and the `path` say which engine runs.
*/
#include "common.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// ------------------------------------------------------------------------------------------------
// The problem

typedef struct {
    problem_t h;  // common header: dtype, shape, bytes, outputs
    long N, C;
    float eps;
    void *x, *w, *b, *y;  // dtype
    float *mean, *rstd;
    double *hx, *hw, *hb;  // host inputs, exactly the device values
} ln_problem_t;

static double g_eps = 1e-5;
static int g_cluster = 0;    // --cluster K: kernels 11-15 (17 through them) split rows over K blocks (0: their rule)
#define LN_DISPATCHER 17      // kernel 17, the dispatcher (the default kernel)

// Kernel arguments, one convention in all three programs: the plain fp32 ladder (kernels 1-5 here) takes
// llm.c's positional arguments; every templated kernel (6 on) takes this struct by value, first, and binds
// the fields it uses to typed __restrict__ locals. Values that belong to one launch only would follow it.
// (With these locals x's loads compile as with __restrict__ parameters; in the kernels that store y with
// __stcs, w and b come through plain loads instead of read-only ones: C elements, L1-resident; results/NOTES.md.)
typedef struct {
    const void *x, *w, *b;  // x [N, C]; weight and bias [C]: the run's dtype
    void *y;                // [N, C]
    float *mean, *rstd;     // [N]
    long N, C;
    float eps;
} ln_args_t;

// The arguments of the templated kernels (6 on), from the problem.
static ln_args_t ln_args(const ln_problem_t *p) {
    ln_args_t a = {p->x, p->w, p->b, p->y, p->mean, p->rstd, p->N, p->C, p->eps};
    return a;
}

// The widest pack (elements) that divides C: 16 bytes when it can.
static int vec_width(const ln_problem_t *p) { return (int)gcd_long(16 / (long)dtype_size(p->h.dtype), p->C); }
// 1 when C takes 16-byte packs (the pack width of kernels 10, 11, 12, 14 and 15).
static int full_packs(const ln_problem_t *p) { return vec_width(p) == 16 / (int)dtype_size(p->h.dtype); }

// The plans' terms (what the dispatcher launches a rung at, its registry entry's plan): rows an SM of this device
// (the waves); their block sizes are powers of two (harness/dispatch.h pow2_at_least).
static double rows_per_sm(const ln_problem_t *p) { return per_sm((double)p->N); }
// A plan's block size where the rung's supports_ takes it, else `other` (the rung's own sizing) where that is
// taken; bs where neither is (the dispatcher then moves on to the next regime).
static int plan_checked(const void *pp, const char *(*supports)(const void *, int), int bs, int other) {
    if (!supports(pp, bs) || !other || supports(pp, other)) return bs;
    return other;
}
// Block-per-row rungs 6 and 9: about one unit (kernel 6: an element, 9: a pack) a thread while rows < SMs, two
// up to 8 rows an SM, four beyond (many rows fill the GPU anyway; fewer threads a row, less reduction).
static int row_block_bs(long units, double rows_sm) {
    const int per_thread = rows_sm < 1 ? 1 : rows_sm < 8 ? 2 : 4;
    return pow2_at_least((double)units / per_thread, 32, 1024);
}

// ------------------------------------------------------------------------------------------------
// CPU reference, in double precision, two-pass, from the dtype-rounded inputs.

static void layernorm_forward_cpu(double *y, double *mean, double *rstd, const double *x, const double *w,
                                  const double *b, long N, long C, double eps) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long r = 0; r < N; r++) {
        const double *xr = x + r * C;
        double m = 0;
        for (long c = 0; c < C; c++) m += xr[c];
        m /= C;
        double v = 0;
        for (long c = 0; c < C; c++) v += (xr[c] - m) * (xr[c] - m);
        v /= C;
        double s = 1.0 / sqrt(v + eps);
        for (long c = 0; c < C; c++) y[r * C + c] = (xr[c] - m) * s * w[c] + b[c];
        mean[r] = m;
        rstd[r] = s;
    }
}

// ------------------------------------------------------------------------------------------------
// Kernel 0, cudnn: the vendor baseline. The graph API's norm-forward node in LayerNorm mode, training phase
// (it writes mean and rstd), x/y/weight/bias in the dtype, statistics and arithmetic in fp32, writing
// straight into this program's buffers. supports() builds the graph, tries every engine config the
// heuristics give and keeps the fastest (harness/cudnn.h, cudnn_norm_prepare); launch() only executes.
#ifdef HAVE_CUDNN
static cudnn_norm_state_t g_cudnn;

// The problem as cuDNN's graph sees it (no GPU needed: the CPU tests finalize its operation).
static void cudnn_describe(const ln_problem_t *p, cudnn_norm_t *d) {
    memset(d, 0, sizeof *d);  // compared byte for byte by the plan cache
    d->mode = CUDNN_LAYER_NORM;
    d->dtype = p->h.dtype;
    cudnn_norm_rows(d, p->N, p->C);
    d->x = p->x;
    d->scale = p->w;
    d->bias = p->b;
    d->y = p->y;
    d->mean = p->mean;
    d->rstd = p->rstd;
    d->eps = p->eps;
    snprintf(d->label, sizeof d->label, "LayerNorm %s %s", dtype_name(p->h.dtype), p->h.shape);
}
static const char *supports_cudnn(const void *pp, int bs) {
    REASON_TRY(cudnn_refuse_block_size(bs));
    cudnn_norm_t d;
    cudnn_describe((const ln_problem_t *)pp, &d);
    return cudnn_norm_prepare(&g_cudnn, &d);
}
static void launch_cudnn(const void *pp, launch_t *l) {
    (void)pp;  // the plan holds the problem's pointers
    cudnn_plan_execute(&g_cudnn.plan, l);
}
#endif

// ------------------------------------------------------------------------------------------------
// Kernel 1, thread_per_row: one thread per row, three loops over the row (mean, variance, normalize).
// Wrong: neighbouring threads read addresses C floats apart, so every load is its own memory
// transaction (uncoalesced), and there are only `rows` threads: too few to fill the GPU at small rows.

__global__ void layernorm_thread_per_row_kernel(const float *x, const float *w, const float *b, float *y, float *mean, float *rstd,
                                                long N, long C, float eps) {
    long row = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (row >= N) return;
    const float *xr = x + row * C;
    float m = 0.f;
    for (long c = 0; c < C; c++) m += xr[c];
    m /= C;
    float v = 0.f;
    for (long c = 0; c < C; c++) v += (xr[c] - m) * (xr[c] - m);
    v /= C;
    float s = 1.f / sqrtf(v + eps);
    float *yr = y + row * C;
    for (long c = 0; c < C; c++) yr[c] = (xr[c] - m) * s * w[c] + b[c];
    mean[row] = m;
    rstd[row] = s;
}
static void launch_thread_per_row(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    layernorm_thread_per_row_kernel<<<(unsigned)ceil_div(p->N, l->block_size), l->block_size>>>((const float *)p->x, (const float *)p->w, (const float *)p->b, (float *)p->y, p->mean, p->rstd, p->N, p->C, p->eps);
}

// ------------------------------------------------------------------------------------------------
// Kernel 2, three_launch: three launches. A block per row reduces the mean through a shared-memory tree; a second
// kernel does the same for rstd; a third normalizes one element per thread.
// Improves: coalesced reads (consecutive threads read consecutive elements) and a block of threads per row.
// Wrong: x crosses memory three times, mean/rstd take a round trip through global memory, the tree idles
// half the threads at each step, and three launches pay three launch latencies. Needs a power-of-two block.

__global__ void layernorm_three_launch_mean_kernel(const float *x, float *mean, long C) {
    extern __shared__ float shared[];
    const float *xr = x + blockIdx.x * C;
    float s = 0.f;
    for (long c = threadIdx.x; c < C; c += blockDim.x) s += xr[c];
    shared[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) mean[blockIdx.x] = shared[0] / C;
}

__global__ void layernorm_three_launch_rstd_kernel(const float *x, const float *mean, float *rstd, long C, float eps) {
    extern __shared__ float shared[];
    const float *xr = x + blockIdx.x * C;
    float m = mean[blockIdx.x];
    float s = 0.f;
    for (long c = threadIdx.x; c < C; c += blockDim.x) s += (xr[c] - m) * (xr[c] - m);
    shared[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) rstd[blockIdx.x] = 1.f / sqrtf(shared[0] / C + eps);
}

__global__ void layernorm_three_launch_normalize_kernel(const float *x, const float *w, const float *b, const float *mean,
                                                        const float *rstd, float *y, long N, long C) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= N * C) return;
    long row = i / C, c = i % C;
    y[i] = (x[i] - mean[row]) * rstd[row] * w[c] + b[c];
}

static void launch_three_launch(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int bs = l->block_size;
    size_t smem = bs * sizeof(float);
    layernorm_three_launch_mean_kernel<<<(unsigned)p->N, bs, smem>>>((const float *)p->x, p->mean, p->C);
    layernorm_three_launch_rstd_kernel<<<(unsigned)p->N, bs, smem>>>((const float *)p->x, p->mean, p->rstd, p->C, p->eps);
    layernorm_three_launch_normalize_kernel<<<(unsigned)ceil_div(p->N * p->C, bs), bs>>>(
        (const float *)p->x, (const float *)p->w, (const float *)p->b, p->mean, p->rstd, (float *)p->y, p->N, p->C);
}
static const char *supports_three_launch(const void *pp, int bs) {
    (void)pp;
    return is_pow2(bs) ? NULL : "the shared-memory tree needs a power-of-two block size";
}

// ------------------------------------------------------------------------------------------------
// Kernel 3, warp_per_row: one warp per row. Lanes stride over the row (coalesced), cooperative-groups reductions
// (shuffles, no shared memory, no __syncthreads), two-pass variance around the mean, __restrict__, and
// streaming cache hints on the last read of x and on y (evict-first: they are not read again).
// Improves: no shared memory and no block barrier; 32 lanes share a row instead of a block of mostly idle threads.
// Wrong: x is read three times (the re-reads mostly hit L1/L2, but cost instructions and bandwidth), loads
// are 4 bytes wide, and one warp per row leaves large rows to a single warp. The hints do not pay as a rule
// (kernels 6-8 use plain access); 9, 10 and 11 keep them where plain access measured slower (results/NOTES.md).

__global__ void layernorm_warp_per_row_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                              const float *__restrict__ b, float *__restrict__ y, float *__restrict__ mean,
                                              float *__restrict__ rstd, long N, long C, float eps) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    long row = blockIdx.x * (long)warp.meta_group_size() + warp.meta_group_rank();
    if (row >= N) return;
    const float *xr = x + row * C;
    float s = 0.f;
    for (long c = warp.thread_rank(); c < C; c += warp.size()) s += xr[c];
    float m = cg::reduce(warp, s, cg::plus<float>()) / C;
    float v = 0.f;
    for (long c = warp.thread_rank(); c < C; c += warp.size()) v += (xr[c] - m) * (xr[c] - m);
    float r = rsqrtf(cg::reduce(warp, v, cg::plus<float>()) / C + eps);
    float *yr = y + row * C;
    for (long c = warp.thread_rank(); c < C; c += warp.size()) __stcs(yr + c, (__ldcs(xr + c) - m) * r * w[c] + b[c]);
    if (warp.thread_rank() == 0) {
        __stcs(mean + row, m);
        __stcs(rstd + row, r);
    }
}
static void launch_warp_per_row(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    layernorm_warp_per_row_kernel<<<(unsigned)ceil_div(p->N, l->block_size / 32), l->block_size>>>((const float *)p->x, (const float *)p->w, (const float *)p->b, (float *)p->y, p->mean, p->rstd, p->N, p->C,
                                                                                       p->eps);
}

// ------------------------------------------------------------------------------------------------
// Kernel 4, warp_single_pass: as kernel 3, but sum and sum of squares in one pass: var = E[x^2] - E[x]^2.
// Improves: one read of x fewer before normalizing.
// Wrong: catastrophic cancellation. When |mean| >> std, E[x^2] and E[x]^2 are huge and nearly equal, and
// fp32 keeps only ~7 digits of each: with --input-mean 1000 (std 1) the variance loses about six digits
// and the harness reports FAIL. It can even come out negative (clamped here to 0).

__global__ void layernorm_warp_single_pass_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                                  const float *__restrict__ b, float *__restrict__ y, float *__restrict__ mean,
                                                  float *__restrict__ rstd, long N, long C, float eps) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    long row = blockIdx.x * (long)warp.meta_group_size() + warp.meta_group_rank();
    if (row >= N) return;
    const float *xr = x + row * C;
    float s = 0.f, sq = 0.f;
    for (long c = warp.thread_rank(); c < C; c += warp.size()) {
        float v = xr[c];
        s += v;
        sq += v * v;
    }
    float m = cg::reduce(warp, s, cg::plus<float>()) / C;
    // __fmul_rn keeps m*m rounded like the squares were: a fused multiply-add would leave the rounding
    // error of m*m in var, which is not zero even for a constant row (C = 1 then fails against eps 1e-5).
    float var = cg::reduce(warp, sq, cg::plus<float>()) / C - __fmul_rn(m, m);
    float r = rsqrtf(fmaxf(var, 0.f) + eps);
    float *yr = y + row * C;
    for (long c = warp.thread_rank(); c < C; c += warp.size()) __stcs(yr + c, (__ldcs(xr + c) - m) * r * w[c] + b[c]);
    if (warp.thread_rank() == 0) {
        __stcs(mean + row, m);
        __stcs(rstd + row, r);
    }
}
static void launch_warp_single_pass(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    layernorm_warp_single_pass_kernel<<<(unsigned)ceil_div(p->N, l->block_size / 32), l->block_size>>>((const float *)p->x, (const float *)p->w, (const float *)p->b, (float *)p->y, p->mean, p->rstd, p->N, p->C,
                                                                                       p->eps);
}

// ------------------------------------------------------------------------------------------------
// Kernel 5, block_per_row: one block per row. Each warp reduces by shuffles, then the per-warp partials meet in shared
// memory and one warp finishes (block_sum, harness/device_helpers.h); two-pass statistics.
// Improves: a whole block works on each row, so large rows get enough loads in flight.
// Wrong: x still crosses the memory system three times (the later reads hit L2 only while the row stays
// there), loads are 4 bytes wide, and at small C most of the block idles.

__global__ void layernorm_block_per_row_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                               const float *__restrict__ b, float *__restrict__ y, float *__restrict__ mean,
                                               float *__restrict__ rstd, long C, float eps) {
    __shared__ float scratch[33];
    long row = blockIdx.x;
    const float *xr = x + row * C;
    float s = 0.f;
    for (long c = threadIdx.x; c < C; c += blockDim.x) s += xr[c];
    float m = block_sum(s, scratch) / C;
    float v = 0.f;
    for (long c = threadIdx.x; c < C; c += blockDim.x) v += (xr[c] - m) * (xr[c] - m);
    float r = rsqrtf(block_sum(v, scratch) / C + eps);
    float *yr = y + row * C;
    for (long c = threadIdx.x; c < C; c += blockDim.x) __stcs(yr + c, (__ldcs(xr + c) - m) * r * w[c] + b[c]);
    if (threadIdx.x == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}
static void launch_block_per_row(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    layernorm_block_per_row_kernel<<<(unsigned)p->N, l->block_size>>>((const float *)p->x, (const float *)p->w, (const float *)p->b, (float *)p->y, p->mean, p->rstd, p->C, p->eps);
}

// ------------------------------------------------------------------------------------------------
// Kernel 6, block_row_regs: one block per row with the row held in registers: each thread loads its PACKS packs
// of VEC elements once, and the mean, the variance around it and y all come from those registers, so x crosses
// DRAM once. Templated on the dtype; fp32 arithmetic. Kernel 6 runs it with VEC = 1 (scalar loads: the one new
// idea is "x read once"); kernel 11 runs this same kernel with 16-byte packs. All of a thread's loads are issued
// before the first add (a loop of loads, then a loop of sums), so they are all in flight at once.
// Improves: x crosses DRAM once, where 5 reads it three times.
// Wrong: scalar 2- or 4-byte loads need many instructions per byte; the row must fit in
// block_size * PACKS registers (at most 16 per thread here; 16 fp32 scalars already spill a few registers
// under the 64-register cap of 1024-thread blocks), and at small C most threads hold nothing.

// The register kernels' loops over the packs a thread holds (pack p: i = threadIdx.x + p * blockDim.x < nvec),
// kernels 6 and 11: the sum, the sum of squares around m, and y.
template <typename T, int VEC, int PACKS>
__device__ __forceinline__ float rowreg_sum(const Pack<T, VEC> (&v)[PACKS], int nvec) {
    float s = 0.f;
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = threadIdx.x + p * blockDim.x;
        if (i < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; j++) s += pack_elem(v[p], j);
        }
    }
    return s;
}
template <typename T, int VEC, int PACKS>
__device__ __forceinline__ float rowreg_sq(const Pack<T, VEC> (&v)[PACKS], int nvec, float m) {
    float sq = 0.f;
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = threadIdx.x + p * blockDim.x;
        if (i < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                float d = pack_elem(v[p], j) - m;
                sq += d * d;
            }
        }
    }
    return sq;
}
template <bool CS, typename T, int VEC, int PACKS>
__device__ __forceinline__ void rowreg_store(const Pack<T, VEC> (&v)[PACKS], int nvec, float m, float r,
                                             const T *__restrict__ w, const T *__restrict__ b, T *__restrict__ yr) {
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = threadIdx.x + p * blockDim.x;
        if (i < nvec) {
            Pack<T, VEC> wv = load_pack<T, VEC>(w + i * VEC), bv = load_pack<T, VEC>(b + i * VEC), out;
#pragma unroll
            for (int j = 0; j < VEC; j++)
                out.v[j] = from_float<T>((pack_elem(v[p], j) - m) * r * to_float(wv.v[j]) + to_float(bv.v[j]));
            if (CS) store_pack_cs<T, VEC>(yr + i * VEC, out);
            else store_pack<T, VEC>(yr + i * VEC, out);
        }
    }
}

template <typename T, int VEC, int PACKS, bool CS = false>  // CS: streaming access (a choice of kernel 11)
__global__ void __launch_bounds__(1024) layernorm_block_row_regs_kernel(ln_args_t a) {
    const T *__restrict__ x = (const T *)a.x;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    T *__restrict__ y = (T *)a.y;
    float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;
    const long C = a.C;
    const float eps = a.eps;
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    __shared__ float scratch[33];
    long row = blockIdx.x;
    const T *xr = x + row * C;
    int nvec = (int)(C / VEC);  // the launcher guarantees C % VEC == 0
    Pack<T, VEC> v[PACKS];
    // Every load first, in a loop of its own: each `if` then holds only a load, which the compiler
    // predicates, so the thread has all PACKS loads in flight before the first add.
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = threadIdx.x + p * blockDim.x;
        if (i < nvec) v[p] = CS ? load_pack_cs<T, VEC>(xr + i * VEC) : load_pack<T, VEC>(xr + i * VEC);
    }
    float m = block_sum(rowreg_sum(v, nvec), scratch) / C;
    float r = rsqrtf(block_sum(rowreg_sq(v, nvec, m), scratch) / C + eps);
    rowreg_store<CS>(v, nvec, m, r, w, b, y + row * C);
    if (threadIdx.x == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}
// Packs per thread, the smallest power of two <= max_packs with which bs threads hold the row (0: none). Kernel 6
// (scalar) goes to 16, the most that fits 64 registers (the limit at 1024 threads) without spilling; kernel 11's
// 16-byte packs to 8 (bs = all threads of a cluster there).
static const int ROWREG_MAX_PACKS = 16;
static int rowreg_packs(long nvec, int bs, int max_packs) {
    for (int packs = 1; packs <= max_packs; packs *= 2)
        if ((long)packs * bs >= nvec) return packs;
    return 0;
}
template <typename T>
static void launch_block_row_regs_t(const ln_problem_t *p, int bs, int packs) {  // scalar (VEC = 1)
    const void *fn;
    with_pow2<1, 16>(packs, [&](auto P) { fn = (const void *)layernorm_block_row_regs_kernel<T, 1, P.value>; });
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel(fn, p->N, bs, 0, args, 1);
}
static void launch_block_row_regs(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int packs = rowreg_packs(p->C, l->block_size, ROWREG_MAX_PACKS);
    switch (p->h.dtype) {
    case DT_FP32: launch_block_row_regs_t<float>(p, l->block_size, packs); break;
    case DT_FP16: launch_block_row_regs_t<__half>(p, l->block_size, packs); break;
    default: launch_block_row_regs_t<__nv_bfloat16>(p, l->block_size, packs); break;
    }
}
static const char *supports_block_row_regs(const void *pp, int bs) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    if (!rowreg_packs(p->C, bs, ROWREG_MAX_PACKS))
        return reasonf("row of %ld does not fit %d threads x %d registers", p->C, bs, ROWREG_MAX_PACKS);
    return NULL;
}
// Its plan: row_block_bs over the row's elements, and at least the threads that hold it in 16 registers each.
static int block_row_regs_bs(long C, double rows_sm) {
    const int bs = row_block_bs(C, rows_sm), fewest = pow2_at_least((double)C / ROWREG_MAX_PACKS, 32, 1024);
    return bs > fewest ? bs : fewest;
}
static int plan_block_row_regs(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    return plan_checked(pp, supports_block_row_regs, block_row_regs_bs(p->C, rows_per_sm(p)), 1024);
}

// ------------------------------------------------------------------------------------------------
// Kernel 7, subwarp_regs_vec: a warp, or TPR lanes of one (TPR = 1..32 by C), per row; the row lives in
// registers as 16-byte packs (VEC elements, the widest that divides C); the lanes of a row sum it by shuffles
// (group_sum) for the mean, then sum the squares around that mean the same way: the exact two-pass variance,
// from registers, so statistics need one read of x and no shared memory. Several rows per warp when C is small,
// several warps per block.
// Improves: 16-byte loads and stores (a quarter of the instructions of scalar fp32, an eighth for
// 16-bit types), all loads of a row issued before the first use, no __syncthreads; a lane of at most 4 packs
// loads its w and b with its x (H100: 6-9% off bf16 C = 256 and 768, fp32 C = 128).
// Wrong: built for C up to 1024 (fp32) / 2048 (16-bit) with up to 8 packs per lane; beyond that the
// row no longer fits a warp's registers, and large rows want more than one warp anyway. With w and b held, a
// lane takes 64 registers (fp32) or 68 (16-bit): 16-bit blocks of 1024 threads no longer fit at C <= 1024.

// MAXP packs a lane can hold: 4, or 8 when a whole warp holds a row of more than 128 packs (8 packs of
// bf16 cost 91 registers: fewer warps resident, and too many registers for 1024-thread blocks).
#define K7_MAX_PACKS 8

// Where a lane gets its packs of w and b for a row: from memory, row after row (kernel 7; kernel 10 in fp32), or
// from registers loaded once (kernel 10 in 16-bit: its lanes keep the same columns for every row they do).
// init: where the packs come from; repack: once a row, before the row's sums (keep_packed on registers held).
template <typename T, int VEC> struct WBFromMemory {
    const T *__restrict__ w, *__restrict__ b;
    template <int TPR> __device__ __forceinline__ void init(const T *wp, const T *bp, int lane, int nvec) {
        (void)lane;
        (void)nvec;
        w = wp;
        b = bp;
    }
    __device__ __forceinline__ void repack() {}
    __device__ __forceinline__ void get(int p, int i, Pack<T, VEC> &wv, Pack<T, VEC> &bv) const {
        (void)p;
        wv = load_pack<T, VEC>(w + (long)i * VEC);
        bv = load_pack<T, VEC>(b + (long)i * VEC);
    }
};
template <typename T, int VEC, int MAXP> struct WBInRegisters {
    Pack<T, VEC> w[MAXP], b[MAXP];
    template <int TPR> __device__ __forceinline__ void init(const T *wp, const T *bp, int lane, int nvec) {
#pragma unroll
        for (int p = 0; p < MAXP; p++) {
            int i = lane + p * TPR;
            if (i < nvec) {
                w[p] = load_pack<T, VEC>(wp + (long)i * VEC);
                b[p] = load_pack<T, VEC>(bp + (long)i * VEC);
            }
        }
    }
    __device__ __forceinline__ void repack() {  // converted again each row, not held as fp32 (2x the registers)
#pragma unroll
        for (int p = 0; p < MAXP; p++) {
            keep_packed(w[p]);
            keep_packed(b[p]);
        }
    }
    __device__ __forceinline__ void get(int p, int i, Pack<T, VEC> &wv, Pack<T, VEC> &bv) const {
        (void)i;
        wv = w[p];
        bv = b[p];
    }
};
// The two group sums (the mean; then the squares around it: the exact two-pass variance, free because the
// row is in registers; no Welford merge, so no divisions and one float a shuffle instead of three), then y
// and the statistics. Every lane of the warp must call it (shuffles); lanes with !valid write nothing.
// REPACK: the row's packs go through keep_packed after the sums, so that the compiler converts them again for y
// rather than holding them as fp32 across the shuffles (twice the registers in 16-bit).
template <typename T, int VEC, int TPR, int MAXP, bool CS = false, bool REPACK = false, typename WB>
__device__ __forceinline__ void subwarp_finish_row(Pack<T, VEC> (&v)[MAXP], bool valid, int lane, int nvec, long row,
                                                   long C, const WB &wb, T *__restrict__ y,
                                                   float *__restrict__ mean, float *__restrict__ rstd, float eps) {
    float s = 0.f;
#pragma unroll
    for (int p = 0; p < MAXP; p++) {
        int i = lane + p * TPR;
        if (valid && i < nvec)
#pragma unroll
            for (int j = 0; j < VEC; j++) s += pack_elem(v[p], j);
    }
    float m = group_sum<TPR>(s) * (1.f / (float)C);
    float m2 = 0.f;
#pragma unroll
    for (int p = 0; p < MAXP; p++) {
        int i = lane + p * TPR;
        if (valid && i < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                float d = pack_elem(v[p], j) - m;
                m2 = fmaf(d, d, m2);
            }
        }
    }
    m2 = group_sum<TPR>(m2);
    if constexpr (REPACK) {
#pragma unroll
        for (int p = 0; p < MAXP; p++) keep_packed(v[p]);
    }
    if (!valid) return;
    float r = rsqrtf(m2 * (1.f / (float)C) + eps);
    T *yr = y + row * C;
#pragma unroll
    for (int p = 0; p < MAXP; p++) {
        int i = lane + p * TPR;
        if (i < nvec) {
            Pack<T, VEC> wv, bv, out;
            wb.get(p, i, wv, bv);
#pragma unroll
            for (int j = 0; j < VEC; j++)
                out.v[j] = from_float<T>((pack_elem(v[p], j) - m) * r * to_float(wv.v[j]) + to_float(bv.v[j]));
            if (CS) store_pack_cs<T, VEC>(yr + (long)i * VEC, out);
            else store_pack<T, VEC>(yr + (long)i * VEC, out);
        }
    }
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

template <typename T, int VEC, int TPR, int MAXP>
__global__ void layernorm_subwarp_regs_vec_kernel(ln_args_t a) {
    const T *__restrict__ x = (const T *)a.x;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    T *__restrict__ y = (T *)a.y;
    float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;
    const long N = a.N, C = a.C;
    const float eps = a.eps;
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    long row = blockIdx.x * (long)(blockDim.x / TPR) + threadIdx.x / TPR;
    int lane = threadIdx.x % TPR, nvec = (int)(C / VEC);
    bool valid = row < N;  // no early return: every lane of the warp must reach the shuffles
    Pack<T, VEC> v[MAXP];
    subwarp_load_row<T, VEC, TPR, MAXP>(v, x + row * C, valid, lane, nvec);
    // w and b go out with x where a lane holds at most 4 16-byte packs (8 of each cost too many registers): the
    // normalize after the sums then waits on no second trip to memory
    constexpr bool EARLY = MAXP <= 4 && sizeof(Pack<T, VEC>) == 16;
    std::conditional_t<EARLY, WBInRegisters<T, VEC, MAXP>, WBFromMemory<T, VEC>> wb;
    wb.template init<TPR>(w, b, lane, nvec);
    wb.repack();
    subwarp_finish_row<T, VEC, TPR, MAXP, false, EARLY>(v, valid, lane, nvec, row, C, wb, y, mean, rstd, eps);
}
// Lanes per row chosen by C: the fewest that hold the row in 4 packs each, else a whole warp with up to 8 packs
// each; 0 when the row does not fit.
static int subwarp_tpr(long nvec) {
    int tpr = 1;
    while (tpr < 32 && (long)tpr * 4 < nvec) tpr *= 2;
    return (long)tpr * (tpr == 32 ? K7_MAX_PACKS : 4) >= nvec ? tpr : 0;
}
template <typename T, int VEC>
static void subwarp_kernel_for(int tpr, long nvec, const void **fn) {  // 4 packs a lane; 8 for a warp's long row
    with_pow2<1, 32>(tpr, [&](auto P) {
        if (P.value == 32 && nvec > 32 * 4) *fn = (const void *)layernorm_subwarp_regs_vec_kernel<T, VEC, 32, K7_MAX_PACKS>;
        else *fn = (const void *)layernorm_subwarp_regs_vec_kernel<T, VEC, P.value, 4>;
    });
}
template <typename T, int VEC>
static void launch_subwarp_t(const ln_problem_t *p, int bs, int tpr) {
    const void *fn;
    subwarp_kernel_for<T, VEC>(tpr, p->C / VEC, &fn);
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel(fn, ceil_div(p->N, bs / tpr), bs, 0, args, 1);
}
static void launch_subwarp_regs_vec(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int vec = vec_width(p), tpr = subwarp_tpr(p->C / vec);
    DISPATCH_VEC(p->h.dtype, vec, launch_subwarp_t, p, l->block_size, tpr);
    snprintf(l->path, sizeof l->path, "%d lanes/row, %d-wide packs", tpr, vec);
}
static const char *supports_subwarp_regs_vec(const void *pp, int bs) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int vec = vec_width(p), tpr = subwarp_tpr(p->C / vec);
    if (!tpr) return reasonf("row of %ld needs more than 32 lanes x %d packs of %d", p->C, K7_MAX_PACKS, vec);
    const void *fn;
    DISPATCH_VEC(p->h.dtype, vec, subwarp_kernel_for, tpr, p->C / vec, &fn);
    return block_fits(fn, bs);
}
// Its plan: 128 threads, 256 where a warp holds a row of more than 128 packs (8 a lane).
static int subwarp_regs_vec_bs(long nvec) { return nvec <= 4L * 32 ? 128 : 256; }
static int plan_subwarp_regs_vec(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    return plan_checked(pp, supports_subwarp_regs_vec, subwarp_regs_vec_bs(p->C / vec_width(p)), 64);
}

// ------------------------------------------------------------------------------------------------
// Kernel 8, block_smem_welford: one block per row with the row cached in shared memory (dynamic, C elements of T): one read of
// x from DRAM into shared memory with 16-byte packs, per-thread (count, mean, M2) from its part, a Welford
// block all-reduce (block_welford, harness/device_helpers.h), and y written from the shared copy. The block size comes
// from the occupancy calculator for this kernel and its shared-memory size.
// Improves: any C whose row fits shared memory (up to ~227 KB a block on sm_90), without register limits.
// Wrong: the occupancy calculator maximises resident threads, not bytes in flight; with large rows only
// one or two blocks fit an SM, and the load -> reduce -> write phases of a block do not overlap.

// The launcher's instance helper (the occupancy query, cached), below the launcher.
template <typename T, int VEC> static void launch_block_smem_welford_t(const ln_problem_t *p, launch_t *l);

template <typename T, int VEC>
__global__ void layernorm_block_smem_welford_kernel(ln_args_t a) {
    const T *__restrict__ x = (const T *)a.x;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    T *__restrict__ y = (T *)a.y;
    float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;
    const long C = a.C;
    const float eps = a.eps;
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *row_s = reinterpret_cast<T *>(smem_raw);
    __shared__ Welford scratch[33];
    long row = blockIdx.x;
    const T *xr = x + row * C;
    long nvec = C / VEC;
    float s = 0.f;
    int cnt = 0;
    for (long i = threadIdx.x; i < nvec; i += blockDim.x) {
        Pack<T, VEC> p = load_pack<T, VEC>(xr + i * VEC);
        *reinterpret_cast<Pack<T, VEC> *>(row_s + i * VEC) = p;
#pragma unroll
        for (int j = 0; j < VEC; j++) s += to_float(p.v[j]);
        cnt += VEC;
    }
    float lm = cnt ? s / cnt : 0.f;
    float m2 = 0.f;
    for (long i = threadIdx.x; i < nvec; i += blockDim.x) {  // the thread's own elements: no barrier needed
        Pack<T, VEC> p = *reinterpret_cast<const Pack<T, VEC> *>(row_s + i * VEC);
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            float d = to_float(p.v[j]) - lm;
            m2 += d * d;
        }
    }
    Welford st = block_welford(Welford{(float)cnt, lm, m2}, scratch);
    float m = st.mean;
    float r = rsqrtf(st.m2 / C + eps);
    T *yr = y + row * C;
    for (long i = threadIdx.x; i < nvec; i += blockDim.x) {
        Pack<T, VEC> p = *reinterpret_cast<const Pack<T, VEC> *>(row_s + i * VEC);
        Pack<T, VEC> wv = load_pack<T, VEC>(w + i * VEC), bv = load_pack<T, VEC>(b + i * VEC), out;
#pragma unroll
        for (int j = 0; j < VEC; j++)
            out.v[j] = from_float<T>((to_float(p.v[j]) - m) * r * to_float(wv.v[j]) + to_float(bv.v[j]));
        store_pack<T, VEC>(yr + i * VEC, out);
    }
    if (threadIdx.x == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

static void launch_block_smem_welford(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    DISPATCH_VEC(p->h.dtype, vec_width(p), launch_block_smem_welford_t, p, l);
}
static const char *supports_block_smem_welford(const void *pp, int bs) {
    (void)bs;
    const ln_problem_t *p = (const ln_problem_t *)pp;
    size_t need = (size_t)p->C * dtype_size(p->h.dtype);
    size_t have = g_dev.prop.sharedMemPerBlockOptin - 33 * sizeof(Welford);
    if (need > have) return reasonf("row of %.0f KB does not fit %.0f KB of shared memory", need / 1024.0, have / 1024.0);
    return NULL;
}
// The block size: the occupancy calculator's for this kernel and its shared-memory size, unless one is given.
template <typename T, int VEC>
static void smem_kernel_config(const ln_problem_t *p, int requested, int *bs_out, cudaError_t *err) {
    size_t smem = (size_t)p->C * sizeof(T);
    *err = cudaFuncSetAttribute(layernorm_block_smem_welford_kernel<T, VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    int min_grid = 0, bs = requested;
    if (*err == cudaSuccess && !requested)
        *err = cudaOccupancyMaxPotentialBlockSize(&min_grid, &bs, layernorm_block_smem_welford_kernel<T, VEC>, smem, 1024);
    *bs_out = bs;
}
template <typename T, int VEC>
static void launch_block_smem_welford_t(const ln_problem_t *p, launch_t *l) {
    static int cached_bs = 0;  // the occupancy answer for the last C (queried once, outside the timing)
    static long cached_C = -1;
    int bs = l->block_size;
    if (!bs && cached_C == p->C) {
        bs = cached_bs;
    } else {
        cudaError_t err = cudaSuccess;
        smem_kernel_config<T, VEC>(p, bs, &bs, &err);
        CUDA_CHECK(err);
        if (!l->block_size) { cached_C = p->C; cached_bs = bs; }
    }
    l->block_used = bs;
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel((const void *)layernorm_block_smem_welford_kernel<T, VEC>, p->N, bs, (size_t)p->C * sizeof(T), args, 1);
}

// ------------------------------------------------------------------------------------------------
// Kernel 9, block_reread: one block per row without any cache: a first pass folds each 16-byte pack into the thread's
// Welford state (one read of x), a block all-reduce, then a second pass re-reads x to write y.
// Improves: no limit on C at all (the fallback for very large rows), 16-byte packs, large blocks.
// Wrong: x is read twice. The second read is served by L2 only while all resident rows fit in it
// (132 SMs x 2 rows x 256 KB is about L2-sized on an H100 for C = 65536 fp32); otherwise DRAM sees 1.5x
// the minimum bytes.

template <typename T, int VEC>
__global__ void layernorm_block_reread_kernel(ln_args_t a) {
    const T *__restrict__ x = (const T *)a.x;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    T *__restrict__ y = (T *)a.y;
    float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;
    const long C = a.C;
    const float eps = a.eps;
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    __shared__ Welford scratch[33];
    long row = blockIdx.x;
    const T *xr = x + row * C;
    long nvec = C / VEC;
    Welford st = {0.f, 0.f, 0.f};
    for (long i = threadIdx.x; i < nvec; i += blockDim.x) {
        Pack<T, VEC> p = load_pack<T, VEC>(xr + i * VEC);  // cached: the second pass wants it back from L2
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; j++) s += to_float(p.v[j]);
        float pm = s / VEC, pm2 = 0.f;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            float d = to_float(p.v[j]) - pm;
            pm2 += d * d;
        }
        st = welford_merge(st, Welford{(float)VEC, pm, pm2});
    }
    st = block_welford(st, scratch);
    float m = st.mean;
    float r = rsqrtf(st.m2 / C + eps);
    T *yr = y + row * C;
    for (long i = threadIdx.x; i < nvec; i += blockDim.x) {
        Pack<T, VEC> p = load_pack_cs<T, VEC>(xr + i * VEC);  // streaming: plain cost 11 points (bf16 C = 65536, NOTES)
        Pack<T, VEC> wv = load_pack<T, VEC>(w + i * VEC), bv = load_pack<T, VEC>(b + i * VEC), out;
#pragma unroll
        for (int j = 0; j < VEC; j++)
            out.v[j] = from_float<T>((to_float(p.v[j]) - m) * r * to_float(wv.v[j]) + to_float(bv.v[j]));
        store_pack_cs<T, VEC>(yr + i * VEC, out);
    }
    if (threadIdx.x == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

template <typename T, int VEC>
static void launch_block_reread_t(const ln_problem_t *p, int bs) {
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel((const void *)layernorm_block_reread_kernel<T, VEC>, p->N, bs, 0, args, 1);
}
static void launch_block_reread(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int vec = vec_width(p);
    DISPATCH_VEC(p->h.dtype, vec, launch_block_reread_t, p, l->block_size);
    snprintf(l->path, sizeof l->path, "%d-wide packs", vec);
}
// Its plan (it takes every problem): row_block_bs over the row's packs.
static int plan_block_reread(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    return row_block_bs(p->C / vec_width(p), rows_per_sm(p));
}

// ------------------------------------------------------------------------------------------------
// Kernel 10, subwarp_persistent: kernel 7's layout, but the grid holds only the blocks that are resident at once,
// and each group of TPR lanes walks rows row, row + stride, ...; the next row's x is loaded before the current
// row is reduced and written, so loads stay in flight while a row's shuffles, w/b loads and stores run, and no
// block is launched or drained per row. Two rows of MAXP packs live in registers. In 16-bit the lane's packs of
// w and b, the same columns for every row it does, are loaded once and kept in registers (with the row's packs
// kept packed: 93-95 registers); in fp32 they are re-read each row (kept, they cost 4 points at C = 256-512).
// Rows of at most 4 16-byte packs a lane (fp32 C <= 512, 16-bit C <= 1024).
// Improves: fp32 C = 128-512: 3-6 points of the copy above kernel 7; bf16 C = 128-256: 6 points (H100).
// Wrong: twice kernel 7's registers for x (fp32 C = 768-1024 would take 6-8 packs a lane and 117-127 registers);
// at 16-bit C >= 512 the registers cost what the walk gains; the last pass over the rows leaves part of the grid
// idle (results/NOTES.md).
template <typename T, int VEC, int TPR, int MAXP>
__global__ void layernorm_subwarp_persistent_kernel(ln_args_t a) {
    constexpr bool KEEP = sizeof(T) == 2;  // w and b in registers
    const T *__restrict__ x = (const T *)a.x;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    T *__restrict__ y = (T *)a.y;
    float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;
    const long N = a.N, C = a.C;
    const float eps = a.eps;
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    long stride = (long)gridDim.x * (blockDim.x / TPR);
    long row = blockIdx.x * (long)(blockDim.x / TPR) + threadIdx.x / TPR;
    long first = row - threadIdx.x / TPR;  // the block's first row this pass: the loop test is block-uniform
    int lane = threadIdx.x % TPR, nvec = (int)(C / VEC);
    std::conditional_t<KEEP, WBInRegisters<T, VEC, MAXP>, WBFromMemory<T, VEC>> wb;
    wb.template init<TPR>(w, b, lane, nvec);
    Pack<T, VEC> v[MAXP], next[MAXP];
    subwarp_load_row<T, VEC, TPR, MAXP, true>(v, x + row * C, row < N, lane, nvec);
    for (; first < N; first += stride, row += stride) {
        subwarp_load_row<T, VEC, TPR, MAXP, true>(next, x + (row + stride) * C, row + stride < N, lane, nvec);
        wb.repack();
        subwarp_finish_row<T, VEC, TPR, MAXP, true, KEEP>(v, row < N, lane, nvec, row, C, wb, y, mean, rstd, eps);
#pragma unroll
        for (int p = 0; p < MAXP; p++) v[p] = next[p];
    }
}

// Its instance: 16-byte packs, rows of at most 4 packs a lane (kernel 7's lanes a row), else NULL.
template <typename T, int VEC> static const void *persist_kernel_for(int tpr) {
    const void *fn;
    with_pow2<1, 32>(tpr, [&](auto P) { fn = (const void *)layernorm_subwarp_persistent_kernel<T, VEC, P.value, 4>; });
    return fn;
}
static const void *persist_fn(const ln_problem_t *p) {
    long nvec = p->C / vec_width(p);
    int tpr = subwarp_tpr(nvec);
    if (vec_width(p) != 16 / (int)dtype_size(p->h.dtype) || !tpr || nvec > 4L * tpr) return NULL;
    return PACK16_CALL(p->h.dtype, persist_kernel_for, tpr);
}
static void launch_subwarp_persistent(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    const void *fn = persist_fn(p);
    int vec = vec_width(p), tpr = subwarp_tpr(p->C / vec), bs = l->block_size;
    long grid = persist_grid(fn, bs, ceil_div(p->N, bs / tpr), 0);
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel(fn, grid, bs, 0, args, 1);
    snprintf(l->path, sizeof l->path, "%d lanes/row, %d-wide packs, %ld blocks", tpr, vec, grid);
}
static const char *supports_subwarp_persistent(const void *pp, int bs) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    const void *fn = persist_fn(p);
    if (fn) return block_fits(fn, bs);
    int vec = vec_width(p);
    if (vec != 16 / (int)dtype_size(p->h.dtype)) return reasonf("needs 16-byte packs (C = %ld)", p->C);
    return reasonf("row of %ld is more than 32 lanes x 4 packs of %d", p->C, vec);
}
// Its plan: 64 threads, 256 from 8 rows an SM (where each block walks many rows).
static int subwarp_persistent_bs(double rows_sm) { return rows_sm < 8 ? 64 : 256; }
static int plan_subwarp_persistent(const void *pp) {
    return plan_checked(pp, supports_subwarp_persistent, subwarp_persistent_bs(rows_per_sm((const ln_problem_t *)pp)),
                        64);
}

// ------------------------------------------------------------------------------------------------
// Shared by kernels 11, 12, 14 and 15: the shifted sums (device), and their plan's type (host).

// The shifted sums: s.x += d and s.y += d * d over a pack, d = x - k with k the row's first element; then the
// row's rstd from the sums over its C elements (var = E[d^2] - E[d]^2, which loses little while k lies within a
// few standard deviations of the mean; the mean is k + s.x / C).
template <typename T, int VEC> __device__ __forceinline__ void shifted_add(float2 &s, const Pack<T, VEC> &v, float k) {
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        float d = pack_elem(v, j) - k;
        s.x += d;
        s.y = fmaf(d, d, s.y);
    }
}
__device__ __forceinline__ float shifted_rstd(float2 s, long C, float eps) {  // the mean: k + s.x / C
    const float dm = s.x / C;
    return rsqrtf(fmaxf(s.y / C - dm * dm, 0.f) + eps);
}

// A plan: cl blocks a row of bs threads, packs 16-byte packs a thread (at most); the residency it reaches.
typedef struct { int cl, bs, packs, blocks_sm, threads_sm; } regplan_t;
// Whether the plan for a row of nvec 16-byte packs runs the cluster kernel: --cluster K > 1, or, by the rule, rows
// beyond one block of 1024 threads x 8 packs and 16-bit rows that would need 1024 threads x 8 packs (C = 65536).
static int regs_plan_clusters(dtype_t d, long nvec) {
    return g_cluster ? g_cluster > 1 : nvec > 1024 * 8 || (dtype_size(d) == 2 && nvec > 512 * 8);
}

// ------------------------------------------------------------------------------------------------
// Kernel 11, cluster_row_regs: the row in registers in 16-byte packs, split over a thread-block cluster when one
// block cannot hold it. Planned per problem (regs_plan, below the launcher): a row that one block of <= 1024
// threads x 8 packs holds runs kernel 6's kernel with 16-byte packs (layernorm_block_row_regs_kernel, CL = 1) at
// the block size with most threads resident; a larger row runs the cluster kernel below, CL = 2..8 blocks a row
// (8: the portable size), block rank k holding packs [k * bs * PACKS, (k + 1) * bs * PACKS) of the row. Its
// statistics take one reduction round, as in kernel 12: every thread sums d = x - k and d * d around k, the
// row's first element; every warp pushes its pair through distributed shared memory into a slot of every block
// of the cluster (cluster_push_sum: st.async, counted by the peer's mbarrier), and each block adds its slots in
// one fixed order (the same statistics in every block). No block reads another's memory, so none waits for its
// peers at exit (H200: 12% faster at bf16 1024 x 65536 than pulling the block sums between two cluster
// barriers; results/NOTES.md).
// Improves: x read once for rows beyond what one block holds at good occupancy (fp32 C = 65536 is 256 KB:
// more than an SM's registers or shared memory, so kernel 9 re-reads it from DRAM), and a large row in
// registers at 2+ blocks an SM instead of one 1024-thread block, so one block's reductions overlap another's
// loads; 16-byte packs where kernel 6 loads scalars.
// Wrong: needs clusters (sm_90+) beyond one block; a block still waits, between its loads and its stores, for the
// slowest block of its cluster; w and b come in after the reduction (from L2); a row whose first element lies
// far from its mean (in standard deviations) loses precision in the variance; a block holds 1/CL of a row, so
// small rows gain nothing from it.

// The cluster kernel's phases: a thread's packs of the row (pack p at first + p * blockDim.x, np of them inside
// the row) loaded, and y from them.
template <typename T, int VEC, int PACKS>
__device__ __forceinline__ void cluster_row_load(Pack<T, VEC> (&v)[PACKS], const T *xr, int first, int np) {
#pragma unroll
    for (int p = 0; p < PACKS; p++)
        if (p < np) v[p] = load_pack_cs<T, VEC>(xr + (long)(first + p * blockDim.x) * VEC);  // streaming: see kernel 3
}
template <typename T, int VEC, int PACKS>
__device__ __forceinline__ void cluster_row_store(const Pack<T, VEC> (&v)[PACKS], int first, int np, float m, float r,
                                                  const T *__restrict__ w, const T *__restrict__ b, T *yr) {
#pragma unroll
    for (int p = 0; p < PACKS; p++)
        if (p < np) {
            int i = first + p * blockDim.x;
            Pack<T, VEC> wv = load_pack<T, VEC>(w + (long)i * VEC), bv = load_pack<T, VEC>(b + (long)i * VEC), out;
#pragma unroll
            for (int j = 0; j < VEC; j++)
                out.v[j] = from_float<T>((pack_elem(v[p], j) - m) * r * to_float(wv.v[j]) + to_float(bv.v[j]));
            store_pack_cs<T, VEC>(yr + (long)i * VEC, out);
        }
}

template <typename T, int VEC, int PACKS>
__global__ void __launch_bounds__(1024) layernorm_cluster_row_regs_kernel(ln_args_t a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const T *__restrict__ x = (const T *)a.x;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    T *__restrict__ y = (T *)a.y;
    float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;
    const long C = a.C;
    const float eps = a.eps;
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    __shared__ ClusterPush<float2, 512> push;  // 32 warps x 16 blocks: the cluster's partial sums
    const int rank = (int)cg::this_cluster().block_rank(), nblocks = (int)cg::this_cluster().num_blocks();
    cluster_push_begin(&push, nblocks);
    long row = blockIdx.x / nblocks;  // 1-D clusters tile the grid in order: blocks [row * CL, row * CL + CL)
    const T *xr = x + row * C;
    int nvec = (int)(C / VEC);
    int first = rank * blockDim.x * PACKS + threadIdx.x;  // pack p of this thread: first + p * blockDim.x
    int np = nvec > first ? (nvec - first + blockDim.x - 1) / blockDim.x : 0;  // its packs inside the row
    const float k = to_float(xr[0]);
    Pack<T, VEC> v[PACKS];
    cluster_row_load(v, xr, first, np);
    float2 s = make_float2(0.f, 0.f);
#pragma unroll
    for (int p = 0; p < PACKS; p++)
        if (p < np) shifted_add(s, v[p], k);
    s = cluster_push_sum(s, &push, nblocks);  // a block alone: one barrier
    const float m = k + s.x / C, r = shifted_rstd(s, C, eps);
    cluster_row_store(v, first, np, m, r, w, b, y + row * C);
    if (rank == 0 && threadIdx.x == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
#endif
}

// The plan and its kernel instance, defined below the launcher.
static regplan_t regs_plan(dtype_t d, long N, long nvec, int req_bs);
static const void *regplan_fn(dtype_t d, int cl, int packs);
static void launch_cluster_row_regs(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    regplan_t pl = regs_plan(p->h.dtype, p->N, p->C / vec_width(p), l->block_size);
    l->block_used = pl.bs;
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel(regplan_fn(p->h.dtype, pl.cl, pl.packs), p->N * pl.cl, pl.bs, 0, args, pl.cl);
    if (pl.cl == 1)
        snprintf(l->path, sizeof l->path, "one block a row (%d packs/thread, %d blocks/SM)", pl.packs, pl.blocks_sm);
    else
        snprintf(l->path, sizeof l->path, "cluster of %d blocks a row (%d packs/thread, %d blocks/SM)", pl.cl,
                 pl.packs, pl.blocks_sm);
}
static const char *supports_cluster_row_regs(const void *pp, int bs) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int full = 16 / (int)dtype_size(p->h.dtype);
    if (!full_packs(p)) return reasonf("needs 16-byte packs: C a multiple of %d", full);
    long nvec = p->C / full;
    if (regs_plan(p->h.dtype, p->N, nvec, bs).packs) return NULL;
    const char *arch = needs_sm90(g_dev.prop.major, g_dev.sm);
    if (regs_plan_clusters(p->h.dtype, nvec) && arch) return arch;
    return reasonf("the row (%ld 16-byte packs) fits no plan of <= 8 packs a thread (--cluster %d, --block-size %d; 0: "
                   "the rule's)", nvec, g_cluster, bs);
}

// The instance of a plan: kernel 6's kernel with 16-byte packs for cl = 1, else the cluster kernel.
template <typename T, int VEC>
static void regplan_fn_t(int cl, int packs, const void **fn) {
    if (cl == 1) {
        // fp32 rows of 8 16-byte packs a thread (fp32 C > 16384 at one block an SM) take the streaming
        // (evict-first) forms: with plain ones the median at fp32 2048x32768 rose 7% above the minimum on an
        // H100 (86.8% of the copy against 92.5%; results/NOTES.md). Every other plan: plain access.
        with_pow2<1, 8>(packs, [&](auto P) {
            *fn = (const void *)layernorm_block_row_regs_kernel<T, VEC, P.value, P.value == 8 && sizeof(T) == 4>;
        });
    } else {
        with_pow2<1, 8>(packs, [&](auto P) { *fn = (const void *)layernorm_cluster_row_regs_kernel<T, VEC, P.value>; });
    }
}
static const void *regplan_fn(dtype_t d, int cl, int packs) {  // 16-byte packs
    const void *fn = NULL;
    PACK16_CALL(d, regplan_fn_t, cl, packs, &fn);
    return fn;
}
// Residency of one candidate: blocks and threads an SM holds; 0 when it cannot launch.
static int regplan_rate(dtype_t d, long N, regplan_t *c) {
    const void *fn = regplan_fn(d, c->cl, c->packs);
    if (block_fits(fn, c->bs)) return 0;
    if (c->cl == 1) {
        int nb = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, c->bs, 0));
        c->blocks_sm = nb;
    } else {
        int n = 0;
        if (cluster_fits_smem(fn, c->bs, c->cl, 0, &n) || (double)N * c->cl > 2147483647.0) return 0;
        c->blocks_sm = n * c->cl / g_dev.prop.multiProcessorCount;
    }
    c->threads_sm = c->blocks_sm * c->bs;
    return c->blocks_sm > 0;
}
// The plan for a row of nvec 16-byte packs (H200 sweep of every CL x block size, results/NOTES.md):
// - the row fits one block of <= 1024 threads x 8 packs: CL = 1 (kernel 6's block kernel). Of the block
//   sizes 128..1024 (packs: the fewest that hold the row) the one with most threads resident an SM, then
//   most blocks an SM (a block's reductions overlap another's loads): within 2% of the best block size at
//   every measured C, up to 16-bit rows of 512 threads x 8 packs.
// - larger rows (fp32 C = 65536): the cluster kernel, 256 threads x 8 packs, the fewest blocks that hold the
//   row (CL = 8 at 65536: best of all CL x block sizes measured, 87.9% of the copy on an H100, where kernel 9
//   re-reads x). 16-bit rows that would need 1024 threads x 8 packs take it too (bf16 1024x65536 on an H100:
//   CL = 4 x 256 threads 100.9 us, against 110.0 for kernel 9's re-read).
// --cluster K forces CL = K (then the block size is chosen as for CL = 1); --block-size the threads.
static regplan_t regs_plan(dtype_t d, long N, long nvec, int req_bs) {
    // the last plan is kept: launch() runs inside the timed region, the occupancy queries are not free
    static dtype_t c_d;
    static long c_N = -1, c_nvec = -1;
    static int c_bs = -1;
    static regplan_t c_plan;
    if (d == c_d && N == c_N && nvec == c_nvec && req_bs == c_bs) return c_plan;
    regplan_t best;
    memset(&best, 0, sizeof best);
    int cl = g_cluster ? g_cluster : 1;
    if (!g_cluster && regs_plan_clusters(d, nvec)) {  // the cluster kernel: the fewest blocks that hold the row
        int bs = req_bs ? req_bs : 256;
        while (cl < 8 && (long)cl * bs * 8 < nvec) cl *= 2;
    }
    if (cl == 1 || g_dev.prop.major >= 9) {
        for (int bs = 128; bs <= 1024; bs *= 2) {
            if (req_bs ? bs != req_bs : (cl > 1 && !g_cluster && bs != 256)) continue;
            regplan_t c = {cl, bs, rowreg_packs(nvec, cl * bs, 8), 0, 0};
            if (!c.packs || !regplan_rate(d, N, &c)) continue;
            if (c.threads_sm > best.threads_sm || (c.threads_sm == best.threads_sm && c.blocks_sm > best.blocks_sm))
                best = c;
        }
    }
    c_d = d;
    c_N = N;
    c_nvec = nvec;
    c_bs = req_bs;
    c_plan = best;
    return best;
}

// ------------------------------------------------------------------------------------------------
// Kernel 12, latency_split: the rows of a decode step, single long rows. Few rows cannot fill the GPU at a block
// a row, and a row's time is then its critical path: memory latency, barriers, a second trip for w and b.
// One kernel, three ideas:
// - the row split across a cluster of CL blocks (CL = 1..16; 1: a plain block), so few rows still use many SMs
//   and a long row's bytes in flight are spread over CL SMs. A block size given sets CL: the fewest blocks of
//   that size that hold the row (split_row_plan), so the program's sweep of block sizes sweeps CL too;
// - w and b loaded at the start with x: one memory trip for all the row needs. Launched alone, each pack's
//   x, w and b loads are issued together (H100, cold, bf16 1x4096: 2.35 us against 2.91 with w and b first);
//   in a chain of launches (pdl = 1, --pdl) the weights' loads go before the wait for the grid before, and
//   overlap its end;
// - the statistics in one reduction round: each thread sums d = x - k and d * d around k, the row's first
//   element (shifted sums: var = E[d^2] - E[d]^2, which loses little while k lies within a few standard
//   deviations of the mean), so one block barrier (a cluster: one pushed exchange, as kernel 11), where the
//   register kernels take two block reductions of three barriers each.
// Improves: the rows of a decode step and single long rows (it runs at any row count; the dispatcher's rule of
// regimes says where it runs).
// Wrong: a row whose first element lies far from its mean (in standard deviations) loses precision in the
// variance; at most 4 packs a thread, 512 threads a block and 16 blocks a row (fp32 C <= 131072); with many
// rows the cluster buys nothing and w and b in registers cost occupancy.
#define SPLIT_PACKS 4

// A thread's packs of the row, x, w and b (pack p: first + p * blockDim.x < nvec), loaded as raw words until
// every load is issued (load_raw: why); returns the shift k, the row's first element.
template <typename T, int VEC, int PACKS>
__device__ __forceinline__ float split_load(Pack<T, VEC> (&v)[PACKS], Pack<T, VEC> (&wv)[PACKS],
                                            Pack<T, VEC> (&bv)[PACKS], const T *xr, const T *__restrict__ w,
                                            const T *__restrict__ b, int first, int nvec, int pdl) {
    typedef RawPack<T, VEC> R;
    R xraw[PACKS], wraw[PACKS], braw[PACKS];
    float k;  // the shift: the row's first element
    if (pdl) {  // chained (--pdl): the weights, not written by the grid before, before the wait for it; x after
#pragma unroll
        for (int p = 0; p < PACKS; p++) {
            int i = first + p * blockDim.x;
            if (i < nvec) {
                wraw[p] = load_raw<T, VEC>(w + (long)i * VEC);
                braw[p] = load_raw<T, VEC>(b + (long)i * VEC);
            }
        }
        pdl_wait();  // x is read, and y written, only once the grid before has finished
        pdl_trigger();
        k = to_float(xr[0]);
#pragma unroll
        for (int p = 0; p < PACKS; p++) {
            int i = first + p * blockDim.x;
            if (i < nvec) xraw[p] = load_raw<T, VEC>(xr + (long)i * VEC);
        }
    } else {  // alone: each pack's x, w and b issued together
        k = to_float(xr[0]);
#pragma unroll
        for (int p = 0; p < PACKS; p++) {
            int i = first + p * blockDim.x;
            if (i < nvec) {
                xraw[p] = load_raw<T, VEC>(xr + (long)i * VEC);
                wraw[p] = load_raw<T, VEC>(w + (long)i * VEC);
                braw[p] = load_raw<T, VEC>(b + (long)i * VEC);
            }
        }
    }
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        v[p] = raw_pack<T, VEC>(xraw[p]);
        wv[p] = raw_pack<T, VEC>(wraw[p]);
        bv[p] = raw_pack<T, VEC>(braw[p]);
    }
    return k;
}
// y from the packs.
template <typename T, int VEC, int PACKS>
__device__ __forceinline__ void split_store(const Pack<T, VEC> (&v)[PACKS], const Pack<T, VEC> (&wv)[PACKS],
                                            const Pack<T, VEC> (&bv)[PACKS], int first, int nvec, float m, float r,
                                            T *yr) {
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        int i = first + p * blockDim.x;
        if (i < nvec) {
            Pack<T, VEC> out;
#pragma unroll
            for (int j = 0; j < VEC; j++)
                out.v[j] = from_float<T>((pack_elem(v[p], j) - m) * r * to_float(wv[p].v[j]) + to_float(bv[p].v[j]));
            store_pack<T, VEC>(yr + (long)i * VEC, out);
        }
    }
}

// A block's part of its row at PACKS packs a thread at most, the loads in the order pdl gives (kernels 12, 14, 15).
template <typename T, int VEC, int CL, bool PACKED, int PACKS>
__device__ __forceinline__ void latency_split_row(ln_args_t a, int pdl) {
    const T *__restrict__ x = (const T *)a.x;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    T *__restrict__ y = (T *)a.y;
    float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;
    const long C = a.C;
    const float eps = a.eps;
    __shared__ ClusterPush<float2, 16 * CL> push;  // 16 warps x CL blocks: the cluster's partial sums
    cluster_push_begin(&push, CL);
    const int rank = (int)(blockIdx.x % CL);  // 1-D clusters tile the grid in order: blocks [row * CL, row * CL + CL)
    const long row = blockIdx.x / CL;
    const int nvec = (int)(C / VEC), first = rank * blockDim.x * PACKS + threadIdx.x;
    const T *xr = x + row * C;
    Pack<T, VEC> v[PACKS], wv[PACKS], bv[PACKS];
    const float k = split_load(v, wv, bv, xr, w, b, first, nvec, pdl);
    float2 s = make_float2(0.f, 0.f);
#pragma unroll
    for (int p = 0; p < PACKS; p++)
        if (first + p * (int)blockDim.x < nvec) shifted_add(s, v[p], k);
    s = cluster_push_sum(s, &push, CL);  // a block alone (CL = 1): one barrier
    if (PACKED) {
#pragma unroll
        for (int p = 0; p < PACKS; p++) {
            keep_packed(v[p]);
            keep_packed(wv[p]);
            keep_packed(bv[p]);
        }
    }
    const float m = k + s.x / C, r = shifted_rstd(s, C, eps);
    split_store(v, wv, bv, first, nvec, m, r, y + row * C);
    if (rank == 0 && threadIdx.x == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

// Two instances. Unbounded (PACKED false), the compiler converts x, w and b to fp32 as they land and keeps those
// values across the cluster sum: the fewest instructions after it (the critical path of a grid that the GPU holds
// at once), and many registers (bf16: 117, one block of 512 an SM). PACKED hides the packs' bits across the sum
// (keep_packed: converted again after it) and bounds the kernel to two blocks of 512 an SM (64 registers, at most
// 4 bytes spilled): the occupancy a grid of more blocks than fit at once needs (H100, bf16 1024x65536: 3011 GB/s
// against 2158; unbounded, the 8 clusters of 16 blocks of fp32 8x128256 do not fit at once: 11.8 us against 8.5).
template <typename T, int VEC, int CL, bool PACKED>
__global__ void __launch_bounds__(512, PACKED ? 2 : 0) layernorm_latency_split_kernel(ln_args_t a, int pdl) {
    latency_split_row<T, VEC, CL, PACKED, SPLIT_PACKS>(a, pdl);
}

// Its plan, from an H100 (cold L2, results/NOTES.md): CL = the fewest blocks of <= 512 threads x SPLIT_PACKS packs
// that hold the row (a cluster launch costs about 0.9 us), then, for a row that needs a cluster anyway, twice the
// blocks while rows x 2 CL fit the SMs; threads: the fewest that hold the block's share in SPLIT_PACKS packs. The
// rule is split_row_plan's (harness/gpu.h); --cluster K forces CL = K, --block-size the threads. cl = 0: the row
// does not fit. Its instances, below the launcher: the unbounded form where the GPU holds the whole grid at once,
// else PACKED (split_launch_fn).
static const void *split_fn(dtype_t d, int cl);
static const void *split_launch_fn(dtype_t d, long N, int cl, int bs, bool *packed);
static regplan_t split_plan(dtype_t d, long N, long nvec, int req_bs) {
    regplan_t pl;
    memset(&pl, 0, sizeof pl);
    pl.bs = split_row_plan(d, N, nvec, SPLIT_PACKS, 512, req_bs, g_cluster, split_fn, &pl.cl);
    if (pl.bs) pl.packs = (int)ceil_div(nvec, (long)pl.cl * pl.bs);
    else pl.cl = 0;
    return pl;
}
static void launch_latency_split(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    regplan_t pl = split_plan(p->h.dtype, p->N, p->C / vec_width(p), l->block_size);
    l->block_used = pl.bs;
    ln_args_t a = ln_args(p);
    int pdl = g_pdl;
    void *args[] = {&a, &pdl};
    bool packed;
    launch_kernel(split_launch_fn(p->h.dtype, p->N, pl.cl, pl.bs, &packed), p->N * pl.cl, pl.bs, 0, args, pl.cl);
    snprintf(l->path, sizeof l->path, "a row over %d block%s of %d threads%s; w, b with x; one reduction", pl.cl,
             pl.cl > 1 ? "s" : "", pl.bs, packed ? ", packed" : "");
}
// Why a split rung of `packs` packs a thread cannot take the problem at bs threads; NULL where its plan (`plan`:
// the block size, 0 for none) takes it. Kernels 12, 14 and 15.
typedef int (*split_plan_fn)(const ln_problem_t *p, int req_bs, int *cl);
static const char *split_refusal(const ln_problem_t *p, int bs, int packs, split_plan_fn plan) {
    int full = 16 / (int)dtype_size(p->h.dtype), cl = 0;
    if (!full_packs(p)) return reasonf("needs 16-byte packs: C a multiple of %d", full);
    long nvec = p->C / full;
    if (plan(p, bs, &cl)) return NULL;
    if (bs > 512) return "at most 512 threads a block";
    const char *arch = needs_sm90(g_dev.prop.major, g_dev.sm);
    if (arch && (g_cluster > 1 || nvec > 512L * packs)) return arch;
    return reasonf("the row (%ld 16-byte packs) fits no plan of <= %d pack%s a thread (--cluster %d, --block-size %d; "
                   "0: the rule's)", nvec, packs, packs > 1 ? "s" : "", g_cluster, bs);
}
// Rung 12's plan in split_refusal's form.
static int split_plan_bs(const ln_problem_t *p, int req_bs, int *cl) {
    regplan_t pl = split_plan(p->h.dtype, p->N, p->C / vec_width(p), req_bs);
    *cl = pl.cl;
    return pl.cl ? pl.bs : 0;
}
static const char *supports_latency_split(const void *pp, int bs) {
    return split_refusal((const ln_problem_t *)pp, bs, SPLIT_PACKS, split_plan_bs);
}
// The split rungs' plans (12, 14, 15) give the threads of a block, and so its blocks a row (the fewest of that
// size that hold the row, split_row_plan). With --cluster K the blocks are K and the threads the rung's own rule's.
// Rung 12: rows >= SMs: a block a row at 4 packs a thread, at most 256 threads (more blocks a row beyond); fewer
// rows: 32 threads for rows of <= 64 packs, else 128 (256 beyond 4096 packs); at least the threads that hold the
// row in 16 blocks.
static int latency_split_bs(long nvec, double rows_sm) {
    int bs = rows_sm >= 1 ? pow2_at_least((double)nvec / SPLIT_PACKS, 32, 256)
             : nvec <= 64 ? 32
             : nvec <= 4096 ? 128 : 256;
    const int fewest = pow2_at_least((double)nvec / (16.0 * SPLIT_PACKS), 32, 512);
    return bs > fewest ? bs : fewest;
}
static int plan_latency_split(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int cl = 0;
    const int own = split_plan_bs(p, 0, &cl);
    if (g_cluster) return own;
    return plan_checked(pp, supports_latency_split, latency_split_bs(p->C / vec_width(p), rows_per_sm(p)), own);
}

// Rung 12's instance for a dtype, cluster size (16-byte packs) and form.
template <typename T, int VEC>
static void split_fn_t(int cl, bool packed, const void **fn) {
    with_pow2<1, 16>(cl, [&](auto P) {
        *fn = packed ? (const void *)layernorm_latency_split_kernel<T, VEC, P.value, true>
                     : (const void *)layernorm_latency_split_kernel<T, VEC, P.value, false>;
    });
}
static const void *split_kernel(dtype_t d, int cl, bool packed) {
    const void *fn = NULL;
    PACK16_CALL(d, split_fn_t, cl, packed, &fn);
    return fn;
}
static const void *split_fn(dtype_t d, int cl) { return split_kernel(d, cl, false); }  // the plan's residency check
// The kernel for a grid of N rows of cl blocks of bs threads: the PACKED form where the unbounded one cannot hold
// all its blocks at once (grid_fits_at_once, pick_instance: harness/gpu.h); *packed says which.
static const void *split_launch_fn(dtype_t d, long N, int cl, int bs, bool *packed) {
    const void *fn = split_fn(d, cl);
    const void *took = pick_instance(fn, split_kernel(d, cl, true), !grid_fits_at_once(fn, N, cl, bs), cl);
    *packed = took != fn;
    return took;
}

// ------------------------------------------------------------------------------------------------
// Kernel 13, odd_rows: rows of odd length. Row r starts at element r * C, so where C is odd (or not a multiple of
// the 16-byte pack) most rows start off a 16-byte boundary and every kernel above either refuses the row (10-12)
// or takes the widest pack that divides C (scalars for an odd C). Here each row is cut where its bytes allow
// (row_parts): a head of < 8 elements up to the first 16-byte boundary, the aligned middle in 16-byte packs, a
// tail; the head and tail elements go to one thread each. The row is split over a cluster of CL blocks and its
// statistics take one reduction round, both as in kernel 12 (split_row_plan: 1-16 blocks, <= 512 threads x 4
// packs; shifted sums around the row's first element). w and b share x's columns, not its alignment: their
// elements are loaded one by one. In 16 bits after the sum, pack after pack (early, 64 two-byte loads a thread
// held in registers were slower at many rows). In fp32 (EARLY_WB) all of them with x's packs, before the sum, so
// that after the sum a thread only stores, one 16-byte store a pack (store_raw), unless the grid comes in waves
// and loading them after the sum, as 16 bits do, at least doubles the blocks an SM holds (40 registers against
// 64-82; H100: fp32 1024x65537 1.38x faster, 4096x16385 1.23x; at 16384x4097, 256 threads, 4 blocks an SM against
// 6, loading late was 1.01x slower).
// Improves: odd rows at 16 bytes a load, and a long odd row over many SMs (no rung above splits one).
// Wrong: w and b loaded element by element (VEC loads where a pack would take one: cutting their packs out of two
// aligned packs each was slower); at most 4 packs a thread, 512 threads and 16 blocks a row (fp32 C <= 131075,
// 16-bit C <= 262151); the shifted sums' precision, as kernel 12.
#define ODD_PACKS 4

// One pack of y: (x - m) * r * w + b, in fp32.
template <typename T, int VEC>
__device__ __forceinline__ Pack<T, VEC> pack_affine(const Pack<T, VEC> &v, const Pack<T, VEC> &wv,
                                                    const Pack<T, VEC> &bv, float m, float r) {
    Pack<T, VEC> out;
#pragma unroll
    for (int j = 0; j < VEC; j++) out.v[j] = from_float<T>((pack_elem(v, j) - m) * r * pack_elem(wv, j) + pack_elem(bv, j));
    return out;
}
static int odd_rows_plan(const ln_problem_t *p, int req_bs, int *cl);  // these three: below the supports_ check
static const void *odd_rows_fn(dtype_t d, int cl);
static const void *odd_rows_launch_fn(dtype_t d, long N, int cl, int bs, bool *early);

// EARLY_WB: w and b loaded with x, before the sum (fp32 only), else after it.
template <typename T, int CL, bool EARLY_WB>
__global__ void __launch_bounds__(512) layernorm_odd_rows_kernel(ln_args_t a) {
    constexpr int VEC = 16 / sizeof(T);
    __shared__ ClusterPush<float2, 16 * CL> push;  // 16 warps x CL blocks: the cluster's partial sums
    cluster_push_begin(&push, CL);
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    const int rank = (int)(blockIdx.x % CL);  // 1-D clusters tile the grid in order: blocks [row * CL, row * CL + CL)
    const long row = blockIdx.x / CL;
    const long C = a.C;
    const T *__restrict__ xr = (const T *)a.x + row * C;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    T *__restrict__ yr = (T *)a.y + row * C;
    const RowParts rp = row_parts(xr, C);  // y's rows start as x's: both buffers are 256-byte aligned
    const int g = rank * blockDim.x + threadIdx.x;  // the thread's number in the row's cluster
    const int ns = rp.head + rp.tail;  // the head's and the tail's elements, one a thread
    const long scol = g < rp.head ? g : rp.head + (long)rp.packs * VEC + (g - rp.head);
    const float k = to_float(xr[0]);
    const float sv = g < ns ? to_float(xr[scol]) : 0.f;
    const int first = rank * blockDim.x * ODD_PACKS + threadIdx.x;  // pack p of this thread: first + p * blockDim.x
    RawPack<T, VEC> raw[ODD_PACKS];
#pragma unroll
    for (int p = 0; p < ODD_PACKS; p++) {
        int i = first + p * blockDim.x;
        if (i < rp.packs) raw[p] = load_raw<T, VEC>(xr + rp.head + (long)i * VEC);
    }
    Pack<T, VEC> wv[ODD_PACKS], bv[ODD_PACKS];
    if constexpr (EARLY_WB) {  // w's and b's elements for the thread's packs, in flight with x's
#pragma unroll
        for (int p = 0; p < ODD_PACKS; p++) {
            int i = first + p * blockDim.x;
            if (i < rp.packs) {
                wv[p] = load_elements<T, VEC>(w + rp.head + (long)i * VEC);
                bv[p] = load_elements<T, VEC>(b + rp.head + (long)i * VEC);
            }
        }
    }
    const float sw = g < ns ? to_float(w[scol]) : 0.f, sb = g < ns ? to_float(b[scol]) : 0.f;
    float2 s = make_float2(0.f, 0.f);
    if (g < ns) s = make_float2(sv - k, (sv - k) * (sv - k));
    Pack<T, VEC> v[ODD_PACKS];
#pragma unroll
    for (int p = 0; p < ODD_PACKS; p++) {
        v[p] = raw_pack<T, VEC>(raw[p]);
        if (first + p * (int)blockDim.x < rp.packs) shifted_add(s, v[p], k);
    }
    s = cluster_push_sum(s, &push, CL);  // a block alone (CL = 1): one barrier
    const float m = k + s.x / C, r = shifted_rstd(s, C, a.eps);
    if (g < ns) yr[scol] = from_float<T>((sv - m) * r * sw + sb);
#pragma unroll
    for (int p = 0; p < ODD_PACKS; p++) {
        int i = first + p * blockDim.x;
        if (i < rp.packs) {
            const long c = rp.head + (long)i * VEC;
            if constexpr (!EARLY_WB) wv[p] = load_elements<T, VEC>(w + c), bv[p] = load_elements<T, VEC>(b + c);
            store_raw<T, VEC>(yr + c, pack_affine<T, VEC>(v[p], wv[p], bv[p], m, r));
        }
    }
    if (rank == 0 && threadIdx.x == 0) a.mean[row] = m, a.rstd[row] = r;
}
static void launch_odd_rows(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int cl = 0, bs = odd_rows_plan(p, l->block_size, &cl);
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    bool early;
    launch_kernel(odd_rows_launch_fn(p->h.dtype, p->N, cl, bs, &early), p->N * cl, bs, 0, args, cl);
    l->block_used = bs;
    snprintf(l->path, sizeof l->path, "a row over %d block%s of %d threads; head, 16-byte packs, tail; w, b %s", cl,
             cl > 1 ? "s" : "", bs, early ? "with x" : "after the sum");
}
static const char *supports_odd_rows(const void *pp, int bs) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    if (bs && bs < 32) return "at least 32 threads (a thread for each head and tail element)";
    int cl = 0;
    if (odd_rows_plan(p, bs, &cl)) return NULL;
    long nvec = row_parts_packs(p->h.dtype, p->C);
    if (bs > 512) return "at most 512 threads a block";
    const char *arch = needs_sm90(g_dev.prop.major, g_dev.sm);
    if (arch && (g_cluster > 1 || nvec > 512L * ODD_PACKS)) return arch;
    return reasonf("the row (%ld 16-byte packs, a head and a tail) fits no plan of <= %d packs a thread "
                   "(--cluster %d, --block-size %d; 0: the rule's)", nvec, ODD_PACKS, g_cluster, bs);
}

// The plan's instance (fp32: EARLY_WB; both forms take the same clusters).
static const void *odd_rows_fn(dtype_t d, int cl) {
    const void *fn = NULL;
    with_pow2<1, 16>(cl, [&](auto CL) {
        switch (d) {
        case DT_FP32: fn = (const void *)layernorm_odd_rows_kernel<float, CL.value, true>; break;
        case DT_FP16: fn = (const void *)layernorm_odd_rows_kernel<__half, CL.value, false>; break;
        default: fn = (const void *)layernorm_odd_rows_kernel<__nv_bfloat16, CL.value, false>; break;
        }
    });
    return fn;
}
// The instance a launch takes: in fp32, w and b after the sum where that pays (late_form_pays, pick_instance:
// harness/gpu.h), else EARLY_WB.
static const void *odd_rows_launch_fn(dtype_t d, long N, int cl, int bs, bool *early) {
    const void *fn = odd_rows_fn(d, cl), *late = NULL;
    *early = false;
    if (d != DT_FP32) return fn;  // 16 bits: after the sum always
    with_pow2<1, 16>(cl, [&](auto CL) { late = (const void *)layernorm_odd_rows_kernel<float, CL.value, false>; });
    const void *took = pick_instance(fn, late, late_form_pays(fn, late, N, cl, bs), cl);
    *early = took == fn;
    return took;
}
// The plan: split_row_plan over the row's middle packs (row_parts_packs); --cluster K forces the blocks a row.
static int odd_rows_plan(const ln_problem_t *p, int req_bs, int *cl) {
    return split_row_plan(p->h.dtype, p->N, row_parts_packs(p->h.dtype, p->C), ODD_PACKS, 512, req_bs, g_cluster,
                          odd_rows_fn, cl);
}

// ------------------------------------------------------------------------------------------------
// Kernel 14, lean_split: kernel 12's row, shorter. At a cold start (the flush leaves L2 and the instruction
// caches empty) a few rows wait on the kernel's code as on its data: kernel 12 unrolls 4 packs a thread for x, w
// and b and carries both launch orders. Here a thread holds at most 2 packs and the launch order is compiled in,
// an instance for each: the same row takes twice the threads, each with half the loads to issue and wait for.
// Improves: a few rows of 4096-8192 elements (H100, cold: bf16 1x8192 2.27 us against kernel 12's 2.53, fp32
// 1x4096 2.21 against 2.37; chained, bf16 1x8192 1.41 against 1.68; results/NOTES.md).
// Wrong: long rows and many rows: half the bytes in flight a thread, twice the blocks a row, no bounded form for
// grids the GPU cannot hold at once (H100, bf16 1024x65536: 1.43x kernel 12's time); fp32 rows of 32768 and more
// gain nothing; at most 16 blocks x 512 threads x 2 packs (fp32 C <= 65536).
#define LEAN_PACKS 2

// The launch order compiled in: PDL 1 chained (--pdl), 0 alone.
template <typename T, int VEC, int CL, int PDL>
__global__ void __launch_bounds__(512) layernorm_lean_split_kernel(ln_args_t a) {
    latency_split_row<T, VEC, CL, false, LEAN_PACKS>(a, PDL);
}

template <typename T, int VEC, int CL, int PDL> __global__ void layernorm_lean_one_pack_kernel(ln_args_t a);  // 15
// The instance of a cluster size, of the launch order (O: 1 chained) and of the packs a thread (P: 2 kernel 14, 1
// kernel 15), and the one this launch takes (g_pdl).
template <int P, int O> static const void *lean_fn_of(dtype_t d, int cl) {
    const void *fn = NULL;
    with_pow2<1, 16>(cl, [&](auto CL) {
        constexpr int C = CL.value;
        switch (d) {
        case DT_FP32:
            fn = P == 2 ? (const void *)layernorm_lean_split_kernel<float, 4, C, O>
                        : (const void *)layernorm_lean_one_pack_kernel<float, 4, C, O>;
            break;
        case DT_FP16:
            fn = P == 2 ? (const void *)layernorm_lean_split_kernel<__half, 8, C, O>
                        : (const void *)layernorm_lean_one_pack_kernel<__half, 8, C, O>;
            break;
        default:
            fn = P == 2 ? (const void *)layernorm_lean_split_kernel<__nv_bfloat16, 8, C, O>
                        : (const void *)layernorm_lean_one_pack_kernel<__nv_bfloat16, 8, C, O>;
            break;
        }
    });
    return fn;
}
static const void *lean_split_fn(dtype_t d, int cl) {
    return g_pdl ? lean_fn_of<LEAN_PACKS, 1>(d, cl) : lean_fn_of<LEAN_PACKS, 0>(d, cl);
}
// The plan: kernel 12's rule (split_row_plan) at 2 packs a thread; its block size, 0 where the row does not fit.
static int lean_split_plan(const ln_problem_t *p, int req_bs, int *cl) {
    return split_row_plan(p->h.dtype, p->N, p->C / vec_width(p), LEAN_PACKS, 512, req_bs, g_cluster, lean_split_fn,
                          cl);
}
static void launch_lean_split(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int cl = 0, bs = lean_split_plan(p, l->block_size, &cl);
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel(lean_split_fn(p->h.dtype, cl), p->N * cl, bs, 0, args, cl);
    l->block_used = bs;
    snprintf(l->path, sizeof l->path, "a row over %d block%s of %d threads, <= 2 packs each",
             cl, cl > 1 ? "s" : "", bs);
}
static const char *supports_lean_split(const void *pp, int bs) {
    return split_refusal((const ln_problem_t *)pp, bs, LEAN_PACKS, lean_split_plan);
}
// Its plan: a thread a 2 packs in one block (at most 128 threads from SMs to 8 rows an SM, any number beyond);
// fewer rows than SMs: 64-256 threads; at least the threads that hold the row in 16 blocks.
static int lean_split_bs(long nvec, double rows_sm) {
    const double want = (double)nvec / LEAN_PACKS;
    int bs = rows_sm < 1 ? pow2_at_least(want, 64, 256)
             : rows_sm < 8 ? pow2_at_least(want, 32, 128) : pow2_at_least(want, 32, 512);
    const int fewest = pow2_at_least(want / 16, 32, 512);
    return bs > fewest ? bs : fewest;
}
static int plan_lean_split(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int cl = 0;
    const int own = lean_split_plan(p, 0, &cl);
    if (g_cluster) return own;
    return plan_checked(pp, supports_lean_split, lean_split_bs(p->C / vec_width(p), rows_per_sm(p)), own);
}

// ------------------------------------------------------------------------------------------------
// Kernel 15, lean_one_pack: kernel 14 at one pack a thread. The row takes twice kernel 14's threads, over blocks
// as small as the sweep likes (a 4096-element 16-bit row: 512 threads, best as 4-8 blocks of 64-128), each thread
// issuing one load of x, w and b and waiting for those alone: the least a thread has to do before the sum, and the
// most SMs loading the row, which is what a few cold rows wait on.
// Improves: 1-16 rows of 4096-8192 elements, cold and hot (H100, cold: bf16 1x4096 2.11 us against kernel 14's 2.24,
// fp32 1x4096 2.02 against 2.21; results/NOTES.md).
// Wrong: from about 64 rows on, twice kernel 14's blocks cost more than they save (512x4096: 1.2x its time); at
// most 16 blocks x 512 threads x 1 pack (fp32 C <= 32768, 16-bit C <= 65536).
template <typename T, int VEC, int CL, int PDL>
__global__ void __launch_bounds__(512) layernorm_lean_one_pack_kernel(ln_args_t a) {
    latency_split_row<T, VEC, CL, false, 1>(a, PDL);
}

static const void *lean_one_pack_fn(dtype_t d, int cl) {
    return g_pdl ? lean_fn_of<1, 1>(d, cl) : lean_fn_of<1, 0>(d, cl);
}
// The plan: kernel 12's rule (split_row_plan) at 1 pack a thread.
static int lean_one_pack_plan(const ln_problem_t *p, int req_bs, int *cl) {
    return split_row_plan(p->h.dtype, p->N, p->C / vec_width(p), 1, 512, req_bs, g_cluster, lean_one_pack_fn, cl);
}
static void launch_lean_one_pack(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int cl = 0, bs = lean_one_pack_plan(p, l->block_size, &cl);
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel(lean_one_pack_fn(p->h.dtype, cl), p->N * cl, bs, 0, args, cl);
    l->block_used = bs;
    snprintf(l->path, sizeof l->path, "a row over %d block%s of %d threads, 1 pack each", cl, cl > 1 ? "s" : "", bs);
}
static const char *supports_lean_one_pack(const void *pp, int bs) {
    return split_refusal((const ln_problem_t *)pp, bs, 1, lean_one_pack_plan);
}
// Its plan: a thread a pack in one block where rows >= SMs or the row is <= 256 packs; a longer row of fewer
// rows over about 8 blocks of 128-512 threads; at least the threads that hold the row in 16 blocks.
static int lean_one_pack_bs(long nvec, double rows_sm) {
    int bs = rows_sm >= 1 || nvec <= 256 ? pow2_at_least((double)nvec, 32, 512) : pow2_at_least(nvec / 8.0, 128, 512);
    const int fewest = pow2_at_least(nvec / 16.0, 32, 512);
    return bs > fewest ? bs : fewest;
}
static int plan_lean_one_pack(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int cl = 0;
    const int own = lean_one_pack_plan(p, 0, &cl);
    if (g_cluster) return own;
    return plan_checked(pp, supports_lean_one_pack, lean_one_pack_bs(p->C / vec_width(p), rows_per_sm(p)), own);
}

// ------------------------------------------------------------------------------------------------
// Kernel 16, walk_rows: kernel 12's row in one block (at most 4 packs a thread), in a grid of the blocks the GPU
// holds at once, each walking the rows blockIdx.x, + gridDim.x, ... A block a row reads its row's w and b as well as
// x: at many rows of 4096 fp32 that is 32 KB of weights beside 16 KB of x a row, through L1 (H100, fp32 512x4096
// hot, ncu: 790K L1 load sectors against RMSNorm's 524K). Here a block loads w and b once, into registers, and
// the next row's x before it sums this one, so a row's loads are in flight while the previous row reduces and
// stores (as kernel 10 does for short rows). Two scratch arrays, by row parity, keep one row's block sum from
// overwriting the last (each row's barrier separates them).
// Improves: many rows of 4096-8192 elements, hot and cold (H100: fp32 512x4096 hot 5.03 -> 4.68 us, chained by PDL
// 4.66 -> 4.03, where cuDNN takes 4.04; fp32 512x8192 11.07 -> 10.43 cold; bf16 2048x4096 11.42 -> 10.88 cold;
// 537K L1 load sectors at fp32 512x4096; results/NOTES.md).
// Wrong: 95 registers in fp32 (x, the next x, w and b), two blocks of 256 an SM; at 16 K rows of bf16 4096 it is
// 3% behind kernel 12 (fewer bytes in flight than 12's waves of small blocks), and at 128 rows level or behind (one
// row a block: nothing to walk); one block a row, at most 512 threads x 4 packs (fp32 C <= 8192, 16-bit C <= 16384).
template <typename T, int VEC, int PACKS>
__global__ void __launch_bounds__(512) layernorm_walk_rows_kernel(ln_args_t a, int pdl) {
    const T *__restrict__ x = (const T *)a.x;
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;
    const long C = a.C, N = a.N;
    __shared__ float2 scratch[2][32];  // the block sums of even and odd rows
    const int nvec = (int)(C / VEC), first = threadIdx.x;
    RawPack<T, VEC> wraw[PACKS], braw[PACKS], xraw[PACKS];
    load_raw_batch<T, VEC, PACKS>(wraw, w, first, nvec);  // the weights: before the wait for the grid before (--pdl)
    load_raw_batch<T, VEC, PACKS>(braw, b, first, nvec);
    if (pdl) {
        pdl_wait();  // x is read, and y written, only once the grid before has finished
        pdl_trigger();
    }
    long row = blockIdx.x;  // the grid is at most N blocks: every block has a first row
    float k = to_float(x[row * C]);  // the shift of the row's sums: its first element (kernel 12)
    load_raw_batch<T, VEC, PACKS>(xraw, x + row * C, first, nvec);
    Pack<T, VEC> wv[PACKS], bv[PACKS];
#pragma unroll
    for (int p = 0; p < PACKS; p++) {
        wv[p] = raw_pack<T, VEC>(wraw[p]);
        bv[p] = raw_pack<T, VEC>(braw[p]);
    }
    for (int parity = 0; row < N; row += gridDim.x, parity ^= 1) {
        if constexpr (sizeof(T) == 2) {  // 16 bits: w and b converted at each use, not held as fp32 across rows
#pragma unroll
            for (int p = 0; p < PACKS; p++) {
                keep_packed(wv[p]);
                keep_packed(bv[p]);
            }
        }
        Pack<T, VEC> v[PACKS];
#pragma unroll
        for (int p = 0; p < PACKS; p++) v[p] = raw_pack<T, VEC>(xraw[p]);
        const float kr = k;
        const long next = row + gridDim.x;
        if (next < N) {  // the next row's loads, in flight during this row's sum and stores
            k = to_float(x[next * C]);
            load_raw_batch<T, VEC, PACKS>(xraw, x + next * C, first, nvec);
        }
        float2 s = make_float2(0.f, 0.f);
#pragma unroll
        for (int p = 0; p < PACKS; p++)
            if (first + p * (int)blockDim.x < nvec) shifted_add(s, v[p], kr);
        s = block_sum_once(s, scratch[parity]);
        const float m = kr + s.x / C, r = shifted_rstd(s, C, a.eps);
        split_store(v, wv, bv, first, nvec, m, r, (T *)a.y + row * C);
        if (threadIdx.x == 0) {
            a.mean[row] = m;
            a.rstd[row] = r;
        }
    }
}

// Its instance for a dtype, and its plan (below the launcher).
static const void *walk_rows_fn(dtype_t d);
static int walk_rows_plan(long nvec, int req_bs);
static void launch_walk_rows(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    const int bs = walk_rows_plan(p->C / vec_width(p), l->block_size);
    const void *fn = walk_rows_fn(p->h.dtype);
    const long grid = persist_grid(fn, bs, p->N, 0);
    ln_args_t a = ln_args(p);
    int pdl = g_pdl;
    void *args[] = {&a, &pdl};
    launch_kernel(fn, grid, bs, 0, args, 1);
    l->block_used = bs;
    snprintf(l->path, sizeof l->path, "%ld blocks of %d threads walk %ld row%s; w, b read once a block", grid, bs,
             p->N, p->N > 1 ? "s" : "");
}
static const char *supports_walk_rows(const void *pp, int bs) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    if (!full_packs(p)) return reasonf("needs 16-byte packs: C a multiple of %d", 16 / (int)dtype_size(p->h.dtype));
    const long nvec = p->C / vec_width(p);
    if (nvec > 512L * SPLIT_PACKS)
        return reasonf("the row (%ld 16-byte packs) is more than one block of 512 threads x %d packs holds", nvec,
                       SPLIT_PACKS);
    if (bs > 512) return "at most 512 threads a block";
    const int plan = walk_rows_plan(nvec, bs);
    if (!plan) return reasonf("%d threads x %d packs do not hold the row (%ld 16-byte packs)", bs, SPLIT_PACKS, nvec);
    return block_fits(walk_rows_fn(p->h.dtype), plan);
}
// Its plan: the fewest threads that hold the row in 4 packs each (walk_rows_plan's own rule).
static int plan_walk_rows(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    const int bs = walk_rows_plan(p->C / vec_width(p), 0);
    return bs ? bs : 512;
}
template <typename T, int VEC> static void walk_rows_fn_t(const void **fn) {
    *fn = (const void *)layernorm_walk_rows_kernel<T, VEC, SPLIT_PACKS>;
}
static const void *walk_rows_fn(dtype_t d) {
    const void *fn = NULL;
    PACK16_CALL(d, walk_rows_fn_t, &fn);
    return fn;
}
// The threads: those given, else the fewest (a multiple of 32) that hold the row in SPLIT_PACKS packs; 0 where a
// block of them cannot hold the row (or more than 512 are given). Pure: the CPU tests ask it.
static int walk_rows_plan(long nvec, int req_bs) {
    int bs = req_bs ? req_bs : (int)ceil_div(ceil_div(nvec, SPLIT_PACKS), 32) * 32;
    return bs <= 512 && (long)bs * SPLIT_PACKS >= nvec ? bs : 0;
}

// ------------------------------------------------------------------------------------------------
// Kernel 17, dispatch: no kernel of its own. The rule of regimes (k_regimes, harness/dispatch.h), derived by
// scripts/tune_dispatch.py from the dense sweep of every rung at each of its block sizes and checked on random
// draws: each row a region of element size, 16-byte packing, 16-byte packs a row and rows an SM, and the rung it
// runs; the first row that holds the problem and whose rung takes it decides, and that rung's plan (its registry
// entry's) sets its block size. A --block-size given replaces the plan's; --cluster K steers rungs 11-15 as when
// they run alone.
// Wrong: a region's rung is the best on average over its points, not at each (about one point in five of the
// dense sweep runs more than 3% behind the best rung, long fp32 rows under --pdl the most); the kind of launch
// (cold, hot, --pdl) does not enter the rule; the plans are rules of thumb fitted to one GPU's sweep.
static const regime_t k_regimes[] = {
    // regimes: begin (scripts/tune_dispatch.py layernorm --regimes results/h200/sweeps --write; do not edit)
    // bytes, 16-byte packs, variants, launches, packs a row [lo, hi), rows an SM [lo, hi), H*W [lo, hi), rung
    {0, 0, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 13, "no 16-byte packs"},
    {0, 0, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 9, "no 16-byte packs"},
    {2, 1, 0, 0, 0, 256, 0, 1.41421, 0, RG_ANY, 15, "16-bit, 16-byte packs, packs a row < 256, rows an SM < 1.414"},
    {4, 1, 0, 0, 0, 256, 0, 1.41421, 0, RG_ANY, 7, "fp32, 16-byte packs, packs a row < 256, rows an SM < 1.414"},
    {0, 1, 0, 0, 0, 256, 1.41421, RG_ANY, 0, RG_ANY, 7, "16-byte packs, packs a row < 256, rows an SM >= 1.414"},
    {0, 1, 0, 0, 256, 4096, 0, 0.0220971, 0, RG_ANY, 15, "16-byte packs, 256 <= packs a row < 4096, rows an SM < 0.0221"},
    {0, 1, 0, 0, 4096, RG_ANY, 0, 0.0220971, 0, RG_ANY, 12, "16-byte packs, packs a row >= 4096, rows an SM < 0.0221"},
    {0, 1, 0, 0, 4096, RG_ANY, 0, 0.0220971, 0, RG_ANY, 9, "16-byte packs, packs a row >= 4096, rows an SM < 0.0221"},
    {0, 1, 0, 0, 256, RG_ANY, 0.0220971, RG_ANY, 0, RG_ANY, 12, "16-byte packs, packs a row >= 256, rows an SM >= 0.0221"},
    {0, 1, 0, 0, 256, RG_ANY, 0.0220971, RG_ANY, 0, RG_ANY, 9, "16-byte packs, packs a row >= 256, rows an SM >= 0.0221"},
    {0, -1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 9, "anything"},
    // regimes: end
};

// The registry entry of a rung (defined below the registry).
static const kernel_t *ladder_rung(int k);
static const char *regime_supports(const void *pp, int rung, int bs) {
    return rung_supports(ladder_rung(rung), pp, ((const ln_problem_t *)pp)->h.dtype, bs);
}
// The regime that runs the problem (NULL: none, a bug in k_regimes, whose last rows take every problem) and its
// 1-based row in *at.
static const regime_t *dispatch_for(const ln_problem_t *p, int req_bs, int *at) {
    const regime_key_t key = regime_key((int)dtype_size(p->h.dtype), full_packs(p), TV_PLAIN, p->C, p->N, 1);
    const regime_t *r = regime_pick(k_regimes, (int)(sizeof k_regimes / sizeof k_regimes[0]), &key, req_bs, p,
                                    regime_supports, at);
    *at += 1;
    return r;
}
static void launch_dispatch(const void *pp, launch_t *l) {
    int at = 0;
    const regime_t *r = dispatch_for((const ln_problem_t *)pp, l->block_size, &at);
    regime_launch(r, at, r ? ladder_rung(r->rung) : NULL, pp, l, "");
}
static const char *supports_dispatch(const void *pp, int bs) {
    int at = 0;
    return dispatch_for((const ln_problem_t *)pp, bs, &at) ? NULL : NO_REGIME;
}

// ------------------------------------------------------------------------------------------------
// The registry (keep it, the header comment, --list and the README's ladder table in agreement).

// (The last field: 1 where the kernel takes --pdl, the templated kernels 6-17.)
#define FP32_ONLY DT_BIT(DT_FP32)
static const kernel_t k_kernels[] = {
    {0, "cudnn", DT_ALL, "where cuDNN has an engine",
     "cuDNN 9 graph API norm-forward (training phase), fastest of the heuristics' engine configs", 1,
     CUDNN_FNS(supports_cudnn, launch_cudnn)},
    {1, "thread_per_row", FP32_ONLY, "any C", "one thread per row, three loops over the row", 0, NULL,
     launch_thread_per_row},
    {2, "three_launch", FP32_ONLY, "any C; power-of-two blocks",
     "block per row: shared-memory tree for the mean, again for rstd, then one element per thread", 0,
     supports_three_launch, launch_three_launch},
    {3, "warp_per_row", FP32_ONLY, "any C",
     "one warp per row, cooperative-groups reductions, two-pass variance, streaming hints", 0, NULL,
     launch_warp_per_row},
    {4, "warp_single_pass", FP32_ONLY, "any C; fails when |mean|>>std",
     "as 3 with var = E[x^2] - E[x]^2 in one pass: fast to write, loses precision", 0, NULL, launch_warp_single_pass},
    {5, "block_per_row", FP32_ONLY, "any C", "one block per row: warp shuffles, then across warps through shared memory",
     0, NULL, launch_block_per_row},
    {6, "block_row_regs", DT_ALL, "C <= 16 x block size",
     "one block per row with the row held in registers: x read once, two-pass on registers", 0,
     supports_block_row_regs, launch_block_row_regs, 1, plan_block_row_regs},
    {7, "subwarp_regs_vec", DT_ALL, "C <= 256 packs (1024 fp32)",
     "a warp or part of one per row, row in registers, two group sums, 16-byte packs", 0, supports_subwarp_regs_vec,
     launch_subwarp_regs_vec, 1, plan_subwarp_regs_vec},
    {8, "block_smem_welford", DT_ALL, "row fits shared memory",
     "one block per row, row cached in shared memory, Welford all-reduce, occupancy block size", 1,
     supports_block_smem_welford, launch_block_smem_welford, 1},
    {9, "block_reread", DT_ALL, "any C",
     "one block per row, no cache: Welford pass then a normalize pass that re-reads x", 0, NULL, launch_block_reread,
     1, plan_block_reread},
    {10, "subwarp_persistent", DT_ALL, "C <= 128 16-byte packs",
     "7's layout in a grid of resident blocks that walk the rows, the next row loaded early; 16-bit w, b kept", 0,
     supports_subwarp_persistent, launch_subwarp_persistent, 1, plan_subwarp_persistent},
    {11, "cluster_row_regs", DT_ALL, "16-byte packs, row <= 256 KB",
     "row in registers in 16-byte packs, split over a thread-block cluster when one block cannot hold it", 1,
     supports_cluster_row_regs, launch_cluster_row_regs, 1},
    {12, "latency_split", DT_ALL, "16-byte packs, row <= 512 KB",
     "a row over 1-16 blocks, w and b loaded with x, one reduction round", 0, supports_latency_split,
     launch_latency_split, 1, plan_latency_split},
    {13, "odd_rows", DT_ALL, "row <= 512 KB",
     "rows of any length: a head to the first 16-byte boundary, 16-byte packs, a tail; a row over 1-16 blocks", 1,
     supports_odd_rows, launch_odd_rows, 1},
    {14, "lean_split", DT_ALL, "16-byte packs, row <= 256 KB",
     "12's row at <= 2 packs a thread, the launch order compiled in: less code at a cold start", 0,
     supports_lean_split, launch_lean_split, 1, plan_lean_split},
    {15, "lean_one_pack", DT_ALL, "16-byte packs, row <= 128 KB",
     "14's row at 1 pack a thread: twice the threads, the least work a thread before the sum", 0,
     supports_lean_one_pack, launch_lean_one_pack, 1, plan_lean_one_pack},
    {16, "walk_rows", DT_ALL, "16-byte packs, row <= 32 KB",
     "12's row a block in a grid of resident blocks that walk the rows: w, b read once a block", 0,
     supports_walk_rows, launch_walk_rows, 1, plan_walk_rows},
    {17, "dispatch", DT_ALL, "any C",
     "a rule of regimes picks the rung, the rung's plan its block size; says which ran", 1, supports_dispatch,
     launch_dispatch, 1},
};
static const kernel_t *ladder_rung(int k) { return &k_kernels[k]; }

// ------------------------------------------------------------------------------------------------
// Setup, reference, teardown, options.

static const extra_option_t k_extra[] = {
    {"eps", required_argument, "--eps E          epsilon (default 1e-5)"},
    {"cluster", required_argument,
     "--cluster K      kernels 11-15, 17: split rows over K blocks (1, 2, 4, 8 or 16; 1 = one block a row),\n"
     "                   the block size from --block-size or the kernel's rule"}};
static const char *parse_extra(int index, const char *arg) {
    if (index == 1) {
        long k;
        if (parse_long(arg, 1, 16, &k) || (k & (k - 1)))
            return reasonf("invalid cluster size '%s' (--cluster: 1, 2, 4, 8 or 16)", arg);
        g_cluster = (int)k;
        return NULL;
    }
    double v;
    if (parse_double(arg, &v) || v < 0) return reasonf("invalid eps '%s' (--eps: a number >= 0 within fp32's range)", arg);
    g_eps = v;
    return NULL;
}

// --cluster steers kernels 11-15 (and 17 through them): refused with any other kernel, where it would do
// nothing.
static int takes_cluster(int k) { return (k >= 11 && k <= 15) || k == LN_DISPATCHER || k == KERNEL_DEFAULT; }
static const char *check_options(const options_t *o) {
    if (g_cluster && !kernels_take(o, takes_cluster))
        return "--cluster applies to kernels 11-15 and 17 alone (give them as the kernel)";
    return check_rows_cols(o);
}

static problem_t *ln_setup(const options_t *o) {
    ln_problem_t *p = (ln_problem_t *)calloc(1, sizeof *p);
    dtype_t d = o->dtype;
    size_t es = dtype_size(d);
    long N = o->rows, C = o->cols;
    p->N = N;
    p->C = C;
    p->eps = (float)g_eps;
    p->h.dtype = d;
    snprintf(p->h.shape, sizeof p->h.shape, "%ldx%ld", N, C);
    snprintf(p->h.shape_desc, sizeof p->h.shape_desc, "rows %ld cols %ld", N, C);
    p->h.bytes = 2.0 * N * C * es + 2.0 * C * es + 2.0 * N * sizeof(float);  // x, y, weight, bias, mean, rstd
    p->x = dev_alloc(N * C * es);
    p->y = dev_alloc(N * C * es);
    p->w = dev_alloc(C * es);
    p->b = dev_alloc(C * es);
    p->mean = (float *)dev_alloc(N * sizeof(float));
    p->rstd = (float *)dev_alloc(N * sizeof(float));
    p->hx = host_alloc_doubles(N * C);
    p->hw = host_alloc_doubles(C);
    p->hb = host_alloc_doubles(C);
    fill_normal(p->x, p->hx, N * C, d, o->seed, 0, o->input_mean, o->input_std);
    fill_normal(p->w, p->hw, C, d, o->seed, 1, 1.0, 0.25);
    fill_normal(p->b, p->hb, C, d, o->seed, 2, 0.0, 0.25);
    p->h.n_out = 3;
    p->h.out[0] = (output_t){"y", p->y, d, N, C, host_alloc_doubles(N * C), tolerance_for(d), host_alloc_doubles(N)};
    p->h.out[1] = (output_t){"mean", p->mean, DT_FP32, N, 1, host_alloc_doubles(N), tolerance_for(DT_FP32), NULL};
    p->h.out[2] = (output_t){"rstd", p->rstd, DT_FP32, N, 1, host_alloc_doubles(N), tolerance_for(DT_FP32), NULL};
    return &p->h;
}

// The error no fp32 kernel avoids: the mean is an fp32 number, so x - mean is off by up to an ulp or so of
// |mean| (more after a sum of C values), and y by that times rstd * |weight|. Allowed: 16 ulps of the mean.
// With mean 0 this adds ~1e-7; with --input-mean 1000 (std 1) about 2e-3, where a two-pass kernel errs by
// ~3e-4 and the single-pass variance (kernel 4) by ~0.5.
static void layernorm_row_atol(double *row_atol, const double *mean, const double *rstd, const double *w, long N,
                               long C) {
    double wmax = 0;
    for (long c = 0; c < C; c++) wmax = fmax(wmax, fabs(w[c]));
    for (long r = 0; r < N; r++) row_atol[r] = 16.0 * ldexp(1.0, -24) * fabs(mean[r]) * rstd[r] * wmax;
}

static void ln_reference(problem_t *h) {
    ln_problem_t *p = (ln_problem_t *)h;
    layernorm_forward_cpu(h->out[0].ref, h->out[1].ref, h->out[2].ref, p->hx, p->hw, p->hb, p->N, p->C, p->eps);
    layernorm_row_atol(h->out[0].row_atol, h->out[1].ref, h->out[2].ref, p->hw, p->N, p->C);
}

static void ln_teardown(problem_t *h) {
    ln_problem_t *p = (ln_problem_t *)h;
    void *dev[] = {p->x, p->y, p->w, p->b, p->mean, p->rstd};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) CUDA_CHECK(cudaFree(dev[i]));
    for (int i = 0; i < h->n_out; i++) {
        free(h->out[i].ref);
        free(h->out[i].row_atol);
    }
    free(p->hx);
    free(p->hw);
    free(p->hb);
    free(p);
}

static const program_t k_program = {
    "layernorm",
    "layernorm_forward",
    "LayerNorm forward over the last dimension: y = (x - mean) * rstd * weight + bias, with mean and rstd saved",
    8 * 1024,
    768,
    k_kernels,
    (int)(sizeof k_kernels / sizeof k_kernels[0]),
    LN_DISPATCHER,
    k_extra,
    (int)(sizeof k_extra / sizeof k_extra[0]),
    parse_extra,
    check_options,
    ln_setup,
    ln_reference,
    ln_teardown,
    NULL,  // no buffer is updated in place
};

#ifndef NORM_NO_MAIN
int main(int argc, char **argv) { return bench_main(argc, argv, &k_program); }
#endif
