// CPU tests (no GPU needed) of rmsnorm_forward: the reference (hand-checked cases, an independent float64
// oracle, weight offset, fused add with the dtype rounding of the residual, the strided QK-norm view), the
// shape strings and counted bytes, the launch plans (pack width, lanes per row, cluster size, each rung's block
// size under the dispatcher, the dispatcher's rule of regimes), option parsing (accepting paths; the error exits are tested from the shell) and the
// registry.
// Prints one line per test ("PASS name" / "FAIL name: why") and exits non-zero on failure; tests/run_tests.sh
// counts the lines. The validator and the input generator are common.h's, tested by test_cpu_layernorm.
#define NORM_NO_MAIN
#include "../rmsnorm_forward.cu"

#include "test_util.h"

// The plain reference on contiguous rows.
static void ref_plain(double *y, double *rstd, const double *x, const double *w, long N, long C, double eps,
                      double offset) {
    rmsnorm_forward_cpu(y, rstd, NULL, x, 1, C, w, NULL, N, C, eps, offset, DT_FP32);
}

// ---- the reference against hand-checked cases

static void test_reference_hand_cases(void) {
    const double eps = 1e-6;
    {  // a constant row c: mean(x^2) = c^2, rstd = 1/sqrt(c^2 + eps), y = c * rstd * w (the sign of c kept)
        double x[4] = {3, 3, 3, 3}, w[4] = {2, -1, 0.5, 7}, y[4], r;
        ref_plain(y, &r, x, w, 1, 4, eps, 0.0);
        double s = 1 / sqrt(9 + eps);
        int ok = close_to(r, s, 1e-15);
        for (int c = 0; c < 4; c++) ok &= close_to(y[c], 3 * s * w[c], 1e-15);
        check("reference: constant row 3 gives rstd 1/sqrt(9+eps), y = 3 rstd w", ok, "rstd %g y0 %g", r, y[0]);
        double xn[4] = {-3, -3, -3, -3};
        ref_plain(y, &r, xn, w, 1, 4, eps, 0.0);
        ok = close_to(r, s, 1e-15);
        for (int c = 0; c < 4; c++) ok &= close_to(y[c], -3 * s * w[c], 1e-15) && close_to(fabs(y[c]), fabs(w[c]), 1e-6);
        check("reference: constant row -3 gives y = -w (to eps)", ok, "y0 %g", y[0]);
    }
    {  // a single nonzero value a in a row of 4: mean(x^2) = a^2/4, y = a * 2/sqrt(a^2 + 4 eps) there, 0 elsewhere
        double x[4] = {0, 0, -2, 0}, w[4] = {1, 1, 1, 1}, y[4], r;
        ref_plain(y, &r, x, w, 1, 4, eps, 0.0);
        check("reference: one nonzero value", close_to(r, 1 / sqrt(1 + eps), 1e-15) && y[0] == 0 && y[1] == 0 && y[3] == 0 &&
                                                   close_to(y[2], -2 / sqrt(1 + eps), 1e-15),
              "rstd %g y %g %g %g %g", r, y[0], y[1], y[2], y[3]);
    }
    {  // C = 1: rstd = 1/sqrt(x^2 + eps), y = x * rstd * w ~ sign(x) * w; a zero gives rstd 1/sqrt(eps), y 0
        double x[3] = {-7, 0, 0.5}, w[1] = {4}, y[3], r[3];
        ref_plain(y, r, x, w, 3, 1, eps, 0.0);
        int ok = close_to(r[0], 1 / sqrt(49 + eps), 1e-15) && close_to(y[0], -28 / sqrt(49 + eps), 1e-15);
        ok &= close_to(r[1], 1 / sqrt(eps), 1e-12) && y[1] == 0;
        ok &= close_to(r[2], 1 / sqrt(0.25 + eps), 1e-15) && close_to(y[2], 2 / sqrt(0.25 + eps), 1e-15);
        check("reference: C = 1 gives y = sign(x) w (to eps), 0 for x = 0", ok, "y %g %g %g rstd %g %g %g", y[0], y[1], y[2],
              r[0], r[1], r[2]);
    }
    {  // eps 0: exact values, [3, 4] -> mean square 12.5
        double x[2] = {3, 4}, w[2] = {1, -2}, y[2], r;
        ref_plain(y, &r, x, w, 1, 2, 0.0, 0.0);
        double s = 1 / sqrt(12.5);
        check("reference: eps 0, [3, 4] gives rstd 1/sqrt(12.5)",
              close_to(r, s, 1e-15) && close_to(y[0], 3 * s, 1e-15) && close_to(y[1], -8 * s, 1e-15), "rstd %g", r);
    }
    {  // eps 0 and a zero row: rstd inf, y NaN (0 * inf): the validator then wants the same kind from the GPU
        double x[2] = {0, 0}, w[2] = {1, 1}, y[2], r;
        ref_plain(y, &r, x, w, 1, 2, 0.0, 0.0);
        check("reference: eps 0 and a zero row give rstd inf, y NaN", isinf(r) && isnan(y[0]) && isnan(y[1]));
    }
    {  // the eps actually used: rows of mean square 1 move by eps/2 relative
        double x[2] = {1, -1}, w[2] = {1, 1}, y[2], r;
        ref_plain(y, &r, x, w, 1, 2, 1e-2, 0.0);
        check("reference: eps enters as 1/sqrt(mean(x^2) + eps)", close_to(r, 1 / sqrt(1.01), 1e-15), "rstd %g", r);
    }
}

// ---- the reference against an independent float64 computation (long double, another loop order)

static double oracle_worst(const double *x, const double *w, const double *y, const double *r, long N, long C, double eps,
                           double offset) {
    double worst = 0;
    for (long i = 0; i < N; i++) {
        long double ss = 0;
        for (long c = C - 1; c >= 0; c--) ss += (long double)x[i * C + c] * x[i * C + c];  // backwards
        long double rstd = 1.0L / sqrtl(ss / C + (long double)eps);
        worst = fmax(worst, fabs((double)(rstd - r[i])) / (double)rstd);
        for (long c = 0; c < C; c++) {
            long double yy = x[i * C + c] * rstd * ((long double)w[c] + offset);
            worst = fmax(worst, fabs((double)(yy - y[i * C + c])) / fmax(1.0, fabs((double)yy)));
        }
    }
    return worst;
}

static void test_reference_oracle(void) {
    const long N = 37, C = 1000;
    double *x = host_alloc_doubles(N * C), *w = host_alloc_doubles(C);
    double *y = host_alloc_doubles(N * C), *r = host_alloc_doubles(N);
    for (int d = 0; d < DT_COUNT; d++) {
        host_fill_normal(x, N * C, (dtype_t)d, 99, 0, 0.5, 2.0);
        host_fill_normal(w, C, (dtype_t)d, 99, 1, 1.0, 0.25);
        ref_plain(y, r, x, w, N, C, 1e-6, 0.0);
        double worst = oracle_worst(x, w, y, r, N, C, 1e-6, 0.0);
        char name[128];
        snprintf(name, sizeof name, "reference: matches a long-double oracle (37x1000 %s, mean 0.5, std 2)",
                 dtype_name((dtype_t)d));
        check(name, worst < 1e-12, "worst relative difference %g", worst);
    }
    // with an offset, and rows of very different scale (rstd far from 1)
    host_fill_normal(x, N * C, DT_FP32, 5, 0, 0.0, 1e-3);
    for (long i = 0; i < C; i++) x[i] *= 1e6;  // row 0 at std 1e3, the others at 1e-3
    host_fill_normal(w, C, DT_FP32, 5, 1, 0.0, 0.25);
    ref_plain(y, r, x, w, N, C, 1e-6, 1.0);
    double worst = oracle_worst(x, w, y, r, N, C, 1e-6, 1.0);
    check("reference: matches the oracle with --weight-offset 1 and rows of std 1e3 and 1e-3", worst < 1e-12,
          "worst relative difference %g", worst);
    free(x); free(w); free(y); free(r);
}

