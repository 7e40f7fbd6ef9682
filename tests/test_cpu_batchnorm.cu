// CPU tests (no GPU needed) of batchnorm_forward: the reference against hand cases and an independent float64
// oracle, the running-statistics update, the three layouts on the same logical tensor, inference, the shape
// strings and bytes counted, the skip rules that need no GPU, option parsing (the accepting paths and the
// messages of the op's own checks; exits are tested from the shell), and the registry. The common harness
// (validator, inputs) is tested by test_cpu_layernorm. Prints "PASS name" / "FAIL name: why"; exits non-zero
// on failure.
#define NORM_NO_MAIN
#include "../batchnorm_forward.cu"

#include "test_util.h"
#ifdef _OPENMP
#include <omp.h>
#endif

// The forward in training on host arrays; rm/rv start from rm0/rv0 and come back updated.
typedef struct {
    double *y, *mean, *invstd, *rm, *rv;
} result_t;
static result_t run_ref(const double *x, const double *g, const double *b, const double *rm0, const double *rv0,
                        bn_layout_t layout, long N, long C, long HW, double eps, double mom, int training) {
    result_t r;
    r.y = host_alloc_doubles(N * C * HW);
    r.mean = host_alloc_doubles(C);
    r.invstd = host_alloc_doubles(C);
    r.rm = host_alloc_doubles(C);
    r.rv = host_alloc_doubles(C);
    memcpy(r.rm, rm0, C * sizeof(double));
    memcpy(r.rv, rv0, C * sizeof(double));
    for (long c = 0; c < C; c++) r.mean[c] = r.invstd[c] = -12345.0;  // inference must leave these alone
    batchnorm_forward_cpu(r.y, training ? r.mean : NULL, training ? r.invstd : NULL, r.rm, r.rv, x, g, b, layout, N, C,
                          HW, eps, mom, training);
    return r;
}
static void free_result(result_t *r) {
    free(r->y);
    free(r->mean);
    free(r->invstd);
    free(r->rm);
    free(r->rv);
}

// ---- the reference against hand-checked cases

static void test_hand_cases(void) {
    const double eps = 1e-5, mom = 0.1;
    {  // [N, C] = [4, 2]: channel 0 constant 3, channel 1 two values {1, 5} twice
        double x[8] = {3, 1, 3, 5, 3, 1, 3, 5}, g[2] = {2, -0.5}, b[2] = {0.25, 4}, rm0[2] = {1, -2}, rv0[2] = {1.5, 2};
        result_t r = run_ref(x, g, b, rm0, rv0, LAYOUT_NC, 4, 2, 1, eps, mom, 1);
        int ok = r.mean[0] == 3.0 && close_to(r.invstd[0], 1 / sqrt(eps), 1e-15);
        for (int i = 0; i < 4; i++) ok &= r.y[2 * i] == b[0];
        check("reference: a constant channel gives y = beta, invstd = 1/sqrt(eps)", ok, "mean %g invstd %g y %g",
              r.mean[0], r.invstd[0], r.y[0]);
        // running: mean 3 -> 0.9*1 + 0.1*3; unbiased variance 0 -> 0.9*1.5
        check("reference: a constant channel updates running_mean, running_var shrinks by (1 - momentum)",
              close_to(r.rm[0], 0.9 * 1 + 0.1 * 3, 1e-15) && close_to(r.rv[0], 0.9 * 1.5, 1e-15), "rm %g rv %g", r.rm[0],
              r.rv[0]);
        // channel 1: mean 3, biased variance 4, unbiased 4 * 4/3
        double n = 2.0 / sqrt(4 + eps);
        check("reference: two values: mean, biased variance, y = -/+ d/sqrt(d^2 + eps) * gamma + beta",
              r.mean[1] == 3.0 && close_to(r.invstd[1], 1 / sqrt(4 + eps), 1e-15) &&
                  close_to(r.y[1], -n * -0.5 + 4, 1e-15) && close_to(r.y[3], n * -0.5 + 4, 1e-15),
              "mean %g invstd %g y %g %g", r.mean[1], r.invstd[1], r.y[1], r.y[3]);
        check("reference: running_var takes the unbiased variance (M/(M-1) = 4/3)",
              close_to(r.rv[1], 0.9 * 2 + 0.1 * 4 * 4.0 / 3.0, 1e-15) && close_to(r.rm[1], 0.9 * -2 + 0.1 * 3, 1e-15),
              "rv %g", r.rv[1]);
        free_result(&r);
    }
    {  // M = 2 exactly: unbiased = 2 * biased
        double x[2] = {-1, 2}, g[1] = {1}, b[1] = {0}, rm0[1] = {0}, rv0[1] = {1};
        result_t r = run_ref(x, g, b, rm0, rv0, LAYOUT_NC, 2, 1, 1, eps, mom, 1);
        check("reference: M = 2, unbiased variance = 2 x biased", close_to(r.rv[0], 0.9 + 0.1 * 2 * 2.25, 1e-15),
              "rv %g", r.rv[0]);
        free_result(&r);
    }
    // M = 1 (N*H*W = 1) in every layout: y = beta, invstd = 1/sqrt(eps), running_var unchanged, running_mean updated
    for (int l = 0; l < 3; l++) {
        double x[3] = {-7, 0.5, 1e3}, g[3] = {4, 1, -1}, b[3] = {-0.5, 0, 2}, rm0[3] = {1, 2, 3}, rv0[3] = {1.25, 2, 3};
        result_t r = run_ref(x, g, b, rm0, rv0, (bn_layout_t)l, 1, 3, 1, eps, mom, 1);
        int ok = 1;
        for (int c = 0; c < 3; c++)
            ok &= r.y[c] == b[c] && r.mean[c] == x[c] && close_to(r.invstd[c], 1 / sqrt(eps), 1e-15) &&
                  r.rv[c] == rv0[c] && close_to(r.rm[c], 0.9 * rm0[c] + 0.1 * x[c], 1e-15);
        char name[128];
        snprintf(name, sizeof name, "reference: N*H*W = 1 (%s): y = beta, running_var unchanged, running_mean updated",
                 layout_name((bn_layout_t)l));
        check(name, ok, "y %g %g %g rv %g rm %g", r.y[0], r.y[1], r.y[2], r.rv[0], r.rm[0]);
        free_result(&r);
    }
    {  // eps = 0 on a unit-variance channel: exact standard scores
        double x[4] = {-3, -1, 1, 3}, g[1] = {1}, b[1] = {0}, rm0[1] = {0}, rv0[1] = {1};
        result_t r = run_ref(x, g, b, rm0, rv0, LAYOUT_NC, 4, 1, 1, 0.0, mom, 1);
        double s = 1 / sqrt(5.0);
        check("reference: eps 0, known standard scores",
              close_to(r.y[0], -3 * s, 1e-15) && close_to(r.y[3], 3 * s, 1e-15) && close_to(r.invstd[0], s, 1e-15));
        free_result(&r);
    }
}

// ---- the running-statistics update: momentum 0 keeps, momentum 1 replaces, anything else blends

