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
  12  latency_split       a row over 1-16 blocks, w and b loaded with x, one reduction round; 1, 2 or 4 packs a thread by its plan
  13  odd_rows            rows of any length: a head to the first 16-byte boundary, 16-byte packs, a tail; a row over 1-16 blocks
  14  dispatch            a rule of regimes picks the rung, the rung's plan its block size; says which ran

Run:
  make && ./layernorm_forward 7                 validate kernel 7, sweep block sizes, time each
  ./layernorm_forward all --dtype bf16          every kernel, ranked
  ./layernorm_forward 14 -N 16384 -C 4096 --check
  ./layernorm_forward 12 -N 4 -C 65536 --cluster 8    a row over 8 blocks (--cluster: kernels 11-13, 14)
  ./layernorm_forward 12 -N 1 -C 4096 --packs 1       one 16-byte pack a thread (--packs: kernels 12, 14)
  ./layernorm_forward 13 -N 4 -C 32769 --dtype bf16   rows of odd length
  ./layernorm_forward --list                    the registry (no GPU needed)
Build it alone (-arch: your GPU's, sm_90 or later for the cluster kernels' code):
  nvcc -O3 -std=c++17 --default-stream per-thread -arch=sm_90 -Xcompiler -fopenmp -o layernorm_forward layernorm_forward.cu -lcurand -lgomp -ldl
  CUPTI (the GPU's clock for the timing; else CUDA events): add -DHAVE_CUPTI -lcupti (-I/-L to <cuda>/extras/CUPTI)
  cuDNN (kernel 0): add -DHAVE_CUDNN -lcudnn (-I/-L to cuDNN where it is not in the toolkit's directories)
Kernels 1-5 are the fp32 teaching ladder; 6-14 run fp32, fp16 and bf16 with fp32 arithmetic.
Kernel 0 says `skipped: built without cuDNN` where the build did not find cuDNN; its `path` names the engine.
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
static int g_cluster = 0;  // --cluster K: kernels 11-13 (14 through them) split rows over K blocks (0: their rule)
static int g_packs = 0;    // --packs P: kernel 12 (14 through it) holds P 16-byte packs a thread (0: its rule)
#define LN_DISPATCHER 14   // kernel 14, the dispatcher (the default kernel)

// Kernel arguments: kernels 1-5 take llm.c's positional ones; the templated kernels (6 on) this struct by value, first
// (a launch's own values after it), bound to typed __restrict__ locals (LN_ARGS) as restrict parameters would be.
typedef struct {
    const void *x, *w, *b;  // x [N, C]; weight and bias [C]: the run's dtype
    void *y;                // [N, C]
    float *mean, *rstd;     // [N]
    long N, C;
    float eps;
} ln_args_t;
#define LN_ARGS(T)                                                                                                     \
    const T *__restrict__ x = (const T *)a.x;                                                                          \
    const T *__restrict__ w = (const T *)a.w, *__restrict__ b = (const T *)a.b;                                        \
    T *__restrict__ y = (T *)a.y;                                                                                      \
    float *__restrict__ mean = a.mean, *__restrict__ rstd = a.rstd;                                                    \
    const long C = a.C;                                                                                                \
    const float eps = a.eps
static ln_args_t ln_args(const ln_problem_t *p) {
    return {p->x, p->w, p->b, p->y, p->mean, p->rstd, p->N, p->C, p->eps};
}
// Launches fn, a templated kernel taking the arguments alone: grid blocks of bs threads, clusters of cl.
static void ln_launch(const void *fn, const ln_problem_t *p, long grid, int bs, size_t smem, int cl) {
    ln_args_t a = ln_args(p);
    void *args[] = {&a};
    launch_kernel(fn, grid, bs, smem, args, cl);
}
// A row's statistics, stored by one thread (kernels 5 on).
__device__ __forceinline__ void store_stats(float *mean, float *rstd, long row, float m, float r) {
    mean[row] = m, rstd[row] = r;
}
// The widest pack (elements) that divides C: 16 bytes when it can.
static int vec_width(const ln_problem_t *p) { return (int)gcd_long(16 / (long)dtype_size(p->h.dtype), p->C); }
// 1 when C takes 16-byte packs (the pack width of kernels 10, 11 and 12).
static int full_packs(const ln_problem_t *p) { return vec_width(p) == 16 / (int)dtype_size(p->h.dtype); }
// The plans' terms (a rung's block size where the dispatcher launches it): rows an SM; powers of two.
static double rows_per_sm(const ln_problem_t *p) { return per_sm((double)p->N); }
// A plan's block size bs where the rung's supports_ takes it, else `other` (its own sizing) where that is taken.
static int plan_checked(const void *pp, const char *(*supports)(const void *, int), int bs, int other) {
    return !supports(pp, bs) || !other || supports(pp, other) ? bs : other;
}
// Rungs 6 and 9: one unit (6: an element, 9: a pack) a thread below SMs rows, two up to 8 rows an SM, four beyond.
static int row_block_bs(long units, double rows_sm) {
    const int per_thread = rows_sm < 1 ? 1 : rows_sm < 8 ? 2 : 4;
    return pow2_at_least((double)units / per_thread, 32, 1024);
}

// ------------------------------------------------------------------------------------------------
// CPU reference, in double precision, two-pass, from the dtype-rounded inputs.
static void layernorm_forward_cpu(double *y, double *mean, double *rstd, const double *x, const double *w,
                                  const double *b, long N, long C, double eps) {
OMP_PARALLEL_FOR
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
        mean[r] = m, rstd[r] = s;
    }
}

// ------------------------------------------------------------------------------------------------
// Kernel 0, cudnn: cuDNN's graph norm-forward node (LayerNorm, training phase), the fastest engine config kept.
// Improves: the reference the ladder is measured against. Wrong: a plan costs seconds a process; no --pdl.
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
// Improves: the plainest correct kernel, the ladder's start. Wrong: neighbouring threads read addresses C floats
// apart (every load its own transaction), and only `rows` threads: too few to fill the GPU at small rows.
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
// Kernel 2, three_launch: a block per row reduces the mean through a shared-memory tree, a second launch rstd, a
// third normalizes one element per thread. Improves: coalesced reads and a block of threads per row.
// Wrong: x crosses memory three times, mean/rstd round-trip through global memory, the tree idles half the threads
// at each step, three launches pay three latencies. Needs a power-of-two block.
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
static const char *supports_three_launch(const void *, int bs) {
    return is_pow2(bs) ? NULL : "the shared-memory tree needs a power-of-two block size";
}

// ------------------------------------------------------------------------------------------------
// Kernel 3, warp_per_row: one warp per row, cooperative-groups shuffles, the two-pass variance, __restrict__,
// streaming (evict-first) hints on the last read of x and on y. Improves: no shared memory, no block barrier.
// Wrong: x read three times (the re-reads mostly hit L1/L2), 4-byte loads, large rows left to one warp; the hints
// do not pay as a rule (9-11 keep them).
__global__ void layernorm_warp_per_row_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                              const float *__restrict__ b, float *__restrict__ y, float *__restrict__ mean,
                                              float *__restrict__ rstd, long N, long C, float eps) {
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
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
// Kernel 4, warp_single_pass: as 3, but sum and sum of squares in one pass: var = E[x^2] - E[x]^2. Improves: one
// read of x fewer before normalizing. Wrong: catastrophic cancellation: when |mean| >> std, E[x^2] and E[x]^2 are
// huge and nearly equal in fp32's ~7 digits: at --input-mean 1000 (std 1) the variance loses six: FAIL.
__global__ void layernorm_warp_single_pass_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                                  const float *__restrict__ b, float *__restrict__ y, float *__restrict__ mean,
                                                  float *__restrict__ rstd, long N, long C, float eps) {
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
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
    // __fmul_rn: m*m rounded as the squares were (an FMA leaves its rounding error in var: C = 1 would fail)
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
// Kernel 5, block_per_row: one block per row; warps reduce by shuffles, their partials meet in shared memory
// (block_sum); two-pass statistics. Improves: a whole block a row, so large rows get enough loads in flight.
// Wrong: x still read three times (the later reads hit L2 only while the row stays there), 4-byte loads, and at
// small C most of the block idles.
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
    if (threadIdx.x == 0) store_stats(mean, rstd, row, m, r);
}
static void launch_block_per_row(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    layernorm_block_per_row_kernel<<<(unsigned)p->N, l->block_size>>>((const float *)p->x, (const float *)p->w, (const float *)p->b, (float *)p->y, p->mean, p->rstd, p->C, p->eps);
}

