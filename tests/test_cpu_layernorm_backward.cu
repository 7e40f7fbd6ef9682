// CPU tests (no GPU needed) of layernorm_backward: the reference against hand cases and against finite differences of
// the forward's reference, the tolerance rule of the sums over rows (it passes fp32 accumulation in any order and fails
// a sum that drops one row), the registry, cuDNN's backward operation. One line per test ("PASS name" / "FAIL name:
// why"); tests/run_tests.sh counts the lines.
#define NORM_NO_MAIN
#include "../layernorm_backward.cu"

#include "test_util.h"

// The forward in double (the loss's function for the finite differences): y = (x - mean) * rstd * w + b.
static void forward(double *y, const double *x, const double *w, const double *b, long N, long C, double eps) {
    for (long r = 0; r < N; r++) {
        double m = 0, v = 0;
        for (long c = 0; c < C; c++) m += x[r * C + c];
        m /= C;
        for (long c = 0; c < C; c++) v += (x[r * C + c] - m) * (x[r * C + c] - m);
        double s = 1.0 / sqrt(v / C + eps);
        for (long c = 0; c < C; c++) y[r * C + c] = (x[r * C + c] - m) * s * w[c] + b[c];
    }
}
// The loss sum(dy * y) whose gradients the backward computes.
static double loss(const double *x, const double *w, const double *b, const double *dy, long N, long C, double eps) {
    double *y = (double *)malloc(N * C * sizeof(double)), l = 0;
    forward(y, x, w, b, N, C, eps);
    for (long i = 0; i < N * C; i++) l += dy[i] * y[i];
    free(y);
    return l;
}
static void stats(double *m, double *r, const double *x, long N, long C, double eps) {
    for (long i = 0; i < N; i++) {
        double s = 0, v = 0;
        for (long c = 0; c < C; c++) s += x[i * C + c];
        s /= C;
        for (long c = 0; c < C; c++) v += (x[i * C + c] - s) * (x[i * C + c] - s);
        m[i] = s, r[i] = 1.0 / sqrt(v / C + eps);
    }
}
static double lcg_normalish(unsigned long long *s) {  // a deterministic value in about [-2, 2]
    double t = 0;
    for (int i = 0; i < 4; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        t += (double)(*s >> 11) / 9007199254740992.0 - 0.5;
    }
    return t * 1.7;
}

// ---- the reference against hand cases

static void test_hand_cases(void) {
    const double eps = 1e-5;
    {  // C = 1: x̂ = 0, so dx = 0, dweight = 0, dbias = the column's sum of dy
        double x[3] = {2, -1, 5}, w[1] = {3}, dy[3] = {1, 2, -4}, m[3], r[3], dx[3], dw, db, aw, ab;
        stats(m, r, x, 3, 1, eps);
        layernorm_backward_cpu(dx, &dw, &db, &aw, &ab, x, w, dy, m, r, NULL, 3, 1);
        check("reference: C = 1 gives dx = 0, dweight = 0, dbias = sum of dy",
              dx[0] == 0 && dx[1] == 0 && dx[2] == 0 && dw == 0 && db == -1 && ab == 7, "dx %g dw %g db %g", dx[0], dw, db);
    }
    {  // dy * w constant along the row: a shift of y, which LayerNorm removes: dx = 0
        double x[4] = {1, 4, -2, 0.5}, w[4] = {2, 1, 4, 0.5}, dy[4] = {1, 2, 0.5, 4}, m, r, dx[4], dw[4], db[4], aw[4],
               ab[4];
        stats(&m, &r, x, 1, 4, eps);
        layernorm_backward_cpu(dx, dw, db, aw, ab, x, w, dy, &m, &r, NULL, 1, 4);
        int ok = 1;
        for (int c = 0; c < 4; c++) ok &= fabs(dx[c]) < 1e-14 && db[c] == dy[c] && close_to(dw[c], dy[c] * (x[c] - m) * r, 1e-15);
        check("reference: dy * weight constant along a row gives dx = 0; dweight = dy * x̂, dbias = dy", ok, "dx0 %g", dx[0]);
    }
    {  // dy = x̂, w = 1, eps = 0: the gradient of sum(x̂^2) / 2, which is C / 2 whatever x: dx = 0
        double x[4] = {-3, -1, 1, 3}, w[4] = {1, 1, 1, 1}, m, r, dy[4], dx[4], dw[4], db[4], aw[4], ab[4];
        stats(&m, &r, x, 1, 4, 0.0);
        for (int c = 0; c < 4; c++) dy[c] = (x[c] - m) * r;
        layernorm_backward_cpu(dx, dw, db, aw, ab, x, w, dy, &m, &r, NULL, 1, 4);
        int ok = 1;
        for (int c = 0; c < 4; c++) ok &= fabs(dx[c]) < 1e-15;
        check("reference: dy = x̂ (eps 0) gives dx = 0", ok, "dx %g %g", dx[0], dx[3]);
    }
    {  // --accumulate: dx added to the buffer's values
        double x[2] = {0, 2}, w[2] = {1, 3}, dy[2] = {1, 0}, m, r, dx[2], dx0[2] = {10, -20}, plain[2], dw[2], db[2],
               aw[2], ab[2];
        stats(&m, &r, x, 1, 2, eps);
        layernorm_backward_cpu(plain, dw, db, aw, ab, x, w, dy, &m, &r, NULL, 1, 2);
        layernorm_backward_cpu(dx, dw, db, aw, ab, x, w, dy, &m, &r, dx0, 1, 2);
        check("reference: --accumulate adds dx to the buffer", dx[0] == 10 + plain[0] && dx[1] == -20 + plain[1],
              "%g %g", dx[0], dx[1]);
    }
}