static void test_running_update(void) {
    const long N = 5, C = 3, HW = 4;
    double *x = host_alloc_doubles(N * C * HW), g[3] = {1, 1, 1}, b[3] = {0, 0, 0}, rm0[3] = {0.5, -1, 2},
           rv0[3] = {1.5, 1.1, 1.9};
    host_fill_normal(x, N * C * HW, DT_FP32, 5, 0, 1.0, 2.0);
    double mean[3], var[3];
    batchnorm_stats_cpu(mean, var, x, LAYOUT_NCHW, N, C, HW);
    const double M = N * HW;
    result_t r0 = run_ref(x, g, b, rm0, rv0, LAYOUT_NCHW, N, C, HW, 1e-5, 0.0, 1);
    result_t r1 = run_ref(x, g, b, rm0, rv0, LAYOUT_NCHW, N, C, HW, 1e-5, 1.0, 1);
    result_t rq = run_ref(x, g, b, rm0, rv0, LAYOUT_NCHW, N, C, HW, 1e-5, 0.25, 1);
    int ok0 = 1, ok1 = 1, okq = 1;
    for (int c = 0; c < 3; c++) {
        ok0 &= r0.rm[c] == rm0[c] && r0.rv[c] == rv0[c];
        ok1 &= close_to(r1.rm[c], mean[c], 1e-15) && close_to(r1.rv[c], var[c] * M / (M - 1), 1e-15);
        okq &= close_to(rq.rm[c], 0.75 * rm0[c] + 0.25 * mean[c], 1e-15) &&
               close_to(rq.rv[c], 0.75 * rv0[c] + 0.25 * var[c] * M / (M - 1), 1e-15);
    }
    check("running stats: momentum 0 leaves them unchanged", ok0);
    check("running stats: momentum 1 gives the batch mean and the unbiased variance", ok1);
    check("running stats: momentum 0.25 blends (1 - m) * old + m * new", okq);
    // the batch statistics (save_mean/save_invstd) do not depend on the momentum, and use the biased variance
    int same = 1;
    for (int c = 0; c < 3; c++)
        same &= r0.mean[c] == rq.mean[c] && r0.invstd[c] == rq.invstd[c] && close_to(r0.invstd[c], 1 / sqrt(var[c] + 1e-5), 1e-15);
    check("running stats: save_invstd uses the biased variance, whatever the momentum", same);
    free_result(&r0);
    free_result(&r1);
    free_result(&rq);
    free(x);
}

// ---- an independent float64 oracle: long double Welford over each channel, indices written out by hand

static void test_oracle(void) {
    const long N = 3, C = 5, H = 7, W = 9, HW = H * W;
    const double eps = 1e-5, mom = 0.1;
    double *x = host_alloc_doubles(N * C * HW), *g = host_alloc_doubles(C), *b = host_alloc_doubles(C);
    double *rm0 = host_alloc_doubles(C), *rv0 = host_alloc_doubles(C);
    host_fill_normal(x, N * C * HW, DT_FP32, 99, 0, 5.0, 3.0);
    host_fill_normal(g, C, DT_FP32, 99, 1, 1.0, 0.25);
    host_fill_normal(b, C, DT_FP32, 99, 2, 0.0, 0.25);
    host_fill_normal(rm0, C, DT_FP32, 99, 3, 0.0, 0.5);
    host_fill_normal(rv0, C, DT_FP32, 99, 4, 0.0, 0.5);
    for (long c = 0; c < C; c++) rv0[c] = 1 + fabs(rv0[c]);
    for (int l = 1; l <= 2; l++) {  // NCHW, NHWC
        bn_layout_t layout = (bn_layout_t)l;
        result_t r = run_ref(x, g, b, rm0, rv0, layout, N, C, HW, eps, mom, 1);
        double worst = 0;
        for (long c = 0; c < C; c++) {
            long double mean = 0, m2 = 0;
            long k = 0;
            for (long n = 0; n < N; n++)
                for (long h = 0; h < H; h++)
                    for (long w = 0; w < W; w++) {
                        long i = layout == LAYOUT_NCHW ? ((n * C + c) * H + h) * W + w : ((n * H + h) * W + w) * C + c;
                        long double d = x[i] - mean;
                        mean += d / ++k;
                        m2 += d * (x[i] - mean);
                    }
            long double invstd = 1.0L / sqrtl(m2 / k + eps);
            long double rv = (1 - mom) * rv0[c] + mom * m2 / (k - 1), rm = (1 - mom) * rm0[c] + mom * mean;
            worst = fmax(worst, fabs((double)(mean - r.mean[c])) / fabs((double)mean));
            worst = fmax(worst, fabs((double)(invstd - r.invstd[c])) / (double)invstd);
            worst = fmax(worst, fabs((double)(rv - r.rv[c])) / (double)rv);
            worst = fmax(worst, fabs((double)(rm - r.rm[c])) / fmax(1.0, fabs((double)rm)));
            for (long n = 0; n < N; n++)
                for (long h = 0; h < H; h++)
                    for (long w = 0; w < W; w++) {
                        long i = layout == LAYOUT_NCHW ? ((n * C + c) * H + h) * W + w : ((n * H + h) * W + w) * C + c;
                        long double yy = (x[i] - mean) * invstd * g[c] + b[c];
                        worst = fmax(worst, fabs((double)(yy - r.y[i])) / fmax(1.0, fabs((double)yy)));
                    }
        }
        char name[128];
        snprintf(name, sizeof name, "reference: matches an independent long double Welford oracle (%s 3x5x7x9, mean 5, std 3)",
                 layout_name(layout));
        check(name, worst < 1e-12, "worst relative difference %g", worst);
        free_result(&r);
    }
    free(x); free(g); free(b); free(rm0); free(rv0);
}

// ---- the layouts: one logical tensor [N][C][H][W] stored as NCHW, NHWC (and [N*H*W, C]) gives the same statistics