// ---- weight offset

static void test_weight_offset(void) {
    {  // eps 0, unit mean square: y = x * (w + F) exactly
        double x[4] = {1, -1, 1, -1}, w[4] = {0, 0.5, -1, 2}, y[4], r;
        ref_plain(y, &r, x, w, 1, 4, 0.0, 1.0);
        check("offset: y = x rstd (w + 1), hand values", r == 1 && y[0] == 1 && y[1] == -1.5 && y[2] == 0 && y[3] == -3,
              "y %g %g %g %g", y[0], y[1], y[2], y[3]);
    }
    {  // weight w with offset F is weight w + F with offset 0
        const long N = 5, C = 33;
        double x[N * C], w[C], wf[C], y1[N * C], y2[N * C], r1[N], r2[N];
        host_fill_normal(x, N * C, DT_BF16, 3, 0, 0.0, 1.0);
        host_fill_normal(w, C, DT_BF16, 3, 1, 0.0, 0.25);
        for (long c = 0; c < C; c++) wf[c] = w[c] + 0.75;
        ref_plain(y1, r1, x, w, N, C, 1e-6, 0.75);
        ref_plain(y2, r2, x, wf, N, C, 1e-6, 0.0);
        check("offset: (w, F) gives the same y and rstd as (w + F, 0)",
              memcmp(y1, y2, sizeof y1) == 0 && memcmp(r1, r2, sizeof r1) == 0);
    }
}

// ---- fused add: the residual is updated (rounded to the dtype) and y comes from the rounded sum

static void test_fused_add(void) {
    {  // hand values (fp32): sum [1.5, 0, 4, 4], mean square 8.5625
        double x[4] = {0.5, -2, 1, 0}, res[4] = {1, 2, 3, 4}, w[4] = {1, 2, -1, 0.5}, y[4], r, ro[4];
        rmsnorm_forward_cpu(y, &r, ro, x, 1, 4, w, res, 1, 4, 1e-6, 0.0, DT_FP32);
        double s = 1 / sqrt(8.5625 + 1e-6), sum[4] = {1.5, 0, 4, 4};
        int ok = close_to(r, s, 1e-15);
        for (int c = 0; c < 4; c++) ok &= ro[c] == sum[c] && close_to(y[c], sum[c] * s * w[c], 1e-15);
        ok &= res[0] == 1 && res[3] == 4;  // the input copy is not touched (the GPU buffer is restored by reset)
        check("fused add: residual = residual + x, y = rmsnorm(residual), hand values", ok, "rstd %g y0 %g ro0 %g", r, y[0], ro[0]);
    }
    {  // rounding: 1 + 2^-9 is exact in fp32 and fp16 (11 bits), rounds to 1 in bf16 (8 bits); y and rstd follow
        double x[1] = {ldexp(1.0, -9)}, res[1] = {1.0}, w[1] = {1.0}, y, r, ro;
        double want[DT_COUNT] = {1 + ldexp(1.0, -9), 1 + ldexp(1.0, -9), 1.0};
        for (int d = 0; d < DT_COUNT; d++) {
            rmsnorm_forward_cpu(&y, &r, &ro, x, 1, 1, w, res, 1, 1, 1e-6, 0.0, (dtype_t)d);
            double v = want[d];
            char name[128];
            snprintf(name, sizeof name, "fused add: the residual is rounded to %s and that value is normalized",
                     dtype_name((dtype_t)d));
            check(name, ro == v && r == 1 / sqrt(v * v + 1e-6) && y == v * (1 / sqrt(v * v + 1e-6)), "ro %.10g r %.10g y %.10g",
                  ro, r, y);
        }
    }
    {  // the sum is formed in fp32 and then rounded to the dtype (as the GPU does), not rounded once from the exact
       // sum: 1 + 2^-11 + 2^-30 is 1 + 2^-11 in fp32, a tie that fp16 rounds to even (1); rounded directly it
       // would be 1 + 2^-10
        double x[1] = {ldexp(1.0, -11) + ldexp(1.0, -30)}, res[1] = {1.0}, w[1] = {1.0}, y, r, ro;
        rmsnorm_forward_cpu(&y, &r, &ro, x, 1, 1, w, res, 1, 1, 0.0, 0.0, DT_FP16);
        check("fused add: fp16 residual = fp16(fp32(res + x)), the GPU's double rounding", ro == 1.0, "ro %.12g", ro);
    }
    {  // random rows in each dtype: y and rstd equal the plain reference applied to the returned residual
        const long N = 9, C = 257;
        static double x[N * C], res[N * C], w[C], ro[N * C], y1[N * C], y2[N * C], r1[N], r2[N];
        for (int d = 0; d < DT_COUNT; d++) {
            host_fill_normal(x, N * C, (dtype_t)d, 11, 0, 0.0, 1.0);
            host_fill_normal(res, N * C, (dtype_t)d, 11, 2, 0.0, 1.0);
            host_fill_normal(w, C, (dtype_t)d, 11, 1, 1.0, 0.25);
            rmsnorm_forward_cpu(y1, r1, ro, x, 1, C, w, res, N, C, 1e-6, 0.5, (dtype_t)d);
            ref_plain(y2, r2, ro, w, N, C, 1e-6, 0.5);
            int ok = memcmp(y1, y2, sizeof y1) == 0 && memcmp(r1, r2, sizeof r1) == 0;
            long changed = 0;
            for (long i = 0; i < N * C; i++) {
                ok &= ro[i] == round_to_dtype(res[i] + x[i], (dtype_t)d);
                ok &= fabs(ro[i] - (res[i] + x[i])) <= fabs(res[i] + x[i]) * ldexp(1.0, d == DT_FP32 ? -24 : d == DT_FP16 ? -11 : -8);
                changed += ro[i] != res[i];
            }
            char name[128];
            snprintf(name, sizeof name, "fused add: %s rows, y = plain reference of the stored residual", dtype_name((dtype_t)d));
            check(name, ok && changed > N * C / 2, "changed %ld", changed);
        }
    }
}

static void test_round_to_dtype(void) {
    check("round_to_dtype: fp32 rounds doubles to float", round_to_dtype(1.0 + ldexp(1.0, -30), DT_FP32) == 1.0 &&
                                                              round_to_dtype(0.1, DT_FP32) == (double)0.1f);
    check("round_to_dtype: fp16 and bf16 keep 11 and 8 significant bits",
          round_to_dtype(1.0 + ldexp(1.0, -10), DT_FP16) == 1.0 + ldexp(1.0, -10) &&
              round_to_dtype(1.0 + ldexp(1.0, -10), DT_BF16) == 1.0 && round_to_dtype(3.0, DT_BF16) == 3.0 &&
              round_to_dtype(70000.0, DT_FP16) == INFINITY);
}

// ---- the strided QK-norm view: rows of D inside tokens of stride S; the gaps must never be read