// ---- the reference against central differences of the forward's loss sum(dy * y)

static void test_finite_differences(void) {
    const long N = 3, C = 7;
    const double eps = 1e-5, h = 1e-6;
    double x[N * C], w[C], b[C], dy[N * C], m[N], r[N], dx[N * C], dw[C], db[C], aw[C], ab[C];
    unsigned long long s = 42;
    for (long i = 0; i < N * C; i++) x[i] = lcg_normalish(&s) + 0.3, dy[i] = lcg_normalish(&s);
    for (long c = 0; c < C; c++) w[c] = 1 + 0.25 * lcg_normalish(&s), b[c] = 0.25 * lcg_normalish(&s);
    stats(m, r, x, N, C, eps);
    layernorm_backward_cpu(dx, dw, db, aw, ab, x, w, dy, m, r, NULL, N, C);
    // the central difference of the loss in one input value
    auto central = [&](double *v) {
        const double keep = *v;
        *v = keep + h;
        const double lp = loss(x, w, b, dy, N, C, eps);
        *v = keep - h;
        const double lm = loss(x, w, b, dy, N, C, eps);
        *v = keep;
        return (lp - lm) / (2 * h);
    };
    double worst_x = 0, worst_w = 0, worst_b = 0;
    for (long i = 0; i < N * C; i++) worst_x = fmax(worst_x, fabs(central(&x[i]) - dx[i]));
    for (long c = 0; c < C; c++) {
        worst_w = fmax(worst_w, fabs(central(&w[c]) - dw[c]));
        worst_b = fmax(worst_b, fabs(central(&b[c]) - db[c]));
    }
    check("reference: dx, dweight, dbias match central differences of sum(dy * y) (3 x 7, within 1e-7)",
          worst_x < 1e-7 && worst_w < 1e-7 && worst_b < 1e-7, "worst |fd - ref|: dx %.2e dw %.2e db %.2e", worst_x,
          worst_w, worst_b);
}

// ---- the tolerance of the sums over rows: fp32 accumulation in any order passes, a sum that drops a row fails

static void test_sum_tolerance(void) {
    const long N = 16384, C = 256;
    double *x = (double *)malloc(N * C * sizeof(double)), *dy = (double *)malloc(N * C * sizeof(double));
    double *dx = (double *)malloc(N * C * sizeof(double)), w[C], m[N], r[N], dw[C], db[C], aw[C], ab[C];
    host_fill_normal(x, N * C, DT_FP32, 7, 0, 0.0, 1.0);
    host_fill_normal(dy, N * C, DT_FP32, 7, 3, 0.0, 1.0);
    for (long c = 0; c < C; c++) w[c] = 1.0;
    stats(m, r, x, N, C, 1e-5);
    for (long i = 0; i < N; i++) m[i] = (float)m[i], r[i] = (float)r[i];
    layernorm_backward_cpu(dx, dw, db, aw, ab, x, w, dy, m, r, NULL, N, C);
    double tol_w[C];
    for (long c = 0; c < C; c++) tol_w[c] = sum_atol(N, aw[c]);
    // fp32 as a GPU adds: 132 blocks, each summing its rows in order in fp32, the partials in fp32; and one fp32
    // sum of every row in order, the worst order of the usual ones
    double blocked[C], serial[C], dropped[C];
    for (long c = 0; c < C; c++) {
        float part[132] = {0}, all = 0, drop = 0;
        for (long i = 0; i < N; i++) {
            float t = (float)dy[i * C + c] * (((float)x[i * C + c] - (float)m[i]) * (float)r[i]);
            part[i % 132] += t;
            all += t;
            if (i != 4321) drop += t;
        }
        float s = 0;
        for (int k = 0; k < 132; k++) s += part[k];
        blocked[c] = s, serial[c] = all, dropped[c] = drop;
    }
    tolerance_t tol = tolerance_for(DT_FP32);
    check_t cb = compare_arrays(blocked, dw, C, C, tol, NULL, tol_w);
    check_t cs = compare_arrays(serial, dw, C, C, tol, NULL, tol_w);
    check_t cd = compare_arrays(dropped, dw, C, C, tol, NULL, tol_w);
    check("tolerance: fp32 sums of 16384 rows (blocked, and serial) pass the rule (4 + 2 sqrt(N)) u sum|term|",
          cb.n_bad == 0 && cs.n_bad == 0, "%ld and %ld of %ld columns fail", cb.n_bad, cs.n_bad, C);
    check("tolerance: the same sum without one row fails at most columns (16384 rows)", cd.n_bad > C / 2,
          "%ld of %ld columns fail", cd.n_bad, C);
    check("tolerance: sum_atol is (4 + 2 sqrt(n)) 2^-24 sum|term|",
          close_to(sum_atol(16384, 1e4), 260.0 * 1e4 / 16777216.0, 1e-15) && sum_atol(1, 0) == 0, "%g",
          sum_atol(16384, 1e4));
    free(x), free(dy), free(dx);
}

