// CPU tests (no GPU needed) of the harness's --csv/--json outputs (harness/options.h checks them, report.h
// writes the rows): a pipe or FIFO is written as a stream, never read and never waited on; `-` gives stdout to
// the rows and the human-readable output to stderr; a regular file gets its header once. Each case that may
// exit or take stdout over runs in a child process, under an alarm (a hang fails the test instead of stalling
// it). Also the ranking's line of a kernel (driver.h's summary_offer). One line per test ("PASS name" / "FAIL
// name: why"); tests/run_tests.sh counts them.
#define NORM_NO_MAIN
#include "../layernorm_forward.cu"

#include <signal.h>
#include <sys/wait.h>

#include "test_util.h"

static const program_t *g_prog = &k_program;

static point_t a_point(int kernel) {
    point_t p;
    memset(&p, 0, sizeof p);
    p.op = "layernorm";
    p.kernel = kernel;
    p.kernel_name = "k";
    p.dtype = DT_FP32;
    p.shape = "8x8";
    p.block_size = 256;
    p.status = "OK";
    p.clock = "cupti";
    return p;
}

// Runs fn(arg) in a child with its stdout on a pipe, 10 s at most; the child's stdout into out, its exit status
// (128 + the signal when one ended it, -1 on a timeout).
static int in_child(void (*fn)(const char *), const char *arg, char *out, size_t n) {
    int fds[2];
    if (pipe(fds)) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        close(fds[0]);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDERR_FILENO);  // the one-line refusals, and the human-readable output of `-`
        dup2(fds[1], STDOUT_FILENO);
        close(fds[1]);
        fn(arg);
        fflush(NULL);
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(fds[0], out + got, n - 1 - got)) > 0) got += (size_t)r;
    out[got] = 0;
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) return WTERMSIG(st) == SIGALRM ? -1 : 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

static int count_lines(const char *s, const char *prefix) {
    int n = 0;
    for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        n += strncmp(l, prefix, strlen(prefix)) == 0;
    return n;
}

// Parses a command line given as one string; unlike parse_line, its arguments outlive the call (as argv does):
// the options keep pointers to the file names.
static options_t parse_kept(const char *args) {
    static char buf[512];
    static char *argv[32];
    snprintf(buf, sizeof buf, "%s", args);
    int argc = 0;
    argv[argc++] = (char *)g_prog->binary;
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    options_t o;
    parse_args(argc, argv, g_prog, &o);
    return o;
}

// --csv/--json ARG (a flag, then its value), two rows, then a human-readable line on stdout.
static void write_two_rows(const char *args) {
    options_t o = parse_kept(args);
    point_t p = a_point(3);
    emit_point(&o, &p);
    p.kernel = 4;
    emit_point(&o, &p);
    printf("human-readable line\n");
}

static void test_stdout_stream(void) {
    char out[8192];
    int rc = in_child(write_two_rows, "--csv -", out, sizeof out);
    check("--csv -: stdout carries the header once and the rows alone (the human-readable line goes to stderr)",
          rc == 0 && strncmp(out, CSV_HEADER "\n", strlen(CSV_HEADER) + 1) == 0 && count_lines(out, "op,") == 1 &&
              count_lines(out, "layernorm,3,") == 1 && count_lines(out, "layernorm,4,") == 1 &&
              !strstr(out, "human-readable"),
          "rc %d, stdout: %s", rc, out);
    rc = in_child(write_two_rows, "--json /dev/stdout", out, sizeof out);
    check("--json /dev/stdout (a pipe here): two JSON lines on stdout, nothing else",
          rc == 0 && count_lines(out, "{\"op\":\"layernorm\",\"kernel\":3,") == 1 &&
              count_lines(out, "{\"op\":\"layernorm\",\"kernel\":4,") == 1 && !strstr(out, "human-readable"),
          "rc %d, stdout: %s", rc, out);
}

// --csv /proc/self/fd/N of a pipe that the parent reads (as `--csv >(cat)` gives): the header once, two rows.
static char g_fd_path[64];
static void write_to_fd(const char *fmt) {
    char buf[128];
    snprintf(buf, sizeof buf, fmt, g_fd_path);
    write_two_rows(buf);
}
static void test_pipe_stream(void) {
    int fds[2];
    if (pipe(fds)) { check("a pipe", 0); return; }
    snprintf(g_fd_path, sizeof g_fd_path, "/proc/self/fd/%d", fds[1]);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10);
        close(fds[0]);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO);  // the human-readable line
        write_to_fd("--csv %s");
        fflush(NULL);
        _exit(0);
    }
    close(fds[1]);
    char out[8192];
    size_t got = 0;
    ssize_t r;
    while (got + 1 < sizeof out && (r = read(fds[0], out + got, sizeof out - 1 - got)) > 0) got += (size_t)r;
    out[got] = 0;
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    check("--csv to a pipe (>(cat)): never read, never waited on; the header once, then the rows",
          WIFEXITED(st) && WEXITSTATUS(st) == 0 && strncmp(out, CSV_HEADER "\n", strlen(CSV_HEADER) + 1) == 0 &&
              count_lines(out, "layernorm,3,") == 1 && count_lines(out, "layernorm,4,") == 1,
          "status %d, read: %s", st, out);
}