static void test_qk_view(void) {
    const long T = 3, H = 2, D = 4, S = 11;  // 8 q elements per token, then 3 of garbage
    double buf[T * S], compact[T * H * D], w[D] = {1, -0.5, 2, 0.25};
    for (long i = 0; i < T * S; i++) buf[i] = nan("");
    for (long t = 0; t < T; t++)
        for (long j = 0; j < H * D; j++) buf[t * S + j] = compact[t * H * D + j] = 0.1 * (double)(t * 13 + j * 7 % 5) - 0.4;
    double y1[T * H * D], y2[T * H * D], r1[T * H], r2[T * H];
    rmsnorm_forward_cpu(y1, r1, NULL, buf, H, S, w, NULL, T * H, D, 1e-6, 0.0, DT_FP32);
    ref_plain(y2, r2, compact, w, T * H, D, 1e-6, 0.0);
    int finite = 1;
    for (long i = 0; i < T * H * D; i++) finite &= isfinite(y1[i]);
    check("QK view: the reference reads only the q part (NaN gaps do not reach y)", finite);
    check("QK view: rows of the strided view equal the same rows stored contiguously",
          memcmp(y1, y2, sizeof y1) == 0 && memcmp(r1, r2, sizeof r1) == 0);
    // row r = (token r / H, head r % H): row 3 is token 1, head 1, at buf[11 + 4 ..]
    double ss = 0;
    for (int d = 0; d < D; d++) ss += buf[11 + 4 + d] * buf[11 + 4 + d];
    check("QK view: row 3 is token 1, head 1", close_to(r1[3], 1 / sqrt(ss / D + 1e-6), 1e-15), "rstd %g", r1[3]);
    // q inside a qkv buffer (S = 3 H D) with huge k and v: any read of them would show in rstd
    const long T2 = 5, H2 = 3, D2 = 8, S2 = 3 * H2 * D2;
    static double qkv[T2 * S2], q[T2 * H2 * D2], w2[D2], ya[T2 * H2 * D2], yb[T2 * H2 * D2], ra[T2 * H2], rb[T2 * H2];
    host_fill_normal(qkv, T2 * S2, DT_BF16, 21, 0, 0.0, 1.0);
    host_fill_normal(w2, D2, DT_BF16, 21, 1, 1.0, 0.25);
    for (long t = 0; t < T2; t++)
        for (long j = 0; j < S2; j++) {
            if (j < H2 * D2) q[t * H2 * D2 + j] = qkv[t * S2 + j];
            else qkv[t * S2 + j] = 1e30;
        }
    rmsnorm_forward_cpu(ya, ra, NULL, qkv, H2, S2, w2, NULL, T2 * H2, D2, 1e-6, 0.0, DT_BF16);
    ref_plain(yb, rb, q, w2, T2 * H2, D2, 1e-6, 0.0);
    check("QK view: q inside a qkv buffer (k, v = 1e30) is normalized from q alone",
          memcmp(ya, yb, sizeof ya) == 0 && memcmp(ra, rb, sizeof ra) == 0);
}

// ---- shapes, strings, bytes

static void reset_options(void) {
    g_eps = 1e-6;
    g_offset = 0.0;
    g_fused = 0;
    g_heads = g_head_dim = g_row_stride = 0;
    g_cluster = g_packs = 0;
}

static options_t parse(const char *line) {
    reset_options();  // the program's own options back to their defaults
    return parse_line(&k_program, line);
}

static void shape_of(const char *line, rms_shape_t *s, char *shape, char *desc) {
    options_t o = parse(line);
    const char *err = rms_shape_from_options(&o, s);
    if (err) printf("  (unexpected: %s)\n", err);
    rms_shape_strings(s, shape, 64, desc, 96);
}

