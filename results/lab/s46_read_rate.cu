// s46_read_rate: how fast one direction runs on this GPU (read only, write only) against the copy, by how the bytes
// are kept in flight. Built and run by results/lab/s46_read_rate.sh; not part of the programs.
//
// The programs' --phases probes (harness/measure.h) read or write one 16-byte vector a thread, a block per 256
// vectors, as the copy kernel does. On the H100 they run at 3.06 (read) and 3.28 TB/s (write) against a copy of
// 3.34; on the H200 at 3.26 and 3.28 against a copy of 4.47 (results/NOTES.md, session 46). Either the H200 cannot
// stream one direction faster, or those probes hold too few bytes in flight for its DRAM. Here the same read is
// done three ways: the probe's shape; a resident grid whose threads keep U 16-byte loads in flight (U = 2, 4: the
// sm_90 SASS issues the U loads before the first use; at U = 8 ptxas puts the XORs between them); a resident grid
// whose blocks keep S bulk copies (cp.async.bulk, the TMA engine) of Z bytes each in flight into shared memory,
// optionally read from there by every thread. Writes: the probe's shape and a grid-stride loop. The copy: the
// probe's shape and 4 vectors a thread. Each variant at each size: 3 warm-up launches, then 15 timed ones (CUDA
// events around each launch, so a launch's few microseconds of latency are in every time; where x fits in twice
// L2, 2 x L2 is written and another 3 x L2 read before each launch, as the programs flush: it starts with the
// buffer out of L2 and no dirty line to write back), the median; GB/s counts the bytes read plus those written.
//
// usage: s46_read_rate [MB ...]   (sizes of the buffer read, default 1024 64)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                        \
    do {                                                                                             \
        cudaError_t e_ = (x);                                                                        \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, "s46_read_rate: %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

// Every byte of the source is 0x3c, so every vector's XOR is 0 and `never` (1) is never met: the loads are kept
// (the compiler cannot know) and nothing is written.
__device__ __forceinline__ int fold(int4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

__global__ void read_one(const int4 *__restrict__ src, int4 *sink, size_t n, int never) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n && fold(src[i]) == never) *sink = src[i];
}
template <int U> __global__ void __launch_bounds__(512) read_unroll(const int4 *__restrict__ src, int4 *sink, size_t n, int never) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    int acc = 0;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        int4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; u++) acc ^= fold(v[u]);
    }
    for (; i < n; i += stride) acc ^= fold(src[i]);
    if (acc == never) *sink = make_int4(acc, 0, 0, 0);
}

__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void bulk_issue(unsigned dst, const void *src, unsigned bytes, unsigned bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}
// A block keeps `stages` chunks of `chunk` bytes in flight: thread 0 issues each chunk's bulk copy into its stage,
// every thread waits for the stage's mbarrier, reads the stage (consume) or not, and once all have, thread 0 issues
// the block's next chunk into it. Chunks go round the blocks: chunk c to block c % grid.
__global__ void read_bulk(const char *__restrict__ src, int4 *sink, size_t bytes, unsigned chunk, int stages,
                          int consume, int never) {
    extern __shared__ __align__(128) unsigned char stage_mem[];
    __shared__ __align__(8) unsigned long long bar[8];
    const size_t nchunks = bytes / chunk;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; s++) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_u32(&bar[s])));
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        for (int s = 0; s < stages; s++) {
            size_t c = blockIdx.x + (size_t)s * gridDim.x;
            if (c < nchunks) bulk_issue(smem_u32(stage_mem + (size_t)s * chunk), src + c * chunk, chunk, smem_u32(&bar[s]));
        }
    }
    __syncthreads();
    int acc = 0;
    for (size_t k = 0;; k++) {
        const size_t c = blockIdx.x + k * gridDim.x;
        if (c >= nchunks) break;
        const int s = (int)(k % stages);
        bar_wait(smem_u32(&bar[s]), (unsigned)((k / stages) & 1));
        if (consume) {
            const int4 *st = (const int4 *)(stage_mem + (size_t)s * chunk);
            for (unsigned o = threadIdx.x; o < chunk / 16; o += blockDim.x) acc ^= fold(st[o]);
        }
        __syncthreads();  // the stage is free again
        if (threadIdx.x == 0) {
            const size_t nxt = c + (size_t)stages * gridDim.x;
            if (nxt < nchunks) {
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the reads above before the copy's writes
                bulk_issue(smem_u32(stage_mem + (size_t)s * chunk), src + nxt * chunk, chunk, smem_u32(&bar[s]));
            }
        }
    }
    if (acc == never) *sink = make_int4(acc, 0, 0, 0);
}

