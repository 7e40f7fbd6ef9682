/*
BatchNorm forward, training and inference, over x in one of three layouts:
  [N, C]        --layout nc (the default): channels contiguous, as after a fully connected layer
  NCHW, NHWC    --layout nchw | nhwc with --height H --width W: images
Training (the default): for every channel c, the mean and the biased variance over its M = N*H*W elements;
y = (x - mean) * invstd * gamma + beta with invstd = 1 / sqrt(var + eps). Writes y (dtype of x), save_mean and
save_invstd (fp32, as a training step saves them for the backward pass), and updates running_mean and running_var
(fp32) in place, as PyTorch does:
    running_mean = (1 - momentum) * running_mean + momentum * mean
    running_var  = (1 - momentum) * running_var  + momentum * var * M / (M - 1)      (the unbiased estimate)
momentum 0.1 (--momentum), eps 1e-5 (--eps). M = 1: the unbiased estimate is 0/0 (PyTorch's Python API refuses
the case); here running_var is left unchanged, save_invstd = 1/sqrt(eps) and y = beta: kernels, reference, tests.
--inference: y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta, an elementwise pass whose ceiling is
the copy; nothing else is written. x and y are fp32, fp16 or bf16; gamma, beta and all statistics fp32. The GPU
computes in fp32 with short serial chains (a channel can hold 100 million elements); the reference in double.

Kernels (`./batchnorm_forward --list` prints the same registry; the tests check that they agree):
   0  cudnn               cuDNN 9, the fastest of its legacy BatchNorm calls and modes and its graph API's batch norm
   1  thread_per_channel  one thread per channel walking down all rows: coalesced across channels, only C threads
   2  block_per_channel   one block per channel reading down its column: strided, uncoalesced reads
   3  atomic_partials     partial sums and squares from many blocks, accumulated with global atomics
   4  2d_block_column     2-D blocks: lanes across channels, warps across rows, shared-memory merge; one column of blocks
   5  split_rows          rows split over many blocks: shifted-sum partials, a finalize kernel (a block per 32 channels), a normalize pass
   6  nchw_split_planes   NCHW: vectorized reductions over each channel's planes, split over many blocks
   7  l2_two_pass         5's two passes in one cooperative launch: grid syncs around the combine, the second read of x from L2
   8  nchw_cluster_l2     NCHW: a channel per thread-block cluster, its sums combined through distributed shared memory, the second read from L2
   9  l2_one_sync         7 with the per-channel sums added by L2 atomics: one grid sync, no combine phase
  10  l2_keep_front       9 with the first rows of each block's slice kept in shared memory: less of x re-read from DRAM
  11  l2_coalesced_sums   10 with the block's sums added by consecutive threads (4x fewer L2 atomic sectors), fewer copies
  12  infer_elementwise   inference: y from the running statistics, elementwise and shaped like the copy, every layout
  13  l2_loads_in_flight  11 bounded at 256 threads a block: 126 registers hold its 8 loads in flight in every dtype
  14  dispatch            picks the rung by a rule of regimes from the rungs' dense sweep, each rung at its plan's block size; says which ran

Layouts and modes: 1-5, 7, 9-11 and 13 train on [N, C] and NHWC (NHWC is [N*H*W, C]), 6 and 8 on NCHW; 12
(inference) and 14 run all three layouts, 0 every layout and mode; a kernel says `skipped: <reason>` for what it does
not handle. 1-3 are the fp32 teaching steps; 4-14 run fp32, fp16 and bf16.

Options: -N/--rows is N, -C/--cols is C (-B/-T are refused); --height and --width (long options only: -h is help)
default to 1. Default shape [N, C] = 65536 x 256. CSV shapes: "65536x256", "32x256x56x56:nchw" or ":nhwc", with
":inf" appended in inference.

Bytes counted (the algorithmic minimum, whatever a kernel's passes): x read and y written, and per channel gamma,
beta and the running statistics read, save_mean, save_invstd and the running statistics written in training:
2*N*C*H*W*sizeof(dtype) + 32*C bytes (inference: + 16*C). Kernels 1-6 read x twice; their %SOL shows the cost.

Validation: every element of y (tolerance_for(dtype)) and, in training, of the four statistics (fp32 tolerance).
y's mismatches are reported at (n*H*W + pixel, channel) for [N, C] and NHWC, (n*C + channel, pixel) for NCHW, the
statistics' at (0, channel). y's absolute tolerance grows by 16 fp32 ulps of max over channels of
|mean| * invstd * |gamma|, the error that a mean held in fp32 brings. The running statistics start random;
program_t.reset restores them before every validation launch, so each validated launch makes exactly one update.

Run:
  make && ./batchnorm_forward 5                      validate kernel 5, sweep block sizes, time each
  ./batchnorm_forward all --dtype bf16               every kernel, ranked
  ./batchnorm_forward 14 --layout nchw -N 32 -C 256 --height 56 --width 56 --check
  ./batchnorm_forward 14 --layout nhwc -N 32 -C 256 --height 56 --width 56 --inference
  ./batchnorm_forward --list                         the registry (no GPU needed)
Build it alone (-arch: your GPU's, sm_90 or later for the cluster kernel):
  nvcc -O3 -std=c++17 --default-stream per-thread -arch=sm_90 -Xcompiler -fopenmp -o batchnorm_forward \
      batchnorm_forward.cu -lcurand -lgomp -ldl
  add -DHAVE_CUPTI -lcupti for the GPU's own clock (-I/-L to extras/CUPTI where the toolkit keeps it apart), and
  -DHAVE_CUDNN -lcudnn for kernel 0 (else `skipped: built without cuDNN`; -I/-L where cuDNN is elsewhere)
*/
#include "common.h"

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// ------------------------------------------------------------------------------------------------
// The problem
typedef enum { LAYOUT_NC = 0, LAYOUT_NCHW = 1, LAYOUT_NHWC = 2 } bn_layout_t;
static const char *layout_name(bn_layout_t l) { return l == LAYOUT_NCHW ? "nchw" : l == LAYOUT_NHWC ? "nhwc" : "nc"; }

typedef struct {
    problem_t h;  // common header: dtype, shape, bytes, outputs
    bn_layout_t layout;
    long N, C, H, W, HW, M;  // M = N*H*W: the elements of one channel
    int training;
    float eps, momentum;
    void *x, *y;  // dtype
    float *gamma, *beta, *save_mean, *save_invstd, *run_mean, *run_var;
    float *run_mean0, *run_var0;  // the initial running statistics (reset copies them back)
    float *ws_mean, *ws_m2;       // workspace: per-block partial statistics (kernels 5-7), sums (kernel 3)
    long ws_states;               // partial states the workspace holds (ws_mean and ws_m2 each)
    unsigned *counters;           // "last block" tickets: one per channel (kernel 6), [C] 9's; kept at zero
    double *sums;                 // the per-channel sums of 9-11 and 13 (sum_copies x 2C); kept at zero
    int sum_copies;
    double *hx, *hgamma, *hbeta, *hrm0, *hrv0;  // host inputs, exactly the device values
} bn_problem_t;

// The op's options (common.h parses them through parse_extra).
static bn_layout_t g_layout = LAYOUT_NC;
static long g_height = 1, g_width = 1;
static int g_hw_set = 0;
static double g_eps = 1e-5, g_momentum = 0.1;
static int g_inference = 0;

// ------------------------------------------------------------------------------------------------
// CPU reference, in double precision, two-pass, from the dtype-rounded inputs.
// The element index of (n, c, pixel) in each layout ([N, C] is NHWC with one pixel).
static inline long bn_index(bn_layout_t layout, long n, long c, long hw, long C, long HW) {
    return layout == LAYOUT_NCHW ? (n * C + c) * HW + hw : (n * HW + hw) * C + c;
}
// Mean and biased variance of every channel. Channels-last layouts sum chunks of rows sized by M alone, each into its
// own partial row, added in chunk order: the same bits at any OpenMP thread count (the tests compare bit for bit).
static void batchnorm_stats_cpu(double *mean, double *var, const double *x, bn_layout_t layout, long N, long C,
                                long HW) {
    long M = N * HW;
    if (layout == LAYOUT_NCHW) {
OMP_PARALLEL_FOR
        for (long c = 0; c < C; c++) {
            auto xv = [&](long n, long i) { return x[bn_index(layout, n, c, i, C, HW)]; };
            double s = 0;
            for (long n = 0; n < N; n++)
                for (long i = 0; i < HW; i++) s += xv(n, i);
            double m = s / M, v = 0;
            for (long n = 0; n < N; n++)
                for (long i = 0; i < HW; i++) v += (xv(n, i) - m) * (xv(n, i) - m);
            mean[c] = m;
            var[c] = v / M;
        }
        return;
    }
    // at least 64 rows a chunk, at most 256 chunks: the partials take at most 1/64 of x's memory
    const long rows = M / 256 > 64 ? (M + 255) / 256 : 64, n_chunks = (M + rows - 1) / rows;
    double *part = host_alloc_doubles(n_chunks * C);
    for (int pass = 0; pass < 2; pass++) {
        double *acc = pass == 0 ? mean : var;
OMP_PARALLEL_FOR
        for (long k = 0; k < n_chunks; k++) {
            double *s = part + k * C;
            for (long c = 0; c < C; c++) s[c] = 0;
            for (long r = k * rows; r < M && r < (k + 1) * rows; r++) {
                const double *xr = x + r * C;
                if (pass == 0)
                    for (long c = 0; c < C; c++) s[c] += xr[c];
                else
                    for (long c = 0; c < C; c++) s[c] += (xr[c] - mean[c]) * (xr[c] - mean[c]);
            }
        }
OMP_PARALLEL_FOR
        for (long c = 0; c < C; c++) {
            double t = 0;
            for (long k = 0; k < n_chunks; k++) t += part[k * C + c];
            acc[c] = t / M;
        }
    }
    free(part);
}
// The forward pass. rm and rv: the running statistics, read (and in training updated in place). Training writes y,
// save_mean and save_invstd (may be NULL); inference y alone.
static void batchnorm_forward_cpu(double *y, double *save_mean, double *save_invstd, double *rm, double *rv,
                                  const double *x, const double *gamma, const double *beta, bn_layout_t layout,
                                  long N, long C, long HW, double eps, double momentum, int training) {
    long M = N * HW;
    double *m = host_alloc_doubles(C), *s = host_alloc_doubles(C);
    if (training) {
        double *var = host_alloc_doubles(C);
        batchnorm_stats_cpu(m, var, x, layout, N, C, HW);
        for (long c = 0; c < C; c++) {
            s[c] = 1.0 / sqrt(var[c] + eps);
            if (save_mean) save_mean[c] = m[c];
            if (save_invstd) save_invstd[c] = s[c];
            rm[c] = (1.0 - momentum) * rm[c] + momentum * m[c];
            if (M > 1) rv[c] = (1.0 - momentum) * rv[c] + momentum * var[c] * (double)M / (double)(M - 1);
            // M == 1: running_var unchanged (see the header)
        }
        free(var);
    } else {
        for (long c = 0; c < C; c++) m[c] = rm[c], s[c] = 1.0 / sqrt(rv[c] + eps);
    }
    long total = M * C;
OMP_PARALLEL_FOR
    for (long i = 0; i < total; i++) {
        long c = layout == LAYOUT_NCHW ? (i / HW) % C : i % C;
        y[i] = (x[i] - m[c]) * s[c] * gamma[c] + beta[c];
    }
    free(m), free(s);
}

// ------------------------------------------------------------------------------------------------
// Kernel 0, cudnn: the fastest of cuDNN's legacy BatchNorm calls and modes and of its graph API's batch norm (cudnn.h).
// Improves: the reference the ladder is measured against. Wrong: skips N*C*H*W >= 2^31 (int descriptors) and training
// with N*H*W = 1 (cuDNN writes NaN into running_var there); a --block-size is refused.
#ifdef HAVE_CUDNN
static cudnn_bn_state_t g_bn_cudnn;
// The problem as cuDNN's BatchNorm functions see it: [N, C] as N x C x 1 x 1 given as NHWC, images in their format.
static void bn_cudnn_describe(const bn_problem_t *p, cudnn_bn_t *d) {
    memset(d, 0, sizeof *d);  // compared byte for byte by the plan cache
    d->N = p->N; d->C = p->C; d->H = p->H; d->W = p->W;
    d->format = p->layout == LAYOUT_NCHW ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    d->dtype = p->h.dtype; d->training = p->training; d->eps = p->eps; d->momentum = p->momentum;
    d->x = p->x; d->y = p->y; d->gamma = p->gamma; d->beta = p->beta;
    d->save_mean = p->save_mean; d->save_invstd = p->save_invstd; d->run_mean = p->run_mean; d->run_var = p->run_var;
}
static const char *supports_cudnn(const void *pp, int bs) {
    REASON_TRY(cudnn_refuse_block_size(bs));
    cudnn_bn_t d;
    bn_cudnn_describe((const bn_problem_t *)pp, &d);
    return cudnn_bn_supports(&g_bn_cudnn, &d);
}
static void launch_cudnn(const void *pp, launch_t *l) {
    cudnn_bn_t d;
    bn_cudnn_describe((const bn_problem_t *)pp, &d);
    cudnn_bn_execute(&g_bn_cudnn, &d, l);
}
#endif