// ------------------------------------------------------------------------------------------------
// Kernel 6, block_row_regs: one block per row, the row in registers: each thread loads its PACKS packs of VEC
// elements once, all before the first add; mean, variance and y come from them (kernel 11 runs it at 16-byte packs).
// Improves: x crosses DRAM once, where 5 reads it three times. Wrong: scalar loads cost many instructions a byte;
// the row must fit block_size x 16 registers (a few spill at 1024 threads); at small C most threads hold nothing.
// Its loops over a thread's packs (pack p: i = threadIdx.x + p * blockDim.x < nvec): the sum, the squares, y.
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
            if (CS) store_pack_cs<T, VEC>(yr + i * VEC, out); else store_pack<T, VEC>(yr + i * VEC, out);
        }
    }
}
template <typename T, int VEC, int PACKS, bool CS = false>  // CS: streaming access (a choice of kernel 11)
__global__ void __launch_bounds__(1024) layernorm_block_row_regs_kernel(ln_args_t a) {
    LN_ARGS(T);
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    __shared__ float scratch[33];
    long row = blockIdx.x;
    const T *xr = x + row * C;
    int nvec = (int)(C / VEC);  // the launcher guarantees C % VEC == 0
    Pack<T, VEC> v[PACKS];
#pragma unroll  // every load first, in a loop of its own: all in flight before the first add
    for (int p = 0; p < PACKS; p++) {
        int i = threadIdx.x + p * blockDim.x;
        if (i < nvec) v[p] = CS ? load_pack_cs<T, VEC>(xr + i * VEC) : load_pack<T, VEC>(xr + i * VEC);
    }
    float m = block_sum(rowreg_sum(v, nvec), scratch) / C;
    float r = rsqrtf(block_sum(rowreg_sq(v, nvec, m), scratch) / C + eps);
    rowreg_store<CS>(v, nvec, m, r, w, b, y + row * C);
    if (threadIdx.x == 0) store_stats(mean, rstd, row, m, r);
}
// Packs a thread: the fewest (a power of two <= max_packs) with which bs threads hold the row; 0: none. Kernel 6: 16.
static const int ROWREG_MAX_PACKS = 16;
static int rowreg_packs(long nvec, int bs, int max_packs) {
    for (int packs = 1; packs <= max_packs; packs *= 2) if ((long)packs * bs >= nvec) return packs;
    return 0;
}
template <typename T>
static void launch_block_row_regs_t(const ln_problem_t *p, int bs, int packs) {  // scalar (VEC = 1)
    const void *fn;
    with_pow2<1, 16>(packs, [&](auto P) { fn = (const void *)layernorm_block_row_regs_kernel<T, 1, P.value>; });
    ln_launch(fn, p, p->N, bs, 0, 1);
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
// Its plan: row_block_bs over the row's elements, and at least the threads that hold it in 16 registers each (from 64
// rows an SM only those: more rows resident).
static int block_row_regs_bs(long C, double rows_sm) {
    const int bs = row_block_bs(C, rows_sm), fewest = pow2_at_least((double)C / ROWREG_MAX_PACKS, 32, 1024);
    return bs > fewest && rows_sm < 64 ? bs : fewest;
}
static int plan_block_row_regs(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    return plan_checked(pp, supports_block_row_regs, block_row_regs_bs(p->C, rows_per_sm(p)), 1024);
}

// ------------------------------------------------------------------------------------------------
// Kernel 7, subwarp_regs_vec: TPR lanes (1..32 by C) a row, the row in registers in the widest packs that divide C,
// two shuffle sums (the mean, the squares around it): the exact two-pass variance from one read, several rows a warp.
// Improves: 16-byte loads and stores issued before the first use, no __syncthreads; a lane of <= 4 packs loads w and
// b with x (6-9% off bf16 C = 256 and 768, fp32 C = 128). Wrong: C up to 1024 (fp32) / 2048 (16-bit) at up to MAXP
// = 8 packs a lane; w and b held take 64-68 registers: 16-bit blocks of 1024 threads no longer fit at C <= 1024.
#define K7_MAX_PACKS 8
// A lane's packs of w and b: from memory each row (7; 10 in fp32), or loaded once into registers (10 in 16-bit).
template <typename T, int VEC> struct WBFromMemory {
    const T *__restrict__ w, *__restrict__ b;
    template <int TPR> __device__ __forceinline__ void init(const T *wp, const T *bp, int, int) {
        w = wp;
        b = bp;
    }
    __device__ __forceinline__ void repack() {}
    __device__ __forceinline__ void get(int, int i, Pack<T, VEC> &wv, Pack<T, VEC> &bv) const {
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
    __device__ __forceinline__ void get(int p, int, Pack<T, VEC> &wv, Pack<T, VEC> &bv) const {
        wv = w[p];
        bv = b[p];
    }
};
// The two group sums, then y and the statistics; every lane of the warp calls it, lanes with !valid write nothing.
// REPACK: the row's packs converted again for y (keep_packed), not held as fp32 across the shuffles (2x in 16-bit).
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
            if (CS) store_pack_cs<T, VEC>(yr + (long)i * VEC, out); else store_pack<T, VEC>(yr + (long)i * VEC, out);
        }
    }
    if (lane == 0) store_stats(mean, rstd, row, m, r);
}
template <typename T, int VEC, int TPR, int MAXP>
__global__ void layernorm_subwarp_regs_vec_kernel(ln_args_t a) {
    LN_ARGS(T);
    const long N = a.N;
    pdl_wait();  // --pdl: x is read, and y written, only once the grid before has finished
    pdl_trigger();
    long row = blockIdx.x * (long)(blockDim.x / TPR) + threadIdx.x / TPR;
    int lane = threadIdx.x % TPR, nvec = (int)(C / VEC);
    bool valid = row < N;  // no early return: every lane of the warp must reach the shuffles
    Pack<T, VEC> v[MAXP];
    subwarp_load_row<T, VEC, TPR, MAXP>(v, x + row * C, valid, lane, nvec);
    // w and b loaded with x where a lane holds at most 4 16-byte packs: y waits on no second trip to memory
    constexpr bool EARLY = MAXP <= 4 && sizeof(Pack<T, VEC>) == 16;
    std::conditional_t<EARLY, WBInRegisters<T, VEC, MAXP>, WBFromMemory<T, VEC>> wb;
    wb.template init<TPR>(w, b, lane, nvec);
    wb.repack();
    subwarp_finish_row<T, VEC, TPR, MAXP, false, EARLY>(v, valid, lane, nvec, row, C, wb, y, mean, rstd, eps);
}
// Lanes a row: the fewest that hold it in 4 packs each, else a warp with up to 8 each; 0 where it does not fit.
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
    ln_launch(fn, p, ceil_div(p->N, bs / tpr), bs, 0, 1);
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
// Its plan: 128 threads, 256 where a warp holds a row of more than 128 packs (8 a lane), or a row without 16-byte packs
// where rows fill the SMs (4 rows of a few hundred bytes a block: blocks so small that their launches bound it).
static int subwarp_regs_vec_bs(long nvec, int packed, double rows_sm) {
    return nvec > 4L * 32 || (nvec > 4L * 16 && !packed && rows_sm >= 1) ? 256 : 128;
}
static int plan_subwarp_regs_vec(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    return plan_checked(pp, supports_subwarp_regs_vec,
                        subwarp_regs_vec_bs(p->C / vec_width(p), full_packs(p), rows_per_sm(p)), 64);
}