// ---- the forward's statistics as fp32

static void test_stats_f32(void) {
    double x[6] = {1, 2, 3, 4, 1000, 1001}, m[3], r[3];
    float fm[3], fr[3];
    layernorm_stats_f32(fm, fr, m, r, x, 3, 2, 1e-5);
    check("inputs: the saved statistics are fp32, the reference reads the same values",
          fm[0] == 1.5f && m[0] == 1.5 && fm[2] == 1000.5f && m[1] == (double)fm[1] && r[0] == (double)fr[0] &&
              fr[0] == (float)(1.0 / sqrt(0.25 + 1e-5)),
          "%g %g", m[0], r[0]);
}

// ---- the registry, the rule, kernel 0

static void test_registry(void) {
    check_backward_registry(&k_program, k_regimes, (int)(sizeof k_regimes / sizeof k_regimes[0]), LNB_DISPATCHER);
}

static lnb_problem_t plan_problem(dtype_t d, long N, long C) {
    lnb_problem_t p;
    memset(&p, 0, sizeof p);
    p.h.dtype = d, p.N = N, p.C = C, p.parts = N;
    return p;
}
static void test_plans(void) {
    check_registers_plans(plan_problem);
    check_column_tiles_plan(plan_problem);
    lnb_problem_t g = plan_problem(DT_FP32, 100, 64);
    g.parts = 100;
    lnb_problem_t h = plan_problem(DT_FP32, 100000, 64);
    h.parts = 1000;
    check("plan: rungs 4-6: blocks of at most 32 rows, evened out (100 rows: 4 of 25); more where the scratch holds "
          "fewer partials", rows_a_block(&g) == 25 && row_groups(&g) == 4 && rows_a_block(&h) == 100 &&
          row_groups(&h) == 1000, "%d %d",
          rows_a_block(&g), rows_a_block(&h));
}

static void test_cudnn_kernel0(void) {
#ifdef HAVE_CUDNN
    for (int dt = 0; dt < DT_COUNT; dt++) {
        static float dummy[4];
        lnb_problem_t p = plan_problem((dtype_t)dt, 8192, 768);
        p.x = p.w = p.dy = p.dx = p.dw = p.db = dummy;
        p.mean = p.rstd = dummy;
        cudnn_norm_t d;
        cudnn_describe(&p, &d);
        cudnn_descs_t keep;
        memset(&keep, 0, sizeof keep);
        cudnnBackendDescriptor_t op;
        int64_t uids[8];
        void *ptrs[8];
        int n = 0;
        const char *why = cudnn_norm_op(&d, &keep, &op, uids, ptrs, &n);
        char name[160];
        snprintf(name, sizeof name, "kernel 0: cuDNN finalizes the %s LayerNorm backward operation (x, scale, dy, mean, "
                 "rstd, dx, dscale, dbias)", dtype_name((dtype_t)dt));
        check(name, !why && n == 8 && d.backward && uids[7] == CUDNN_UID_DBIAS, "%s", why ? why : "");
        cudnn_destroy_all(&keep);
    }
#endif
}

int main(void) {
    test_hand_cases();
    test_finite_differences();
    test_sum_tolerance();
    test_stats_f32();
    test_registry();
    test_plans();
    test_cudnn_kernel0();
    return test_summary();
}