// ------------------------------------------------------------------------------------------------
// Device helpers of this program (Welford, its merges and block reductions, warp_sum and the packs: device_helpers.h).
// A thread's running statistics (count, mean[V], M2[V]) of V channels that see the same rows: one count for all V.
template <int V> struct ChanStats { float n, mean[V], m2[V]; };
template <int V> __device__ __forceinline__ void chan_stats_init(ChanStats<V> &s) {
    s.n = 0.f;
#pragma unroll
    for (int j = 0; j < V; j++) s.mean[j] = s.m2[j] = 0.f;
}
// Folds `cnt` rows (v[0..cnt) of V channels, cnt <= U) into s: the group's mean and M2 by two passes over registers,
// then Chan's merge, one __fdividef for the V channels (no slow-path call, 2 ulps; counts << 2^126).
template <int V, int U>
__device__ __forceinline__ void chan_stats_add(ChanStats<V> &s, const float (&v)[U][V], int cnt) {
    if (cnt <= 0) return;
    float nb = (float)cnt, n = s.n + nb, wb = __fdividef(nb, n), inv = cnt == U ? 1.f / U : __fdividef(1.f, nb);
#pragma unroll
    for (int j = 0; j < V; j++) {
        float sum = 0.f;
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < cnt) sum += v[u][j];
        float bm = sum * inv, bm2 = 0.f;
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < cnt) bm2 += (v[u][j] - bm) * (v[u][j] - bm);
        float delta = bm - s.mean[j];
        s.mean[j] += delta * wb;
        s.m2[j] += bm2 + delta * delta * s.n * wb;
    }
    s.n = n;
}
// Shifted sums: s1 = sum(x - k), s2 = sum((x - k)^2) of V channels around a value k the block shares: mean = k + s1/n,
// M2 = s2 - s1^2/n, at a cost of about (mean - k)^2 / var ulps (a few, unless k is a far outlier).
template <int V> struct ShiftSums { float k[V], s1[V], s2[V]; };
template <typename T, int V>
__host__ __device__ __forceinline__ void shift_sums_init(ShiftSums<V> &s, const Pack<T, V> &shift) {
#pragma unroll
    for (int j = 0; j < V; j++) {
        s.k[j] = to_float(shift.v[j]);
        s.s1[j] = s.s2[j] = 0.f;
    }
}
template <typename T, int V>
__host__ __device__ __forceinline__ void shift_sums_add(ShiftSums<V> &s, const Pack<T, V> &p) {
#pragma unroll
    for (int j = 0; j < V; j++) {
        float d = to_float(p.v[j]) - s.k[j];
        s.s1[j] += d;
        s.s2[j] = fmaf(d, d, s.s2[j]);
    }
}
// Channel j of shifted sums over n values as (count, mean, M2).
template <int V> __host__ __device__ __forceinline__ Welford shift_sums_welford(const ShiftSums<V> &s, int j, float n) {
    float inv = fast_div(1.f, n);
    return Welford{n, s.k[j] + s.s1[j] * inv, fmaxf(0.f, s.s2[j] - s.s1[j] * s.s1[j] * inv)};
}
// Sums the shifted sums of a block's RG row groups (t = rg * G + g; threads beyond G * RG hold zeros): each thread
// writes its 2V sums, thread q adds entry q % G of sum q / G over the row groups (no bank conflicts); sm: cap floats
// (>= 2 * blockDim.x), as many channels a round as fit. Threads t < G get their column's block totals in s.
template <int V>
__device__ __forceinline__ void rowgroup_shift_sums(ShiftSums<V> &s, float *sm, int cap, int G, int RG) {
    int t = threadIdx.x, bs = blockDim.x, vc = min(V, cap / (2 * bs));
    for (int j0 = 0; j0 < V; j0 += vc) {
        __syncthreads();  // sm may still be read by the previous round or call
#pragma unroll
        for (int j = 0; j < V; j++)
            if (j >= j0 && j < j0 + vc) {
                sm[2 * (j - j0) * bs + t] = s.s1[j];
                sm[(2 * (j - j0) + 1) * bs + t] = s.s2[j];
            }
        __syncthreads();
        for (int q = t; q < 2 * vc * G; q += bs) {
            int e = q / G, g = q % G;
            float acc = 0.f;
            for (int r = 0; r < RG; r++) acc += sm[e * bs + r * G + g];
            sm[e * bs + g] = acc;  // only thread q reads entries (e, *, g)
        }
        __syncthreads();
        if (t < G) {
#pragma unroll
            for (int j = 0; j < V; j++)
                if (j >= j0 && j < j0 + vc) {
                    s.s1[j] = sm[2 * (j - j0) * bs + t];
                    s.s2[j] = sm[(2 * (j - j0) + 1) * bs + t];
                }
        }
    }
}
// 1 / sqrt(var + eps) with var = m2 / count: no division subroutine (see welford_merge_nocall); 2 ulps.
__device__ __forceinline__ float bn_invstd(float m2, float count, float eps) {
    return rsqrtf(__fdividef(m2, count) + eps);
}
// From a channel's (mean, M2, count): writes save_mean, save_invstd, updates the running statistics from rm_c, rv_c
// (their values before, loaded by the caller; count = 1 leaves running_var unchanged), returns invstd.
__device__ __forceinline__ float bn_finalize_channel(long c, float mean, float m2, float count, float *save_mean,
                                                     float *save_invstd, float *rm, float *rv, float eps,
                                                     float momentum, float rm_c, float rv_c) {
    float invstd = bn_invstd(m2, count, eps);
    save_mean[c] = mean;
    save_invstd[c] = invstd;
    rm[c] = (1.f - momentum) * rm_c + momentum * mean;
    if (count > 1.f) rv[c] = (1.f - momentum) * rv_c + momentum * __fdividef(m2, count - 1.f);  // the unbiased var
    return invstd;
}
__device__ __forceinline__ float bn_finalize_channel(long c, float mean, float m2, float count, float *save_mean,
                                                     float *save_invstd, float *rm, float *rv, float eps,
                                                     float momentum) {
    return bn_finalize_channel(c, mean, m2, count, save_mean, save_invstd, rm, rv, eps, momentum, rm[c], rv[c]);
}
// Kernel arguments: kernels 1-3 take theirs written out, as in llm.c; 4 on take this struct by value (bn_args()),
// then what belongs to that one launch. No __restrict__: kernels ask for read-only loads (load_pack_nc, __ldg).
typedef struct {
    const void *x;                   // dtype; [M, C] with channels contiguous ([N, C], NHWC), or NCHW
    void *y;                         // dtype, x's layout
    const float *gamma, *beta;       // [C]
    float *save_mean, *save_invstd;  // [C], written in training
    float *run_mean, *run_var;       // [C], read; updated in place in training
    long M, C, N, HW;                // M = N * HW: the elements of one channel
    float eps, momentum;
    int training;                    // 0: inference (y from the running statistics)
} bn_args_t;
// bn_finalize_channel with the argument struct's pointers, eps and momentum (kernels 4 on).
__device__ __forceinline__ float bn_finalize_channel(const bn_args_t &a, long c, float mean, float m2, float count) {
    return bn_finalize_channel(c, mean, m2, count, a.save_mean, a.save_invstd, a.run_mean, a.run_var, a.eps,
                               a.momentum);
}
// Channels c0 .. c0 + n - 1's scale and shift (y = x * scale + shift; n <= BN_STAGED) to shared memory, then a barrier.
#define BN_STAGED 256  // channels a block stages: cl_lanes' 32 packs of at most 8
__device__ __forceinline__ void bn_stage_scale_shift(const bn_args_t &a, long c0, long n, float *sc, float *sh) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        long c = c0 + i;
        float s = __ldcg(a.save_invstd + c) * __ldg(a.gamma + c);
        sc[i] = s;
        sh[i] = fmaf(-__ldcg(a.save_mean + c), s, __ldg(a.beta + c));
    }
    __syncthreads();
}

// ------------------------------------------------------------------------------------------------
// Launch helpers (host): the argument struct, pack widths, kernel instances, the shared skip reasons.
static bn_args_t bn_args(const bn_problem_t *p) {
    return bn_args_t{p->x,        p->y,   p->gamma, p->beta, p->save_mean, p->save_invstd, p->run_mean, p->run_var,
                     p->M,        p->C,   p->N,     p->HW,   p->eps,       p->momentum,    p->training};
}
// The widest pack (elements) that divides n: 16 bytes when it can.
static int bn_vec_width(dtype_t d, long n) { return (int)gcd_long(16 / (long)dtype_size(d), n); }
static long clamp_long(long v, long lo, long hi) { return v < lo ? lo : v > hi ? hi : v; }
// The instance of a kernel template that pick(T{}, VEC{}) names, at the problem's dtype and n's widest pack.
template <typename T, int VEC, typename F> static void bn_pick(F &pick, const void **fn) {
    *fn = (const void *)pick(T{}, std::integral_constant<int, VEC>{});
}
template <typename F> static const void *bn_instance(const bn_problem_t *p, long n, F pick) {
    const void *fn = NULL;
    DISPATCH_VEC(p->h.dtype, bn_vec_width(p->h.dtype, n), bn_pick, pick, &fn);
    return fn;
}
// Skip reasons shared by the training kernels: channels contiguous (1-5, 7, 9-11 and 13), or NCHW (nchw: 6 and 8).
static const char *training_layout(const bn_problem_t *p, int nchw) {
    if (!p->training) return "a training kernel: --inference (y from the running statistics) runs in kernel 12";
    if ((p->layout == LAYOUT_NCHW) == (nchw != 0)) return NULL;
    return nchw ? "channels contiguous ([N, C] or NHWC): kernels 1-5, 7, 9-11, 13 and 14 run it"
                : "NCHW: channels are not contiguous here (kernels 6, 8 and 14 run NCHW)";
}
static const char *supports_cl(const void *pp, int bs) { (void)bs; return training_layout((const bn_problem_t *)pp, 0); }
// 1, 2 and 4, whose threads each fold M / lanes rows of a channel into one fp32 Welford chain: past 2^20 rows a chain
// drifts (its mean's roundings stop averaging out; 18.6 M rows a lane put the statistics 2.3e-3 off), so they refuse.
static const char *supports_chain(const void *pp, long lanes) {
    const long rows = ceil_div(((const bn_problem_t *)pp)->M, lanes > 0 ? lanes : 1);
    if (rows > (1L << 20)) return reasonf("%ld rows a thread's fp32 chain: past 2^20 it drifts (more threads)", rows);
    return supports_cl(pp, 0);
}
// The lanes across packs of channels of a block of 5, 7, 9-11 and 13: 32, or the power of two >= a row's packs.
static int cl_lanes(long nvec) { return pow2_at_least((double)nvec, 1, 32); }

// ------------------------------------------------------------------------------------------------
// Kernel 1: one thread per channel walks down all M rows of x[M, C] ([N, C], or NHWC as [N*H*W, C]): statistics of
// x - x[0, c] (a long chain of merges: roundings of the spread, not of |mean|) in groups of four rows, then y.
// Improves over nothing: neighbouring threads read neighbouring channels, every warp load one coalesced 128-byte line.
// Wrong: only C threads (a few blocks on a few SMs at C = 256), each with four 4-byte loads in flight: latency-bound.
__global__ void __launch_bounds__(1024) batchnorm_thread_per_channel_kernel(
    const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ gamma, const float *__restrict__ beta,
    float *__restrict__ save_mean, float *__restrict__ save_invstd, float *__restrict__ rm, float *__restrict__ rv,
    long M, long C, float eps, float momentum) {
    long c = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (c >= C) return;
    float shift = x[c];  // statistics of x - x[0, c]: see the comment above
    ChanStats<1> st;
    chan_stats_init(st);
    for (long r = 0; r < M; r += 4) {
        float v[4][1];
        int cnt = 0;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            v[u][0] = 0.f;
            if (r + u < M) {
                v[u][0] = x[(r + u) * C + c] - shift;
                cnt = u + 1;
            }
        }
        chan_stats_add<1, 4>(st, v, cnt);
    }
    float m = shift + st.mean[0];
    float invstd = bn_finalize_channel(c, m, st.m2[0], (float)M, save_mean, save_invstd, rm, rv, eps, momentum);
    float a = invstd * gamma[c], b = beta[c];
    for (long r = 0; r < M; r++) y[r * C + c] = (x[r * C + c] - m) * a + b;
}
static void launch_thread_per_channel(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    int bs = l->block_size;
    batchnorm_thread_per_channel_kernel<<<(unsigned)ceil_div(p->C, bs), bs>>>(
        (const float *)p->x, (float *)p->y, p->gamma, p->beta, p->save_mean, p->save_invstd, p->run_mean, p->run_var,
        p->M, p->C, p->eps, p->momentum);
}
static const char *supports_thread_per_channel(const void *pp, int bs) { (void)bs; return supports_chain(pp, 1); }

// ------------------------------------------------------------------------------------------------
// Kernel 2: one block per channel striding down its column, a block-wide Welford all-reduce (block_welford), then y.
// Improves: a whole block per channel, C blocks in all, many loads in flight.
// Wrong: strided, uncoalesced reads and writes: each 4-byte element its own 32-byte sector (8x the bytes used).
__global__ void __launch_bounds__(1024) batchnorm_block_per_channel_kernel(
    const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ gamma, const float *__restrict__ beta,
    float *__restrict__ save_mean, float *__restrict__ save_invstd, float *__restrict__ rm, float *__restrict__ rv,
    long M, long C, float eps, float momentum) {
    __shared__ Welford scratch[33];
    __shared__ float s_mean, s_a;
    long c = blockIdx.x;
    float shift = x[c];  // as kernel 1
    ChanStats<1> st;
    chan_stats_init(st);
    for (long r = threadIdx.x; r < M; r += 4L * blockDim.x) {
        float v[4][1];
        int cnt = 0;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            long rr = r + (long)u * blockDim.x;
            v[u][0] = 0.f;
            if (rr < M) {
                v[u][0] = x[rr * C + c] - shift;
                cnt = u + 1;
            }
        }
        chan_stats_add<1, 4>(st, v, cnt);
    }
    Welford w = block_welford(Welford{st.n, st.mean[0], st.m2[0]}, scratch);
    if (threadIdx.x == 0) {
        float m = shift + w.mean;
        float invstd = bn_finalize_channel(c, m, w.m2, (float)M, save_mean, save_invstd, rm, rv, eps, momentum);
        s_mean = m;
        s_a = invstd * gamma[c];
    }
    __syncthreads();
    float m = s_mean, a = s_a, b = beta[c];
    for (long r = threadIdx.x; r < M; r += blockDim.x) y[r * C + c] = (x[r * C + c] - m) * a + b;
}
static void launch_block_per_channel(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    batchnorm_block_per_channel_kernel<<<(unsigned)p->C, l->block_size>>>(
        (const float *)p->x, (float *)p->y, p->gamma, p->beta, p->save_mean, p->save_invstd, p->run_mean, p->run_var,
        p->M, p->C, p->eps, p->momentum);
}
static const char *supports_block_per_channel(const void *pp, int bs) { return supports_chain(pp, bs); }

// ------------------------------------------------------------------------------------------------
// Kernel 3: blocks of 32 channels and a strip of rows add their sums of x and x^2 to two fp32 accumulators a channel
// by atomicAdd (cleared inside the timed launch); a second kernel takes mean = sum / M, var = sumsq / M - mean^2.
// Improves: the rows are spread over enough blocks to fill the GPU, whatever C is.
// Wrong: atomics to one address serialize at L2; E[x^2] - E[x]^2 in fp32 is hopeless where the mean is large against
// the spread (--input-mean 1000 fails) and in small channels (M < 16 refused); x read twice, three launches.
#define K3_MIN_M 16
__global__ void __launch_bounds__(1024) batchnorm_atomic_partials_accumulate_kernel(const float *__restrict__ x,
                                                                                    float *acc, long M, long C) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, W = blockDim.x / 32;
    long c = blockIdx.x * 32L + lane;
    long r = blockIdx.y * (long)W + warp;
    if (c >= C || r >= M) return;
    float s = 0.f, q = 0.f;
    for (; r < M; r += (long)gridDim.y * W) {
        float v = x[r * C + c];
        s += v;
        q += v * v;
    }
    atomicAdd(acc + c, s);
    atomicAdd(acc + C + c, q);
}
__global__ void __launch_bounds__(1024) batchnorm_atomic_partials_normalize_kernel(
    const float *__restrict__ x, float *__restrict__ y, const float *acc, const float *__restrict__ gamma,
    const float *__restrict__ beta, float *__restrict__ save_mean, float *__restrict__ save_invstd,
    float *__restrict__ rm, float *__restrict__ rv, long M, long C, float eps, float momentum) {
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, W = blockDim.x / 32;
    long c = blockIdx.x * 32L + lane;
    if (c >= C) return;
    float mean = acc[c] / (float)M;
    // __fmul_rn keeps mean*mean rounded like the squares were (no FMA): a constant channel gives exactly 0
    float var = fmaxf(acc[C + c] / (float)M - __fmul_rn(mean, mean), 0.f);
    float invstd = rsqrtf(var + eps);
    if (blockIdx.y == 0 && warp == 0)  // one writer per channel
        bn_finalize_channel(c, mean, var * (float)M, (float)M, save_mean, save_invstd, rm, rv, eps, momentum);
    float a = invstd * gamma[c], b = beta[c];
    for (long r = blockIdx.y * (long)W + warp; r < M; r += (long)gridDim.y * W)
        y[r * C + c] = (x[r * C + c] - mean) * a + b;
}
// A 2-D grid, 32 channels x enough strips of rows for one wave.
static void launch_atomic_partials(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    int bs = l->block_size, W = bs / 32;
    long gx = ceil_div(p->C, 32);
    long gy = clamp_long(ceil_div(one_wave((const void *)batchnorm_atomic_partials_accumulate_kernel, bs), gx), 1,
                         (long)(ceil_div(p->M, W) < 65535 ? ceil_div(p->M, W) : 65535));
    dim3 grid((unsigned)gx, (unsigned)gy);
    float *acc = p->ws_mean;  // sum[C], then sumsq[C]
    CUDA_CHECK(cudaMemsetAsync(acc, 0, 2 * (size_t)p->C * sizeof(float)));
    batchnorm_atomic_partials_accumulate_kernel<<<grid, bs>>>((const float *)p->x, acc, p->M, p->C);
    batchnorm_atomic_partials_normalize_kernel<<<grid, bs>>>((const float *)p->x, (float *)p->y, acc, p->gamma,
                                                             p->beta, p->save_mean, p->save_invstd, p->run_mean,
                                                             p->run_var, p->M, p->C, p->eps, p->momentum);
}
static const char *supports_atomic_partials(const void *pp, int bs) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    if (const char *why = supports_cl(pp, bs)) return why;
    if (p->M < K3_MIN_M)
        return reasonf("N*H*W = %ld < %d: E[x^2] - E[x]^2 loses the variance of channels this small", p->M, K3_MIN_M);
    return NULL;
}