static void test_layouts(void) {
    const long N = 4, C = 6, H = 3, W = 5, HW = H * W, n_el = N * C * HW;
    double *logical = host_alloc_doubles(n_el), *nchw = host_alloc_doubles(n_el), *nhwc = host_alloc_doubles(n_el);
    host_fill_normal(logical, n_el, DT_FP32, 17, 0, -0.5, 1.5);  // logical[n][c][h][w]
    for (long n = 0; n < N; n++)
        for (long c = 0; c < C; c++)
            for (long i = 0; i < HW; i++) {
                double v = logical[((n * C) + c) * HW + i];
                nchw[bn_index(LAYOUT_NCHW, n, c, i, C, HW)] = v;
                nhwc[bn_index(LAYOUT_NHWC, n, c, i, C, HW)] = v;
            }
    double g[6] = {1, 2, 0.5, -1, 1.5, 0.75}, b[6] = {0, 0.1, -0.2, 0.3, 0, 1}, rm0[6] = {0, 1, 0, -1, 0.5, 0},
           rv0[6] = {1, 1.5, 2, 1, 1.25, 1};
    result_t a = run_ref(nchw, g, b, rm0, rv0, LAYOUT_NCHW, N, C, HW, 1e-5, 0.1, 1);
    result_t h = run_ref(nhwc, g, b, rm0, rv0, LAYOUT_NHWC, N, C, HW, 1e-5, 0.1, 1);
    result_t v = run_ref(nhwc, g, b, rm0, rv0, LAYOUT_NC, N * HW, C, 1, 1e-5, 0.1, 1);  // NHWC is [N*H*W, C]
    int same = 1, same_y = 1, same_nc = 1;
    for (long c = 0; c < C; c++) {
        same &= close_to(a.mean[c], h.mean[c], 1e-14) && close_to(a.invstd[c], h.invstd[c], 1e-14) &&
                close_to(a.rm[c], h.rm[c], 1e-14) && close_to(a.rv[c], h.rv[c], 1e-14);
        same_nc &= h.mean[c] == v.mean[c] && h.invstd[c] == v.invstd[c] && h.rm[c] == v.rm[c] && h.rv[c] == v.rv[c];
    }
    for (long n = 0; n < N; n++)
        for (long c = 0; c < C; c++)
            for (long i = 0; i < HW; i++)
                same_y &= close_to(a.y[bn_index(LAYOUT_NCHW, n, c, i, C, HW)], h.y[bn_index(LAYOUT_NHWC, n, c, i, C, HW)], 1e-13);
    for (long i = 0; i < n_el; i++) same_nc &= h.y[i] == v.y[i];
    check("layouts: NCHW and NHWC of one tensor give the same statistics and running update", same);
    check("layouts: NCHW and NHWC give the same y, permuted", same_y);
    check("layouts: NHWC is exactly [N*H*W, C]", same_nc);
    // H*W = 1: NCHW, NHWC and [N, C] are the same memory
    result_t p1 = run_ref(logical, g, b, rm0, rv0, LAYOUT_NCHW, N * HW, C, 1, 1e-5, 0.1, 1);
    result_t p2 = run_ref(logical, g, b, rm0, rv0, LAYOUT_NC, N * HW, C, 1, 1e-5, 0.1, 1);
    int eq = 1;
    for (long c = 0; c < C; c++) eq &= p1.mean[c] == p2.mean[c] && close_to(p1.invstd[c], p2.invstd[c], 1e-14);
    for (long i = 0; i < n_el; i++) eq &= close_to(p1.y[i], p2.y[i], 1e-14);
    check("layouts: NCHW with H*W = 1 is [N, C]", eq);
    free_result(&a); free_result(&h); free_result(&v); free_result(&p1); free_result(&p2);
    free(logical); free(nchw); free(nhwc);
}

// ---- the reference's bits do not depend on the number of OpenMP threads (the exact comparisons above, and every
// GPU verdict, rely on it): the channels-last statistics over many chunks of rows, and NCHW, at 1, 2, 3, 7 and 16
// threads, against the same run at 1 thread. The test sets the thread count itself, so it holds whatever
// OMP_NUM_THREADS the runner gives it.

static void test_thread_count(void) {
#ifdef _OPENMP
    const long N = 37, C = 7, HW = 541;  // M = 20017: 254 chunks of 79 rows, the last one 30
    double *x = host_alloc_doubles(N * C * HW), g[7] = {1, 2, 0.5, -1, 1.5, 0.75, 1}, b[7] = {0, 0.1, -0.2, 0.3, 0, 1, 2},
           rm0[7] = {0, 1, 0, -1, 0.5, 0, 3}, rv0[7] = {1, 1.5, 2, 1, 1.25, 1, 3};
    host_fill_normal(x, N * C * HW, DT_FP32, 23, 0, 100.0, 3.0);
    const int saved = omp_get_max_threads(), threads[5] = {1, 2, 3, 7, 16};
    for (int l = 1; l <= 2; l++) {  // NCHW, NHWC
        bn_layout_t layout = (bn_layout_t)l;
        result_t r[5];
        for (int t = 0; t < 5; t++) {
            omp_set_num_threads(threads[t]);
            r[t] = run_ref(x, g, b, rm0, rv0, layout, N, C, HW, 1e-5, 0.1, 1);
        }
        int same = 1, differs = 0;
        for (int t = 1; t < 5; t++) {
            int eq = memcmp(r[t].y, r[0].y, sizeof(double) * N * C * HW) == 0;
            for (long c = 0; c < C; c++)
                eq &= r[t].mean[c] == r[0].mean[c] && r[t].invstd[c] == r[0].invstd[c] && r[t].rm[c] == r[0].rm[c] &&
                      r[t].rv[c] == r[0].rv[c];
            if (!eq && same) differs = threads[t];
            same &= eq;
        }
        char name[160];
        snprintf(name, sizeof name, "reference (%s, M = %ld, %ld channels): the same bits at 1, 2, 3, 7 and 16 OpenMP threads",
                 layout_name(layout), N * HW, C);
        check(name, same, "%d threads differ from 1", differs);
        for (int t = 0; t < 5; t++) free_result(&r[t]);
    }
    omp_set_num_threads(saved);
    free(x);
#else
    check("reference: built without OpenMP, one thread (nothing to compare)", 1);
#endif
}

// ---- inference: y from the running statistics, nothing else touched

static void test_inference(void) {
    const long N = 3, C = 4, HW = 6;
    double *x = host_alloc_doubles(N * C * HW), g[4] = {1, 2, -1, 0.5}, b[4] = {0, 1, 2, 3}, rm0[4] = {0.1, -0.2, 3, 0},
           rv0[4] = {1, 2, 0.5, 4};
    host_fill_normal(x, N * C * HW, DT_FP32, 3, 0, 0.0, 1.0);
    for (int l = 1; l <= 2; l++) {
        bn_layout_t layout = (bn_layout_t)l;
        result_t r = run_ref(x, g, b, rm0, rv0, layout, N, C, HW, 1e-3, 0.1, 0);
        int ok = 1;
        for (long n = 0; n < N; n++)
            for (long c = 0; c < C; c++)
                for (long i = 0; i < HW; i++) {
                    long k = bn_index(layout, n, c, i, C, HW);
                    ok &= close_to(r.y[k], (x[k] - rm0[c]) / sqrt(rv0[c] + 1e-3) * g[c] + b[c], 1e-14);
                }
        int untouched = 1;
        for (long c = 0; c < C; c++)
            untouched &= r.rm[c] == rm0[c] && r.rv[c] == rv0[c] && r.mean[c] == -12345.0 && r.invstd[c] == -12345.0;
        char name[128];
        snprintf(name, sizeof name, "inference (%s): y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta",
                 layout_name(layout));
        check(name, ok);
        snprintf(name, sizeof name, "inference (%s): running statistics unchanged, batch statistics not written",
                 layout_name(layout));
        check(name, untouched);
        free_result(&r);
    }
    free(x);
}

// ---- shape strings, bytes counted, the tolerance widening