// ------------------------------------------------------------------------------------------------
// Kernel 8, block_smem_welford: one block per row, the row cached in dynamic shared memory (one read of x), a Welford
// block all-reduce, y from the shared copy; the block size the occupancy calculator's (kept for the last C).
// Improves: any C whose row fits shared memory (about 227 KB a block on sm_90). Wrong: the occupancy calculator
// maximises resident threads, not bytes in flight; with large rows one or two blocks fit an SM, phases in a row.
template <typename T, int VEC> static void launch_block_smem_welford_t(const ln_problem_t *p, launch_t *l);  // below
template <typename T, int VEC>
__global__ void layernorm_block_smem_welford_kernel(ln_args_t a) {
    LN_ARGS(T);
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
    if (threadIdx.x == 0) store_stats(mean, rstd, row, m, r);
}
static void launch_block_smem_welford(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    DISPATCH_VEC(p->h.dtype, vec_width(p), launch_block_smem_welford_t, p, l);
}
static const char *supports_block_smem_welford(const void *pp, int) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    size_t need = (size_t)p->C * dtype_size(p->h.dtype);
    size_t have = g_dev.prop.sharedMemPerBlockOptin - 33 * sizeof(Welford);
    if (need > have) return reasonf("row of %.0f KB does not fit %.0f KB of shared memory", need / 1024.0, have / 1024.0);
    return NULL;
}
template <typename T, int VEC>
static void launch_block_smem_welford_t(const ln_problem_t *p, launch_t *l) {
    static int cached_bs = 0;
    static long cached_C = -1;
    const size_t smem = (size_t)p->C * sizeof(T);
    int bs = l->block_size;
    if (!bs && cached_C == p->C) {
        bs = cached_bs;
    } else {
        CUDA_CHECK(cudaFuncSetAttribute(layernorm_block_smem_welford_kernel<T, VEC>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        int min_grid = 0;
        if (!bs) {
            CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &bs, layernorm_block_smem_welford_kernel<T, VEC>,
                                                          smem, 1024));
            cached_C = p->C;
            cached_bs = bs;
        }
    }
    l->block_used = bs;
    ln_launch((const void *)layernorm_block_smem_welford_kernel<T, VEC>, p, p->N, bs, smem, 1);
}