// ------------------------------------------------------------------------------------------------
// Kernel 4: 2-D blocks (the design that won a public leaderboard for this problem), one per 32 channels over all M
// rows: lanes across channels, warps down rows (Welford in groups of four), merged in shared memory, then y.
// Improves: coalesced reads and writes, no atomics, no second launch, Welford precision, fp16/bf16.
// Wrong: C / 32 blocks in all (8 at C = 256 on 132 SMs); x read twice; scalar loads need many instructions per byte.
template <typename T>
__global__ void __launch_bounds__(1024) batchnorm_2d_block_column_kernel(bn_args_t a) {
    const T *__restrict__ x = (const T *)a.x;
    T *__restrict__ y = (T *)a.y;
    const float *__restrict__ gamma = a.gamma, *__restrict__ beta = a.beta;
    const long M = a.M, C = a.C;
    __shared__ Welford sm[1024];
    __shared__ float s_mean[32], s_a[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, W = blockDim.x / 32;
    long c = blockIdx.x * 32L + lane;
    bool valid = c < C;
    float shift = valid ? to_float(x[c]) : 0.f;  // as kernel 1
    ChanStats<1> st;
    chan_stats_init(st);
    if (valid) {
        for (long r = warp; r < M; r += 4L * W) {
            float v[4][1];
            int cnt = 0;
#pragma unroll
            for (int u = 0; u < 4; u++) {
                long rr = r + (long)u * W;
                v[u][0] = 0.f;
                if (rr < M) {
                    v[u][0] = to_float(x[rr * C + c]) - shift;
                    cnt = u + 1;
                }
            }
            chan_stats_add<1, 4>(st, v, cnt);
        }
    }
    Welford w = rowgroup_welford(Welford{st.n, st.mean[0], st.m2[0]}, sm, 32, W);
    if (warp == 0 && valid) {
        float m = shift + w.mean;
        float invstd = bn_finalize_channel(a, c, m, w.m2, (float)M);
        s_mean[lane] = m;
        s_a[lane] = invstd * gamma[c];
    }
    __syncthreads();
    if (!valid) return;
    float m = s_mean[lane], scale = s_a[lane], b = beta[c];
    for (long r = warp; r < M; r += W) y[r * C + c] = from_float<T>((to_float(x[r * C + c]) - m) * scale + b);
}
static void launch_2d_block_column(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    const unsigned gx = (unsigned)ceil_div(p->C, 32), bs = (unsigned)l->block_size;
    switch (p->h.dtype) {
    case DT_FP32: batchnorm_2d_block_column_kernel<float><<<gx, bs>>>(bn_args(p)); break;
    case DT_FP16: batchnorm_2d_block_column_kernel<__half><<<gx, bs>>>(bn_args(p)); break;
    default: batchnorm_2d_block_column_kernel<__nv_bfloat16><<<gx, bs>>>(bn_args(p)); break;
    }
}
static const char *supports_2d_block_column(const void *pp, int bs) { return supports_chain(pp, bs / 32); }
// The plan: a warp for every 4 rows (a warp's step), up to 1024 threads: the dense sweep's best at every point.
static int plan_2d_block_column(const void *pp) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    return (int)clamp_long(32 * ceil_div(p->M, 4), 32, 1024);
}

// ------------------------------------------------------------------------------------------------
// Kernel 5: the rows split over many blocks. Block (bx, by): G packs of VEC channels (16-byte where C allows; G <= 32)
// over a strip of rows, shifted sums around its first row with up to eight loads in flight, a partial (mean, M2) a
// channel; a second launch merges them (a block per 32 channels), a third writes y, last rows first (likeliest in L2).
// Improves: fills the GPU for any N and C (the grid is sized to the SMs), 16-byte accesses, no atomics on data.
// Wrong: x crosses DRAM twice wherever it is larger than what L2 keeps; three launches.
#define K5_ROWS 4  // rows the normalize pass loads at once, as raw words
// loads the first pass keeps in flight, as raw words: 8 (6 for 16-bit packs of 8, 4 for 16-bit packs of 2: no spills)
#define K5_LOADS(T, VEC) (sizeof(T) == 2 && (VEC) == 8 ? 6 : sizeof(T) == 2 && (VEC) == 2 ? 4 : 8)
// Floats of dynamic shared memory the first pass asks for: rowgroup_shift_sums' sums, 32 KB at most.
static int k5_smem_floats(int bs, int vec) { return 2 * bs * (vec < 4096 / bs ? vec : 4096 / bs); }
// A block's shifted sums (5's first pass, the first phase of 7, 9-11 and 13): block bx's G packs over rows [row0,
// row1) around row shift_row; whether the thread has a pack and rows (rg == 0: its pack's block totals). KEEP (10, 11,
// 13): the first keep_rows rows also go to `keep`, [keep_rows][G] packs in shared memory. U: the loads in flight.
template <typename T, int VEC, bool KEEP = false, int U = K5_LOADS(T, VEC)>
__device__ __forceinline__ bool bn_block_shift_sums(const bn_args_t &a, ShiftSums<VEC> &s, int G, long row0,
                                                    long row1, long shift_row, int sm_floats, float *sm, long bx,
                                                    RawPack<T, VEC> *keep = nullptr, long keep_rows = 0) {
    const T *__restrict__ x = (const T *)a.x;
    const long C = a.C;
    int t = threadIdx.x, g = t % G, rg = t / G, RG = blockDim.x / G;  // G divides the block size
    long nvec = C / VEC, pc = bx * (long)G + g;
    bool active = pc < nvec && row0 < row1;
    const T *xp = x + pc * VEC, *shift_row_p = xp + shift_row * C;
    shift_sums_init(s, load_pack_nc<T, VEC>(active ? shift_row_p : x));  // an idle thread's: unused
    if (active) {
        // rows row0 + rg + i * RG, i < n, U loads at once; the last group's missing rows re-read the shift row,
        // which adds exactly 0 to both sums
        long n = (row1 - row0 - rg + RG - 1) / RG, step = (long)RG * C;
        const T *q = xp + (row0 + rg) * C;
        long i = 0;
        if constexpr (KEEP) {  // the thread's rows rg + i * RG < keep_rows (i < nk) are kept as they are summed
            const long nk = keep_rows > rg ? (keep_rows - rg + RG - 1) / RG : 0;
            RawPack<T, VEC> *kp = keep + rg * G + g;
            const int kstep = RG * G;  // the block's threads: a row group's packs apart
            for (; i < nk; i += U, q += U * step, kp += U * kstep) {
                RawPack<T, VEC> p[U];
#pragma unroll
                for (int u = 0; u < U; u++) p[u] = load_raw<T, VEC>(i + u < n ? q + u * step : shift_row_p);
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (i + u < nk) kp[u * kstep] = p[u];
#pragma unroll
                for (int u = 0; u < U; u++) shift_sums_add(s, raw_pack<T, VEC>(p[u]));
            }
        }
        for (; i < n; i += U, q += U * step) {
            RawPack<T, VEC> p[U];
#pragma unroll
            for (int u = 0; u < U; u++)  // cached: the normalize pass wants x in L2
                p[u] = load_raw<T, VEC>(i + u < n ? q + u * step : shift_row_p);
#pragma unroll
            for (int u = 0; u < U; u++) shift_sums_add(s, raw_pack<T, VEC>(p[u]));
        }
    }
    rowgroup_shift_sums(s, sm, sm_floats, G, RG);
    return active;
}
// Kernel 5's first pass (7's first phase): block (bx, by)'s shifted sums, one partial (mean, M2) a channel into ws.
template <typename T, int VEC>
__device__ __forceinline__ void bn_partial_pass(const bn_args_t &a, float *ws_mean, float *ws_m2, int G,
                                                long rows_per_block, int sm_floats, float *sm, long bx, long by) {
    const long M = a.M, C = a.C;
    long row0 = by * rows_per_block, row1 = min(M, row0 + rows_per_block);
    ShiftSums<VEC> s;
    bool active = bn_block_shift_sums<T, VEC>(a, s, G, row0, row1, row0, sm_floats, sm, bx);
    if (threadIdx.x < G && active) {
        long pc = bx * (long)G + threadIdx.x;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            Welford w = shift_sums_welford(s, j, (float)(row1 - row0));
            ws_mean[by * C + pc * VEC + j] = w.mean;
            ws_m2[by * C + pc * VEC + j] = w.m2;
        }
    }
}
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) batchnorm_split_rows_partial_kernel(bn_args_t a, float *ws_mean, float *ws_m2,
                                                                            int G, long rows_per_block, int sm_floats) {
    extern __shared__ float sm[];  // sm_floats
    bn_partial_pass<T, VEC>(a, ws_mean, ws_m2, G, rows_per_block, sm_floats, sm, blockIdx.x, blockIdx.y);
}
// One chain of combine_partials_block: folds partials first, first + stride, ... < P of channel c into w, eight loads
// at once, their means as offsets from m0 (partial 0's: merges of means near 1000 drift). A missing partial (past P,
// or a block without rows: not read) enters with count 0, left out exactly. Host and device (the CPU tests run it).
__host__ __device__ __forceinline__ Welford fold_partials(Welford w, const float *ws_mean, const float *ws_m2, long C,
                                                          long c, long first, long stride, long P,
                                                          long rows_per_block, long M, float m0) {
    constexpr int FOLD_BATCH = 8;
    for (long p = first; p < P; p += FOLD_BATCH * stride) {
        float pm[FOLD_BATCH], pm2[FOLD_BATCH], n[FOLD_BATCH];
#pragma unroll
        for (int u = 0; u < FOLD_BATCH; u++) {
            long q = p + u * stride, left = M - q * rows_per_block;
            long rows = q >= P || left <= 0 ? 0 : rows_per_block < left ? rows_per_block : left;
            n[u] = (float)rows;
#ifdef __CUDA_ARCH__
            pm[u] = rows ? __ldcg(ws_mean + q * C + c) : m0;
            pm2[u] = rows ? __ldcg(ws_m2 + q * C + c) : 0.f;
#else
            pm[u] = rows ? ws_mean[q * C + c] : m0;
            pm2[u] = rows ? ws_m2[q * C + c] : 0.f;
#endif
        }
#pragma unroll
        for (int u = 0; u < FOLD_BATCH; u++) w = welford_merge_nocall(w, Welford{n[u], pm[u] - m0, pm2[u]});
    }
    return w;
}
// Chan's merge of P partials for channels c0..c0+31 by a whole block (5's finalize, 7's combine; barriers): thread t
// folds every RG-th partial of channel c0 + t % 32 from t / 32 (a warp reads a 128-byte line of a partial), then the
// row groups merge (rowgroup_welford); threads t < 32 get their channel's state.
__device__ __forceinline__ Welford combine_partials_block(const float *ws_mean, const float *ws_m2, long C, long c0,
                                                          long P, long rows_per_block, long M, Welford *sm) {
    int t = threadIdx.x, RG = blockDim.x / 32;
    long c = c0 + t % 32;
    Welford w = {0.f, 0.f, 0.f};
    float m0 = c < C ? __ldcg(ws_mean + c) : 0.f;  // partial 0 always has rows
    if (c < C) w = fold_partials(w, ws_mean, ws_m2, C, c, t / 32, RG, P, rows_per_block, M, m0);
    w = rowgroup_welford(w, sm, 32, RG);
    w.mean += m0;  // threads t < 32 hold their channel's state; m0 is their channel's
    return w;
}
// Kernel 5's finalize: a block per 32 channels over the P partials of the first pass.
__global__ void __launch_bounds__(1024) batchnorm_split_rows_finalize_kernel(
    bn_args_t a, const float *ws_mean, const float *ws_m2, long P, long rows_per_block) {
    const long M = a.M, C = a.C;
    __shared__ Welford sm[1024];
    long c = blockIdx.x * 32L + threadIdx.x;
    Welford w = combine_partials_block(ws_mean, ws_m2, C, blockIdx.x * 32L, P, rows_per_block, M, sm);
    if (threadIdx.x < 32 && c < C)
        bn_finalize_channel(a, c, w.mean, w.m2, (float)M);
}
// Kernel 5's normalize pass over x[M, C]: y = x * scale + shift, the block's channels staged (bn_stage_scale_shift).
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) batchnorm_split_rows_normalize_kernel(bn_args_t a, int G) {
    const T *__restrict__ x = (const T *)a.x;
    T *__restrict__ y = (T *)a.y;
    const long M = a.M, C = a.C;
    constexpr int U = K5_ROWS;
    int t = threadIdx.x, g = t % G, rg = t / G, RG = blockDim.x / G;
    long nvec = C / VEC, pc = blockIdx.x * (long)G + g, c0 = blockIdx.x * (long)G * VEC;
    __shared__ __align__(16) float sc[BN_STAGED], sh[BN_STAGED];
    bn_stage_scale_shift(a, c0, min((long)G * VEC, C - c0), sc, sh);
    if (pc >= nvec || rg >= RG) return;
    float scale[VEC], shift[VEC];
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        scale[j] = sc[g * VEC + j];
        shift[j] = sh[g * VEC + j];
    }
    long stride = (long)gridDim.y * RG;
    for (long k = blockIdx.y * (long)RG + rg; k < M; k += U * stride) {  // k counts rows from the last one
        RawPack<T, VEC> p[U];  // raw words: all U loads issued before any is unpacked
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k + u * stride < M) p[u] = load_raw_cs<T, VEC>(x + (M - 1 - (k + u * stride)) * C + pc * VEC);
#pragma unroll
        for (int u = 0; u < U; u++) {
            long r = M - 1 - (k + u * stride);
            if (r < 0) continue;
            Pack<T, VEC> in = raw_pack<T, VEC>(p[u]), out;
#pragma unroll
            for (int j = 0; j < VEC; j++) out.v[j] = from_float<T>(fmaf(to_float(in.v[j]), scale[j], shift[j]));
            store_pack_cs<T, VEC>(y + r * C + pc * VEC, out);
        }
    }
}
// The three launches: G lanes across packs (cl_lanes), bs / G row groups; the grids aim at one wave of blocks.
template <typename T, int VEC>
static void launch_split_rows_t(const bn_problem_t *p, int bs) {
    long nvec = p->C / VEC;
    int G = cl_lanes(nvec), RG = bs / G;
    int sm_floats = k5_smem_floats(bs, VEC);
    size_t smem = sizeof(float) * (size_t)sm_floats;
    long gx = ceil_div(nvec, G), wave = one_wave((const void *)batchnorm_split_rows_partial_kernel<T, VEC>, bs, smem);
    long gy = clamp_long(clamp_long(ceil_div(wave, gx), 1, p->M), 1, 65535);
    if (gy * p->C > p->ws_states) gy = p->ws_states / p->C;  // the workspace holds gy x C partials
    long rows_per_block = ceil_div(p->M, gy);
    gy = ceil_div(p->M, rows_per_block);  // no block without rows
    batchnorm_split_rows_partial_kernel<T, VEC><<<dim3((unsigned)gx, (unsigned)gy), bs, smem>>>(
        bn_args(p), p->ws_mean, p->ws_m2, G, rows_per_block, sm_floats);
    batchnorm_split_rows_finalize_kernel<<<(unsigned)ceil_div(p->C, 32), 1024>>>(bn_args(p), p->ws_mean, p->ws_m2, gy,
                                                                                 rows_per_block);
    long wave2 = one_wave((const void *)batchnorm_split_rows_normalize_kernel<T, VEC>, bs);
    long gy2 = clamp_long(ceil_div(wave2, gx), 1, clamp_long(ceil_div(p->M, RG), 1, 65535));
    batchnorm_split_rows_normalize_kernel<T, VEC><<<dim3((unsigned)gx, (unsigned)gy2), bs>>>(bn_args(p), G);
}
static void launch_split_rows(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    int vec = bn_vec_width(p->h.dtype, p->C);
    DISPATCH_VEC(p->h.dtype, vec, launch_split_rows_t, p, l->block_size);
    snprintf(l->path, sizeof l->path, "%d-wide packs", vec);
}
// The plan: 512 threads from 8 rows an SM; below, 32 for rows of under 16 packs, else 256.
static int plan_split_rows(const void *pp) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    long nvec = p->C / bn_vec_width(p->h.dtype, p->C);
    return per_sm((double)p->M) >= 8 ? 512 : nvec < 16 ? 32 : 256;
}