static void test_parsing_and_shapes(void) {
    rms_shape_t s;
    char shape[64], desc[96];
    options_t o = parse("");
    shape_of("", &s, shape, desc);
    check("parse: defaults are rows 8192, C 4096, eps 1e-6, the dispatcher, fp32, sweep",
          o.rows == 8192 && o.cols == 4096 && o.kernel == KERNEL_DEFAULT && o.dtype == DT_FP32 && o.block_size == 0 &&
              g_eps == 1e-6 && !g_fused && g_offset == 0 && !s.qk && s.N == 8192 && s.C == 4096 && s.H == 1 && s.S == 4096);
    check("shape: plain is \"8192x4096\"", strcmp(shape, "8192x4096") == 0 && strcmp(desc, "rows 8192 cols 4096") == 0,
          "'%s' '%s'", shape, desc);

    o = parse("5 --fused-add --eps 1e-5 -N 100 -C 33 --dtype bf16");
    shape_of("5 --fused-add --eps 1e-5 -N 100 -C 33 --dtype bf16", &s, shape, desc);
    check("parse: --fused-add, --eps", o.kernel == 5 && g_fused == 1 && g_eps == 1e-5 && s.fused && s.eps == 1e-5 &&
                                           s.N == 100 && s.C == 33 && o.dtype == DT_BF16);
    check("shape: fused add is \"100x33:add\"", strcmp(shape, "100x33:add") == 0, "'%s'", shape);

    shape_of("--weight-offset 1", &s, shape, desc);
    check("parse: --weight-offset 1 (Gemma)", g_offset == 1.0 && s.offset == 1.0);
    check("shape: offset 1 is \"8192x4096:off1\"", strcmp(shape, "8192x4096:off1") == 0, "'%s'", shape);
    shape_of("--weight-offset 0.5 --fused-add -N 4 -C 10", &s, shape, desc);
    check("shape: \"4x10:add:off0.5\", offsets formatted compactly", strcmp(shape, "4x10:add:off0.5") == 0 &&
                                                                         strstr(desc, "weight offset 0.5") != NULL,
          "'%s' '%s'", shape, desc);
    shape_of("--weight-offset -1e-3 -N 4 -C 10", &s, shape, desc);
    check("shape: negative offset \"4x10:off-0.001\"", strcmp(shape, "4x10:off-0.001") == 0, "'%s'", shape);

    shape_of("--heads 32 --head-dim 128", &s, shape, desc);
    check("parse: QK-norm defaults: 4096 tokens, stride 3*H*D, rows = tokens*H",
          s.qk && s.tokens == 4096 && s.H == 32 && s.C == 128 && s.S == 12288 && s.N == 4096L * 32 && !s.fused);
    check("shape: QK-norm is \"4096x32x128:s12288\"", strcmp(shape, "4096x32x128:s12288") == 0 &&
                                                         strcmp(desc, "tokens 4096 heads 32 head_dim 128 stride 12288") == 0,
          "'%s' '%s'", shape, desc);
    shape_of("-N 7 --heads 3 --head-dim 64 --row-stride 200 --weight-offset 1", &s, shape, desc);
    check("parse: QK-norm with -N (tokens), --row-stride and an offset",
          s.qk && s.tokens == 7 && s.N == 21 && s.C == 64 && s.S == 200 && strcmp(shape, "7x3x64:s200:off1") == 0, "'%s'", shape);
    shape_of("-B 2 -T 3 --heads 2 --head-dim 5 --row-stride 10", &s, shape, desc);
    check("parse: QK-norm with -B/-T (tokens = B*T) and a stride of exactly H*D", s.tokens == 6 && s.S == 10 && s.N == 12);

    // counted bytes: x read, y written, weight read, rstd written; residual read + written; QK: the q part only
    rms_shape_t p = {8192, 4096, 8192, 1, 4096, 0, 0, 1e-6, 0};
    check("bytes: plain fp32 = 2 N C 4 + C 4 + N 4", rms_bytes(&p, DT_FP32) == 2.0 * 8192 * 4096 * 4 + 4096 * 4 + 8192 * 4);
    p.fused = 1;
    check("bytes: fused add bf16 adds the residual read and written",
          rms_bytes(&p, DT_BF16) == 4.0 * 8192 * 4096 * 2 + 4096 * 2 + 8192 * 4);
    rms_shape_t q = {4096L * 32, 128, 4096, 32, 12288, 1, 0, 1e-6, 0};
    check("bytes: QK-norm counts only the q part (not the qkv buffer)",
          rms_bytes(&q, DT_BF16) == 2.0 * 4096 * 32 * 128 * 2 + 128 * 2 + 4096.0 * 32 * 4);

    // option combinations check_options refuses (the exit 2 itself is tested from the shell)
    struct { long heads, head_dim, stride; int fused; long cols, rows; const char *what, *want; } bad[] = {
        {4, 0, 0, 0, 0, 0, "--heads 4", "--heads needs --head-dim"},
        {0, 64, 0, 0, 0, 0, "--head-dim 64", "--head-dim needs --heads"},
        {0, 0, 100, 0, 0, 0, "--row-stride 100", "--row-stride needs --heads"},
        {4, 64, 255, 0, 0, 0, "--heads 4 --head-dim 64 --row-stride 255", "smaller than heads x head-dim = 256"},
        {4, 64, 0, 1, 0, 0, "--heads 4 --head-dim 64 --fused-add", "--fused-add does not combine"},
        {4, 64, 0, 0, 64, 0, "--heads 4 --head-dim 64 -C 64", "-C/--cols does not apply"},
        {1024, 1L << 22, 0, 0, 0, 0, "--heads 1024 --head-dim 4194304", "too large"},
        {64, 1024, 0, 0, 0, 100000, "-N 100000 --heads 64 --head-dim 1024", "too large"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        options_t ob;
        memset(&ob, 0, sizeof ob);
        ob.rows = bad[i].rows ? bad[i].rows : 8192;
        ob.rows_set = bad[i].rows != 0;
        ob.cols = bad[i].cols ? bad[i].cols : 4096;
        ob.cols_set = bad[i].cols != 0;
        reset_options();
        g_heads = bad[i].heads;
        g_head_dim = bad[i].head_dim;
        g_row_stride = bad[i].stride;
        g_fused = bad[i].fused;
        const char *err = check_options(&ob);
        char name[160];
        snprintf(name, sizeof name, "check_options refuses '%s'", bad[i].what);
        check(name, err && strstr(err, bad[i].want), "got '%s'", err ? err : "(accepted)");
    }
    // parse_extra's own refusals
    check("parse_extra: bad values are refused with the option named",
          strstr(parse_extra(OPT_EPS, "-1"), "eps '-1'") && strstr(parse_extra(OPT_OFFSET, "inf"), "weight offset 'inf'") &&
              strstr(parse_extra(OPT_HEADS, "0"), "heads '0'") && strstr(parse_extra(OPT_HEAD_DIM, "x"), "head dim 'x'") &&
              strstr(parse_extra(OPT_ROW_STRIDE, "-3"), "row stride '-3'"));
    int packs_ok = !parse_extra(OPT_PACKS, "2") && g_packs == 2 && !parse_extra(OPT_PACKS, "4") && g_packs == 4 &&
                   !parse_extra(OPT_PACKS, "0") && g_packs == 0;
    for (const char *bad_packs : {"1", "3", "5", "8", "-2", "x"}) {
        const char *why = parse_extra(OPT_PACKS, bad_packs);
        char want[48];
        snprintf(want, sizeof want, "packs a thread '%s'", bad_packs);
        packs_ok &= why && strstr(why, want) && g_packs == 0;
    }
    check("parse_extra: --packs takes 0 (the plan's), 2 and 4, and names any other value", packs_ok);
    reset_options();
    check("parse: --list needs no shape", parse("--list").list);
    reset_options();
}

// ---- launch plans (pure functions, documented by example)

// A plain problem (or a strided view of rows of C every S) as the planners see it: dtype, rows, C, S.
static rms_problem_t plan_problem(dtype_t d, long N, long C, long S) {
    rms_problem_t p;
    memset(&p, 0, sizeof p);
    p.h.dtype = d;
    p.s.N = p.s.tokens = N;
    p.s.C = C;
    p.s.S = S;
    p.s.H = 1;
    return p;
}
static void test_plans(void) {
    check("plan: pack width divides C and the stride, 16 bytes when it can",
          vec_width_for(DT_FP32, 4096, 4096) == 4 && vec_width_for(DT_BF16, 64, 200) == 8 &&
              vec_width_for(DT_FP32, 64, 200) == 4 && vec_width_for(DT_FP16, 33, 170) == 1 &&
              vec_width_for(DT_BF16, 256, 513) == 1 && vec_width_for(DT_FP32, 1026, 1026) == 2 &&
              vec_width_for(DT_FP16, 128, 12288) == 8);
    check("plan: kernel 6 lanes per row (4 packs a lane, a warp holds up to 8 each)",
          subwarp_tpr(1) == 1 && subwarp_tpr(4) == 1 && subwarp_tpr(5) == 2 && subwarp_tpr(16) == 4 && subwarp_tpr(128) == 32 &&
              subwarp_tpr(256) == 32 && subwarp_tpr(257) == 0);
    rms_problem_t pf = plan_problem(DT_FP32, 100, 512, 512), pf2 = plan_problem(DT_FP32, 100, 1024, 1024),
                  pb = plan_problem(DT_BF16, 100, 1024, 1024), pb2 = plan_problem(DT_BF16, 100, 2048, 2048),
                  pv = plan_problem(DT_FP32, 100, 130, 130), pq = plan_problem(DT_BF16, 100, 128, 12288);
    check("plan: kernel 11 takes 16-byte rows of at most 4 packs a lane (fp32 C <= 512, 16-bit C <= 1024; the QK "
          "view too)",
          persist_fn(&pf) && !persist_fn(&pf2) && persist_fn(&pb) && !persist_fn(&pb2) && !persist_fn(&pv) &&
              persist_fn(&pq));
    check("plan: kernel 5 packs per thread", rowreg_packs(1000, 256, 8) == 4 && rowreg_packs(4097, 512, 8) == 0 &&
                                                 rowreg_packs(4097, 1024, 8) == 8 && rowreg_packs(1, 32, 8) == 1);
    rms_problem_t r5 = plan_problem(DT_BF16, 1107, 7480, 7480), r5a = r5;
    r5a.s.fused = 1;
    check("plan: kernels 4 and 5 give the fused add's row (three streams) C / 8 threads at least: bf16 1107 x 7480 "
          "256 and 1024 (kernel 5), 512 and 1024 (kernel 4)",
          block_row_cache_bs(&r5) == 256 && block_row_cache_bs(&r5a) == 1024 && plan_block2d_vec(&r5) == 512 &&
              plan_block2d_vec(&r5a) == 1024);
    int cl = 0, packs = 0;
    int ok = cluster_plan(16384, 512, &cl, &packs) && cl == 8 && packs == 4;
    ok &= cluster_plan(8192, 512, &cl, &packs) && cl == 4 && packs == 4;
    ok &= cluster_plan(10, 1024, &cl, &packs) && cl == 1 && packs == 4;
    ok &= cluster_plan(4097, 128, &cl, &packs) && cl == 8 && packs == 8;
    ok &= cluster_plan(65536, 1024, &cl, &packs) && cl == 8 && packs == 8;
    ok &= !cluster_plan(65537, 1024, &cl, &packs) && !cluster_plan(4097, 64, &cl, &packs);
    check("plan: kernel 7 cluster size (4 packs a thread, else 8 blocks x 8 packs)", ok);

    // kernel 8's own plan (split_row_plan), rows of one block (no cluster: no device needed)
    rms_problem_t q = plan_problem(DT_BF16, 4, 4096, 4096);
    int lcl = 0, lbs = latency_split_plan(&q, 0, 4, &lcl);
    check("plan: kernel 8 at 4 packs, bf16 4 x 4096: one block of 128 threads (4 packs of 8 each)", lbs == 128 &&
          lcl == 1, "bs %d cl %d", lbs, lcl);
    // its blocks a row (split_row_blocks, 132 SMs): the rule's fewest blocks of 512 threads, doubled for few rows
    // that need a cluster anyway; a block size given: the fewest blocks of that size, no doubling (fp32 rows of
    // 8192 = 2048 packs, 32768 = 8192 packs, 4 packs a thread)
    int b_rule = split_row_blocks(16, 2048, 4, 512, 0, 132), b128 = split_row_blocks(16, 2048, 4, 512, 128, 132),
        b32 = split_row_blocks(16, 2048, 4, 512, 32, 132), b_long = split_row_blocks(4, 8192, 4, 512, 0, 132),
        b_long256 = split_row_blocks(4, 8192, 4, 512, 256, 132), b_many = split_row_blocks(64, 8192, 4, 512, 0, 132);
    check("plan: blocks a row, fp32 16 x 8192: the rule 1, 128 threads 4, 32 threads 16; fp32 4 x 32768: the rule "
          "4 doubled to 16, 256 threads 8; 64 rows x 32768: 4 (no room to double)",
          b_rule == 1 && b128 == 4 && b32 == 16 && b_long == 16 && b_long256 == 8 && b_many == 4,
          "%d %d %d %d %d %d", b_rule, b128, b32, b_long, b_long256, b_many);
    // its threads at a plan's power of two (split_row_threads): the same blocks, the fewest threads that hold the
    // row (bf16 C = 5120: 640 packs, 256 -> 160; C = 17800: 2225 packs over 4 blocks of 256 -> 160; a power of two
    // kept), and over a grid: never more than bs, a multiple of 32, the blocks of bs holding the row at that size
    int trim_ok = 1;
    for (long nv = 1; nv <= 70000; nv = nv * 3 / 2 + 1)
        for (int pk = 1; pk <= 4; pk *= 2)
            for (int tb = 32; tb <= 512; tb *= 2) {
                const int t = split_row_threads(nv, pk, tb), cl = split_row_blocks(1000, nv, pk, 512, tb, 132);
                trim_ok &= t >= 32 && t <= tb && t % 32 == 0 && (nv > 16L * tb * pk || (long)cl * t * pk >= nv);
            }
    check("plan: kernel 8's threads trimmed to the row at its blocks: 640 packs 160, 2225 packs 160, 2048 at 2 packs "
          "256; every trimmed size holds its row",
          split_row_threads(640, 4, 256) == 160 && split_row_threads(2225, 4, 256) == 160 &&
              split_row_threads(2048, 2, 256) == 256 && split_row_threads(10, 4, 32) == 32 && trim_ok,
          "%d %d %d %d grid %d", split_row_threads(640, 4, 256), split_row_threads(2225, 4, 256),
          split_row_threads(2048, 2, 256), split_row_threads(10, 4, 32), trim_ok);
    check("kernel 8 skips --fused-add, the QK-norm view and narrow packs",
          (q.s.fused = 1, supports_latency_split(&q, 0) != NULL) &&
              (q = plan_problem(DT_BF16, 4, 128, 384), q.s.H = 3, supports_latency_split(&q, 0) != NULL) &&
              (q = plan_problem(DT_FP32, 4, 4097, 4097), supports_latency_split(&q, 0) != NULL));
    // the same row at 2 packs a thread: twice the threads in one block; at a block size given, twice the blocks a
    // row (fp32 16 x 8192 = 2048 packs: 128 threads -> 8 blocks where 4 packs take 4)
    rms_problem_t e = plan_problem(DT_BF16, 4, 4096, 4096);
    int ecl = 0, ebs = latency_split_plan(&e, 0, 2, &ecl);
    check("plan: kernel 8 at 2 packs, bf16 4 x 4096: one block of 256 threads (2 packs of 8 each)", ebs == 256 &&
          ecl == 1, "bs %d cl %d", ebs, ecl);
    check("plan: kernel 8's blocks a row at 2 packs, fp32 16 x 8192 at 128 threads 8, at 64 threads 16; the rule 2 "
          "doubled to 8",
          split_row_blocks(16, 2048, 2, 512, 128, 132) == 8 && split_row_blocks(16, 2048, 2, 512, 64, 132) == 16 &&
              split_row_blocks(16, 2048, 2, 512, 0, 132) == 8);
    // --packs 2 forced: its refusals (reasonf's text lives in one buffer: each reason is read before the next)
    g_packs = 2;
    const char *why;
    int said = (e.s.fused = 1, why = supports_latency_split(&e, 0), why && strstr(why, "no --fused-add"));
    said &= (e = plan_problem(DT_BF16, 4, 128, 384), e.s.H = 3, why = supports_latency_split(&e, 0),
             why && strstr(why, "no QK-norm view"));
    said &= (e = plan_problem(DT_FP32, 4, 4097, 4097), why = supports_latency_split(&e, 0),
             why && strstr(why, "needs 16-byte packs"));
    said &= (e = plan_problem(DT_FP32, 1, 131072, 131072), why = supports_latency_split(&e, 0),
             why && strstr(why, "exceeds 16 blocks x 512 threads x 2 packs of 4"));
    g_packs = 4;
    said &= (why = supports_latency_split(&e, 0), why && !strstr(why, "exceeds"));  // (no device: no cluster)
    g_packs = 0;
    check("kernel 8 at --packs 2 skips --fused-add, the QK-norm view, narrow packs, and fp32 rows over 16 x 512 x 2 "
          "packs, which 4 packs a thread hold", said);
}

// ---- kernel 10's plan: the fewest blocks (a power of two, <= 16) whose slices hold at most 64 KB, or --cluster

static void test_cp_async_plan(void) {
    cp_plan_t a = cp_slice_plan(65536 / 4, 0), b = cp_slice_plan(65536 / 8, 0), c = cp_slice_plan(16384 / 8, 0),
              d = cp_slice_plan(131072 / 4, 0), e = cp_slice_plan(4097, 0), f = cp_slice_plan(3, 16),
              g = cp_slice_plan(1u << 20, 0);
    check("plan: kernel 10 at fp32 C 65536 -> 4 blocks of 4096 packs (64 KB)", a.cl == 4 && a.slice == 4096, "%d %d",
          a.cl, a.slice);
    check("plan: kernel 10 at bf16 C 65536 -> 2 blocks of 4096 packs, at bf16 C 16384 one block", b.cl == 2 &&
          b.slice == 4096 && c.cl == 1 && c.slice == 2048);
    check("plan: kernel 10 at fp32 C 131072 -> 8 blocks; 4097 packs -> 2 blocks of 2049 (the last one short)",
          d.cl == 8 && d.slice == 4096 && e.cl == 2 && e.slice == 2049);
    check("plan: --cluster 16 over 3 packs: slices of one pack (13 blocks hold nothing); 16 MB rows stop at 16 blocks",
          f.cl == 16 && f.slice == 1 && g.cl == 16 && g.slice == 65536);
    rms_problem_t q = plan_problem(DT_BF16, 4, 4096, 4096);
    q.s.fused = 1;
    const char *why_fused = supports_cluster_cp_async(&q, 256);
    q = plan_problem(DT_FP32, 4, 4097, 4097);
    const char *why_packs = supports_cluster_cp_async(&q, 256);
    check("kernel 10 skips --fused-add and rows without 16-byte packs, and says which",
          why_fused && strstr(why_fused, "no --fused-add") && why_packs && strstr(why_packs, "needs 16-byte packs"));
}

// ---- the rungs' plans (their block size under the dispatcher) and the rule of regimes, on a GPU of 132 SMs (no
// device: g_dev's SM count set by hand; the plans' pure formulas, <rung>_bs, and the parts of the rungs' checks
// that need no GPU)

static rms_problem_t qk_problem(dtype_t d, long tokens, long H, long D, long S) {
    rms_problem_t p = plan_problem(d, tokens * H, D, S);
    p.s.tokens = tokens;
    p.s.H = H;
    p.s.qk = 1;
    return p;
}

static void test_rung_plans(void) {
    const cudaDeviceProp saved = g_dev.prop;
    g_dev.prop.multiProcessorCount = 132;
    rms_problem_t p;
    // by example (the formulas of the plans' comments)
    p = plan_problem(DT_BF16, 4096, 4096, 4096);  // 512 packs, 31 rows an SM: 2048 / 31 -> 64, at least 128 (C / 32)
    int b5a = block_row_cache_bs(&p);
    p = plan_problem(DT_FP32, 1, 8192, 8192);  // 2048 packs, one row: a pack a thread up to 1024
    int b5b = block_row_cache_bs(&p);
    p = plan_problem(DT_FP32, 512, 11584, 11584);  // 2896 packs, 3.9 rows an SM: 512 (2048 / 3.9), >= C / 32 = 362
    int b5c = block_row_cache_bs(&p);
    check("plan: kernel 5 at bf16 4096x4096 128 threads, fp32 1x8192 1024, fp32 512x11584 512", b5a == 128 &&
          b5b == 1024 && b5c == 512, "%d %d %d", b5a, b5b, b5c);
    p = plan_problem(DT_BF16, 32768, 256, 256);  // 8 lanes a row x 248 rows an SM x 4 -> capped at 128
    int b6a = subwarp_rows_bs(&p);
    p = plan_problem(DT_BF16, 8, 256, 256);
    int b6b = subwarp_rows_bs(&p);
    p = plan_problem(DT_BF16, 1024, 256, 256);  // 8 lanes a row x 7.8 rows an SM x 4 -> 248 -> 128
    int b6c = subwarp_rows_bs(&p);
    p = plan_problem(DT_FP32, 32768, 65, 65);  // a warp a row of 65 packs of one element, 248 rows an SM -> 256
    int b6d = subwarp_rows_bs(&p);
    p = plan_problem(DT_FP32, 132, 65, 65);  // one row an SM: 4 x 32 -> 128
    int b6e = subwarp_rows_bs(&p);
    check("plan: kernel 6 at 128 threads for many rows, 64 for few; 256 for a warp's row without 16-byte packs at many",
          b6a == 128 && b6b == 64 && b6c == 128 && b6d == 256 && b6e == 128, "%d %d %d %d %d", b6a, b6b, b6c, b6d,
          b6e);
    p = plan_problem(DT_FP32, 8, 65536, 65536);  // 16384 packs, few rows: 8 blocks x 32 packs a thread -> 512
    int b7a = cluster_dsmem_bs(&p);
    p = plan_problem(DT_BF16, 512, 131072, 131072);  // 16384 packs, 3.9 rows an SM: 64 packs a thread -> 256
    int b7b = cluster_dsmem_bs(&p);
    check("plan: kernel 7 at fp32 8x65536 512 threads, bf16 512x131072 256", b7a == 512 && b7b == 256, "%d %d", b7a,
          b7b);
    p = plan_problem(DT_FP32, 4, 8192, 8192);  // 2048 packs, few rows: at 4 half the packs a thread, at most 256; at 2
    int b8a = latency_split_bs(&p, 4), b8a2 = latency_split_bs(&p, 2);  // about 8 blocks of 128
    p = plan_problem(DT_FP32, 2, 262144, 262144);  // 65536 packs: 16 blocks need 1024, at most 512
    int b8b = latency_split_bs(&p, 4);
    p = plan_problem(DT_BF16, 32768, 704, 704);  // 88 packs, many rows: 4 packs a thread (32), 2 (64)
    int b8c = latency_split_bs(&p, 4), b8c2 = latency_split_bs(&p, 2);
    check("plan: kernel 8 at 4 and 2 packs, fp32 4x8192 256 and 128 threads; at 4, 2x262144 512; bf16 32768x704 32 "
          "and 64", b8a == 256 && b8a2 == 128 && b8b == 512 && b8c == 32 && b8c2 == 64, "%d %d %d %d %d", b8a, b8a2, b8b, b8c,
          b8c2);
    p = plan_problem(DT_BF16, 1868, 76688, 76688);  // 9586 packs, 14 rows an SM: 8 blocks of 512 (trimmed to 320)
    int b8d = latency_split_bs(&p, 4);
    p = plan_problem(DT_BF16, 64, 76688, 76688);  // 0.48 rows an SM: 16 blocks of 256 (trimmed to 160)
    int b8e = latency_split_bs(&p, 4);
    check("plan: kernel 8 at 4 packs, rows >= SMs: a row of 8193-16384 packs in 8 blocks of up to 512 (16 below)",
          b8d == 512 && split_row_threads(9586, 4, b8d) == 320 && b8e == 256 && split_row_threads(9586, 4, b8e) == 160,
          "%d %d", b8d, b8e);
    p = plan_problem(DT_BF16, 1, 131072, 131072);
    int b10 = cluster_cp_async_bs(&p), b4 = plan_block2d_vec(&p);
    check("plan: kernel 10 at most 512 threads, kernel 4 a pack a thread up to 1024", b10 == 512 && b4 == 1024,
          "%d %d", b10, b4);

    // over a grid of problems: each plan a power of two of 32..1024 that its rung's limits take
    const long Cs[] = {8, 64, 88, 128, 704, 1024, 2896, 4096, 4097, 16384, 32768, 65536, 131072};
    const long Ns[] = {1, 8, 512, 4096, 262144};
    int ok4 = 1, ok5 = 1, ok6 = 1, ok7 = 1, ok8 = 1, ok10 = 1, ok82 = 1;
    char bad[160] = "";
    for (int d = 0; d < DT_COUNT; d++)
        for (size_t i = 0; i < sizeof Cs / sizeof Cs[0]; i++)
            for (size_t j = 0; j < sizeof Ns / sizeof Ns[0]; j++) {
                p = plan_problem((dtype_t)d, Ns[j], Cs[i], Cs[i]);
                const int vec = vec_width(&p), full = vec == 16 / (int)dtype_size((dtype_t)d);
                const long nvec = Cs[i] / vec;
                int bs = plan_block2d_vec(&p);
                ok4 &= is_pow2(bs) && bs >= 32 && bs <= 1024;
                bs = block_row_cache_bs(&p);  // 16-byte rows in registers wherever 1024 threads x 8 packs hold them
                ok5 &= is_pow2(bs) && bs >= 32 && bs <= 1024 && (!full || nvec > 1024L * ROWREG_MAX_PACKS ||
                                                                  rowreg_packs(nvec, bs, ROWREG_MAX_PACKS) > 0);
                if (subwarp_tpr(nvec)) {
                    bs = subwarp_rows_bs(&p);
                    ok6 &= is_pow2(bs) && bs >= 64 && bs <= 128 && bs % subwarp_tpr(nvec) == 0;
                }
                int cl = 0, packs = 0;
                bs = cluster_dsmem_bs(&p);  // a cluster plan wherever 8 blocks of 1024 x 8 packs hold the row
                ok7 &= is_pow2(bs) && bs >= 32 && bs <= 1024 &&
                       (nvec > 8L * 1024 * 8 || cluster_plan(nvec, bs, &cl, &packs));
                if (full) {  // blocks of the plan's size hold the row in at most 16 (kernel 8 at 4 and 2 packs)
                    bs = latency_split_bs(&p, 4);
                    int blocks = split_row_blocks(Ns[j], nvec, 4, 512, bs, 132);
                    ok8 &= is_pow2(bs) && bs >= 32 && bs <= 512 && (nvec > 16L * 512 * 4 || (long)blocks * bs * 4 >= nvec);
                    bs = latency_split_bs(&p, 2);
                    blocks = split_row_blocks(Ns[j], nvec, 2, 512, bs, 132);
                    ok82 &= is_pow2(bs) && bs >= 32 && bs <= 512 && (nvec > 16L * 512 * 2 || (long)blocks * bs * 2 >= nvec);
                    bs = cluster_cp_async_bs(&p);
                    ok10 &= is_pow2(bs) && bs >= 32 && bs <= 512;
                }
                if (!(ok4 && ok5 && ok6 && ok7 && ok8 && ok10 && ok82) && !bad[0])
                    snprintf(bad, sizeof bad, "first miss at %s %ldx%ld", dtype_name((dtype_t)d), Ns[j], Cs[i]);
            }
    check("plan: kernels 4, 5, 7 a power of two of 32..1024; 5 keeps a 16-byte row in registers where 1024 x 8 "
          "packs hold it, 7 has a cluster plan where 8 x 1024 x 8 packs do", ok4 && ok5 && ok7, "%s", bad);
    check("plan: kernel 6 64..128 threads, whole rows a block; 8 at 4 and 2 packs at most 512 threads, 16 blocks of "
          "them holding the row where 16 x 512 threads can; 10 at most 512", ok6 && ok8 && ok10 && ok82, "%s", bad);
    p = qk_problem(DT_BF16, 64, 32, 128, 3 * 32 * 128);
    int q6 = subwarp_rows_bs(&p);
    check("plan: kernel 6 on the QK view counts its rows (tokens x heads: 2048, 15.5 an SM; 4 x 4 lanes x 15.5 -> 128)",
          q6 == 128, "%d", q6);
    g_dev.prop.multiProcessorCount = 0;  // no device known: one SM
    p = plan_problem(DT_BF16, 4096, 4096, 4096);
    check("plan: without a device's SMs the plans read one SM (no division by zero)", block_row_cache_bs(&p) == 128);
    // every rung the rule may run and that sizes its blocks has a plan; the others (0-3, 9, 12) none
    int plans = 1;
    for (int k = 0; k < 13; k++) {
        const kernel_t *e = &k_kernels[k];
        const int chooseable = k >= 4 && k <= 11 && e->dtypes == DT_ALL && !e->own_block;
        plans &= chooseable ? e->plan != NULL : e->plan == NULL;
    }
    check("registry: kernels 4-8, 10 and 11 have a plan; 9 and the dispatcher pick their own, 0-3 are not rungs",
          plans);
    g_dev.prop = saved;
}

// ---- kernel 8's packs a thread: its plan (on a GPU of 132 SMs with clusters) and --packs

static void test_packs_plan(void) {
    const cudaDeviceProp saved = g_dev.prop;
    g_dev.prop.multiProcessorCount = 132;
    g_dev.prop.major = 9;
    // {dtype, rows, C, packs the plan gives}: 2 at <= 32 packs a row; at fewer than a row an SM up to 2048 packs
    // (under an eighth of a row an SM up to 8192); at fewer than 4 rows an SM up to 512; else 4
    struct { dtype_t d; long N, C; int packs; } cases[] = {
        {DT_BF16, 262144, 256, 2},   // 32 packs: 2 at any rows
        {DT_BF16, 262144, 264, 4},   // 33 packs, many rows
        {DT_FP32, 131, 8192, 2},     // 2048 packs, 0.99 rows an SM
        {DT_FP32, 132, 8192, 4},     // 2048 packs, a row an SM
        {DT_BF16, 1, 16392, 2},      // 2049 packs, one row
        {DT_BF16, 16, 65536, 2},     // 8192 packs, 16 rows (0.12 an SM)
        {DT_BF16, 16, 65544, 4},     // 8193 packs, 16 rows
        {DT_BF16, 17, 65536, 4},     // 8192 packs, 17 rows (0.13 an SM)
        {DT_FP32, 17, 8196, 4},      // 2049 packs, 17 rows
        {DT_BF16, 527, 4096, 2},     // 512 packs, 3.99 rows an SM
        {DT_BF16, 528, 4096, 4},     // 512 packs, 4 rows an SM
        {DT_FP32, 100, 2052, 2},     // 513 packs, under a row an SM
        {DT_FP32, 200, 2052, 4},     // 513 packs, 1.5 rows an SM
        {DT_BF16, 4096, 4096, 4},    // 512 packs, 31 rows an SM
    };
    int ok = 1;
    char bad[96] = "";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rms_problem_t p = plan_problem(cases[i].d, cases[i].N, cases[i].C, cases[i].C);
        int got = latency_split_packs(&p);
        if (got != cases[i].packs && !bad[0])
            snprintf(bad, sizeof bad, "%s %ldx%ld: %d", dtype_name(cases[i].d), cases[i].N, cases[i].C, got);
        ok &= got == cases[i].packs;
    }
    check("plan: kernel 8's packs a thread, 2 at <= 32 packs a row, < 1 row an SM and <= 2048 (< 1/8 and <= 8192), "
          "< 4 and <= 512; else 4",
          ok, "%s", bad);
    rms_problem_t f = plan_problem(DT_BF16, 4, 256, 256), q = qk_problem(DT_BF16, 2, 4, 128, 1536),
                  o = plan_problem(DT_FP32, 1, 4097, 4097), b = plan_problem(DT_FP32, 1, 8192, 8192);
    f.s.fused = 1;
    const int variants = latency_split_packs(&f) == 4 && latency_split_packs(&q) == 4 && latency_split_packs(&o) == 4;
    const int with_clusters = latency_split_packs(&b);
    g_dev.prop.major = 8;  // no clusters: 2 packs a thread would put 2048 packs over 2 blocks; 4 hold them in one
    const int without = latency_split_packs(&b);
    check("plan: kernel 8 at 4 packs where 2 cannot take the problem (fused add, QK view, narrow packs; before sm_90 "
          "rows over one block of 512 x 2)", variants && with_clusters == 2 && without == 4, "%d %d %d", variants,
          with_clusters, without);
    g_dev.prop.major = 9;
    // the block size at the packs chosen; --packs forces them
    rms_problem_t p = plan_problem(DT_FP32, 1, 8192, 8192);  // 2048 packs, one row: the plan's 2
    const int b2 = latency_split_bs(&p, split_packs(&p));
    g_packs = 4;
    const int b4 = latency_split_bs(&p, split_packs(&p)), forced = split_packs(&p);
    g_packs = 0;
    check("plan: kernel 8 at fp32 1x8192: 2 packs, 128 threads (about 8 blocks a row); --packs 4: 4, 256",
          b2 == 128 && b4 == 256 && forced == 4 && split_packs(&p) == 2, "%d %d %d", b2, b4, forced);
    g_dev.prop = saved;
}