static void test_describe(void) {
    bn_problem_t p;
    memset(&p, 0, sizeof p);
    p.layout = LAYOUT_NC; p.N = 65536; p.C = 256; p.H = p.W = p.HW = 1; p.M = 65536; p.training = 1; p.h.dtype = DT_FP32;
    bn_describe(&p);
    check("describe: [N, C] shape string 65536x256", strcmp(p.h.shape, "65536x256") == 0, "'%s'", p.h.shape);
    check("describe: training bytes = x + y + gamma, beta, save_mean, save_invstd + running stats read and written",
          p.h.bytes == 2.0 * 65536 * 256 * 4 + 8.0 * 4 * 256, "%.0f", p.h.bytes);
    p.training = 0;
    bn_describe(&p);
    check("describe: inference appends :inf and counts x, y, gamma, beta, running stats read",
          strcmp(p.h.shape, "65536x256:inf") == 0 && p.h.bytes == 2.0 * 65536 * 256 * 4 + 4.0 * 4 * 256, "'%s' %.0f",
          p.h.shape, p.h.bytes);
    p.layout = LAYOUT_NCHW; p.N = 32; p.C = 256; p.H = 56; p.W = 56; p.HW = 3136; p.M = 32 * 3136; p.training = 1;
    p.h.dtype = DT_BF16;
    bn_describe(&p);
    check("describe: NCHW shape string 32x256x56x56:nchw, bf16 bytes",
          strcmp(p.h.shape, "32x256x56x56:nchw") == 0 && p.h.bytes == 2.0 * 32 * 256 * 3136 * 2 + 32.0 * 256, "'%s' %.0f",
          p.h.shape, p.h.bytes);
    p.layout = LAYOUT_NHWC; p.training = 0;
    bn_describe(&p);
    check("describe: NHWC inference shape string 32x256x56x56:nhwc:inf", strcmp(p.h.shape, "32x256x56x56:nhwc:inf") == 0,
          "'%s'", p.h.shape);
    double mean[3] = {0.0, 1000.0, -2.0}, invstd[3] = {1.0, 1.0, 0.5}, gamma[3] = {0.5, -2.0, 3.0};
    double u = 16.0 * ldexp(1.0, -24);
    check("tolerance: y's atol grows by 16 fp32 ulps of max |mean| * invstd * |gamma|",
          close_to(batchnorm_y_atol(mean, invstd, gamma, 3), u * 2000, 1e-15) && batchnorm_y_atol(mean, invstd, gamma, 1) == 0);
}

// ---- which kernel runs which layout and mode (the rules that need no GPU)

static void test_supports(void) {
    bn_problem_t p;
    memset(&p, 0, sizeof p);
    p.N = 64; p.C = 32; p.H = p.W = p.HW = 1; p.M = 64; p.training = 1; p.h.dtype = DT_FP32;
    const kernel_t *k = k_program.kernels;
    p.layout = LAYOUT_NC;
    int ok = 1;
    for (int i = 1; i <= 5; i++) ok &= k[i].supports(&p, 128) == NULL;
    ok &= k[6].supports(&p, 128) != NULL && k[8].supports(&p, 128) && strstr(k[8].supports(&p, 128), "contiguous");
    check("supports: [N, C] training runs in 1-5, not in 6 or 8", ok);
    p.layout = LAYOUT_NHWC;
    ok = 1;
    for (int i = 1; i <= 5; i++) ok &= k[i].supports(&p, 128) == NULL;
    check("supports: NHWC training runs in 1-5, not in 6", ok && k[6].supports(&p, 128) != NULL);
    p.layout = LAYOUT_NCHW;
    ok = k[6].supports(&p, 128) == NULL;
    for (int i = 1; i <= 13; i++)
        ok &= i == 6 || i == 8 || i == 12 || (k[i].supports(&p, 128) && strstr(k[i].supports(&p, 128), "NCHW"));
    check("supports: NCHW training runs in 6 and 8 (and 14), the others say why", ok);
    const char *why = k[12].supports(&p, 128);
    check("supports: kernel 12 (inference) skips training, saying so", why && strstr(why, "inference"), "%s",
          why ? why : "NULL");
    p.training = 0;
    ok = 1;
    for (int i = 1; i <= 13; i++)
        ok &= i == 12 || (k[i].supports(&p, 128) && strstr(k[i].supports(&p, 128), "inference"));
    check("supports: inference skips 1-11 and 13 with a reason naming it", ok);
    ok = 1;
    for (int l = LAYOUT_NC; l <= LAYOUT_NHWC; l++) {
        p.layout = (bn_layout_t)l;
        for (int bs = 32; bs <= 256; bs *= 2) ok &= k[12].supports(&p, bs) == NULL;
    }
    check("supports: kernel 12 runs inference in every layout at 32-256 threads", ok);
    why = k[12].supports(&p, 512);
    check("supports: kernel 12 refuses 512 threads (its launch bounds) with a reason", why && strstr(why, "256"), "%s",
          why ? why : "NULL");
    p.training = 1;
    p.layout = LAYOUT_NC;
    p.M = 15;
    why = k[3].supports(&p, 128);
    check("supports: kernel 3 refuses N*H*W < 16 (one-pass variance) with a reason", why && strstr(why, "16"), "%s", why ? why : "NULL");
    p.M = 16;
    check("supports: kernel 3 runs at N*H*W = 16", k[3].supports(&p, 128) == NULL);
    for (int i : {10, 11, 13}) {
        why = k[i].supports(&p, i == 13 ? 256 : 512);
        check(i == 10   ? "supports: kernel 10 without cooperative launch says so (its plan asks nothing of the device first)"
              : i == 11 ? "supports: kernel 11 without cooperative launch says so"
                        : "supports: kernel 13 without cooperative launch says so",
              why && strstr(why, "cooperative"), "%s", why ? why : "NULL");
    }
}

// ---- the rungs' plans and the dispatcher's rule of regimes (no GPU here: no cooperative launch, no clusters, so
// 7-11 and 13 take nothing; the plans whose supports_ asks nothing of the device are checked against it)

static int is_block_size(int bs) { return bs >= 32 && bs <= 1024 && bs % 32 == 0; }