// ------------------------------------------------------------------------------------------------
// Kernel 9, block_reread: one block per row, no cache: a Welford pass over 16-byte packs, a block all-reduce, then a
// second pass re-reads x to write y. Improves: no limit on C (the fallback for very large rows), large blocks.
// Wrong: x read twice; L2 serves the second read only while the resident rows fit it (132 SMs x 2 rows x 256 KB is
// about L2-sized at fp32 C = 65536), else DRAM sees 1.5x the minimum bytes.
template <typename T, int VEC>
__global__ void layernorm_block_reread_kernel(ln_args_t a) {
    LN_ARGS(T);
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
    if (threadIdx.x == 0) store_stats(mean, rstd, row, m, r);
}
template <typename T, int VEC>
static void launch_block_reread_t(const ln_problem_t *p, int bs) {
    ln_launch((const void *)layernorm_block_reread_kernel<T, VEC>, p, p->N, bs, 0, 1);
}
static void launch_block_reread(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int vec = vec_width(p);
    DISPATCH_VEC(p->h.dtype, vec, launch_block_reread_t, p, l->block_size);
    snprintf(l->path, sizeof l->path, "%d-wide packs", vec);
}
// Its plan (it takes every problem): row_block_bs over the row's packs; a row without 16-byte packs, 4 packs a thread
// from a row an SM and 32 from 8 (narrow packs: fewer threads a row, more rows resident).
static int plan_block_reread(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    const double rows_sm = rows_per_sm(p);
    if (full_packs(p) || rows_sm < 1) return row_block_bs(p->C / vec_width(p), rows_sm);
    return pow2_at_least(p->C / vec_width(p) / (rows_sm < 8 ? 4.0 : 32.0), 32, 1024);
}