static const char *takes_none_but_4(const void *, int rung, int) { return rung == 4 ? NULL : "no"; }
static const char *takes_all_rungs(const void *, int, int) { return NULL; }
static void test_regimes(void) {
    const int n = (int)(sizeof k_regimes / sizeof k_regimes[0]);
    const regime_t *last = &k_regimes[n - 1];
    check("regimes: the last row holds every problem (every element size, packing, variant, launch, packs and rows) "
          "and runs kernel 4, which takes every problem of every dtype",
          n > 1 && last->bytes == 0 && last->packs16 == -1 && last->variants == 0 && last->launches == 0 &&
              last->packs_lo == 0 && last->packs_hi >= RG_ANY && last->rows_lo == 0 && last->rows_hi >= RG_ANY &&
              last->plane_lo == 0 && last->plane_hi >= RG_ANY && last->rung == 4 && k_kernels[4].supports == NULL &&
              k_kernels[4].dtypes == DT_ALL);
    int rungs = 1;
    for (int i = 0; i < n; i++)
        rungs &= k_regimes[i].rung >= 4 && k_regimes[i].rung <= 11 && k_kernels[k_regimes[i].rung].dtypes == DT_ALL &&
                 k_regimes[i].when != NULL;
    check("regimes: every row runs a rung of the ladder (4-11, every dtype) and says its region", rungs);

    const cudaDeviceProp saved = g_dev.prop;
    g_dev.prop.multiProcessorCount = 132;
    // the key, as scripts/regimes.py's features(): the QK view's rows are tokens x heads, C its head_dim, 16-byte
    // packs only where head_dim and the stride take them
    rms_problem_t q = qk_problem(DT_BF16, 4096, 32, 128, 3 * 32 * 128);
    regime_key_t k = rms_regime_key(&q);
    int ok = k.bytes == 2 && k.packs16 == 1 && k.variant == TV_QK_VIEW && k.packs == 16 && k.rows_sm == 4096.0 * 32 / 132;
    q = qk_problem(DT_FP16, 5, 3, 64, 201);
    k = rms_regime_key(&q);
    ok &= k.packs16 == 0 && k.variant == TV_QK_VIEW && k.packs == 8;
    rms_problem_t f = plan_problem(DT_FP32, 512, 4097, 4097);
    f.s.fused = 1;
    f.s.offset = 1.0;  // (the weight offset is not part of the key)
    k = rms_regime_key(&f);
    ok &= k.bytes == 4 && k.packs16 == 0 && k.variant == TV_FUSED_ADD && k.packs == 4097 * 4 / 16.0 &&
          k.rows_sm == 512.0 / 132 && k.plane == 1;
    check("regimes: the key of a problem (element size, 16-byte packs, variant, packs a row, rows an SM)", ok);
    // where every other rung refuses, a problem of each variant lands on a row of kernel 4; where all take it, on
    // the first row that holds
    rms_problem_t pl = plan_problem(DT_BF16, 64, 1024, 1024);
    int at = -1;
    const regime_key_t kp = rms_regime_key(&pl), kq = rms_regime_key(&q), kf = rms_regime_key(&f);
    const regime_t *r1 = regime_pick(k_regimes, n, &kp, 0, &pl, takes_none_but_4, &at);
    const regime_t *r2 = regime_pick(k_regimes, n, &kq, 0, &q, takes_none_but_4, &at);
    const regime_t *r3 = regime_pick(k_regimes, n, &kf, 0, &f, takes_none_but_4, &at);
    const regime_t *r4 = regime_pick(k_regimes, n, &kp, 0, &pl, takes_all_rungs, &at);
    int first = 0;
    while (first < n && !regime_holds(&k_regimes[first], &kp)) first++;
    g_dev.prop = saved;
    check("regimes: every variant reaches a row of kernel 4 where no other rung takes the problem",
          r1 && r1->rung == 4 && r2 && r2->rung == 4 && r3 && r3->rung == 4);
    check("regimes: where every rung takes the problem, the first row that holds runs it", r4 == &k_regimes[first] &&
          at == first);
}