static void test_plans(void) {
    const kernel_t *k = k_program.kernels;
    int ok = 1;
    for (int i = 0; i < k_program.n_kernels - 1; i++)
        ok &= (k[i].plan != NULL) == (k[i].dtypes == DT_ALL && !k[i].own_block);
    check("plans: every rung the dispatcher may run (fp32, fp16 and bf16, not picking its own block) has a plan; "
          "the others and the dispatcher none", ok && k[14].plan == NULL);
    const cudaDeviceProp saved = g_dev.prop;
    g_dev.prop.multiProcessorCount = 132;
    bn_problem_t p;
    memset(&p, 0, sizeof p);
    // plans whose supports_ needs no GPU (4, 5, 6, 12): the plan's block is one its supports_ takes, at many shapes
    const long Ns[] = {1, 7, 64, 1031, 65536, 262144}, Cs[] = {1, 3, 16, 33, 256, 1000, 4096}, HWs[] = {1, 49, 196, 3136};
    ok = 1;
    int n = 0;
    for (int d = DT_FP32; d <= DT_BF16; d++)
        for (int l = LAYOUT_NC; l <= LAYOUT_NHWC; l++)
            for (long hw : HWs)
                for (long N : Ns)
                    for (long C : Cs)
                        for (int training = 0; training <= 1; training++) {
                            if (l == LAYOUT_NC && hw != 1) continue;
                            p.h.dtype = (dtype_t)d; p.layout = (bn_layout_t)l; p.training = training;
                            p.N = N; p.C = C; p.H = hw; p.W = 1; p.HW = hw; p.M = N * hw;
                            const int nchw = l == LAYOUT_NCHW;
                            for (int i : {4, 5, 6, 12}) {
                                if ((i == 12) != !training || (i == 6) != (nchw && training) ||
                                    ((i == 4 || i == 5) && nchw))
                                    continue;
                                const int bs = k[i].plan(&p);
                                const char *why = k[i].supports(&p, bs);
                                if (i == 4 && why && p.M > 32L << 20 && strstr(why, "drifts")) why = NULL;
                                if (!is_block_size(bs) || why) {
                                    if (ok) fprintf(stderr, "  rung %d at %ldx%ldx%ld (%d): %d, %s\n", i, N, C, hw, l, bs,
                                                    why ? why : "");
                                    ok = 0;
                                }
                                n++;
                            }
                        }
    check("plans: 4, 5, 6 and 12 plan a block size their supports_ takes (every layout, mode and dtype; 4 refuses "
          "past 2^20 rows a warp)", ok && n > 500, "%d problems", n);
    // 1, 2 and 4 refuse a thread's Welford chain of more than 2^20 rows (rows a thread: M, M / threads, M / warps)
    p.h.dtype = DT_FP16; p.layout = LAYOUT_NC; p.training = 1; p.H = p.W = p.HW = 1; p.C = 8;
    int chain = 1;
    const struct { int k, bs; long M; int takes; } cc[] = {
        {1, 32, 1L << 20, 1}, {1, 1024, (1L << 20) + 1, 0}, {2, 32, 32L << 20, 1}, {2, 32, (32L << 20) + 32, 0},
        {4, 32, 18572341, 0}, {4, 1024, 18572341, 1}, {4, 1024, 32L << 20, 1}, {4, 1024, (32L << 20) + 32, 0}};
    for (auto c : cc) {
        p.N = p.M = c.M;
        const char *why = k[c.k].supports(&p, c.bs);
        chain &= c.takes ? why == NULL : why != NULL && strstr(why, "drifts") != NULL;
    }
    check("supports: 1, 2 and 4 refuse more than 2^20 rows a thread's chain, and say why", chain);
    // the plans' values (132 SMs)
    p.h.dtype = DT_BF16; p.layout = LAYOUT_NC; p.training = 1; p.H = p.W = p.HW = 1;
    p.N = p.M = 64; p.C = 1024;
    const int b4_64 = k[4].plan(&p);
    p.N = p.M = 4096;
    const int b4_4096 = k[4].plan(&p);
    check("plans: 4 runs a warp for every 4 rows, up to 1024 (64 rows: 512; 4096 rows: 1024)",
          b4_64 == 512 && b4_4096 == 1024, "%d %d", b4_64, b4_4096);
    p.N = p.M = 4096; p.C = 8;
    const int s_narrow = l2_sums_block(&p, 32, 256);
    p.N = p.M = 65536; p.C = 256;
    const int s_wide = l2_sums_block(&p, 32, 256), s_10 = l2_sums_block(&p, 1.0 / 8, 512);
    p.N = p.M = 262144; p.C = 16;
    const int s_tall = l2_sums_block(&p, 32, 256);
    check("plans: 10, 11 and 13 at 16 threads a 16-byte pack of the row and a thread per 32 packs of the rows an SM "
          "(bf16 4096x8: 32, 262144x16: 128, 65536x256: 256); 9 up to 512",
          s_narrow == 32 && s_tall == 128 && s_wide == 256 && s_10 == 512, "%d %d %d %d", s_narrow, s_tall, s_wide, s_10);
    p.training = 0; p.N = p.M = 64; p.C = 16;
    const int b12_small = k[12].plan(&p);
    p.layout = LAYOUT_NCHW; p.N = 4096; p.C = 256; p.H = p.W = 7; p.HW = 49; p.M = 4096 * 49;
    const int b12_large = k[12].plan(&p);
    p.training = 1;
    const int b6_small = k[6].plan(&p);
    p.H = p.W = 56; p.HW = 3136; p.M = 4096 * 3136;
    const int b6_large = k[6].plan(&p);
    check("plans: 12 at 64 threads where the launch is a few threads an SM, 256 at many waves; 6 at 32 threads for "
          "7x7 planes, 128 for 56x56", b12_small == 64 && b12_large == 256 && b6_small == 32 && b6_large == 128,
          "%d %d %d %d", b12_small, b12_large, b6_small, b6_large);
    g_dev.prop = saved;
}

static void test_regimes(void) {
    const int n = (int)(sizeof k_regimes / sizeof k_regimes[0]);
    // the table's last rows: every packs a row, rows an SM and plane, every element size, packing and launch, and
    // between them every BatchNorm variant; their rungs (12, 5, 6) take every problem of those variants
    unsigned covered = 0;
    int ok = n >= 4;
    for (int i = n - 3; i < n; i++) {
        const regime_t *r = &k_regimes[i];
        ok &= r->bytes == 0 && r->packs16 < 0 && r->launches == 0 && r->packs_lo == 0 && r->packs_hi == RG_ANY &&
              r->rows_lo == 0 && r->rows_hi == RG_ANY && r->plane_lo == 0 && r->plane_hi == RG_ANY;
        covered |= r->variants;
    }
    const unsigned all = TVB(TV_BN_CL) | TVB(TV_BN_NCHW) | TVB(TV_BN_CL_INF) | TVB(TV_BN_NCHW_INF);
    check("regimes: the last three rows hold every problem of the four variants", ok && (covered & all) == all, "%x",
          covered);
    const cudaDeviceProp saved = g_dev.prop;
    g_dev.prop.multiProcessorCount = 132;
    bn_problem_t p;
    memset(&p, 0, sizeof p);
    ok = 1;
    int tried = 0;
    for (int d = DT_FP32; d <= DT_BF16; d++)
        for (int l = LAYOUT_NC; l <= LAYOUT_NHWC; l++)
            for (long hw : {1L, 49L, 3136L})
                for (long N : {1L, 7L, 1031L, 65536L})
                    for (long C : {1L, 33L, 256L, 8192L})
                        for (int training = 0; training <= 1; training++) {
                            if ((l == LAYOUT_NC && hw != 1) || (l == LAYOUT_NCHW && hw == 1)) continue;
                            p.h.dtype = (dtype_t)d; p.layout = (bn_layout_t)l; p.training = training;
                            p.N = N; p.C = C; p.H = hw; p.W = 1; p.HW = hw; p.M = N * hw;
                            const regime_key_t key = dispatch_key(&p);
                            int held = 0;
                            for (int i = n - 3; i < n; i++)
                                if (regime_holds(&k_regimes[i], &key)) {
                                    held = 1;
                                    ok &= regime_supports(&p, k_regimes[i].rung, 0) == NULL;
                                }
                            ok &= held;
                            tried++;
                        }
    check("regimes: at every problem tried one of the last rows holds it and its rung takes it at its plan's block",
          ok, "%d problems", tried);
    g_dev.prop = saved;
}

static int dispatch_rung(const bn_problem_t *p, int bs, int *at) {
    bn_choice_t c;
    dispatch_for(p, bs, &c);
    *at = c.at;
    return c.r ? c.r->rung * (c.q == p ? 1 : -1) : 0;  // negative: the rung runs on the [N, C] view
}