__global__ void write_one(int4 *__restrict__ dst, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = make_int4(0x3c3c3c3c, 0x3c3c3c3c, 0x3c3c3c3c, 0x3c3c3c3c);
}
__global__ void write_stride(int4 *__restrict__ dst, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const int4 v = make_int4(0x3c3c3c3c, 0x3c3c3c3c, 0x3c3c3c3c, 0x3c3c3c3c);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = v;
}
__global__ void copy_one(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
template <int U> __global__ void __launch_bounds__(512) copy_unroll(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        int4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; u++) dst[i + u * stride] = v[u];
    }
    for (; i < n; i += stride) dst[i] = src[i];
}
__global__ void scrub(int4 *p, size_t n) {  // the flush's first half: write 2 x L2
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = make_int4((int)i, 0, 0, 0);
}

struct Ctx {
    int sms, l2;
    int4 *src, *dst, *sink, *flush;
    size_t flush_n;
    cudaEvent_t a, b;
};

// The median of 15 timed launches (after 3), each after the flush where `flush` is set; ms.
template <typename F> static double time_median(Ctx &c, bool flush, F launch) {
    std::vector<float> t;
    for (int r = 0; r < 18; r++) {
        if (flush) {  // as the programs flush: write 2 x L2, then read another 3 x L2, so that no dirty line of the
                      // flush is left in L2 to be written back while the timed kernel runs
            scrub<<<c.sms * 4, 512>>>(c.flush, c.flush_n / 5 * 2);
            read_unroll<4><<<c.sms * 4, 512>>>(c.flush + c.flush_n / 5 * 2, c.sink, c.flush_n / 5 * 3, 1);
        }
        CK(cudaEventRecord(c.a));
        launch();
        CK(cudaEventRecord(c.b));
        CK(cudaEventSynchronize(c.b));
        float ms;
        CK(cudaEventElapsedTime(&ms, c.a, c.b));
        if (r >= 3) t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char **argv) {
    std::vector<double> mbs;
    for (int i = 1; i < argc; i++) {
        char *end;
        double v = strtod(argv[i], &end);
        if (*end || v < 1 || v > 16384) {
            fprintf(stderr, "s46_read_rate: a size in MB from 1 to 16384, not '%s' (usage: s46_read_rate [MB ...])\n", argv[i]);
            return 2;
        }
        mbs.push_back(v);
    }
    if (mbs.empty()) mbs = {1024, 64};
    Ctx c;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    c.sms = p.multiProcessorCount;
    c.l2 = p.l2CacheSize;
    printf("device: %s | %d SMs | L2 %.0f MB\n", p.name, c.sms, c.l2 / 1e6);
    double maxmb = *std::max_element(mbs.begin(), mbs.end());
    size_t maxn = (size_t)(maxmb * 1e6 / 16);
    CK(cudaMalloc(&c.src, maxn * 16));
    CK(cudaMalloc(&c.dst, maxn * 16));
    CK(cudaMalloc(&c.sink, 16));
    c.flush_n = (size_t)5 * c.l2 / 16;
    CK(cudaMalloc(&c.flush, c.flush_n * 16));
    CK(cudaMemset(c.src, 0x3c, maxn * 16));
    CK(cudaEventCreate(&c.a));
    CK(cudaEventCreate(&c.b));
    CK(cudaFuncSetAttribute(read_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    const int never = 1;
    for (double mb : mbs) {
        const size_t n = (size_t)(mb * 1e6 / 16) / 2048 * 2048;  // whole 32 KB chunks
        const double bytes = n * 16.0;
        const bool flush = bytes < 2.0 * c.l2;
        const unsigned one = (unsigned)((n + 255) / 256);
        printf("\n%.1f MB read (and written by the copy), %s\n\n", bytes / 1e6,
               flush ? "L2 flushed before each launch" : "back to back (over twice L2)");
        printf("| variant | in flight an SM (at most) | us | GB/s | %% of the copy |\n|---|---|---:|---:|---:|\n");
        // the copy first: the rows after it are put against the faster of its two shapes
        double copy_one_ms = time_median(c, flush, [&] { copy_one<<<one, 256>>>(c.src, c.dst, n); });
        double copy_u4_ms = time_median(c, flush, [&] { copy_unroll<4><<<c.sms * 4, 512>>>(c.src, c.dst, n); });
        const double copy_gbps = 2 * bytes / (std::min(copy_one_ms, copy_u4_ms) * 1e-3) / 1e9;
        auto out = [&](const char *name, const char *flight, double moved, double ms) {
            double gbps = moved / (ms * 1e-3) / 1e9;
            printf("| %s | %s | %.2f | %.0f | %.1f%% |\n", name, flight, ms * 1e3, gbps, 100 * gbps / copy_gbps);
        };
        out("copy: a vector a thread, a block per 256 (the programs' copy)", "32 KB read", 2 * bytes, copy_one_ms);
        out("copy: 4 vectors a thread, 4 x 512 threads an SM", "128 KB read", 2 * bytes, copy_u4_ms);
        out("read: a vector a thread, a block per 256 (the --phases probe)", "32 KB",
            bytes, time_median(c, flush, [&] { read_one<<<one, 256>>>(c.src, c.sink, n, never); }));
        out("read: 2 vectors a thread, 4 x 512 threads an SM", "64 KB", bytes,
            time_median(c, flush, [&] { read_unroll<2><<<c.sms * 4, 512>>>(c.src, c.sink, n, never); }));
        out("read: 4 vectors a thread, 4 x 512 threads an SM", "128 KB", bytes,
            time_median(c, flush, [&] { read_unroll<4><<<c.sms * 4, 512>>>(c.src, c.sink, n, never); }));
        out("read: 4 vectors a thread, 2 x 512 threads an SM", "64 KB", bytes,
            time_median(c, flush, [&] { read_unroll<4><<<c.sms * 2, 512>>>(c.src, c.sink, n, never); }));
        struct { int blocks, stages; unsigned chunk; int consume; } bulk[] = {
            {1, 2, 16384, 0}, {1, 4, 16384, 0}, {2, 4, 16384, 0}, {1, 4, 32768, 0},
            {1, 6, 32768, 0}, {2, 3, 32768, 0}, {1, 4, 32768, 1}, {2, 4, 16384, 1}};
        for (auto &v : bulk) {
            char name[160], flight[64];
            snprintf(name, sizeof name, "read: bulk copies, %d block%s of 128 an SM, %d stages of %u KB%s", v.blocks,
                     v.blocks > 1 ? "s" : "", v.stages, v.chunk / 1024, v.consume ? ", read from shared memory" : "");
            snprintf(flight, sizeof flight, "%u KB", v.blocks * v.stages * v.chunk / 1024);
            const size_t smem = (size_t)v.stages * v.chunk;
            out(name, flight, bytes, time_median(c, flush, [&] {
                    read_bulk<<<c.sms * v.blocks, 128, smem>>>((const char *)c.src, c.sink, (size_t)bytes, v.chunk,
                                                              v.stages, v.consume, never);
                }));
        }
        out("write: a vector a thread, a block per 256 (the --phases probe)", "-", bytes,
            time_median(c, flush, [&] { write_one<<<one, 256>>>(c.dst, n); }));
        out("write: grid-stride, 4 x 512 threads an SM", "-", bytes,
            time_median(c, flush, [&] { write_stride<<<c.sms * 4, 512>>>(c.dst, n); }));
    }
    return 0;
}