// ---- registry sanity

static void test_registry(void) {
    check_registry_shape(&k_program, 13);
    int dt = 1, pdl = 1;
    for (int i = 1; i <= 3; i++) dt &= k_program.kernels[i].dtypes == DT_BIT(DT_FP32);
    for (int i = 4; i <= 12; i++) dt &= k_program.kernels[i].dtypes == DT_ALL;
    for (int i = 4; i <= 12; i++) pdl &= k_program.kernels[i].pdl == 1;
    check("registry: 1-3 are fp32 only, 4-12 run fp32, fp16 and bf16 and take --pdl", dt && pdl);
    check("registry: the default kernel is the dispatcher (12), which picks its own block size, as does 9; the block "
          "sizes of 8 are swept (they set the blocks a row)",
          k_program.default_kernel == 12 && k_program.kernels[12].own_block == 1 && k_program.kernels[9].own_block == 1 &&
              k_program.kernels[8].own_block == 0 && strcmp(k_program.kernels[8].name, "latency_split") == 0 &&
              strcmp(k_program.kernels[10].name, "cluster_cp_async") == 0 && k_program.kernels[10].own_block == 0 &&
              strcmp(k_program.kernels[11].name, "subwarp_persistent") == 0 && k_program.kernels[11].own_block == 0 &&
              strcmp(k_program.kernels[12].name, "dispatch") == 0);
    check("registry: the program restores the residual before validation (reset hook)", k_program.reset != NULL &&
                                                                                            k_program.check_options != NULL);
    check("registry: eight program options", k_program.n_extra == 8 && strcmp(k_program.extra[OPT_FUSED].name, "fused-add") == 0 &&
                                                 k_program.extra[OPT_FUSED].has_arg == no_argument &&
                                                 strcmp(k_program.extra[OPT_CLUSTER].name, "cluster") == 0 &&
                                                 strcmp(k_program.extra[OPT_PACKS].name, "packs") == 0);
}