// ------------------------------------------------------------------------------------------------
// Kernel 6: NCHW (a channel: N planes of H*W, C*H*W apart). Block (c, s) folds the s-th share of its packs into Welford
// states, a partial; the channel's last block (a ticket) combines them; the normalize walks x's packs flat, last first.
// Improves: NCHW at all; coalesced 16-byte loads along the planes; the same fill-the-GPU split as 5.
// Wrong: x read twice (as 5); small planes leave packs short; the normalize spends 2 divisions and 4 loads a pack.
#define NCHW_SPLIT_PACKS(VEC) ((VEC) == 8 ? 2 : 4)  // packs a thread loads at once (fewer 8-wide ones: registers)
// Advances a (plane n, pack i) position by `step` packs within planes of nvh packs.
__device__ __forceinline__ void nchw_advance(long &n, long &i, long step, long nvh) {
    i += step;
    if (i >= nvh) {
        if (i < 2 * nvh) {  // planes of at least `step` packs: one wrap, no division
            i -= nvh;
            n++;
        } else {
            long q = i / nvh;
            n += q;
            i -= q * nvh;
        }
    }
}
// Moves a (plane n, pack i) position back by `step` packs within planes of nvh packs (n may go below 0 at the end).
__device__ __forceinline__ void nchw_retreat(long &n, long &i, long step, long nvh) {
    i -= step;
    if (i < 0) {
        long q = (-i + nvh - 1) / nvh;
        n -= q;
        i += q * nvh;
    }
}
// Warp 0 of channel c's last block: Chan's merge of the channel's S = gridDim.y partials (packs_per_block packs of
// VEC values each, K packs in all), then the statistics; sets the channel's ticket back to zero.
template <int VEC>
__device__ __forceinline__ void nchw_split_planes_combine(const bn_args_t &a, const float *ws_mean, const float *ws_m2,
                                                          unsigned *counters, long c, long K, long packs_per_block) {
    const long N = a.N, C = a.C, HW = a.HW;
    int lane = threadIdx.x, S = gridDim.y;
    float shift = __ldcg(ws_mean + c), s = 0.f;
    for (int p = lane; p < S; p += 32)
        s += (float)((min(K, (p + 1) * packs_per_block) - p * packs_per_block) * VEC) *
             (__ldcg(ws_mean + p * C + c) - shift);
    float M = (float)(N * HW), mean = shift + __fdividef(warp_sum(s), M), q = 0.f;
    for (int p = lane; p < S; p += 32) {
        float d = __ldcg(ws_mean + p * C + c) - mean;
        q += __ldcg(ws_m2 + p * C + c) +
             (float)((min(K, (p + 1) * packs_per_block) - p * packs_per_block) * VEC) * d * d;
    }
    float m2 = warp_sum(q);
    if (lane == 0) {
        bn_finalize_channel(a, c, mean, m2, M);
        counters[c] = 0;
    }
}
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) batchnorm_nchw_split_planes_partial_kernel(
    bn_args_t a, float *ws_mean, float *ws_m2, unsigned *counters, long packs_per_block) {
    const T *__restrict__ x = (const T *)a.x;
    const long N = a.N, C = a.C, HW = a.HW;
    __shared__ Welford scratch[33];
    __shared__ int s_last;
    long c = blockIdx.x, nvh = HW / VEC, K = N * nvh;
    long k0 = blockIdx.y * packs_per_block, k1 = min(K, k0 + packs_per_block);
    const T *xc = x + c * HW;
    ChanStats<1> st;
    chan_stats_init(st);
    long k = k0 + threadIdx.x, n = k / nvh, i = k - n * nvh;
    constexpr int U = NCHW_SPLIT_PACKS(VEC);
    for (; k < k1; k += (long)U * blockDim.x) {
        float v[U * VEC][1];
        int cnt = 0;
        long pn = n, pi = i;
        Pack<T, VEC> p[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (k + (long)u * blockDim.x < k1) p[u] = load_pack_nc<T, VEC>(xc + pn * C * HW + pi * VEC);
            nchw_advance(pn, pi, blockDim.x, nvh);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                bool ok = k + (long)u * blockDim.x < k1;
                v[u * VEC + j][0] = ok ? to_float(p[u].v[j]) : 0.f;
                if (ok) cnt = u * VEC + j + 1;
            }
        chan_stats_add<1, U * VEC>(st, v, cnt);
        n = pn;
        i = pi;
    }
    Welford w = block_welford(Welford{st.n, st.mean[0], st.m2[0]}, scratch);
    if (threadIdx.x == 0) {
        ws_mean[blockIdx.y * C + c] = w.mean;
        ws_m2[blockIdx.y * C + c] = w.m2;
        __threadfence();
        s_last = atomicAdd(counters + c, 1u) == gridDim.y - 1;
    }
    __syncthreads();
    if (!s_last || threadIdx.x >= 32) return;
    __threadfence();
    nchw_split_planes_combine<VEC>(a, ws_mean, ws_m2, counters, c, K, packs_per_block);
}
// Kernel 6's normalize pass: x as one flat array of Q = N*C*H*W/VEC packs, from the end, with the batch's statistics.
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) batchnorm_nchw_split_planes_normalize_kernel(bn_args_t a, long nvh, long Q) {
    const T *__restrict__ x = (const T *)a.x;
    T *__restrict__ y = (T *)a.y;
    const float *__restrict__ gamma = a.gamma, *__restrict__ beta = a.beta;
    const long C = a.C;
    const float *mean_src = a.save_mean, *invstd_src = a.save_invstd;
    constexpr int U = NCHW_SPLIT_PACKS(VEC);
    long stride = (long)gridDim.x * blockDim.x;
    for (long k = blockIdx.x * (long)blockDim.x + threadIdx.x; k < Q; k += U * stride) {
        Pack<T, VEC> p[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k + u * stride < Q) p[u] = load_pack_cs<T, VEC>(x + (Q - 1 - (k + u * stride)) * VEC);
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (k + u * stride >= Q) continue;
            unsigned q = (unsigned)(Q - 1 - (k + u * stride));
            unsigned c = (q / (unsigned)nvh) % (unsigned)C;
            float m = mean_src[c], scale = invstd_src[c] * __ldg(gamma + c), b = __ldg(beta + c);
            Pack<T, VEC> out;
#pragma unroll
            for (int j = 0; j < VEC; j++) out.v[j] = from_float<T>((to_float(p[u].v[j]) - m) * scale + b);
            store_pack_cs<T, VEC>(y + (long)q * VEC, out);
        }
    }
}
// Grid (C, S) with S shares per channel, S sized for one wave; the flat normalize pass.
template <typename T, int VEC>
static void launch_nchw_split_planes_t(const bn_problem_t *p, int bs) {
    long nvh = p->HW / VEC, K = p->N * nvh;
    long wave = one_wave((const void *)batchnorm_nchw_split_planes_partial_kernel<T, VEC>, bs);
    long S = clamp_long(clamp_long(ceil_div(wave, p->C), 1, ceil_div(K, (long)bs * NCHW_SPLIT_PACKS(VEC))), 1, 65535);
    if (S * p->C > p->ws_states) S = p->ws_states / p->C;
    long packs_per_block = ceil_div(K, S);
    S = ceil_div(K, packs_per_block);
    batchnorm_nchw_split_planes_partial_kernel<T, VEC><<<dim3((unsigned)p->C, (unsigned)S), bs>>>(
        bn_args(p), p->ws_mean, p->ws_m2, p->counters, packs_per_block);
    long Q = p->N * p->C * nvh;
    long wave2 = one_wave((const void *)batchnorm_nchw_split_planes_normalize_kernel<T, VEC>, bs);
    long blocks = clamp_long(ceil_div(Q, (long)bs * NCHW_SPLIT_PACKS(VEC)), 1, 2 * wave2);
    batchnorm_nchw_split_planes_normalize_kernel<T, VEC><<<(unsigned)blocks, bs>>>(bn_args(p), nvh, Q);
}
static void launch_nchw_split_planes(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    int vec = bn_vec_width(p->h.dtype, p->HW);
    DISPATCH_VEC(p->h.dtype, vec, launch_nchw_split_planes_t, p, l->block_size);
    snprintf(l->path, sizeof l->path, "NCHW planes, %d-wide packs", vec);
}
static const char *supports_nchw_split_planes(const void *pp, int bs) {
    (void)bs;
    return training_layout((const bn_problem_t *)pp, 1);
}
// The plan: 32 threads where a plane holds under 64 packs (7x7 and 14x14 planes), else 128.
static int plan_nchw_split_planes(const void *pp) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    return p->HW / bn_vec_width(p->h.dtype, p->HW) < 64 ? 32 : 128;
}

// ------------------------------------------------------------------------------------------------
// The normalize phase of kernels 7, 9-11 and 13: block (blockIdx.x, .y)'s rows [row0, row1) of its G packs, last rows
// first (the likeliest still in L2), four rows a thread at once, y = x * sc + sh (staged). KEEP (10, 11 and 13): the
// slice's first keep_rows rows come from `keep` (bn_block_shift_sums put them there), after the rest.
template <typename T, int VEC, bool KEEP = false>
__device__ __forceinline__ void bn_normalize_slice(const bn_args_t &a, int G, long row0, long row1, const float *sc,
                                                   const float *sh, const RawPack<T, VEC> *keep = nullptr,
                                                   long keep_rows = 0) {
    const T *__restrict__ x = (const T *)a.x;
    T *__restrict__ y = (T *)a.y;
    const long C = a.C;
    constexpr int U = K5_ROWS;
    int t = threadIdx.x, g = t % G, rg = t / G, RG = blockDim.x / G;
    long nvec = C / VEC, pc = blockIdx.x * (long)G + g;
    if (pc >= nvec || rg >= RG || row0 >= row1) return;
    float scale[VEC], shift[VEC];
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        scale[j] = sc[g * VEC + j];
        shift[j] = sh[g * VEC + j];
    }
    const long kept = KEEP ? keep_rows : 0, lim = row1 - row0 - kept;  // rows read from global memory
    for (long k = rg; k < lim; k += (long)U * RG) {  // k counts the slice's rows from its last one
        RawPack<T, VEC> p[U];  // raw words: all U loads issued before any is unpacked
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k + u * RG < lim) p[u] = load_raw_cs<T, VEC>(x + (row1 - 1 - (k + u * RG)) * C + pc * VEC);
#pragma unroll
        for (int u = 0; u < U; u++) {
            long r = row1 - 1 - (k + u * RG);
            if (r < row0 + kept) continue;
            Pack<T, VEC> in = raw_pack<T, VEC>(p[u]), out;
#pragma unroll
            for (int j = 0; j < VEC; j++) out.v[j] = from_float<T>(fmaf(to_float(in.v[j]), scale[j], shift[j]));
            store_pack_cs<T, VEC>(y + r * C + pc * VEC, out);
        }
    }
    if constexpr (KEEP) {
        for (long k = rg; k < kept; k += (long)U * RG) {  // the kept front, row row0 + k, from shared memory
            RawPack<T, VEC> p[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (k + u * RG < kept) p[u] = keep[(k + u * RG) * G + g];
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (k + u * RG >= kept) continue;
                Pack<T, VEC> in = raw_pack<T, VEC>(p[u]), out;
#pragma unroll
                for (int j = 0; j < VEC; j++) out.v[j] = from_float<T>(fmaf(to_float(in.v[j]), scale[j], shift[j]));
                store_pack_cs<T, VEC>(y + (row0 + k + u * RG) * C + pc * VEC, out);
            }
        }
    }
}
// The grid of kernels 7, 9-11 and 13: 5's first-pass grid cut to the blocks resident at once (a cooperative launch),
// or why there is none. fn: the instance (vec-wide packs); combine: 7 (partials; its states in shared memory); keep:
// 10, 11 and 13 (rows kept in what KEEP_BLOCKS_PER_SM blocks leave of an SM's shared memory). Made every launch.
typedef struct {
    long gx, gy, rows_per_block, keep_rows;  // keep_rows: kernels 10, 11 and 13, the first rows of a slice kept
    int G, sm_floats, K;                     // K: the copies of the sums of kernels 9-11 and 13
    size_t smem;
} l2_plan_t;
#define ONE_SYNC_ADDS_PER_COPY 32   // blocks adding into one copy of the sums of kernels 9 and 10 (at most)
#define COALESCED_ADDS_PER_COPY 66  // of kernels 11 and 13 (their coalesced adds: 16-264 swept, 66-132 best)
#define SUM_COPIES_MAX 16
#define KEEP_BLOCKS_PER_SM 2  // the blocks an SM whose shared memory the kept rows share (the launch bounds)
static const char *l2_plan(const bn_problem_t *p, int bs, const void *fn, int vec, int combine, int keep,
                           l2_plan_t *pl) {
    const char *why = training_layout(p, 0);
    if (why) return why;
    if (!g_dev.prop.cooperativeLaunch) return "the device does not support cooperative launch";
    if ((why = block_fits(fn, bs))) return why;
    long nvec = p->C / vec;
    pl->G = cl_lanes(nvec);
    if (bs % pl->G) return reasonf("%d threads are not a multiple of the %d lanes a row group takes", bs, pl->G);
    pl->sm_floats = k5_smem_floats(bs, vec);
    size_t states = combine ? sizeof(Welford) * (size_t)bs : 0;  // 7's combine, in the same shared memory
    pl->smem = sizeof(float) * (size_t)pl->sm_floats > states ? sizeof(float) * (size_t)pl->sm_floats : states;
    pl->keep_rows = 0;
    if (keep) {  // rows of the block's G packs in what is left of the SM's shared memory for one of its blocks
        long left = (long)g_dev.prop.sharedMemPerMultiprocessor / KEEP_BLOCKS_PER_SM -
                    (long)g_dev.prop.reservedSharedMemPerBlock - (long)static_smem_opt_in(fn) - (long)pl->smem;
        long row_bytes = (long)pl->G * vec * (long)dtype_size(p->h.dtype);
        pl->keep_rows = left > 0 ? left / row_bytes : 0;
        pl->smem += (size_t)(pl->keep_rows * row_bytes);
    }
    long resident = one_wave(fn, bs, pl->smem);  // block_fits said at least one block fits an SM
    pl->gx = ceil_div(nvec, pl->G);
    if (resident < pl->gx)
        return reasonf("C = %ld needs %ld columns of blocks, more than the %ld resident at once", p->C, pl->gx,
                       resident);
    long gy = clamp_long(resident / pl->gx, 1, p->M);
    if (combine && gy * p->C > p->ws_states) gy = p->ws_states / p->C;  // 7's partials (9 has none)
    pl->rows_per_block = ceil_div(p->M, gy);
    pl->gy = ceil_div(p->M, pl->rows_per_block);  // no block without rows
    return NULL;
}