// ------------------------------------------------------------------------------------------------
// Kernel 10, subwarp_persistent: kernel 7's layout in a grid of the blocks resident at once, each group of TPR lanes
// walking the rows, the next row's x loaded before this one is reduced and written; in 16-bit w and b kept (93-95
// registers). Improves: fp32 C = 128-512 and bf16 C = 128-256, where it runs 3-6 points of the copy above kernel 7.
// Wrong: twice kernel 7's registers for x (fp32 C = 768-1024 would take 117-127); at 16-bit C >= 512 the registers
// cost what the walk gains; the last pass over the rows leaves part of the grid idle.
template <typename T, int VEC, int TPR, int MAXP>
__global__ void layernorm_subwarp_persistent_kernel(ln_args_t a) {
    constexpr bool KEEP = sizeof(T) == 2;  // w and b in registers
    LN_ARGS(T);
    const long N = a.N;
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
// Its instance: 16-byte packs, rows of at most 4 packs a lane (kernel 7's lanes a row); else NULL.
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
    ln_launch(fn, p, grid, bs, 0, 1);
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
// Shared by kernels 11-13, the shifted sums: d = x - k, k the row's first element; mean k + E[d], var = E[d^2] -
// E[d]^2, which loses little while k lies within a few standard deviations of the mean.
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

// ------------------------------------------------------------------------------------------------
// Kernel 11, cluster_row_regs: the row in registers in 16-byte packs, split over a thread-block cluster when one block
// cannot hold it (regs_plan): a row one block of <= 1024 threads x 8 packs holds runs kernel 6's kernel with 16-byte
// packs; a larger row the cluster kernel below, CL = 2..8 blocks, one round of shifted sums: every warp pushes its pair
// into a slot of every block (cluster_push_sum), each block adds its slots in one fixed order (none waits at exit).
// Improves: x read once for rows beyond what one block holds at good occupancy (fp32 C = 65536 is 256 KB, more than
// an SM's registers: kernel 9 re-reads it), a large row at 2+ blocks an SM; 16-byte packs where 6 loads scalars.
// Wrong: needs clusters (sm_90+) beyond one block; a block waits for the slowest of its cluster between its loads
// and its stores; w and b come in after the reduction; the shifted sums' precision; small rows gain nothing.
// A plan: cl blocks a row of bs threads, packs 16-byte packs a thread (at most); the residency it reaches.
typedef struct { int cl, bs, packs, blocks_sm, threads_sm; } regplan_t;
// Whether a row takes the cluster kernel: --cluster K > 1, else rows beyond 1024 threads x 8 packs (16-bit: 512 x 8).
static int regs_plan_clusters(dtype_t d, long nvec) {
    return g_cluster ? g_cluster > 1 : nvec > 1024 * 8 || (dtype_size(d) == 2 && nvec > 512 * 8);
}
template <typename T, int VEC, int PACKS>
__global__ void __launch_bounds__(1024) layernorm_cluster_row_regs_kernel(ln_args_t a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    LN_ARGS(T);
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
#pragma unroll
    for (int p = 0; p < PACKS; p++)
        if (p < np) v[p] = load_pack_cs<T, VEC>(xr + (long)(first + p * blockDim.x) * VEC);  // streaming: see kernel 3
    float2 s = make_float2(0.f, 0.f);
#pragma unroll
    for (int p = 0; p < PACKS; p++) if (p < np) shifted_add(s, v[p], k);
    s = cluster_push_sum(s, &push, nblocks);  // a block alone: one barrier
    const float m = k + s.x / C, r = shifted_rstd(s, C, eps);
    T *yr = y + row * C;
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
    if (rank == 0 && threadIdx.x == 0) store_stats(mean, rstd, row, m, r);
#endif
}
static regplan_t regs_plan(dtype_t d, long N, long nvec, int req_bs);  // the plan and its instance: below
static const void *regplan_fn(dtype_t d, int cl, int packs);
static void launch_cluster_row_regs(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    regplan_t pl = regs_plan(p->h.dtype, p->N, p->C / vec_width(p), l->block_size);
    l->block_used = pl.bs;
    ln_launch(regplan_fn(p->h.dtype, pl.cl, pl.packs), p, p->N * pl.cl, pl.bs, 0, pl.cl);
    if (pl.cl == 1)
        snprintf(l->path, sizeof l->path, "one block a row (%d packs/thread, %d blocks/SM)", pl.packs, pl.blocks_sm);
    else
        snprintf(l->path, sizeof l->path, "cluster of %d blocks a row (%d packs/thread, %d blocks/SM)", pl.cl, pl.packs,
                 pl.blocks_sm);
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
    if (cl == 1) {  // streaming access at fp32 8 packs a thread alone (plain: 7% slower at fp32 2048x32768)
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
// The plan for a row of nvec 16-byte packs (from the sweep of every CL x block size): CL = 1 at the block size of
// 128..1024 with most threads, then most blocks, resident an SM; the cluster kernel at 256 threads x 8 packs, the
// fewest blocks that hold the row. --cluster K forces CL = K, --block-size the threads. The last plan is kept
// (launch() runs inside the timed region, and the occupancy queries are not free).
static regplan_t regs_plan(dtype_t d, long N, long nvec, int req_bs) {
    static struct { dtype_t d; long N, nvec; int bs; regplan_t plan; } last = {DT_FP32, -1, -1, -1, {}};
    if (d == last.d && N == last.N && nvec == last.nvec && req_bs == last.bs) return last.plan;
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
    last = {d, N, nvec, req_bs, best};
    return best;
}

// ------------------------------------------------------------------------------------------------
// Kernel 12, latency_split: few rows cannot fill the GPU at a block a row, and a row's time is then its critical
// path: memory latency, barriers, a second trip for w and b. So: the row over a cluster of CL = 1..16 blocks, w and b
// loaded with x (chained by --pdl, before the wait for the grid before), one round of shifted sums; P packs a thread
// (1, 2 or 4: its plan's, or --packs): fewer loads before the sum for a few cold rows, more bytes in flight for many.
// Improves: the rows of a decode step and single long rows. Wrong: the shifted sums' precision; at most 512 x P x 16
// blocks (fp32 C <= 131072 at P = 4); with many rows the cluster buys nothing, w and b in registers cost occupancy.
#define SPLIT_PACKS 4
// A thread's packs of x, w and b (pack p: first + p * blockDim.x), as raw words until all are issued; returns k.
template <typename T, int VEC, int PACKS>
__device__ __forceinline__ float split_load(Pack<T, VEC> (&v)[PACKS], Pack<T, VEC> (&wv)[PACKS],
                                            Pack<T, VEC> (&bv)[PACKS], const T *xr, const T *__restrict__ w,
                                            const T *__restrict__ b, int first, int nvec, int pdl) {
    RawPack<T, VEC> xraw[PACKS], wraw[PACKS], braw[PACKS];
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
        load_raw_batch<T, VEC, PACKS>(xraw, xr, first, nvec);
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
// A block's part of its row at PACKS packs a thread at most, the loads in the order pdl gives (kernel 12).
template <typename T, int VEC, int CL, bool PACKED, int PACKS>
__device__ __forceinline__ void latency_split_row(ln_args_t a, int pdl) {
    LN_ARGS(T);
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
    for (int p = 0; p < PACKS; p++) if (first + p * (int)blockDim.x < nvec) shifted_add(s, v[p], k);
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
    T *yr = y + row * C;
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
    if (rank == 0 && threadIdx.x == 0) store_stats(mean, rstd, row, m, r);
}
// Its instances. At P = 4 two forms: unbounded, x, w and b held as fp32 across the sum (the fewest instructions after
// it; bf16: 117 registers, one block of 512 an SM); PACKED, their bits kept across it (keep_packed), bounded to two
// blocks of 512 an SM: the occupancy a grid of more blocks than fit at once needs.
template <typename T, int VEC, int CL, bool PACKED>
__global__ void __launch_bounds__(512, PACKED ? 2 : 0) layernorm_latency_split_kernel(ln_args_t a, int pdl) {
    latency_split_row<T, VEC, CL, PACKED, SPLIT_PACKS>(a, pdl);
}
// At P = 2 and P = 1 one form, an instance for each launch order (PDL 1: chained, --pdl).
template <typename T, int VEC, int CL, int PDL>
__global__ void __launch_bounds__(512) layernorm_lean_split_kernel(ln_args_t a) {
    latency_split_row<T, VEC, CL, false, 2>(a, PDL);
}
template <typename T, int VEC, int CL, int PDL>
__global__ void __launch_bounds__(512) layernorm_lean_one_pack_kernel(ln_args_t a) {
    latency_split_row<T, VEC, CL, false, 1>(a, PDL);
}
// Its instances by cluster size (below): P = 4's unbounded (split_fn) and launched forms, P = 2's and 1's (lean_fn).
static const void *split_fn(dtype_t d, int cl);
static const void *split_launch_fn(dtype_t d, long N, int cl, int bs, bool *packed);
template <int P> static const void *lean_fn(dtype_t d, int cl);
static cluster_kernel_of_t split_fn_of(int packs) {
    return packs == SPLIT_PACKS ? split_fn : packs == 2 ? lean_fn<2> : lean_fn<1>;
}
// Its block size at P packs a thread, 0 where none fits, and CL: split_row_plan's (harness/gpu.h); --cluster K
// forces CL, --block-size the threads.
static int split_plan(const ln_problem_t *p, int packs, int req_bs, int *cl) {
    return split_row_plan(p->h.dtype, p->N, p->C / vec_width(p), packs, 512, req_bs, g_cluster, split_fn_of(packs), cl);
}
// Its packs a thread (dense sweep): from SMs rows 1 to 64 packs, or to 512 while an SM's rows hold <= 1024 packs;
// fewer, 1 to 1024 packs and 2 to 2048, and under an eighth of a row an SM 1 to 2048 and 2 to 4096; else 4.
static int split_packs_rule(long nvec, double rows_sm) {
    if (rows_sm >= 1) return nvec <= 64 || (nvec <= 512 && nvec * rows_sm <= 1024) ? 1 : SPLIT_PACKS;
    const long one = rows_sm < 0.125 ? 2048 : 1024;
    return nvec <= one ? 1 : nvec <= 2 * one ? 2 : SPLIT_PACKS;
}
// The packs a launch takes: --packs P, else the rule's, or the next larger whose plan takes the problem (before
// sm_90, or --cluster K); kept for the last problem (the plans ask the runtime, inside the timed region).
static int split_packs(const ln_problem_t *p) {
    static struct { dtype_t d; long N, C; int cluster, pdl, packs; } last = {DT_FP32, -1, -1, -1, -1, 0};
    if (g_packs) return g_packs;
    if (p->h.dtype == last.d && p->N == last.N && p->C == last.C && g_cluster == last.cluster && g_pdl == last.pdl)
        return last.packs;
    int packs = split_packs_rule(p->C / vec_width(p), rows_per_sm(p)), cl = 0;
    while (packs < SPLIT_PACKS && !split_plan(p, packs, 0, &cl)) packs *= 2;
    last = {p->h.dtype, p->N, p->C, g_cluster, g_pdl, packs};
    return packs;
}
static void launch_latency_split(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    const int packs = split_packs(p);
    int cl = 0;
    const int bs = split_plan(p, packs, l->block_size, &cl);
    ln_args_t a = ln_args(p);
    int pdl = g_pdl;
    void *args[] = {&a, &pdl};  // (the instances of P <= 2 take a alone)
    bool packed = false;
    const void *fn = packs == SPLIT_PACKS ? split_launch_fn(p->h.dtype, p->N, cl, bs, &packed)
                                          : split_fn_of(packs)(p->h.dtype, cl);
    launch_kernel(fn, p->N * cl, bs, 0, args, cl);
    l->block_used = bs;
    snprintf(l->path, sizeof l->path, "a row over %d block%s of %d threads, %d pack%s a thread%s; w, b with x; one "
             "reduction", cl, cl > 1 ? "s" : "", bs, packs, packs > 1 ? "s" : "", packed ? ", packed" : "");
}
static const char *supports_latency_split(const void *pp, int bs) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    const int full = 16 / (int)dtype_size(p->h.dtype);
    if (!full_packs(p)) return reasonf("needs 16-byte packs: C a multiple of %d", full);
    const long nvec = p->C / full;
    int cl = 0, packs = split_packs(p);
    if (split_plan(p, packs, bs, &cl)) return NULL;
    if (bs > 512) return "at most 512 threads a block";
    const char *arch = needs_sm90(g_dev.prop.major, g_dev.sm);
    if (arch && (g_cluster > 1 || nvec > 512L * packs)) return arch;
    return reasonf("the row (%ld 16-byte packs) fits no plan of <= %d pack%s a thread (--cluster %d, --block-size %d; "
                   "0: the rule's)", nvec, packs, packs > 1 ? "s" : "", g_cluster, bs);
}
// Its plan's power of two at P packs a thread (it sets the blocks a row; the plan then trims their threads to the row:
// split_row_threads), at least what holds the row in 16 blocks, or in 8 where the rows fill the SMs (many clusters of 16
// co-scheduled cost more than the threads a block saves). P = 4: rows >= SMs, a block a row up to 256; fewer,
// 32 at <= 64 packs, else 128 (256 beyond 4096). P = 2: fewer rows than SMs, 64-256; else one block, <= 128 up to 8
// rows an SM. P = 1: one block where rows >= SMs or the row is <= 256 packs, else SMs / rows blocks (<= 8) of 128-512.
static int latency_split_bs(int packs, long nvec, double rows_sm) {
    const double want = (double)nvec / packs;
    int bs;
    if (packs == SPLIT_PACKS)
        bs = rows_sm >= 1 ? pow2_at_least(want, 32, 256) : nvec <= 64 ? 32 : nvec <= 4096 ? 128 : 256;
    else if (packs == 2)
        bs = rows_sm < 1 ? pow2_at_least(want, 64, 256) : pow2_at_least(want, 32, rows_sm < 8 ? 128 : 512);
    else
        bs = rows_sm >= 1 || nvec <= 256 ? pow2_at_least(want, 32, 512)  // below: the SMs shared among the rows
                                         : pow2_at_least(want / pow2_down(1.0 / rows_sm, 1, 8), 128, 512);
    const int fewest = pow2_at_least(want / (rows_sm >= 1 ? 8 : 16), 32, 512);
    return bs > fewest ? bs : fewest;
}
static int plan_latency_split(const void *pp) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    const int packs = split_packs(p);
    int cl = 0;
    const int own = split_plan(p, packs, 0, &cl);
    if (g_cluster) return own;
    return plan_checked(pp, supports_latency_split, split_row_threads(p->C / vec_width(p), packs,
                        latency_split_bs(packs, p->C / vec_width(p), rows_per_sm(p))), own);
}
// P = 4's instance for a dtype, cluster size (16-byte packs) and form.
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
// The P = 4 kernel a launch takes: PACKED where the unbounded form cannot hold the grid at once (harness/gpu.h).
static const void *split_launch_fn(dtype_t d, long N, int cl, int bs, bool *packed) {
    const void *fn = split_fn(d, cl);
    const void *took = pick_instance(fn, split_kernel(d, cl, true), !grid_fits_at_once(fn, N, cl, bs), cl);
    *packed = took != fn;
    return took;
}
// P = 2's and 1's instance (packs) of a cluster size and of this launch's order (g_pdl: 1 chained).
template <typename T, int VEC> static void lean_fn_t(int packs, int cl, const void **fn) {
    with_pow2<1, 16>(cl, [&](auto CL) {
        constexpr int N = CL.value;
        if (packs == 2)
            *fn = g_pdl ? (const void *)layernorm_lean_split_kernel<T, VEC, N, 1>
                        : (const void *)layernorm_lean_split_kernel<T, VEC, N, 0>;
        else
            *fn = g_pdl ? (const void *)layernorm_lean_one_pack_kernel<T, VEC, N, 1>
                        : (const void *)layernorm_lean_one_pack_kernel<T, VEC, N, 0>;
    });
}
template <int P> static const void *lean_fn(dtype_t d, int cl) {
    const void *fn = NULL;
    PACK16_CALL(d, lean_fn_t, P, cl, &fn);
    return fn;
}

// ------------------------------------------------------------------------------------------------
// Kernel 13, odd_rows: where C is not a multiple of the 16-byte pack most rows start off a 16-byte boundary. Each row
// is cut where its bytes allow (row_parts): a head up to the first 16-byte boundary, the middle in 16-byte packs, a
// tail (an element a thread); the row over 1-16 blocks, one reduction round, as kernel 12. w and b loaded element by
// element, after the sum in 16 bits, in fp32 with x (EARLY_WB) unless late doubles the blocks an SM holds.
// Improves: odd rows at 16 bytes a load, and a long odd row over many SMs (fp32 1024x65537: 1.38x faster late).
// Wrong: w and b loaded element by element (cutting them out of two aligned packs each was slower); at most 4 packs a
// thread, 512 threads and 16 blocks a row (fp32 C <= 131075); the shifted sums' precision, as kernel 12.
#define ODD_PACKS 4
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
    load_raw_batch<T, VEC, ODD_PACKS>(raw, xr + rp.head, first, rp.packs);
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
    if (rank == 0 && threadIdx.x == 0) store_stats(a.mean, a.rstd, row, m, r);
}
static void launch_odd_rows(const void *pp, launch_t *l) {
    const ln_problem_t *p = (const ln_problem_t *)pp;
    int cl = 0, bs = odd_rows_plan(p, l->block_size, &cl);
    bool early;
    ln_launch(odd_rows_launch_fn(p->h.dtype, p->N, cl, bs, &early), p, p->N * cl, bs, 0, cl);
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
// The instance a launch takes: in fp32, w and b after the sum where that pays (harness/gpu.h), else EARLY_WB.
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
// Kernel 14, dispatch: no kernel of its own. The rule of regimes (k_regimes, from the dense sweep: written by
// scripts/tune_dispatch.py): the first region (element size, 16-byte packing, packs a row, rows an SM) that holds the
// problem and whose rung takes it runs that rung at its plan. Improves: each problem runs its region's best rung.
// Wrong: a region's rung is the best on average over its points, not at each; the plans are rules of thumb.
static const regime_t k_regimes[] = {
    // regimes: begin (scripts/tune_dispatch.py layernorm --write, from the stored dense sweep; do not edit)
    // bytes, 16-byte packs, variants, launches, packs a row [lo, hi), rows an SM [lo, hi), H*W [lo, hi), rung
    {2, 0, 0, 0, 0, 256, 0, 1.41421, 0, RG_ANY, 6, "16-bit, no 16-byte packs, packs a row < 256, rows an SM < 1.414"},
    {4, 0, 0, 0, 0, 256, 0, 0.176777, 0, RG_ANY, 13, "fp32, no 16-byte packs, packs a row < 256, rows an SM < 0.1768"},
    {4, 0, 0, 0, 0, 256, 0.176777, 1.41421, 0, RG_ANY, 6, "fp32, no 16-byte packs, packs a row < 256, 0.1768 <= rows an SM < 1.414"},
    {0, 0, 0, 0, 0, 256, 1.41421, 5.65685, 0, RG_ANY, 13, "no 16-byte packs, packs a row < 256, 1.414 <= rows an SM < 5.657"},
    {0, 0, 0, 0, 256, RG_ANY, 0, 5.65685, 0, RG_ANY, 13, "no 16-byte packs, packs a row >= 256, rows an SM < 5.657"},
    {0, 0, 0, 0, 256, RG_ANY, 0, 5.65685, 0, RG_ANY, 9, "no 16-byte packs, packs a row >= 256, rows an SM < 5.657"},
    {0, 0, 0, 0, 0, RG_ANY, 5.65685, RG_ANY, 0, RG_ANY, 7, "no 16-byte packs, rows an SM >= 5.657"},
    {0, 0, 0, 0, 0, RG_ANY, 5.65685, RG_ANY, 0, RG_ANY, 13, "no 16-byte packs, rows an SM >= 5.657"},
    {2, 1, 0, 0, 0, RG_ANY, 0, 5.65685, 0, RG_ANY, 12, "16-bit, 16-byte packs, rows an SM < 5.657"},
    {4, 1, 0, 0, 0, 22.6274, 0, 0.353553, 0, RG_ANY, 7, "fp32, 16-byte packs, packs a row < 22.63, rows an SM < 0.3536"},
    {4, 1, 0, 0, 22.6274, 90.5097, 0, 0.353553, 0, RG_ANY, 12, "fp32, 16-byte packs, 22.63 <= packs a row < 90.51, rows an SM < 0.3536"},
    {4, 1, 0, 0, 0, 90.5097, 0.353553, 5.65685, 0, RG_ANY, 7, "fp32, 16-byte packs, packs a row < 90.51, 0.3536 <= rows an SM < 5.657"},
    {4, 1, 0, 0, 90.5097, 181.019, 0, 0.25, 0, RG_ANY, 12, "fp32, 16-byte packs, 90.51 <= packs a row < 181, rows an SM < 0.25"},
    {4, 1, 0, 0, 90.5097, 181.019, 0.25, 5.65685, 0, RG_ANY, 7, "fp32, 16-byte packs, 90.51 <= packs a row < 181, 0.25 <= rows an SM < 5.657"},
    {4, 1, 0, 0, 181.019, RG_ANY, 0, 5.65685, 0, RG_ANY, 12, "fp32, 16-byte packs, packs a row >= 181, rows an SM < 5.657"},
    {4, 1, 0, 0, 181.019, RG_ANY, 0, 5.65685, 0, RG_ANY, 9, "fp32, 16-byte packs, packs a row >= 181, rows an SM < 5.657"},
    {0, 1, 0, 0, 0, 181.019, 5.65685, RG_ANY, 0, RG_ANY, 7, "16-byte packs, packs a row < 181, rows an SM >= 5.657"},
    {2, 1, 0, 0, 181.019, 2048, 5.65685, RG_ANY, 0, RG_ANY, 12, "16-bit, 16-byte packs, 181 <= packs a row < 2048, rows an SM >= 5.657"},
    {4, 1, 0, 0, 181.019, 1024, 5.65685, RG_ANY, 0, RG_ANY, 12, "fp32, 16-byte packs, 181 <= packs a row < 1024, rows an SM >= 5.657"},
    {4, 1, 0, 0, 1024, 2048, 5.65685, RG_ANY, 0, RG_ANY, 11, "fp32, 16-byte packs, 1024 <= packs a row < 2048, rows an SM >= 5.657"},
    {0, 1, 0, 0, 2048, RG_ANY, 5.65685, RG_ANY, 0, RG_ANY, 11, "16-byte packs, packs a row >= 2048, rows an SM >= 5.657"},
    {0, 1, 0, 0, 2048, RG_ANY, 5.65685, RG_ANY, 0, RG_ANY, 9, "16-byte packs, packs a row >= 2048, rows an SM >= 5.657"},
    {0, -1, 0, 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 9, "anything"},
    // regimes: end
};
static const kernel_t *ladder_rung(int k);  // a rung's registry entry (below the registry)
static const char *regime_supports(const void *pp, int rung, int bs) {
    return rung_supports(ladder_rung(rung), pp, ((const ln_problem_t *)pp)->h.dtype, bs);
}
// The regime that runs the problem (NULL: none, a bug: the last rows take every problem), its 1-based row in *at.
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
// (The last field: 1 where the kernel takes --pdl, the templated kernels 6-14.)
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
     "a row over 1-16 blocks, w and b loaded with x, one reduction round; 1, 2 or 4 packs a thread by its plan", 0,
     supports_latency_split, launch_latency_split, 1, plan_latency_split},
    {13, "odd_rows", DT_ALL, "row <= 512 KB",
     "rows of any length: a head to the first 16-byte boundary, 16-byte packs, a tail; a row over 1-16 blocks", 1,
     supports_odd_rows, launch_odd_rows, 1},
    {14, "dispatch", DT_ALL, "any C",
     "a rule of regimes picks the rung, the rung's plan its block size; says which ran", 1, supports_dispatch,
     launch_dispatch, 1},
};
static const kernel_t *ladder_rung(int k) { return &k_kernels[k]; }

