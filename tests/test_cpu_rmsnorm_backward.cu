// CPU tests (no GPU needed) of rmsnorm_backward: the reference against hand cases and against finite differences of
// the forward's reference (with and without a weight offset), the tolerance of dweight (fp32 accumulation passes, a sum
// that drops one row fails), the registry, cuDNN's backward operation. One line per test ("PASS name" / "FAIL name:
// why"); tests/run_tests.sh counts the lines.
#define NORM_NO_MAIN
#include "../rmsnorm_backward.cu"

#include "test_util.h"

// The forward in double (the loss's function for the finite differences): y = x * rstd * (w + offset).
static double loss(const double *x, const double *w, double off, const double *dy, long N, long C, double eps) {
    double l = 0;
    for (long r = 0; r < N; r++) {
        double ss = 0;
        for (long c = 0; c < C; c++) ss += x[r * C + c] * x[r * C + c];
        double s = 1.0 / sqrt(ss / C + eps);
        for (long c = 0; c < C; c++) l += dy[r * C + c] * x[r * C + c] * s * (w[c] + off);
    }
    return l;
}
static void rstds(double *r, const double *x, long N, long C, double eps) {
    for (long i = 0; i < N; i++) {
        double ss = 0;
        for (long c = 0; c < C; c++) ss += x[i * C + c] * x[i * C + c];
        r[i] = 1.0 / sqrt(ss / C + eps);
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
    {  // dy = x̂ and w = 1, eps 0: the gradient of sum(x̂^2) / 2 = C / 2, constant: dx = 0; dweight = sum of x̂^2
        double x[4] = {1, -2, 3, 0.5}, w[4] = {1, 1, 1, 1}, r, dy[4], dx[4], dw[4], aw[4];
        rstds(&r, x, 1, 4, 0.0);
        for (int c = 0; c < 4; c++) dy[c] = x[c] * r;
        rmsnorm_backward_cpu(dx, dw, aw, x, w, 0.0, dy, &r, NULL, 1, 4);
        int ok = 1;
        for (int c = 0; c < 4; c++) ok &= fabs(dx[c]) < 1e-15 && close_to(dw[c], x[c] * x[c] * r * r, 1e-15);
        check("reference: dy = x̂ (eps 0) gives dx = 0, dweight = x̂^2", ok, "dx %g", dx[0]);
    }
    {  // dy orthogonal to x̂: dx = rstd * dy * w exactly (the projection term vanishes)
        double x[2] = {1, 1}, w[2] = {2, 3}, r, dy[2] = {3, -2}, dx[2], dw[2], aw[2];  // g = (6, -6), g . x̂ = 0
        rstds(&r, x, 1, 2, 1e-6);
        rmsnorm_backward_cpu(dx, dw, aw, x, w, 0.0, dy, &r, NULL, 1, 2);
        check("reference: g orthogonal to x̂ gives dx = rstd * g", close_to(dx[0], r * 6, 1e-15) && close_to(dx[1], -r * 6, 1e-15),
              "%g %g", dx[0], dx[1]);
    }
    {  // a weight offset: the same as a weight of w + offset
        double x[3] = {0.5, -1, 2}, w[3] = {0.1, -0.2, 0.3}, w1[3], r, dy[3] = {1, 2, -1}, a[3], b[3], dwa[3], dwb[3],
               aw[3];
        for (int c = 0; c < 3; c++) w1[c] = w[c] + 1;
        rstds(&r, x, 1, 3, 1e-6);
        rmsnorm_backward_cpu(a, dwa, aw, x, w, 1.0, dy, &r, NULL, 1, 3);
        rmsnorm_backward_cpu(b, dwb, aw, x, w1, 0.0, dy, &r, NULL, 1, 3);
        int ok = 1;
        for (int c = 0; c < 3; c++) ok &= a[c] == b[c] && dwa[c] == dwb[c];
        check("reference: --weight-offset F is a weight of w + F", ok);
    }
    {  // --accumulate: dx added to the buffer's values
        double x[2] = {0.5, 2}, w[2] = {1, 3}, r, dy[2] = {1, 0}, dx[2], dx0[2] = {10, -20}, plain[2], dw[2], aw[2];
        rstds(&r, x, 1, 2, 1e-6);
        rmsnorm_backward_cpu(plain, dw, aw, x, w, 0.0, dy, &r, NULL, 1, 2);
        rmsnorm_backward_cpu(dx, dw, aw, x, w, 0.0, dy, &r, dx0, 1, 2);
        check("reference: --accumulate adds dx to the buffer", dx[0] == 10 + plain[0] && dx[1] == -20 + plain[1],
              "%g %g", dx[0], dx[1]);
    }
}

// ---- the reference against central differences of the forward's loss sum(dy * y)

static void test_finite_differences(void) {
    const long N = 3, C = 7;
    const double eps = 1e-6, h = 1e-6;
    for (int with_offset = 0; with_offset <= 1; with_offset++) {
        const double off = with_offset ? 1.0 : 0.0;
        double x[N * C], w[C], dy[N * C], r[N], dx[N * C], dw[C], aw[C];
        unsigned long long s = 42 + with_offset;
        for (long i = 0; i < N * C; i++) x[i] = lcg_normalish(&s) + 0.3, dy[i] = lcg_normalish(&s);
        for (long c = 0; c < C; c++) w[c] = (with_offset ? 0.0 : 1.0) + 0.25 * lcg_normalish(&s);
        rstds(r, x, N, C, eps);
        rmsnorm_backward_cpu(dx, dw, aw, x, w, off, dy, r, NULL, N, C);
        // the central difference of the loss in one input value
        auto central = [&](double *v) {
            const double keep = *v;
            *v = keep + h;
            const double lp = loss(x, w, off, dy, N, C, eps);
            *v = keep - h;
            const double lm = loss(x, w, off, dy, N, C, eps);
            *v = keep;
            return (lp - lm) / (2 * h);
        };
        double worst_x = 0, worst_w = 0;
        for (long i = 0; i < N * C; i++) worst_x = fmax(worst_x, fabs(central(&x[i]) - dx[i]));
        for (long c = 0; c < C; c++) worst_w = fmax(worst_w, fabs(central(&w[c]) - dw[c]));
        char name[160];
        snprintf(name, sizeof name, "reference: dx, dweight match central differences of sum(dy * y) (3 x 7%s, within "
                 "1e-7)", with_offset ? ", weight offset 1" : "");
        check(name, worst_x < 1e-7 && worst_w < 1e-7, "worst |fd - ref|: dx %.2e dw %.2e", worst_x, worst_w);
    }
}

// ---- the tolerance of dweight: fp32 accumulation passes, a sum that drops a row fails

static void test_sum_tolerance(void) {
    const long N = 16384, C = 128;
    double *x = (double *)malloc(N * C * sizeof(double)), *dy = (double *)malloc(N * C * sizeof(double));
    double *dx = (double *)malloc(N * C * sizeof(double)), w[C], r[N], dw[C], aw[C];
    host_fill_normal(x, N * C, DT_FP32, 7, 0, 0.0, 1.0);
    host_fill_normal(dy, N * C, DT_FP32, 7, 3, 0.0, 1.0);
    for (long c = 0; c < C; c++) w[c] = 1.0;
    rstds(r, x, N, C, 1e-6);
    for (long i = 0; i < N; i++) r[i] = (float)r[i];
    rmsnorm_backward_cpu(dx, dw, aw, x, w, 0.0, dy, r, NULL, N, C);
    double tol_w[C], blocked[C], dropped[C];
    for (long c = 0; c < C; c++) tol_w[c] = sum_atol(N, aw[c]);
    for (long c = 0; c < C; c++) {
        float part[132] = {0}, drop = 0;
        for (long i = 0; i < N; i++) {
            float t = (float)dy[i * C + c] * ((float)x[i * C + c] * (float)r[i]);
            part[i % 132] += t;
            if (i != 4321) drop += t;
        }
        float s = 0;
        for (int k = 0; k < 132; k++) s += part[k];
        blocked[c] = s, dropped[c] = drop;
    }
    tolerance_t tol = tolerance_for(DT_FP32);
    check_t cb = compare_arrays(blocked, dw, C, C, tol, NULL, tol_w), cd = compare_arrays(dropped, dw, C, C, tol, NULL, tol_w);
    check("tolerance: dweight summed in fp32 over 16384 rows passes; without one row it fails at most columns",
          cb.n_bad == 0 && cd.n_bad > C / 2, "%ld and %ld of %ld columns fail", cb.n_bad, cd.n_bad, C);
    free(x), free(dy), free(dx);
}

static void test_rstd_f32(void) {
    double x[4] = {3, 4, 1000, 1000}, r[2];
    float fr[2];
    rmsnorm_rstd_f32(fr, r, x, 2, 2, 1e-6);
    check("inputs: the saved rstd is fp32, the reference reads the same value",
          fr[0] == (float)(1.0 / sqrt(12.5 + 1e-6)) && r[0] == (double)fr[0] && r[1] == (double)fr[1], "%g", r[0]);
}

// ---- the registry, the rule, kernel 0

static void test_registry(void) {
    check_backward_registry(&k_program, k_regimes, (int)(sizeof k_regimes / sizeof k_regimes[0]), RMB_DISPATCHER);
}

static rmb_problem_t plan_problem(dtype_t d, long N, long C) {
    rmb_problem_t p;
    memset(&p, 0, sizeof p);
    p.h.dtype = d, p.N = N, p.C = C, p.parts = N;
    return p;
}
static void test_plans(void) {
    check_registers_plans(plan_problem);
    check_column_tiles_plan(plan_problem);
}

static void test_cudnn_kernel0(void) {
#ifdef HAVE_CUDNN
    for (int dt = 0; dt < DT_COUNT; dt++) {
        static float dummy[4];
        rmb_problem_t p = plan_problem((dtype_t)dt, 8192, 4096);
        p.x = p.w = p.dy = p.dx = p.dw = dummy;
        p.rstd = dummy;
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
        snprintf(name, sizeof name, "kernel 0: cuDNN finalizes the %s RMSNorm backward operation (x, scale, dy, rstd, "
                 "dx, dscale)", dtype_name((dtype_t)dt));
        check(name, !why && n == 6 && d.backward && d.mode == CUDNN_RMS_NORM, "%s", why ? why : "");
        cudnn_destroy_all(&keep);
    }
    rmb_problem_t p = plan_problem(DT_FP32, 64, 4096);
    p.offset = 1;
    const char *why = k_program.kernels[0].supports(&p, 0);
    check("kernel 0: a weight offset is skipped with its reason", why && strstr(why, "weight offset"), "%s", why ? why : "");
#endif
}

int main(void) {
    test_hand_cases();
    test_finite_differences();
    test_sum_tolerance();
    test_rstd_f32();
    test_registry();
    test_plans();
    test_cudnn_kernel0();
    return test_summary();
}