// ------------------------------------------------------------------------------------------------
// Kernel 7: kernel 5's passes in one cooperative launch of the blocks resident at once: 5's first pass (a partial per
// channel and slice), a grid sync, every block combines the partials of a share of the channels, 32 at a time, and
// writes their statistics, a grid sync, each block normalizes its own slice, last rows first (the likeliest in L2).
// Improves: one launch instead of three; what L2 still holds of x is not read from DRAM again.
// Wrong: the phases do not overlap, and the combine between the syncs is latency (6 us of 36 at bf16 65536 x 256).
template <typename T, int VEC>
__global__ void __launch_bounds__(512, 2) batchnorm_l2_two_pass_kernel(bn_args_t a, float *ws_mean, float *ws_m2,
                                                                       int G, long rows_per_block, int sm_floats) {
    cg::grid_group grid = cg::this_grid();
    extern __shared__ __align__(16) float sm[];  // max(sm_floats floats, a Welford state a thread)
    const long M = a.M, C = a.C;
    bn_partial_pass<T, VEC>(a, ws_mean, ws_m2, G, rows_per_block, sm_floats, sm, blockIdx.x, blockIdx.y);
    grid.sync();
    // the combine: a block per 32 channels at a time over the gy partials; the loop is uniform in the block
    const long nb = (long)gridDim.x * gridDim.y, b = (long)blockIdx.y * gridDim.x + blockIdx.x;
    for (long c0 = b * 32L; c0 < C; c0 += nb * 32) {
        __syncthreads();  // sm: the first pass's sums, or the previous round's states, are no longer read
        Welford w = combine_partials_block(ws_mean, ws_m2, C, c0, gridDim.y, rows_per_block, M,
                                           reinterpret_cast<Welford *>(sm));
        if (threadIdx.x < 32 && c0 + threadIdx.x < C)
            bn_finalize_channel(a, c0 + threadIdx.x, w.mean, w.m2, (float)M);
    }
    grid.sync();
    // the block's own slice (bn_stage_scale_shift reads the statistics other blocks wrote through L2, __ldcg)
    const long c0 = blockIdx.x * (long)G * VEC, row0 = blockIdx.y * rows_per_block;
    __shared__ __align__(16) float sc[BN_STAGED], sh[BN_STAGED];
    bn_stage_scale_shift(a, c0, min((long)G * VEC, C - c0), sc, sh);
    bn_normalize_slice<T, VEC>(a, G, row0, min(M, row0 + rows_per_block), sc, sh);
}
static const void *l2_two_pass_instance(const bn_problem_t *p) {
    return bn_instance(p, p->C, [](auto t, auto v) { return batchnorm_l2_two_pass_kernel<decltype(t), v.value>; });
}
static const char *l2_two_pass_plan(const bn_problem_t *p, int bs, l2_plan_t *pl) {
    return l2_plan(p, bs, l2_two_pass_instance(p), bn_vec_width(p->h.dtype, p->C), 1, 0, pl);  // kernel 5's packs
}
static void launch_l2_two_pass(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    l2_plan_t pl = {};
    if (l2_two_pass_plan(p, l->block_size, &pl)) return;  // supports_l2_two_pass said why
    bn_args_t a = bn_args(p);
    float *wm = p->ws_mean, *wv = p->ws_m2;
    void *args[] = {(void *)&a, (void *)&wm, (void *)&wv, (void *)&pl.G, (void *)&pl.rows_per_block,
                    (void *)&pl.sm_floats};
    CUDA_CHECK(cudaLaunchCooperativeKernel(l2_two_pass_instance(p), dim3((unsigned)pl.gx, (unsigned)pl.gy),
                                           dim3(l->block_size), args, pl.smem, 0));
    snprintf(l->path, sizeof l->path, "%ld x %ld blocks, %ld rows each", pl.gx, pl.gy, pl.rows_per_block);
}
static const char *supports_l2_two_pass(const void *pp, int bs) {
    l2_plan_t pl = {};
    return l2_two_pass_plan((const bn_problem_t *)pp, bs, &pl);
}
// The plan: 512 threads (its launch bounds) from 2 rows an SM; below, 32 threads a pack of the row within
// [128, 256]; the nearest that fits where that does not.
static int plan_l2_two_pass(const void *pp) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    long nvec = p->C / bn_vec_width(p->h.dtype, p->C);
    return plan_fit(pp, per_sm((double)p->M) >= 2 ? 512 : pow2_at_least(32.0 * nvec, 128, 256), supports_l2_two_pass);
}

// ------------------------------------------------------------------------------------------------
// Kernel 8: NCHW, a channel per cluster of CL blocks (1, 2, 4 or 8: enough for two blocks an SM), each block a share
// of its packs as shifted sums around the channel's first value, added over the block and the cluster (distributed
// shared memory); rank 0 writes the statistics, every block normalizes its share, last packs first (likeliest in L2).
// Improves (over 6): one launch, no partials in memory, no grid sync, the second read from L2 where it fits.
// Wrong: a first value far from the mean costs precision; x much larger than L2 is re-read from DRAM (level with 6).
#define CLUSTER_L2_PACKS 4  // packs a thread loads at once, as raw words
// The block's shifted sums s1, s2 of x - shift over packs [k0, k1) of the channel whose planes start at xc.
template <typename T, int VEC>
__device__ __forceinline__ void nchw_cluster_l2_sums(const T *xc, long C, long HW, long nvh, long k0, long k1,
                                                     float shift, float &s1, float &s2) {
    constexpr int U = CLUSTER_L2_PACKS;
    const long bs = blockDim.x;
    long k = k0 + threadIdx.x, n = k / nvh, i = k - n * nvh;
    for (; k < k1; k += U * bs) {
        RawPack<T, VEC> p[U];
        long pn = n, pi = i;
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (k + u * bs < k1) p[u] = load_raw<T, VEC>(xc + pn * C * HW + pi * VEC);  // cached: re-read below
            nchw_advance(pn, pi, bs, nvh);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k + u * bs < k1) {
                Pack<T, VEC> in = raw_pack<T, VEC>(p[u]);
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    float d = to_float(in.v[j]) - shift;
                    s1 += d;
                    s2 = fmaf(d, d, s2);
                }
            }
        n = pn;
        i = pi;
    }
}
// y = x * scale + b over the block's packs [k0, k1) again, last first (from k1 - 1 - threadIdx.x, U * bs a trip).
template <typename T, int VEC>
__device__ __forceinline__ void nchw_cluster_l2_normalize(const T *xc, T *yc, long C, long HW, long nvh, long k0,
                                                          long k1, float scale, float b) {
    constexpr int U = CLUSTER_L2_PACKS;
    const long bs = blockDim.x;
    long k = k1 - 1 - threadIdx.x;
    long n = k >= 0 ? k / nvh : -1;
    long i = k - n * nvh;
    for (; k >= k0; k -= U * bs) {
        RawPack<T, VEC> p[U];
        long pn = n, pi = i;
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (k - u * bs >= k0) p[u] = load_raw_cs<T, VEC>(xc + pn * C * HW + pi * VEC);
            nchw_retreat(pn, pi, bs, nvh);
        }
        pn = n;
        pi = i;
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (k - u * bs >= k0) {
                Pack<T, VEC> in = raw_pack<T, VEC>(p[u]), out;
#pragma unroll
                for (int j = 0; j < VEC; j++) out.v[j] = from_float<T>(fmaf(to_float(in.v[j]), scale, b));
                store_pack_cs<T, VEC>(yc + pn * C * HW + pi * VEC, out);
            }
            nchw_retreat(pn, pi, bs, nvh);
        }
        n = pn;
        i = pi;
    }
}
template <typename T, int VEC>
__global__ void __launch_bounds__(512) batchnorm_nchw_cluster_l2_kernel(bn_args_t a, int CL) {
    const T *__restrict__ x = (const T *)a.x;
    T *__restrict__ y = (T *)a.y;
    const long C = a.C, HW = a.HW, nvh = HW / VEC, K = a.N * nvh;
    const long c = blockIdx.x / CL;
    const int r = blockIdx.x % CL;  // the block's rank in its cluster (1-D clusters of consecutive blocks)
    const long k0 = K * r / CL, k1 = K * (r + 1) / CL;  // the block's packs of the channel
    const T *xc = x + c * HW;
    T *yc = y + c * HW;
    const float shift = to_float(xc[0]);
    float s1 = 0.f, s2 = 0.f;
    nchw_cluster_l2_sums<T, VEC>(xc, C, HW, nvh, k0, k1, shift, s1, s2);
    __shared__ float2 scratch[32], mine;
    float2 t = cluster_sum_once(block_sum_once(make_float2(s1, s2), scratch), &mine, CL);
    const float M = (float)(a.N * HW), dm = __fdividef(t.x, M), mean = shift + dm, m2 = fmaxf(0.f, t.y - t.x * dm);
    if (r == 0 && threadIdx.x == 0) bn_finalize_channel(a, c, mean, m2, M);
    const float scale = bn_invstd(m2, M, a.eps) * __ldg(a.gamma + c), b = fmaf(-mean, scale, __ldg(a.beta + c));
    nchw_cluster_l2_normalize<T, VEC>(xc, yc, C, HW, nvh, k0, k1, scale, b);
    cluster_release_wait();
}
// C clusters of CL blocks, a 1-D grid; CL the least of 1, 2, 4, 8 that gives two blocks a SM (8 at most).
static int nchw_cluster_l2_cluster(const bn_problem_t *p) {
    int cl = 1;
    while (cl < 8 && p->C * cl < 2L * g_dev.prop.multiProcessorCount) cl *= 2;
    return cl;
}
static const void *nchw_cluster_l2_instance(const bn_problem_t *p) {
    return bn_instance(p, p->HW, [](auto t, auto v) { return batchnorm_nchw_cluster_l2_kernel<decltype(t), v.value>; });
}
static void launch_nchw_cluster_l2(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    bn_args_t a = bn_args(p);
    int cl = nchw_cluster_l2_cluster(p);
    void *args[] = {(void *)&a, (void *)&cl};
    launch_kernel(nchw_cluster_l2_instance(p), p->C * cl, dim3(l->block_size), 0, args, cl);
    snprintf(l->path, sizeof l->path, "a channel per cluster of %d blocks, %d-wide packs", cl,
             bn_vec_width(p->h.dtype, p->HW));
}
static const char *supports_nchw_cluster_l2(const void *pp, int bs) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    const char *why = training_layout(p, 1);
    if (why || (why = needs_sm90(g_dev.prop.major, g_dev.sm))) return why;
    if (p->C * (double)nchw_cluster_l2_cluster(p) > 2147483647.0) return "C x cluster blocks exceed a 1-D grid";
    return cluster_fits(nchw_cluster_l2_instance(p), bs ? bs : 512, nchw_cluster_l2_cluster(p));
}
// The plan: about 8 sqrt(P) threads for P packs a block (a thread's packs grow with the block), at most 512 threads
// an SM over the C x cluster blocks; a power of two within [32, 512].
static int plan_nchw_cluster_l2(const void *pp) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    const int cl = nchw_cluster_l2_cluster(p);
    const double packs = (double)p->N * (double)(p->HW / bn_vec_width(p->h.dtype, p->HW)) / cl;
    return plan_fit(pp, pow2_nearest(fmin(8.0 * sqrt(packs), 512.0 / per_sm((double)p->C * cl)), 32, 512),
                    supports_nchw_cluster_l2);
}