// ------------------------------------------------------------------------------------------------
// Setup, reference, teardown, options.
static const extra_option_t k_extra[] = {
    {"eps", required_argument, "--eps E          epsilon (default 1e-5)"},
    {"cluster", required_argument,
     "--cluster K      kernels 11-13, 14: split rows over K blocks (1, 2, 4, 8 or 16; 1 = one block a row),\n"
     "                   the block size from --block-size or the kernel's rule"},
    {"packs", required_argument,
     "--packs P        kernels 12, 14: kernel 12's 16-byte packs a thread (1, 2 or 4; 0 = its rule's)"}};
static const char *parse_extra(int index, const char *arg) {
    long k;
    if (index == 1) {
        if (parse_long(arg, 1, 16, &k) || (k & (k - 1)))
            return reasonf("invalid cluster size '%s' (--cluster: 1, 2, 4, 8 or 16)", arg);
        g_cluster = (int)k;
        return NULL;
    }
    if (index == 2) {
        if (parse_long(arg, 0, 4, &k) || k == 3)
            return reasonf("invalid packs a thread '%s' (--packs: 0, 1, 2 or 4)", arg);
        g_packs = (int)k;
        return NULL;
    }
    double v;
    if (parse_double(arg, &v) || v < 0) return reasonf("invalid eps '%s' (--eps: a number >= 0 within fp32's range)", arg);
    g_eps = v;
    return NULL;
}
// --cluster steers kernels 11-13, --packs kernel 12 (and 14 through them): refused with any other kernel.
static int takes_cluster(int k) { return (k >= 11 && k <= 13) || k == LN_DISPATCHER || k == KERNEL_DEFAULT; }
static int takes_packs(int k) { return k == 12 || k == LN_DISPATCHER || k == KERNEL_DEFAULT; }
static const char *check_options(const options_t *o) {
    if (g_cluster && !kernels_take(o, takes_cluster))
        return "--cluster applies to kernels 11-13 and 14 alone (give them as the kernel)";
    if (g_packs && !kernels_take(o, takes_packs))
        return "--packs applies to kernels 12 and 14 alone (give them as the kernel)";
    return check_rows_cols(o);
}
static problem_t *ln_setup(const options_t *o) {
    ln_problem_t *p = (ln_problem_t *)calloc(1, sizeof *p);
    dtype_t d = o->dtype;
    size_t es = dtype_size(d);
    long N = o->rows, C = o->cols;
    p->N = N, p->C = C, p->eps = (float)g_eps, p->h.dtype = d;
    snprintf(p->h.shape, sizeof p->h.shape, "%ldx%ld", N, C);
    snprintf(p->h.shape_desc, sizeof p->h.shape_desc, "rows %ld cols %ld", N, C);
    p->h.bytes = 2.0 * N * C * es + 2.0 * C * es + 2.0 * N * sizeof(float);  // x, y, weight, bias, mean, rstd
    p->x = dev_alloc(N * C * es), p->y = dev_alloc(N * C * es);
    p->w = dev_alloc(C * es), p->b = dev_alloc(C * es);
    p->mean = (float *)dev_alloc(N * sizeof(float)), p->rstd = (float *)dev_alloc(N * sizeof(float));
    p->hx = host_alloc_doubles(N * C), p->hw = host_alloc_doubles(C), p->hb = host_alloc_doubles(C);
    fill_normal(p->x, p->hx, N * C, d, o->seed, 0, o->input_mean, o->input_std);
    fill_normal(p->w, p->hw, C, d, o->seed, 1, 1.0, 0.25);
    fill_normal(p->b, p->hb, C, d, o->seed, 2, 0.0, 0.25);
    p->h.n_out = 3;
    p->h.out[0] = (output_t){"y", p->y, d, N, C, host_alloc_doubles(N * C), tolerance_for(d), host_alloc_doubles(N)};
    p->h.out[1] = (output_t){"mean", p->mean, DT_FP32, N, 1, host_alloc_doubles(N), tolerance_for(DT_FP32), NULL};
    p->h.out[2] = (output_t){"rstd", p->rstd, DT_FP32, N, 1, host_alloc_doubles(N), tolerance_for(DT_FP32), NULL};
    return &p->h;
}
// The error no fp32 kernel avoids: x - mean is off by an ulp or so of |mean| (the mean is fp32), y by that times
// rstd * |weight|; allowed: 16 ulps of the mean (at --input-mean 1000, std 1: 2e-3; two-pass kernels err by ~3e-4,
// the single-pass variance of kernel 4 by ~0.5).
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
    for (int i = 0; i < h->n_out; i++) free(h->out[i].ref), free(h->out[i].row_atol);
    free(p->hx), free(p->hw), free(p->hb), free(p);
}
static const program_t k_program = {
    "layernorm", "layernorm_forward",
    "LayerNorm forward over the last dimension: y = (x - mean) * rstd * weight + bias, with mean and rstd saved",
    8 * 1024, 768,  // the default shape
    k_kernels, (int)(sizeof k_kernels / sizeof k_kernels[0]), LN_DISPATCHER,
    k_extra, (int)(sizeof k_extra / sizeof k_extra[0]), parse_extra, check_options,
    ln_setup, ln_reference, ln_teardown, NULL,  // no buffer is updated in place
};

#ifndef NORM_NO_MAIN
int main(int argc, char **argv) { return bench_main(argc, argv, &k_program); }
#endif