static void test_dispatch(void) {
    const kernel_t *d = &k_program.kernels[14];
    check("dispatch: the last kernel, its own block size, supports and launch", d->number == 14 && d->own_block == 1 &&
                                                                               d->supports && d->launch);
    const cudaDeviceProp saved = g_dev.prop;
    g_dev.prop.multiProcessorCount = 132;
    bn_problem_t p;
    memset(&p, 0, sizeof p);
    p.N = 64; p.C = 32; p.H = p.W = p.HW = 1; p.M = 64; p.training = 0; p.h.dtype = DT_BF16;
    int ok = 1, at;
    for (int l = LAYOUT_NC; l <= LAYOUT_NHWC; l++) {
        p.layout = (bn_layout_t)l;
        const int want = l == LAYOUT_NCHW ? -12 : 12;  // NCHW with one pixel: the [N, C] view
        ok &= dispatch_rung(&p, 0, &at) == want && k_regimes[at - 1].variants == TVB(TV_BN_CL_INF) &&
              d->supports(&p, 0) == NULL && dispatch_rung(&p, 128, &at) == want;
    }
    p.layout = LAYOUT_NCHW; p.H = p.W = 7; p.HW = 49; p.M = 64 * 49;
    ok &= dispatch_rung(&p, 0, &at) == 12 && k_regimes[at - 1].variants == TVB(TV_BN_NCHW_INF);
    check("dispatch: inference in every layout -> 12 by its variant's row (NCHW with H*W = 1 on the [N, C] view), a "
          "--block-size passed through", ok);
    p.layout = LAYOUT_NHWC;
    const char *why = d->supports(&p, 512);
    check("dispatch: inference at --block-size 512 skips with 12's reason (no CUDA error)", why && strstr(why, "256"),
          "%s", why ? why : "NULL");
    // training: a row whose rung takes nothing here (13, 8: no cooperative launch, no clusters) is passed over for
    // the next row that holds the problem
    p.training = 1; p.layout = LAYOUT_NC; p.H = p.W = p.HW = 1;
    p.N = p.M = 64; p.C = 1024;
    int r = dispatch_rung(&p, 0, &at);
    check("dispatch: bf16 [64, 1024] (0.5 rows an SM) -> 4 by regime 1", r == 4 && at == 1, "%d %d", r, at);
    p.N = p.M = 65536; p.C = 256;
    r = dispatch_rung(&p, 0, &at);
    check("dispatch: bf16 [65536, 256], whose regime's 13 has no cooperative launch here -> a later row's 5",
          r == 5 && at > 2 && k_regimes[at - 1].rung == 5, "%d %d", r, at);
    p.layout = LAYOUT_NCHW; p.N = 1; p.H = p.W = p.HW = 1; p.M = 1;
    r = dispatch_rung(&p, 0, &at);
    check("dispatch: bf16 NCHW training with H*W = 1 -> the [N, C] view's rows (4)", r == -4, "%d %d", r, at);
    p.h.dtype = DT_FP32; p.N = 4096; p.C = 32; p.H = p.W = 7; p.HW = 49; p.M = 4096 * 49;
    r = dispatch_rung(&p, 0, &at);
    const int n = (int)(sizeof k_regimes / sizeof k_regimes[0]);
    check("dispatch: fp32 NCHW 4096x32x7x7 (993 rows an SM, 8 packs of channels) -> 6 by a derived row", r == 6 &&
          at <= n - 3, "%d %d", r, at);
    p.N = 8; p.C = 16; p.H = p.W = 28; p.HW = 784; p.M = 8 * 784;
    r = dispatch_rung(&p, 0, &at);
    check("dispatch: fp32 NCHW 8x16x28x28, whose regime's 8 needs clusters -> the catch-all 6", r == 6 && at == n,
          "%d %d", r, at);
    g_dev.prop = saved;
}

// ---- kernel 0 (cuDNN): the rules that need neither a GPU nor a cuDNN call. With cuDNN, supports(p, 0) plans
// with cuDNN (a GPU), so it is not called here; its shape rules are the harness's cudnn_bn_precheck, which asks
// nothing, on the program's description of the problem.
#ifdef HAVE_CUDNN
static const char *bn_cudnn_precheck(const bn_problem_t *p) {
    cudnn_bn_t d;
    bn_cudnn_describe(p, &d);
    return cudnn_bn_precheck(&d);
}
#endif

static void test_cudnn_slot(void) {
    check_cudnn_slot(&k_program.kernels[0]);
#ifdef HAVE_CUDNN
    bn_problem_t p;
    memset(&p, 0, sizeof p);
    p.N = 64; p.C = 32; p.H = p.W = p.HW = 1; p.M = 64; p.training = 1; p.h.dtype = DT_FP32;
    p.layout = LAYOUT_NC; p.eps = 1e-5f; p.momentum = 0.1f;
    check("cudnn slot: [N, C] training with N*H*W = 64 passes the shape rules", bn_cudnn_precheck(&p) == NULL);
    p.N = 1; p.M = 1;
    const char *why = bn_cudnn_precheck(&p);
    check("cudnn slot: training with N*H*W = 1 skips, naming cuDNN's running_var behaviour",
          why && strstr(why, "N*H*W = 1") && strstr(why, "running_var"), "%s", why ? why : "NULL");
    p.layout = LAYOUT_NCHW; p.H = p.W = 1;
    why = bn_cudnn_precheck(&p);
    check("cudnn slot: the N*H*W = 1 rule holds in image layouts too", why && strstr(why, "N*H*W = 1"), "%s",
          why ? why : "NULL");
    p.training = 0;
    check("cudnn slot: inference with N*H*W = 1 passes (no running_var update)", bn_cudnn_precheck(&p) == NULL);
    p.training = 1; p.N = 2; p.H = 1; p.W = 1; p.HW = 1; p.M = 2;
    check("cudnn slot: training with N*H*W = 2 passes", bn_cudnn_precheck(&p) == NULL);
    p.eps = -1e-3f;
    why = bn_cudnn_precheck(&p);
    check("cudnn slot: eps below CUDNN_BN_MIN_EPSILON skips with a reason", why && strstr(why, "CUDNN_BN_MIN_EPSILON"),
          "%s", why ? why : "NULL");
    p.eps = 1e-5f;
    p.layout = LAYOUT_NHWC; p.N = 1024; p.C = 2048; p.H = p.W = 32; p.HW = 1024; p.M = 1024L * 1024;
    why = bn_cudnn_precheck(&p);
    check("cudnn slot: 2^31 elements skip (32-bit descriptors)", why && strstr(why, "2^31"), "%s", why ? why : "NULL");
    p.C = 2047;
    check("cudnn slot: just below 2^31 elements passes", bn_cudnn_precheck(&p) == NULL);
    cudnn_bn_cand_t c;
    memset(&c, 0, sizeof c);
    c.call = CUDNN_BN_CALL_TRAIN_EX; c.mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT; c.format = CUDNN_TENSOR_NHWC;
    cudnn_bn_cand_t d = c;
    d.call = CUDNN_BN_CALL_TRAIN; d.mode = CUDNN_BATCHNORM_SPATIAL;
    check("cudnn slot: NORM_CUDNN_BN picks candidates by whole words (call, mode, format)",
          cudnn_bn_cand_selected(&c, NULL) && cudnn_bn_cand_selected(&c, "") &&
              cudnn_bn_cand_selected(&c, "ForwardTrainingEx SPATIAL_PERSISTENT") &&
              cudnn_bn_cand_selected(&c, "NHWC") && !cudnn_bn_cand_selected(&c, "ForwardTraining") &&
              !cudnn_bn_cand_selected(&c, "SPATIAL") && !cudnn_bn_cand_selected(&c, "SPATIAL_PERSISTENT NCHW") &&
              cudnn_bn_cand_selected(&d, "ForwardTraining SPATIAL") &&
              !cudnn_bn_cand_selected(&d, "ForwardTraining SPATIAL_PERSISTENT"));
    cudnn_bn_cand_t g = c;
    g.call = CUDNN_BN_CALL_GRAPH; g.mode = CUDNN_BATCHNORM_SPATIAL;
    check("cudnn slot: the graph API's candidate is picked by 'Graph' and its format, not by a legacy call's name",
          cudnn_bn_cand_selected(&g, "Graph") && cudnn_bn_cand_selected(&g, "Graph NHWC") &&
              !cudnn_bn_cand_selected(&g, "Graph NCHW") && !cudnn_bn_cand_selected(&g, "ForwardTraining") &&
              !cudnn_bn_cand_selected(&c, "Graph"));
#endif
}