// ------------------------------------------------------------------------------------------------
// Kernel 9: kernel 7 without the combine and second grid sync: blocks add their shifted sums around row 0 into 2C
// doubles by L2 atomics (K copies, block row by into copy by % K); after the sync each block stages its channels' scale
// and shift from them (row 0's blocks write the statistics), the last reader (a ticket) zeroes them; 7's normalize.
// Improves (over 7): one grid sync instead of two and no combine; the doubles keep the sums exact in any order.
// Wrong: the atomics' order varies (the statistics' last bit may too); a row 0 far from the mean costs precision.
// The stage's inputs besides the sums, loaded before the grid sync (one round trip to L2 after it, not three):
struct StagePre { float x0, g, b, rm, rv; };  // channel c0 + t's row-0 value, gamma, beta; (row 0's blocks) rm, rv
template <typename T>
__device__ __forceinline__ StagePre l2_stage_prefetch(const bn_args_t &a, long c0, long nc) {
    StagePre p = {0.f, 0.f, 0.f, 0.f, 0.f};
    const long c = c0 + threadIdx.x;
    if (threadIdx.x < nc) {
        p.x0 = to_float(((const T *)a.x)[c]);
        p.g = __ldg(a.gamma + c);
        p.b = __ldg(a.beta + c);
        if (blockIdx.y == 0) {
            p.rm = a.run_mean[c];
            p.rv = a.run_var[c];
        }
    }
    return p;
}
// After the grid sync: the block's channels' mean and M2 from the K copies of the sums, their scale and shift staged in
// sc, sh (row 0's blocks write the statistics); p: l2_stage_prefetch's. Returns thread 0's ticket (for the end).
template <typename T, int VEC>
__device__ __forceinline__ unsigned l2_one_sync_stage(const bn_args_t &a, double *sums, unsigned *ticket, int K,
                                                      int G, float *sc, float *sh, const StagePre &p) {
    const long M = a.M, C = a.C;
    const int t = threadIdx.x;
    const T *__restrict__ x = (const T *)a.x;
    const long c0 = blockIdx.x * (long)G * VEC, nc = min((long)G * VEC, C - c0);
    for (int i = t; i < nc; i += blockDim.x) {
        long c = c0 + i;
        double s1 = 0.0, s2 = 0.0;
#pragma unroll 4
        for (int q = 0; q < K; q++) {
            s1 += __ldcg(sums + q * 2 * C + c);
            s2 += __ldcg(sums + q * 2 * C + C + c);
        }
        const bool pre = i == t;
        float x0 = pre ? p.x0 : to_float(x[c]), g = pre ? p.g : __ldg(a.gamma + c), b = pre ? p.b : __ldg(a.beta + c);
        double dm = s1 / (double)M;
        float mean = x0 + (float)dm, m2 = (float)fmax(0.0, s2 - s1 * dm);
        float invstd = blockIdx.y == 0 ? bn_finalize_channel(c, mean, m2, (float)M, a.save_mean, a.save_invstd,
                                                             a.run_mean, a.run_var, a.eps, a.momentum,
                                                             pre ? p.rm : a.run_mean[c], pre ? p.rv : a.run_var[c])
                                       : bn_invstd(m2, (float)M, a.eps);
        float k = invstd * g;
        sc[i] = k;
        sh[i] = fmaf(-mean, k, b);
    }
    __syncthreads();  // every thread of the block has its sums' values (in sc, sh)
    return t == 0 ? atomicAdd(ticket, 1u) : 0u;
}
// At the block's end, with thread 0's ticket: the last block to have read the sums sets them back to zero.
__device__ __forceinline__ void l2_reset_sums(long C, double *sums, unsigned *ticket, int K, unsigned tk) {
    __shared__ int last;
    if (threadIdx.x == 0) last = tk == gridDim.x * gridDim.y - 1;
    __syncthreads();
    if (last) {
        for (long i = threadIdx.x; i < 2 * C * K; i += blockDim.x) sums[i] = 0.0;
        if (threadIdx.x == 0) *ticket = 0u;
    }
}
// The body of kernels 9, 10, 11 and 13. KEEP: 10, 11 and 13 (keep_rows rows of the slice in shared memory after
// sm_floats). COAL: 11 and 13 (the block's sums added by consecutive threads). U: the first pass's loads in flight.
template <typename T, int VEC, bool KEEP, bool COAL, int U = K5_LOADS(T, VEC)>
__device__ __forceinline__ void l2_one_sync_body(const bn_args_t &a, double *sums, unsigned *ticket, int K, int G,
                                                 long rows_per_block, int sm_floats, long keep_rows) {
    cg::grid_group grid = cg::this_grid();
    extern __shared__ __align__(16) float sm[];  // sm_floats, then (KEEP) the kept rows
    const long M = a.M, C = a.C, row0 = blockIdx.y * rows_per_block, row1 = min(M, row0 + rows_per_block);
    const int t = threadIdx.x;
    RawPack<T, VEC> *keep = reinterpret_cast<RawPack<T, VEC> *>(sm + sm_floats);  // sm_floats: a multiple of 4
    const long kept = KEEP ? min(keep_rows, max(row1 - row0, 0L)) : 0;
    ShiftSums<VEC> s;
    bool active = bn_block_shift_sums<T, VEC, KEEP, U>(a, s, G, row0, row1, 0, sm_floats, sm, blockIdx.x, keep, kept);
    if (COAL) {  // the block reduction left sum q (0: s1, 1: s2) of channel c0 + g * VEC + j in sm[(2j + q) * bs + g]
                 // (in one round: at bs <= 512, the launch bounds, sm_floats holds 2 * bs * VEC)
        const long c0 = blockIdx.x * (long)G * VEC, nc = min((long)G * VEC, C - c0);
        double *copy = sums + (blockIdx.y % K) * 2 * C + c0;
        if (row0 < row1)
            for (int i = t; i < 2 * nc; i += blockDim.x) {
                const int q = i >= nc, c = i - q * (int)nc;
                atomicAdd(copy + q * C + c, (double)sm[(2 * (c % VEC) + q) * blockDim.x + c / VEC]);
            }
    } else if (t < G && active) {
        double *mine = sums + (blockIdx.y % K) * 2 * C + (blockIdx.x * (long)G + t) * VEC;  // copy by % K
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            atomicAdd(mine + j, (double)s.s1[j]);
            atomicAdd(mine + C + j, (double)s.s2[j]);
        }
    }
    const long c0 = blockIdx.x * (long)G * VEC;
    const StagePre pre = l2_stage_prefetch<T>(a, c0, min((long)G * VEC, C - c0));
    grid.sync();
    __shared__ __align__(16) float sc[BN_STAGED], sh[BN_STAGED];
    const unsigned tk = l2_one_sync_stage<T, VEC>(a, sums, ticket, K, G, sc, sh, pre);
    bn_normalize_slice<T, VEC, KEEP>(a, G, row0, row1, sc, sh, keep, kept);
    l2_reset_sums(C, sums, ticket, K, tk);
}
// (keep_rows: unused here; the four kernels take the same arguments)
template <typename T, int VEC>
__global__ void __launch_bounds__(512, 2) batchnorm_l2_one_sync_kernel(
    bn_args_t a, double *sums, unsigned *ticket, int K, int G, long rows_per_block, int sm_floats, long keep_rows) {
    l2_one_sync_body<T, VEC, false, false>(a, sums, ticket, K, G, rows_per_block, sm_floats, keep_rows);
}
static const void *l2_one_sync_instance(const bn_problem_t *p) {
    return bn_instance(p, p->C, [](auto t, auto v) { return batchnorm_l2_one_sync_kernel<decltype(t), v.value>; });
}
// The plan of kernel 9 (keep = 0) or 10, 11 and 13 (keep = 1) for instance fn; adds: the most blocks a copy of sums.
static const char *l2_sums_plan(const bn_problem_t *p, int bs, const void *fn, int keep, int adds, l2_plan_t *pl) {
    const char *why = l2_plan(p, bs, fn, bn_vec_width(p->h.dtype, p->C), 0, keep, pl);
    if (!why) pl->K = (int)clamp_long(ceil_div(pl->gy, adds), 1, p->sum_copies);  // adds: blocks a copy, at most
    return why;
}
// The block size of the plans of kernels 9-11 and 13: 16 threads a 16-byte pack of the row, and a thread for every
// `per` packs of the rows an SM; a power of two within [32, cap] (the launch bounds, or where larger stopped paying).
static int l2_sums_block(const bn_problem_t *p, double per, int cap) {
    const long nvec = p->C / bn_vec_width(p->h.dtype, p->C);
    return pow2_at_least(fmax(16.0 * nvec, per_sm((double)p->M) * nvec / per), 32, cap);
}
// Kernel 9, 10, 11 or 13 to the supports() and launch() below: its instance, and keep and adds as its plan's.
typedef struct { const void *(*instance)(const bn_problem_t *); int keep, adds; } l2_rung_t;
static const char *l2_sums_supports(const void *pp, int bs, const l2_rung_t *r) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    l2_plan_t pl = {};
    return l2_sums_plan(p, bs, r->instance(p), r->keep, r->adds, &pl);
}
static void launch_sums_in_l2(const void *pp, launch_t *l, const l2_rung_t *r) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    const void *fn = r->instance(p);
    l2_plan_t pl = {};
    if (l2_sums_plan(p, l->block_size, fn, r->keep, r->adds, &pl)) return;  // the rung's supports said why
    bn_args_t a = bn_args(p);
    double *sums = p->sums;
    unsigned *ticket = p->counters + p->C;
    void *args[] = {(void *)&a, (void *)&sums, (void *)&ticket, (void *)&pl.K, (void *)&pl.G,
                    (void *)&pl.rows_per_block, (void *)&pl.sm_floats, (void *)&pl.keep_rows};
    CUDA_CHECK(cudaLaunchCooperativeKernel(fn, dim3((unsigned)pl.gx, (unsigned)pl.gy), dim3(l->block_size), args,
                                           pl.smem, 0));
    char kept[40] = "";
    if (r->keep) snprintf(kept, sizeof kept, ", %ld kept on chip", std::min(pl.keep_rows, pl.rows_per_block));
    snprintf(l->path, sizeof l->path,
             "two passes, one grid sync: %ld x %ld blocks, %ld rows each%s, %d copies of the sums", pl.gx, pl.gy,
             pl.rows_per_block, kept, pl.K);
}
static const l2_rung_t k_rung9 = {l2_one_sync_instance, 0, ONE_SYNC_ADDS_PER_COPY};
static void launch_l2_one_sync(const void *pp, launch_t *l) { launch_sums_in_l2(pp, l, &k_rung9); }
static const char *supports_l2_one_sync(const void *pp, int bs) { return l2_sums_supports(pp, bs, &k_rung9); }
// The plan: l2_sums_block at 8 threads a pack of the rows an SM, up to 512 (more blocks an SM than 10's two).
static int plan_l2_one_sync(const void *pp) {
    return plan_fit(pp, l2_sums_block((const bn_problem_t *)pp, 1.0 / 8, 512), supports_l2_one_sync);
}

// ------------------------------------------------------------------------------------------------
// Kernel 10: kernel 9 with the first rows of each block's slice (the first evicted from L2) also kept in shared memory
// as they are summed (half an SM's each, two blocks an SM); the normalize takes them from there after the rest.
// Improves (over 9): less of the second read from DRAM: 64.2% -> 76.3% of the copy at fp32 [65536, 256].
// Wrong: at most ~25 MB kept over the GPU (level with 9 where x is many times L2); the stores slow the first pass.
template <typename T, int VEC>
__global__ void __launch_bounds__(512, 2) batchnorm_l2_keep_front_kernel(
    bn_args_t a, double *sums, unsigned *ticket, int K, int G, long rows_per_block, int sm_floats, long keep_rows) {
    l2_one_sync_body<T, VEC, true, false>(a, sums, ticket, K, G, rows_per_block, sm_floats, keep_rows);
}
static const void *l2_keep_front_instance(const bn_problem_t *p) {
    return bn_instance(p, p->C, [](auto t, auto v) { return batchnorm_l2_keep_front_kernel<decltype(t), v.value>; });
}
static const l2_rung_t k_rung10 = {l2_keep_front_instance, 1, ONE_SYNC_ADDS_PER_COPY};
static void launch_l2_keep_front(const void *pp, launch_t *l) { launch_sums_in_l2(pp, l, &k_rung10); }
static const char *supports_l2_keep_front(const void *pp, int bs) { return l2_sums_supports(pp, bs, &k_rung10); }
// The plan: l2_sums_block at a thread for 32 packs of the rows an SM, up to 256 (512 was within 3% where it won).
static int plan_l2_keep_front(const void *pp) {
    return plan_fit(pp, l2_sums_block((const bn_problem_t *)pp, 32, 256), supports_l2_keep_front);
}

// ------------------------------------------------------------------------------------------------
// Kernel 11: kernel 10 with the block's sums added as a copy writes them (thread i: sum i / nc of channel i % nc from
// shared memory): 8 sectors a warp, not 32, in L2's atomic units; with cheaper adds, fewer copies of the sums.
// Improves (over 10, % of the copy): bf16 [65536, 256] 59.0 -> 62.1, NHWC 32x256x56x56 66.3 -> 69.3.
// Wrong: in fp32 it is 3-4 points behind 10 (not explained); the 16-bit first pass still waits on its loads (13).
template <typename T, int VEC>
__global__ void __launch_bounds__(512, 2) batchnorm_l2_coalesced_sums_kernel(
    bn_args_t a, double *sums, unsigned *ticket, int K, int G, long rows_per_block, int sm_floats, long keep_rows) {
    l2_one_sync_body<T, VEC, true, true>(a, sums, ticket, K, G, rows_per_block, sm_floats, keep_rows);
}
static const void *l2_coalesced_sums_instance(const bn_problem_t *p) {
    return bn_instance(p, p->C,
                       [](auto t, auto v) { return batchnorm_l2_coalesced_sums_kernel<decltype(t), v.value>; });
}
static const l2_rung_t k_rung11 = {l2_coalesced_sums_instance, 1, COALESCED_ADDS_PER_COPY};
static void launch_l2_coalesced_sums(const void *pp, launch_t *l) { launch_sums_in_l2(pp, l, &k_rung11); }
static const char *supports_l2_coalesced_sums(const void *pp, int bs) { return l2_sums_supports(pp, bs, &k_rung11); }
// The plan: 10's.
static int plan_l2_coalesced_sums(const void *pp) {
    return plan_fit(pp, l2_sums_block((const bn_problem_t *)pp, 32, 256), supports_l2_coalesced_sums);
}

// ------------------------------------------------------------------------------------------------
// Kernel 12: inference, y = (x - running_mean) * rsqrt(running_var + eps) * gamma + beta, shaped like the copy: NCHW
// a 16-byte pack of the flat tensor a thread, channels contiguous a pack column in R rows (4 in 16 bits, 1 in fp32).
// Improves: inference at the copy's pace, the shape of torch.compile's kernel: 93-99.7% of the copy.
// Wrong: blocks of at most INFER_MAX_BS threads (its launch bounds); odd C channels-contiguous takes narrow packs.
#define INFER_MAX_BS 256
// The scale and shift of channels c..c+V-1 from the running statistics (c a multiple of V).
template <int V> __device__ __forceinline__ void bn_infer_scale_shift(const bn_args_t &a, long c, float *k, float *sh) {
    float m[V], v[V], g[V], b[V];
    if (V % 4 == 0) {  // 16-byte aligned: c is a multiple of 4
#pragma unroll
        for (int j = 0; j < V; j += 4) {
            float4_to(__ldg(reinterpret_cast<const float4 *>(a.run_mean + c + j)), m + j);
            float4_to(__ldg(reinterpret_cast<const float4 *>(a.run_var + c + j)), v + j);
            float4_to(__ldg(reinterpret_cast<const float4 *>(a.gamma + c + j)), g + j);
            float4_to(__ldg(reinterpret_cast<const float4 *>(a.beta + c + j)), b + j);
        }
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) {
            m[j] = __ldg(a.run_mean + c + j);
            v[j] = __ldg(a.run_var + c + j);
            g[j] = __ldg(a.gamma + c + j);
            b[j] = __ldg(a.beta + c + j);
        }
    }