// A hot row that chained (its last column and its JSON field say yes), then a cold one (both empty).
static void write_chained_rows(const char *args) {
    options_t o = parse_kept(args);
    point_t p = a_point(5);
    p.shape = "8x8:hot";
    p.chained = "yes";
    emit_point(&o, &p);
    p = a_point(6);
    emit_point(&o, &p);
}
static void test_chained(void) {
    char out[8192];
    int rc = in_child(write_chained_rows, "--csv -", out, sizeof out);
    check("--csv: a hot row ends with its chained column (yes), a cold row's is empty",
          rc == 0 && strstr(out, ",chained\n") && strstr(out, "\nlayernorm,5,k,fp32,8x8:hot,") &&
              strstr(out, ",cupti,yes\n") && strstr(out, ",cupti,\n") && count_lines(out, "layernorm,6,") == 1,
          "rc %d, stdout: %s", rc, out);
    rc = in_child(write_chained_rows, "--json -", out, sizeof out);
    check("--json: the chained field beside the clock (yes on the hot row, empty on the cold one)",
          rc == 0 && strstr(out, "\"clock\":\"cupti\",\"chained\":\"yes\"") &&
              strstr(out, "\"clock\":\"cupti\",\"chained\":\"\""),
          "rc %d, stdout: %s", rc, out);
}

static void parse_only(const char *args) { parse_kept(args); }

static void test_fifo(void) {
    char path[] = "/tmp/norm_test_fifo_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    if (mkfifo(path, 0600)) { check("a FIFO", 0); return; }
    char args[128], out[1024];
    snprintf(args, sizeof args, "--csv %s", path);
    int rc = in_child(parse_only, args, out, sizeof out);
    check("--csv FIFO with no reader: refused at once (exit 2), not waited on", rc == 2, "rc %d", rc);
    unlink(path);
}

static void test_regular_file(void) {
    char path[] = "/tmp/norm_test_csv_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    char args[128], out[1024];
    snprintf(args, sizeof args, "--csv %s", path);
    int rc = in_child(write_two_rows, args, out, sizeof out);
    FILE *f = fopen(path, "r");
    char text[4096] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f) fclose(f);
    check("--csv a new regular file: the header once, two rows (opened for each); stdout keeps the human-readable line",
          rc == 0 && count_lines(text, "op,") == 1 && count_lines(text, "layernorm,") == 2 &&
              strstr(out, "human-readable"),
          "rc %d, file: %s", rc, text);
    snprintf(args, sizeof args, "--json %s", path);
    rc = in_child(parse_only, args, out, sizeof out);
    check("--json into an existing results CSV: refused (exit 2)", rc == 2, "rc %d", rc);
    unlink(path);
}

// The ranking's line of a kernel: its fastest block size and that block's path, whatever order the sweep ran in.
static void test_summary_best_path(void) {
    kernel_summary_t s;
    memset(&s, 0, sizeof s);
    summary_offer(&s, 64, 2.43e-3, 438.1, 65.8, "a row over 4 blocks of 64 threads");
    summary_offer(&s, 256, 2.37e-3, 449.9, 67.6, "a row over 1 block of 256 threads");
    summary_offer(&s, 512, 2.50e-3, 426.9, 64.1, "a row over 1 block of 512 threads");
    summary_offer(&s, 1024, 2.37e-3, 449.9, 67.6, "a tie, later");
    check("ranking: the best block's time and path, not the last block size's (a tie keeps the first)",
          s.ran && s.block == 256 && s.ms == 2.37e-3 && !strcmp(s.note, "a row over 1 block of 256 threads"),
          "block %d, note '%s'", s.block, s.note);
    memset(&s, 0, sizeof s);
    summary_offer(&s, 128, 1e-3, 100.0, 10.0, "");
    check("ranking: a best block without a path leaves no note", s.ran && s.block == 128 && !s.note[0],
          "block %d, note '%s'", s.block, s.note);
}

// The repetitions of a long launch (measure.h repeats_for): the asked number up to 100 ms a launch, then about a
// second's worth, never fewer than 3, and the automatic count (0) capped the same way.
static void test_long_launch_repeats(void) {
    check("repeats: a launch of <= 100 ms keeps --repeats and the automatic count",
          repeats_for(10, 0.01) == 10 && repeats_for(10, 100.0) == 10 && repeats_for(0, 50.0) == 0, "%d %d %d",
          repeats_for(10, 0.01), repeats_for(10, 100.0), repeats_for(0, 50.0));
    check("repeats: a launch of 200 ms is timed 5 times, of 6.6 s 3 times, the automatic count likewise",
          repeats_for(10, 200.0) == 5 && repeats_for(10, 6600.0) == 3 && repeats_for(0, 200.0) == 5 &&
              repeats_for(4, 200.0) == 4,
          "%d %d %d %d", repeats_for(10, 200.0), repeats_for(10, 6600.0), repeats_for(0, 200.0), repeats_for(4, 200.0));
}

int main(void) {
    signal(SIGPIPE, SIG_DFL);
    test_long_launch_repeats();
    test_stdout_stream();
    test_chained();
    test_pipe_stream();
    test_fifo();
    test_regular_file();
    test_summary_best_path();
    return test_summary();
}