// ---- option parsing (accepting paths, and the op's own checks as messages)

static void reset_op_options(void) {
    g_layout = LAYOUT_NC;
    g_height = g_width = 1;
    g_hw_set = 0;
    g_eps = 1e-5;
    g_momentum = 0.1;
    g_inference = 0;
}
static options_t parse(const char *line) {
    reset_op_options();  // the program's own options back to their defaults
    return parse_line(&k_program, line);
}

static void test_parsing(void) {
    options_t o = parse("");
    check("parse: defaults are [N, C] = 65536 x 256, training, the dispatcher, fp32, momentum 0.1, eps 1e-5",
          o.rows == 65536 && o.cols == 256 && o.kernel == KERNEL_DEFAULT && k_program.default_kernel == 14 &&
              o.dtype == DT_FP32 && g_layout == LAYOUT_NC && g_height == 1 && g_width == 1 && !g_inference &&
              g_momentum == 0.1 && g_eps == 1e-5);
    o = parse("6 --layout nchw -N 32 -C 256 --height 56 --width 56 --dtype bf16 --check");
    check("parse: NCHW image shape with --height/--width", o.kernel == 6 && g_layout == LAYOUT_NCHW && o.rows == 32 &&
                                                              o.cols == 256 && g_height == 56 && g_width == 56 &&
                                                              o.dtype == DT_BF16 && o.check_only);
    o = parse("all --layout nhwc --rows 128 --cols 64 --height 112 --width 112");
    check("parse: NHWC, --rows/--cols, all", o.kernel == KERNEL_ALL && g_layout == LAYOUT_NHWC && o.rows == 128 &&
                                                 o.cols == 64 && g_height == 112 && g_width == 112);
    o = parse("--layout nc --momentum 0.5 --eps 1e-3 --inference");
    check("parse: --layout nc, --momentum, --eps, --inference", g_layout == LAYOUT_NC && g_momentum == 0.5 &&
                                                                   g_eps == 1e-3 && g_inference);
    o = parse("--momentum 0 --eps 0");
    check("parse: momentum 0 and eps 0 are accepted", g_momentum == 0 && g_eps == 0);
    o = parse("--momentum 1");
    check("parse: momentum 1 is accepted", g_momentum == 1);
    o = parse("5 --dtype fp16 -N 1 -C 1");
    check("parse: kernel 5 in fp16 at N = C = 1", o.kernel == 5 && o.dtype == DT_FP16 && o.rows == 1 && o.cols == 1);
    o = parse("--list");
    check("parse: --list", o.list);
    // the op's own checks return their one-line message (the exit is tested from the shell)
    reset_op_options();
    check("parse: --layout rejects 'chw' with a message naming it",
          parse_extra(X_LAYOUT, "chw") && strstr(parse_extra(X_LAYOUT, "chw"), "layout 'chw'"));
    check("parse: --height rejects 0, --width rejects 'x'", parse_extra(X_HEIGHT, "0") && strstr(parse_extra(X_HEIGHT, "0"), "height '0'") &&
                                                                parse_extra(X_WIDTH, "x") && strstr(parse_extra(X_WIDTH, "x"), "width 'x'"));
    check("parse: --momentum rejects 1.5 and -0.1", parse_extra(X_MOMENTUM, "1.5") && parse_extra(X_MOMENTUM, "-0.1") &&
                                                        strstr(parse_extra(X_MOMENTUM, "1.5"), "momentum '1.5'"));
    check("parse: --eps rejects -1 and nan", parse_extra(X_EPS, "-1") && parse_extra(X_EPS, "nan") &&
                                                 strstr(parse_extra(X_EPS, "-1"), "eps '-1'"));
    reset_op_options();
    options_t oo;
    memset(&oo, 0, sizeof oo);
    oo.rows = 32; oo.cols = 256;
    check("parse: [N, C] with default H, W passes the op's checks", check_options(&oo) == NULL);
    g_hw_set = 1; g_height = 56;
    const char *why = check_options(&oo);
    check("parse: --height with --layout nc is refused", why && strstr(why, "--height/--width need an image layout"), "%s", why ? why : "NULL");
    g_layout = LAYOUT_NCHW;
    check("parse: --height with --layout nchw passes", check_options(&oo) == NULL);
    g_height = 56 * 56; g_width = 56 * 56; oo.rows = 128;
    why = check_options(&oo);
    check("parse: N*C*H*W above 4e9 is refused", why && strstr(why, "too large"), "%s", why ? why : "NULL");
    reset_op_options();
    oo.rows = 8; oo.bt_set = 1;
    why = check_options(&oo);
    check("parse: -B/-T are refused (the batch is -N)", why && strstr(why, "-B/-T"), "%s", why ? why : "NULL");
    reset_op_options();
}

// ---- registry

static void test_registry(void) {
    check_registry_shape(&k_program, 15);
    int dt = 1;
    for (int i = 1; i <= 3; i++) dt &= k_program.kernels[i].dtypes == DT_BIT(DT_FP32);
    for (int i = 4; i <= 14; i++) dt &= k_program.kernels[i].dtypes == DT_ALL;
    check("registry: 1-3 are fp32 only, 4-14 run fp32, fp16 and bf16", dt);
    check("registry: the program resets the running statistics before validation", k_program.reset != NULL);
}