#pragma unroll
    for (int j = 0; j < V; j++) {
        k[j] = rsqrtf(v[j] + a.eps) * g[j];
        sh[j] = fmaf(-m[j], k[j], b[j]);
    }
}
// NCHW as the copy sees it, flat 16-byte packs over the tensor: a thread finds its pack's first channel once (one
// division) and steps to the next where a plane ends inside the pack (planes of any H*W, 7x7 included).
template <typename T, int VEC>
__global__ void __launch_bounds__(INFER_MAX_BS) batchnorm_infer_elementwise_nchw_kernel(bn_args_t a, long total, long HW) {
    const long e0 = (blockIdx.x * (long)blockDim.x + threadIdx.x) * VEC;
    if (e0 >= total) return;
    const T *__restrict__ x = (const T *)a.x;
    T *__restrict__ y = (T *)a.y;
    long o = e0 % HW, c = e0 / HW % a.C;
    float k, sh;
    bn_infer_scale_shift<1>(a, c, &k, &sh);
    const int n = e0 + VEC <= total ? VEC : (int)(total - e0);  // the tensor's last pack may be short
    Pack<T, VEC> in, out;
    if (n == VEC) in = raw_pack<T, VEC>(load_raw<T, VEC>(x + e0));
    else
#pragma unroll
        for (int j = 0; j < VEC; j++) in.v[j] = j < n ? x[e0 + j] : T{};
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        if (o == HW) {  // the next plane: the next channel (after the last, the next image's first)
            o = 0, c = c + 1 == a.C ? 0 : c + 1;
            bn_infer_scale_shift<1>(a, c, &k, &sh);
        }
        out.v[j] = from_float<T>(fmaf(to_float(in.v[j]), k, sh));
        o++;
    }
    if (n == VEC) store_pack<T, VEC>(y + e0, out);
    else
#pragma unroll
        for (int j = 0; j < VEC; j++)
            if (j < n) y[e0 + j] = out.v[j];
}
template <typename T, int VEC, int R>
__global__ void __launch_bounds__(INFER_MAX_BS) batchnorm_infer_elementwise_cl_kernel(bn_args_t a) {
    const long C = a.C, M = a.M, nvec = C / VEC, i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    const long c = i % nvec * VEC, r0 = i / nvec * R;
    if (r0 >= M) return;
    const T *__restrict__ x = (const T *)a.x;
    T *__restrict__ y = (T *)a.y;
    RawPack<T, VEC> p[R];
#pragma unroll
    for (int u = 0; u < R; u++)
        if (r0 + u < M) p[u] = load_raw<T, VEC>(x + (r0 + u) * C + c);
    float k[VEC], sh[VEC];
    bn_infer_scale_shift<VEC>(a, c, k, sh);
#pragma unroll
    for (int u = 0; u < R; u++) {
        if (r0 + u >= M) continue;
        Pack<T, VEC> in = raw_pack<T, VEC>(p[u]), out;
#pragma unroll
        for (int j = 0; j < VEC; j++) out.v[j] = from_float<T>(fmaf(to_float(in.v[j]), k[j], sh[j]));
        store_pack<T, VEC>(y + (r0 + u) * C + c, out);
    }
}
// A thread per pack (NCHW) or per pack column and R rows (channels contiguous).
template <typename T, int VEC> static void launch_infer_elementwise_nchw_t(const bn_problem_t *p, int bs) {
    const long total = p->M * p->C;
    batchnorm_infer_elementwise_nchw_kernel<T, VEC><<<(unsigned)ceil_div(total, (long)VEC * bs), bs>>>(bn_args(p), total, p->HW);
}
template <typename T, int VEC> static void launch_infer_elementwise_cl_t(const bn_problem_t *p, int bs) {
    constexpr int R = sizeof(T) == 2 ? 4 : 1;
    long threads = p->C / VEC * ceil_div(p->M, R);
    batchnorm_infer_elementwise_cl_kernel<T, VEC, R><<<(unsigned)ceil_div(threads, bs), bs>>>(bn_args(p));
}
static void launch_infer_elementwise(const void *pp, launch_t *l) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    dtype_t d = p->h.dtype;
    int bs = l->block_size, cl = p->layout != LAYOUT_NCHW || p->HW == 1;  // [M, C] in memory
    int vec = cl ? bn_vec_width(d, p->C) : 16 / (int)dtype_size(d);
    if (cl) {
        DISPATCH_VEC(d, vec, launch_infer_elementwise_cl_t, p, bs);
        snprintf(l->path, sizeof l->path, "elementwise over [M, C], %d-wide packs, %s a thread", vec,
                 dtype_size(d) == 2 ? "4 rows" : "1 row");
    } else {  // 16-byte packs whatever H*W: one instance a dtype
        PACK16_CALL(d, launch_infer_elementwise_nchw_t, p, bs);
        snprintf(l->path, sizeof l->path, "elementwise over NCHW as flat %d-wide packs, one a thread", vec);
    }
    l->block_used = bs;
}
static const char *supports_infer_elementwise(const void *pp, int bs) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    if (p->training) return "an inference kernel (y from the running statistics): training runs in kernels 1-11 and 13";
    if (bs > INFER_MAX_BS)
        return reasonf("%d threads: the kernels are built for blocks of at most %d (__launch_bounds__)", bs,
                       INFER_MAX_BS);
    return NULL;
}
// The plan: blocks of twice the launch's threads an SM, a power of two within [64, 256] (256 where the grid is many
// waves; fewer where the launch is a few threads an SM, so that more SMs take part).
static int plan_infer_elementwise(const void *pp) {
    const bn_problem_t *p = (const bn_problem_t *)pp;
    const dtype_t d = p->h.dtype;
    const double threads = p->layout != LAYOUT_NCHW || p->HW == 1
                               ? (double)(p->C / bn_vec_width(d, p->C)) * ceil_div(p->M, dtype_size(d) == 2 ? 4 : 1)
                               : (double)p->M * p->C / (16 / dtype_size(d));
    return pow2_at_least(2.0 * per_sm(threads), 64, INFER_MAX_BS);
}

// ------------------------------------------------------------------------------------------------
// Kernel 13: kernel 11 with all 8 of its first pass's 16-byte loads in flight in every dtype: 11's bounds (512 threads,
// 2 an SM: 64 registers) leave 16-bit packs 2-4; at 256 threads, 2 an SM: 126 registers, no spills.
// Improves (over 11, % of the copy, each at its best block): bf16 [65536, 256] 62.6 -> 67.4, fp32 73.0 -> 76.6.
// Wrong: the passes still do not overlap; its normalize (4 rows a thread) has half 11's bytes in flight; blocks <= 256.
#define LOADS_IN_FLIGHT 8
template <typename T, int VEC>
__global__ void __launch_bounds__(256, 2) batchnorm_l2_loads_in_flight_kernel(
    bn_args_t a, double *sums, unsigned *ticket, int K, int G, long rows_per_block, int sm_floats, long keep_rows) {
    l2_one_sync_body<T, VEC, true, true, LOADS_IN_FLIGHT>(a, sums, ticket, K, G, rows_per_block, sm_floats, keep_rows);
}
static const void *l2_loads_in_flight_instance(const bn_problem_t *p) {
    return bn_instance(p, p->C,
                       [](auto t, auto v) { return batchnorm_l2_loads_in_flight_kernel<decltype(t), v.value>; });
}
static const l2_rung_t k_rung13 = {l2_loads_in_flight_instance, 1, COALESCED_ADDS_PER_COPY};
static void launch_l2_loads_in_flight(const void *pp, launch_t *l) { launch_sums_in_l2(pp, l, &k_rung13); }
static const char *supports_l2_loads_in_flight(const void *pp, int bs) { return l2_sums_supports(pp, bs, &k_rung13); }
// The plan: 10's (256 is its launch bounds).
static int plan_l2_loads_in_flight(const void *pp) {
    return plan_fit(pp, l2_sums_block((const bn_problem_t *)pp, 32, 256), supports_l2_loads_in_flight);
}

// ------------------------------------------------------------------------------------------------
// Kernel 14, dispatch: no kernel of its own. The rule of regimes (k_regimes, harness/dispatch.h) that
// scripts/tune_dispatch.py derives from the rungs' dense sweep: each row a region (element size, variant: channels
// contiguous as N*H*W rows of C or NCHW as N*C rows of a plane, training or inference; packs, rows an SM, plane) and
// its rung; the first row that holds the problem and whose rung takes it decides, at the rung's plan (or --block-size).
// NCHW with H*W = 1 runs as its [N, C] view.
// Improves: one entry point for every layout, mode and dtype, at the rung its region runs fastest.
// Wrong: a region's rung is the best on average, not at each point; the kind of launch is not in the rule.
static const regime_t k_regimes[] = {
    // regimes: begin (scripts/tune_dispatch.py batchnorm --write, from the stored dense sweep; do not edit)
    // bytes, 16-byte packs, variants, launches, packs a row [lo, hi), rows an SM [lo, hi), H*W [lo, hi), rung
    {0, -1, TVB(TV_BN_CL), 0, 0, RG_ANY, 0, 2, 0, RG_ANY, 4, "variant cl, rows an SM < 2"},
    {0, -1, TVB(TV_BN_CL), 0, 0, 16, 2, 2896.31, 0, RG_ANY, 13, "variant cl, packs a row < 16, 2 <= rows an SM < 2896"},
    {0, -1, TVB(TV_BN_CL), 0, 16, 1024, 2, 362.039, 0, RG_ANY, 13, "variant cl, 16 <= packs a row < 1024, 2 <= rows an SM < 362"},
    {0, -1, TVB(TV_BN_CL), 0, 16, 1024, 362.039, 2896.31, 0, RG_ANY, 9, "variant cl, 16 <= packs a row < 1024, 362 <= rows an SM < 2896"},
    {0, -1, TVB(TV_BN_CL), 0, 0, 1024, 2896.31, 8192, 0, RG_ANY, 9, "variant cl, packs a row < 1024, 2896 <= rows an SM < 8192"},
    {0, -1, TVB(TV_BN_CL), 0, 1024, RG_ANY, 2, 8192, 0, RG_ANY, 9, "variant cl, packs a row >= 1024, 2 <= rows an SM < 8192"},
    {0, -1, TVB(TV_BN_CL), 0, 0, RG_ANY, 8192, RG_ANY, 0, RG_ANY, 5, "variant cl, rows an SM >= 8192"},
    {0, -1, TVB(TV_BN_CL_INF), 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 12, "variant cl_inf"},
    {0, -1, TVB(TV_BN_NCHW), 0, 0, RG_ANY, 0, 362.039, 0, RG_ANY, 8, "variant nchw, rows an SM < 362"},
    {0, -1, TVB(TV_BN_NCHW), 0, 0, 90.5097, 362.039, RG_ANY, 0, RG_ANY, 6, "variant nchw, packs a row < 90.51, rows an SM >= 362"},
    {0, -1, TVB(TV_BN_NCHW), 0, 90.5097, RG_ANY, 362.039, RG_ANY, 0, RG_ANY, 8, "variant nchw, packs a row >= 90.51, rows an SM >= 362"},
    {0, -1, TVB(TV_BN_NCHW_INF), 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 12, "variant nchw_inf"},
    {0, -1, TVB(TV_BN_CL_INF) | TVB(TV_BN_NCHW_INF), 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 12, "variant cl_inf/nchw_inf"},
    {0, -1, TVB(TV_BN_CL), 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 5, "variant cl"},
    {0, -1, TVB(TV_BN_NCHW), 0, 0, RG_ANY, 0, RG_ANY, 0, RG_ANY, 6, "variant nchw"},
    // regimes: end
};
// The registry entry of a rung (defined below the registry).
static const kernel_t *ladder_rung(int k);
static const char *regime_supports(const void *pp, int rung, int bs) {
    return rung_supports(ladder_rung(rung), pp, ((const bn_problem_t *)pp)->h.dtype, bs);
}
// What the dispatcher runs: the regime (NULL: none takes the problem), its 1-based row, the problem its rung runs.
typedef struct {
    const regime_t *r;
    int at;
    bn_problem_t view;      // NCHW with H*W = 1 as [N, C]
    const bn_problem_t *q;  // p or &view
} bn_choice_t;
// The key of the problem the rung runs (scripts/regimes.py's features()): channels contiguous as M = N*H*W rows of
// C, 16-byte packs where C takes them; NCHW as N*C rows of a plane of H*W, 16-byte packs where the plane takes them.
static regime_key_t dispatch_key(const bn_problem_t *q) {
    const int nchw = q->layout == LAYOUT_NCHW, bytes = (int)dtype_size(q->h.dtype), vec = 16 / bytes;
    const int variant = nchw ? (q->training ? TV_BN_NCHW : TV_BN_NCHW_INF) : (q->training ? TV_BN_CL : TV_BN_CL_INF);
    return regime_key(bytes, nchw ? q->HW % vec == 0 : q->C % vec == 0, variant, q->C, nchw ? q->N * q->C : q->M,
                      nchw ? q->HW : 1);
}
static void dispatch_for(const bn_problem_t *p, int req_bs, bn_choice_t *c) {
    memset(c, 0, sizeof *c);
    c->q = p;
    if (p->layout == LAYOUT_NCHW && p->HW == 1) {  // the same memory: M = N rows of C channels
        c->view = *p;
        c->view.layout = LAYOUT_NC;
        c->q = &c->view;
    }
    const bn_problem_t *q = c->q;
    const regime_key_t key = dispatch_key(q);
    c->r = regime_pick(k_regimes, (int)(sizeof k_regimes / sizeof k_regimes[0]), &key, req_bs, q, regime_supports,
                       &c->at);
    c->at += 1;
}
static const char *supports_dispatch(const void *pp, int bs) {
    bn_choice_t c;
    dispatch_for((const bn_problem_t *)pp, bs, &c);
    if (c.r) return NULL;
    if (!bs) return NO_REGIME;
    // a --block-size no rung of the problem's rows takes: the reason of its last row's rung (the catch-all's)
    const regime_key_t key = dispatch_key(c.q);
    const char *why = NO_REGIME;
    for (size_t i = 0; i < sizeof k_regimes / sizeof k_regimes[0]; i++)
        if (regime_holds(&k_regimes[i], &key)) why = regime_supports(c.q, k_regimes[i].rung, bs);
    return why ? why : NO_REGIME;
}
static void launch_dispatch(const void *pp, launch_t *l) {
    bn_choice_t c;
    dispatch_for((const bn_problem_t *)pp, l->block_size, &c);
    regime_launch(c.r, c.at, c.r ? ladder_rung(c.r->rung) : NULL, c.q, l, c.q != pp ? ", on the [N, C] view" : "");
}