// ---- kernel 0 (cuDNN) without a GPU: the slot, what it refuses before asking cuDNN, how it describes each
// mode, and that the norm-forward operation cuDNN is given finalizes for every dtype (the graph, heuristics
// and plans need a GPU; the operation does not).

#ifdef HAVE_CUDNN
static rms_problem_t k0_problem(dtype_t dt, long tokens, long H, long D, long S, int fused, double offset) {
    static float dummy[4];
    rms_problem_t p;
    memset(&p, 0, sizeof p);
    p.h.dtype = dt;
    p.s.tokens = tokens;
    p.s.H = H;
    p.s.C = D;
    p.s.S = S;
    p.s.N = tokens * H;
    p.s.qk = H > 1 || S != D;
    p.s.fused = fused;
    p.s.offset = offset;
    p.s.eps = 1e-6;
    p.x = p.w = p.y = dummy;
    p.rstd = dummy;
    return p;
}
// The operation of problem p finalizes (NULL) or why not.
static const char *k0_operation(const rms_problem_t *p, cudnn_norm_t *d, int *n) {
    const char *why = cudnn_describe(p, d);
    if (why) return why;
    cudnn_descs_t keep;
    memset(&keep, 0, sizeof keep);
    cudnnBackendDescriptor_t op;
    int64_t uids[7];
    void *ptrs[7];
    why = cudnn_norm_op(d, &keep, &op, uids, ptrs, n);
    cudnn_destroy_all(&keep);
    return why;
}
#endif

