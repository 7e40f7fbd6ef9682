// The CPU tests' mini framework: one line per test ("PASS name" / "FAIL name: why"), counted by
// tests/run_tests.sh. Include after the program under test.
#pragma once
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static int g_pass = 0, g_fail = 0;
static void check(const char *name, int ok, const char *fmt = "", ...) {
    if (ok) {
        printf("PASS %s\n", name);
        g_pass++;
        return;
    }
    printf("FAIL %s: ", name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    g_fail++;
}
// |a - b| <= tol, relative to |b| when |b| > 1.
static int close_to(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(1.0, fabs(b)); }
// The last line of a test binary; its exit status.
static int test_summary(void) {
    printf("test_cpu: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