// ------------------------------------------------------------------------------------------------
// The registry (keep it, the header comment and --list in agreement).
#define FP32_ONLY DT_BIT(DT_FP32)
static const kernel_t k_kernels[] = {
    {0, "cudnn", DT_ALL, "all; training needs NHW>=2",
     "cuDNN 9, the fastest of its legacy BatchNorm calls and modes and its graph API's batch norm", 1,
     CUDNN_FNS(supports_cudnn, launch_cudnn)},
    {1, "thread_per_channel", FP32_ONLY, "[N,C], NHWC; training",
     "one thread per channel walking down all rows: coalesced across channels, only C threads", 0,
     supports_thread_per_channel,
     launch_thread_per_channel},
    {2, "block_per_channel", FP32_ONLY, "[N,C], NHWC; training",
     "one block per channel reading down its column: strided, uncoalesced reads", 0, supports_block_per_channel,
     launch_block_per_channel},
    {3, "atomic_partials", FP32_ONLY, "[N,C], NHWC; training; NHW>=16",
     "partial sums and squares from many blocks, accumulated with global atomics", 0, supports_atomic_partials,
     launch_atomic_partials},
    {4, "2d_block_column", DT_ALL, "[N,C], NHWC; training",
     "2-D blocks: lanes across channels, warps across rows, shared-memory merge; one column of blocks", 0,
     supports_2d_block_column, launch_2d_block_column, 0, plan_2d_block_column},
    {5, "split_rows", DT_ALL, "[N,C], NHWC; training",
     "rows split over many blocks: shifted-sum partials, a finalize kernel (a block per 32 channels), a normalize "
     "pass", 0, supports_cl, launch_split_rows, 0, plan_split_rows},
    {6, "nchw_split_planes", DT_ALL, "NCHW; training",
     "NCHW: vectorized reductions over each channel's planes, split over many blocks", 0, supports_nchw_split_planes,
     launch_nchw_split_planes, 0, plan_nchw_split_planes},
    {7, "l2_two_pass", DT_ALL, "[N,C], NHWC; training",
     "5's two passes in one cooperative launch: grid syncs around the combine, the second read of x from L2", 0,
     supports_l2_two_pass, launch_l2_two_pass, 0, plan_l2_two_pass},
    {8, "nchw_cluster_l2", DT_ALL, "NCHW; training; sm_90",
     "NCHW: a channel per thread-block cluster, its sums combined through distributed shared memory, the second "
     "read from L2", 0, supports_nchw_cluster_l2, launch_nchw_cluster_l2, 0, plan_nchw_cluster_l2},
    {9, "l2_one_sync", DT_ALL, "[N,C], NHWC; training",
     "7 with the per-channel sums added by L2 atomics: one grid sync, no combine phase", 0, supports_l2_one_sync,
     launch_l2_one_sync, 0, plan_l2_one_sync},
    {10, "l2_keep_front", DT_ALL, "[N,C], NHWC; training",
     "9 with the first rows of each block's slice kept in shared memory: less of x re-read from DRAM", 0,
     supports_l2_keep_front, launch_l2_keep_front, 0, plan_l2_keep_front},
    {11, "l2_coalesced_sums", DT_ALL, "[N,C], NHWC; training",
     "10 with the block's sums added by consecutive threads (4x fewer L2 atomic sectors), fewer copies", 0,
     supports_l2_coalesced_sums, launch_l2_coalesced_sums, 0, plan_l2_coalesced_sums},
    {12, "infer_elementwise", DT_ALL, "all; inference; block<=256",
     "inference: y from the running statistics, elementwise and shaped like the copy, every layout", 0,
     supports_infer_elementwise, launch_infer_elementwise, 0, plan_infer_elementwise},
    {13, "l2_loads_in_flight", DT_ALL, "[N,C], NHWC; training; block<=256",
     "11 bounded at 256 threads a block: 126 registers hold its 8 loads in flight in every dtype", 0,
     supports_l2_loads_in_flight, launch_l2_loads_in_flight, 0, plan_l2_loads_in_flight},
    {14, "dispatch", DT_ALL, "all layouts and modes",
     "picks the rung by a rule of regimes from the rungs' dense sweep, each rung at its plan's block size; says "
     "which ran", 1, supports_dispatch, launch_dispatch},
};
static const kernel_t *ladder_rung(int k) { return &k_kernels[k]; }

// ------------------------------------------------------------------------------------------------
// Options, setup, reference, reset, teardown.
static const extra_option_t k_extra[] = {
    {"layout", required_argument,
     "--layout L        nc ([N, C], the default) | nchw | nhwc (images: with --height/--width)"},
    {"height", required_argument,
     "--height H        image height H (nchw/nhwc; long option only: -h is help; default 1)"},
    {"width", required_argument, "--width W         image width W (nchw/nhwc; default 1)"},
    {"momentum", required_argument, "--momentum M      running-statistics momentum in [0, 1] (default 0.1)"},
    {"eps", required_argument, "--eps E           epsilon (default 1e-5)"},
    {"inference", no_argument,
     "--inference       y from the running statistics (inference) instead of batch statistics"},
};
enum { X_LAYOUT, X_HEIGHT, X_WIDTH, X_MOMENTUM, X_EPS, X_INFERENCE };
static const char *parse_extra(int index, const char *arg) {
    long v;
    double d;
    switch (index) {
    case X_LAYOUT:
        if (strcmp(arg, "nc") == 0) g_layout = LAYOUT_NC;
        else if (strcmp(arg, "nchw") == 0) g_layout = LAYOUT_NCHW;
        else if (strcmp(arg, "nhwc") == 0) g_layout = LAYOUT_NHWC;
        else return reasonf("invalid layout '%s' (--layout: nc, nchw or nhwc)", arg);
        return NULL;
    case X_HEIGHT:
    case X_WIDTH:
        if (parse_long(arg, 1, 1L << 31, &v))
            return reasonf("invalid %s '%s' (--%s: a positive integer)", index == X_HEIGHT ? "height" : "width", arg,
                           index == X_HEIGHT ? "height" : "width");
        if (index == X_HEIGHT) g_height = v;
        else g_width = v;
        g_hw_set = 1;
        return NULL;
    case X_MOMENTUM:
        if (parse_double(arg, &d) || d < 0 || d > 1)
            return reasonf("invalid momentum '%s' (--momentum: a number in [0, 1])", arg);
        g_momentum = d;
        return NULL;
    case X_EPS:
        if (parse_double(arg, &d) || d < 0)
            return reasonf("invalid eps '%s' (--eps: a number >= 0 within fp32's range)", arg);
        g_eps = d;
        return NULL;
    default:
        g_inference = 1;
        return NULL;
    }
}
static const char *check_options(const options_t *o) {
    if (o->bt_set) return "-B/-T do not apply here: the batch is -N";
    if (g_layout == LAYOUT_NC && g_hw_set) return "--height/--width need an image layout (--layout nchw or nhwc)";
    double numel = (double)o->rows * (double)o->cols * (double)g_height * (double)g_width;
    if (numel > 4e9)
        return reasonf("shape %ldx%ldx%ldx%ld too large (N*C*H*W must stay below 4e9 elements)", o->rows, o->cols,
                       g_height, g_width);
    return NULL;
}
// The CSV shape, the human shape line and the bytes counted (see the header), from the problem's fields.
static void bn_describe(bn_problem_t *p) {
    const char *mode = p->training ? "" : ":inf", *run = p->training ? "training" : "inference";
    if (p->layout == LAYOUT_NC) {
        snprintf(p->h.shape, sizeof p->h.shape, "%ldx%ld%s", p->N, p->C, mode);
        snprintf(p->h.shape_desc, sizeof p->h.shape_desc, "[N, C] N %ld C %ld | %s", p->N, p->C, run);
    } else {
        snprintf(p->h.shape, sizeof p->h.shape, "%ldx%ldx%ldx%ld:%s%s", p->N, p->C, p->H, p->W,
                 layout_name(p->layout), mode);
        snprintf(p->h.shape_desc, sizeof p->h.shape_desc, "%s N %ld C %ld H %ld W %ld | %s",
                 p->layout == LAYOUT_NCHW ? "NCHW" : "NHWC", p->N, p->C, p->H, p->W, run);
    }
    double numel = (double)p->M * p->C;
    // x, y; gamma, beta, the running statistics read; training: save_mean, save_invstd, the running statistics written
    p->h.bytes = 2.0 * numel * dtype_size(p->h.dtype) + (p->training ? 8.0 : 4.0) * sizeof(float) * p->C;
}
static problem_t *bn_setup(const options_t *o) {
    bn_problem_t *p = (bn_problem_t *)calloc(1, sizeof *p);
    dtype_t d = o->dtype;
    size_t es = dtype_size(d);
    p->layout = g_layout, p->N = o->rows, p->C = o->cols, p->H = g_height, p->W = g_width;
    p->HW = p->H * p->W, p->M = p->N * p->HW;
    p->training = !g_inference, p->eps = (float)g_eps, p->momentum = (float)g_momentum, p->h.dtype = d;
    bn_describe(p);
    long N = p->N, C = p->C, numel = p->M * C;
    p->x = dev_alloc(numel * es), p->y = dev_alloc(numel * es);
    float **stats[] = {&p->gamma,    &p->beta,    &p->save_mean,  &p->save_invstd,
                       &p->run_mean, &p->run_var, &p->run_mean0, &p->run_var0};
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++) *stats[i] = (float *)dev_alloc(C * sizeof(float));
    auto dev_zeros = [](size_t bytes) { void *q = dev_alloc(bytes); CUDA_CHECK(cudaMemset(q, 0, bytes)); return q; };
    p->ws_states = (long)g_dev.prop.multiProcessorCount * 16384 + C;
    p->ws_mean = (float *)dev_zeros(2 * (size_t)p->ws_states * sizeof(float));
    p->ws_m2 = p->ws_mean + p->ws_states;
    p->counters = (unsigned *)dev_zeros((C + 1) * sizeof(unsigned));
    // kernel 9 has a plan only where C / 8 packs of channels fit one wave of blocks (C < 2^17 on any GPU so far)
    p->sum_copies = C < (1L << 17) ? SUM_COPIES_MAX : 1;
    p->sums = (double *)dev_zeros(p->sum_copies * 2 * (size_t)C * sizeof(double));
    p->hx = host_alloc_doubles(numel), p->hgamma = host_alloc_doubles(C), p->hbeta = host_alloc_doubles(C);
    p->hrm0 = host_alloc_doubles(C), p->hrv0 = host_alloc_doubles(C);
    fill_normal(p->x, p->hx, numel, d, o->seed, 0, o->input_mean, o->input_std);
    fill_normal(p->gamma, p->hgamma, C, DT_FP32, o->seed, 1, 1.0, 0.25);
    fill_normal(p->beta, p->hbeta, C, DT_FP32, o->seed, 2, 0.0, 0.25);
    fill_normal(p->run_mean0, p->hrm0, C, DT_FP32, o->seed, 3, 0.0, 0.5);
    fill_normal(p->run_var0, p->hrv0, C, DT_FP32, o->seed, 4, 0.0, 0.5);
    float *rv = (float *)malloc(C * sizeof(float));  // running_var = 1 + |N(0, 0.5)|, in fp32 on the host
    for (long c = 0; c < C; c++) p->hrv0[c] = rv[c] = 1.0f + fabsf((float)p->hrv0[c]);
    CUDA_CHECK(cudaMemcpy(p->run_var0, rv, C * sizeof(float), cudaMemcpyHostToDevice));
    free(rv);
    CUDA_CHECK(cudaMemcpy(p->run_mean, p->run_mean0, C * sizeof(float), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(p->run_var, p->run_var0, C * sizeof(float), cudaMemcpyDeviceToDevice));
    long yrows = p->layout == LAYOUT_NCHW ? N * C : p->M, ycols = p->layout == LAYOUT_NCHW ? p->HW : C;
    tolerance_t ts = tolerance_for(DT_FP32);
    p->h.out[0] = (output_t){"y", p->y, d, yrows, ycols, host_alloc_doubles(numel), tolerance_for(d), NULL};
    p->h.n_out = 1;
    if (p->training) {
        p->h.out[1] = (output_t){"save_mean", p->save_mean, DT_FP32, 1, C, host_alloc_doubles(C), ts, NULL};
        p->h.out[2] = (output_t){"save_invstd", p->save_invstd, DT_FP32, 1, C, host_alloc_doubles(C), ts, NULL};
        p->h.out[3] = (output_t){"running_mean", p->run_mean, DT_FP32, 1, C, host_alloc_doubles(C), ts, NULL};
        p->h.out[4] = (output_t){"running_var", p->run_var, DT_FP32, 1, C, host_alloc_doubles(C), ts, NULL};
        p->h.n_out = 5;
    }
    return &p->h;
}
// The error no fp32 kernel avoids: the mean is an fp32 number, so x - mean is off by up to an ulp or so of |mean|
// (more after a reduction), and y by that times invstd * |gamma|. Allowed: 16 ulps of it, over the worst channel.
static double batchnorm_y_atol(const double *mean, const double *invstd, const double *gamma, long C) {
    double worst = 0;
    for (long c = 0; c < C; c++) worst = fmax(worst, fabs(mean[c]) * invstd[c] * fabs(gamma[c]));
    return 16.0 * ldexp(1.0, -24) * worst;
}
static void bn_reference(problem_t *h) {
    bn_problem_t *p = (bn_problem_t *)h;
    double *rm = host_alloc_doubles(p->C), *rv = host_alloc_doubles(p->C);
    memcpy(rm, p->hrm0, p->C * sizeof(double));
    memcpy(rv, p->hrv0, p->C * sizeof(double));
    const int t = p->training;  // inference: save_mean and save_invstd are not outputs
    batchnorm_forward_cpu(h->out[0].ref, t ? h->out[1].ref : NULL, t ? h->out[2].ref : NULL, rm, rv, p->hx, p->hgamma,
                          p->hbeta, p->layout, p->N, p->C, p->HW, p->eps, p->momentum, t);
    if (t) {
        memcpy(h->out[3].ref, rm, p->C * sizeof(double));
        memcpy(h->out[4].ref, rv, p->C * sizeof(double));
        h->out[0].tol.atol += batchnorm_y_atol(h->out[1].ref, h->out[2].ref, p->hgamma, p->C);
    }
    free(rm);
    free(rv);
}
// Before each validation launch: the running statistics back to their initial values.
static void bn_reset(problem_t *h) {
    bn_problem_t *p = (bn_problem_t *)h;
    CUDA_CHECK(cudaMemcpy(p->run_mean, p->run_mean0, p->C * sizeof(float), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(p->run_var, p->run_var0, p->C * sizeof(float), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
}
static void bn_teardown(problem_t *h) {
    bn_problem_t *p = (bn_problem_t *)h;
    void *dev[] = {p->x, p->y, p->gamma, p->beta, p->save_mean, p->save_invstd, p->run_mean, p->run_var,
                   p->run_mean0, p->run_var0, p->ws_mean, p->counters, p->sums};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) CUDA_CHECK(cudaFree(dev[i]));
    for (int i = 0; i < h->n_out; i++) free(h->out[i].ref);
    void *host[] = {p->hx, p->hgamma, p->hbeta, p->hrm0, p->hrv0, p};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) free(host[i]);
}

static const program_t k_program = {
    "batchnorm", "batchnorm_forward",
    "BatchNorm forward (training: batch statistics, running-statistics update; --inference): -N is the batch N, "
    "-C the channels C",
    65536, 256,  // the default shape
    k_kernels, (int)(sizeof k_kernels / sizeof k_kernels[0]), 14,
    k_extra, (int)(sizeof k_extra / sizeof k_extra[0]), parse_extra, check_options,
    bn_setup, bn_reference, bn_teardown, bn_reset,
    "the batch N (-B/-T do not apply)", "channels C",
};

#ifndef NORM_NO_MAIN
int main(int argc, char **argv) { return bench_main(argc, argv, &k_program); }
#endif