static void test_cudnn_kernel0(void) {
    check_cudnn_slot(&k_program.kernels[0]);
#ifdef HAVE_CUDNN
    const kernel_t *k = &k_program.kernels[0];
    cudnn_norm_t d;
    int n = 0;
    rms_problem_t p = k0_problem(DT_BF16, 8192, 1, 4096, 4096, 1, 0.0);
    check("kernel 0: --fused-add is skipped (no residual add in cuDNN's node)",
          strstr(k->supports(&p, 0), "residual add") != NULL);
    p = k0_problem(DT_BF16, 8192, 1, 4096, 4096, 0, 1.0);
    check("kernel 0: --weight-offset 1 is skipped", strstr(k->supports(&p, 0), "weight offset") != NULL);
    for (int dt = 0; dt < DT_COUNT; dt++) {
        p = k0_problem((dtype_t)dt, 8192, 1, 4096, 4096, 0, 0.0);
        const char *why = k0_operation(&p, &d, &n);
        char name[128];
        snprintf(name, sizeof name, "kernel 0: cuDNN finalizes the %s RMSNorm operation (x, scale, eps, rstd, y)",
                 dtype_name((dtype_t)dt));
        check(name, !why && n == 5 && d.mode == CUDNN_RMS_NORM && d.x_dim[0] == 8192 && d.x_dim[1] == 4096, "%s",
              why ? why : "");
    }
    p = k0_problem(DT_BF16, 4096, 32, 128, 32 * 128, 0, 0.0);
    const char *why = k0_operation(&p, &d, &n);
    check("kernel 0: QK-norm with S = H*D is plain rows of D, and finalizes",
          !why && d.x_dim[0] == 4096 * 32 && d.x_dim[1] == 128 && d.x_stride[0] == 128, "%s", why ? why : "");
    p = k0_problem(DT_BF16, 4096, 32, 128, 3 * 32 * 128, 0, 0.0);
    cudnn_describe(&p, &d);
    check("kernel 0: the strided QK view is x [T, H, D, 1] strides [S, D, 1, 1], y contiguous, rstd [T, H, 1, 1]",
          d.nd == 4 && d.x_dim[0] == 4096 && d.x_dim[1] == 32 && d.x_dim[2] == 128 && d.x_stride[0] == 3 * 32 * 128 &&
              d.x_stride[1] == 128 && d.y_stride[0] == 32 * 128 && d.s_dim[1] == 32 && d.s_dim[2] == 1 &&
              d.w_dim[1] == 1 && d.w_dim[2] == 128);
#endif
}

int main(void) {
    test_reference_hand_cases();
    test_reference_oracle();
    test_weight_offset();
    test_fused_add();
    test_round_to_dtype();
    test_qk_view();
    test_parsing_and_shapes();
    test_plans();
    test_packs_plan();
    test_cp_async_plan();
    test_rung_plans();
    test_regimes();
    test_registry();
    test_cudnn_kernel0();
    return test_summary();
}