// ---- the statistics arithmetic of kernels 5 and 7, run on the host: block partials from shifted sums
// (shift_sums_*), then the partials folded in one chain (fold_partials) with the means as offsets from partial 0's
// mean. The worst case of the GPU combine is one chain over every partial (a combine block of 32 threads);
// at |mean| = 1000 a chain of plain means drifted by 2e-3 there. Four channels: mean 1000, mean -1000, mean 0,
// and mean 1000 with every block's first row (its shift) 4 spreads off.
static uint32_t lcg_next(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }
static double lcg_normal(uint32_t *s) {  // Box-Muller on two uniforms in (0, 1)
    double u1 = (lcg_next(s) + 1.0) / 4294967297.0, u2 = (lcg_next(s) + 1.0) / 4294967297.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static void test_partials_offsets(void) {
    const long M = 65536, R = 16, P = M / R, C = 4;
    const double means[4] = {1000.0, -1000.0, 0.0, 1000.0};
    float *x = (float *)malloc(sizeof(float) * M * C), *ws_mean = (float *)malloc(sizeof(float) * P * C),
          *ws_m2 = (float *)malloc(sizeof(float) * P * C);
    uint32_t seed = 12345u;
    for (long r = 0; r < M; r++)
        for (long c = 0; c < C; c++) {
            double v = means[c] + lcg_normal(&seed);
            if (c == 3 && r % R == 0) v = means[c] + 4.0;  // the shift of every block: an outlier
            x[r * C + c] = (float)v;
        }
    for (long p = 0; p < P; p++) {
        ShiftSums<4> st;
        shift_sums_init(st, *reinterpret_cast<const Pack<float, 4> *>(x + p * R * C));
        for (long r = p * R; r < (p + 1) * R; r++) shift_sums_add(st, *reinterpret_cast<const Pack<float, 4> *>(x + r * C));
        for (int j = 0; j < 4; j++) {
            Welford w = shift_sums_welford(st, j, (float)R);
            ws_mean[p * C + j] = w.mean;
            ws_m2[p * C + j] = w.m2;
        }
    }
    int ok = 1, drift_seen = 0;
    char why[256] = "";
    for (long c = 0; c < C; c++) {
        double sum = 0, m2 = 0;
        for (long r = 0; r < M; r++) sum += x[r * C + c];
        double ref_mean = sum / M;
        for (long r = 0; r < M; r++) m2 += (x[r * C + c] - ref_mean) * (x[r * C + c] - ref_mean);
        double ref_var = m2 / M;
        float m0 = ws_mean[c];
        Welford w = fold_partials(Welford{0.f, 0.f, 0.f}, ws_mean, ws_m2, C, c, 0, 1, P, R, M, m0);
        double mean = (double)w.mean + m0, var = w.m2 / (double)M;
        if (fabs(mean - ref_mean) > 2e-5 || fabs(var - ref_var) > 1e-4 * ref_var) {
            ok = 0;
            snprintf(why, sizeof why, "channel %ld: mean %.7f vs %.7f, var %.7f vs %.7f", c, mean, ref_mean, var, ref_var);
        }
        // the same chain with plain means (no offset) must show the drift the offsets remove: the check can fail
        Welford plain = fold_partials(Welford{0.f, 0.f, 0.f}, ws_mean, ws_m2, C, c, 0, 1, P, R, M, 0.f);
        if (c < 2 && fabs((double)plain.mean - ref_mean) > 1e-4) drift_seen++;  // here 3e-4 and 7e-4; offsets 2e-7
    }
    check("kernels 5/7 statistics on the host: shifted-sum partials folded as offsets match float64 (mean 2e-5, "
          "var 1e-4 relative) at |mean| = 1000 over one chain of 4096 partials, also with outlier shifts",
          ok, "%s", why);
    check("the same chain of plain means drifts by more than 1e-4 at |mean| = 1000 (what the offsets fix)",
          drift_seen == 2, "%d of the 2 channels at |mean| = 1000 drifted", drift_seen);
    free(x);
    free(ws_mean);
    free(ws_m2);
}

// fold_partials' edges: partials loaded in batches of 8 over a chain (first, first + stride, ...), so a chain's
// last batch runs past P; the last block holds fewer rows (M not a multiple of rows_per_block), and P may count
// blocks past M that wrote nothing (their workspace is NaN here: reading one fails the check). Chains for every
// first < stride, merged, must match float64 over the rows.
static void test_fold_partials_edges(void) {
    const long M = 1000, R = 7, C = 3, P_DATA = (M + R - 1) / R, P = P_DATA + 5;  // 143 partials with rows, 5 without
    float *ws_mean = (float *)malloc(sizeof(float) * P * C), *ws_m2 = (float *)malloc(sizeof(float) * P * C);
    double *x = (double *)malloc(sizeof(double) * M * C);
    uint32_t seed = 777u;
    for (long r = 0; r < M; r++)
        for (long c = 0; c < C; c++) x[r * C + c] = 10.0 * c + lcg_normal(&seed);
    for (long p = 0; p < P; p++)
        for (long c = 0; c < C; c++) {
            long r0 = p * R, r1 = r0 + R < M ? r0 + R : M;
            if (r0 >= M) {  // a block without rows writes nothing
                ws_mean[p * C + c] = ws_m2[p * C + c] = nanf("");
                continue;
            }
            double sum = 0, m2 = 0;
            for (long r = r0; r < r1; r++) sum += x[r * C + c];
            double mean = sum / (r1 - r0);
            for (long r = r0; r < r1; r++) m2 += (x[r * C + c] - mean) * (x[r * C + c] - mean);
            ws_mean[p * C + c] = (float)mean;
            ws_m2[p * C + c] = (float)m2;
        }
    int ok = 1;
    char why[256] = "";
    const long strides[] = {1, 3, 8, 16, 200};
    for (size_t k = 0; k < sizeof strides / sizeof strides[0]; k++)
        for (long c = 0; c < C; c++) {
            long S = strides[k];
            float m0 = ws_mean[c];
            Welford all = {0.f, 0.f, 0.f};
            for (long first = 0; first < S; first++)
                all = welford_merge_nocall(all, fold_partials(Welford{0.f, 0.f, 0.f}, ws_mean, ws_m2, C, c, first, S, P,
                                                              R, M, m0));
            double sum = 0, m2 = 0;
            for (long r = 0; r < M; r++) sum += x[r * C + c];
            double ref_mean = sum / M;
            for (long r = 0; r < M; r++) m2 += (x[r * C + c] - ref_mean) * (x[r * C + c] - ref_mean);
            double mean = (double)all.mean + m0, var = all.m2 / (double)M;
            if (!(all.n == (float)M && fabs(mean - ref_mean) < 1e-5 * (1 + fabs(ref_mean)) &&
                  fabs(var - m2 / M) < 1e-4 * (m2 / M))) {
                ok = 0;
                snprintf(why, sizeof why, "stride %ld channel %ld: n %.0f mean %.7f vs %.7f, var %.7f vs %.7f", S, c,
                         (double)all.n, mean, ref_mean, var, m2 / M);
            }
        }
    check("fold_partials: chains of strides 1-200 over 143 partials (the last of 6 rows) and 5 without rows (NaN, "
          "never read) merge to the float64 statistics",
          ok, "%s", why);
    free(ws_mean);
    free(ws_m2);
    free(x);
}

int main(void) {
    test_hand_cases();
    test_running_update();
    test_oracle();
    test_partials_offsets();
    test_fold_partials_edges();
    test_layouts();
    test_thread_count();
    test_inference();
    test_describe();
    test_supports();
    test_plans();
    test_regimes();
    test_dispatch();
    test_cudnn_slot();
    test_parsing();
    test_registry();
    return test_summary();
}
