// harness/report.h: what a measured point becomes: CSV rows and JSON Lines.
// Included by common.h, in dependency order; not meant to be included on its own.
#pragma once

// ------------------------------------------------------------------------------------------------
// Reporting: human lines, CSV rows, JSON Lines.


typedef struct {
    const char *op;
    int kernel;
    const char *kernel_name;
    dtype_t dtype;
    const char *shape;
    int block_size;
    double ms_median, ms_min, bytes, gbps, sol_gbps, sol_pct, max_abs, max_rel;
    double launch_median, launch_min;  // CUDA events around the launch
    const char *clock;                 // "cupti" / "events"; NULL where nothing was timed
    const char *status;  // OK / FAIL / SKIP
    const char *detail;  // skip reason or dispatcher path (JSON only)
} point_t;

// --csv FILE and --json FILE append: checked before any work (exit 2 with the reason) that the file can be
// opened for appending (a file this check creates is removed again: it is written when the first row is) and,
// for the CSV, that an existing file carries this header (a file of an older schema would get rows whose
// columns do not match its header).
static void check_output_file(const program_t *prog, const char *option, const char *path, const char *header) {
    FILE *f = fopen(path, "r");
    int existed = f != NULL;
    char line[1024] = "";
    int empty = !f || !fgets(line, sizeof line, f);
    if (f) fclose(f);
    f = fopen(path, "a");
    if (!f) die_usage(prog, "%s %s: cannot write it (%s)", option, path, strerror(errno));
    fclose(f);
    if (!existed) remove(path);
    line[strcspn(line, "\r\n")] = 0;
    if (header && !empty && strcmp(line, header) != 0)
        die_usage(prog, "%s %s: the file's header is not this program's CSV schema (an older file?); name a new file",
                  option, path);
}

static void write_csv_row(const char *path, const point_t *p) {
    FILE *f = fopen(path, "a+");
    if (!f) { fprintf(stderr, "cannot open --csv file '%s': %s\n", path, strerror(errno)); exit(EXIT_CUDA); }
    fseek(f, 0, SEEK_END);
    if (ftell(f) == 0) fprintf(f, "%s\n", CSV_HEADER);
    fprintf(f, "%s,%d,%s,%s,%s,%d,%.6f,%.6f,%.0f,%.2f,%.2f,%.2f,%.3e,%.3e,%s,%s,%s,%s,%s,%.6f,%.6f,%s\n", p->op,
            p->kernel, p->kernel_name, dtype_name(p->dtype), p->shape, p->block_size, p->ms_median, p->ms_min, p->bytes,
            p->gbps, p->sol_gbps, p->sol_pct, p->max_abs, p->max_rel, p->status, g_dev.name, g_dev.sm, g_dev.cuda,
            GIT_REV, p->launch_median, p->launch_min, p->clock ? p->clock : "");
    fclose(f);
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void write_json_row(const char *path, const point_t *p) {
    FILE *f = fopen(path, "a");
    if (!f) { fprintf(stderr, "cannot open --json file '%s': %s\n", path, strerror(errno)); exit(EXIT_CUDA); }
    fprintf(f, "{\"op\":");
    json_string(f, p->op);
    fprintf(f, ",\"kernel\":%d,\"kernel_name\":", p->kernel);
    json_string(f, p->kernel_name);
    fprintf(f, ",\"dtype\":\"%s\",\"shape\":", dtype_name(p->dtype));
    json_string(f, p->shape);
    fprintf(f, ",\"block_size\":%d,\"time_ms_median\":%.6f,\"time_ms_min\":%.6f,\"bytes\":%.0f,\"gbps\":%.2f,"
               "\"sol_gbps\":%.2f,\"sol_pct\":%.2f,\"max_abs_err\":%.3e,\"max_rel_err\":%.3e,\"status\":\"%s\",\"gpu\":",
            p->block_size, p->ms_median, p->ms_min, p->bytes, p->gbps, p->sol_gbps, p->sol_pct, p->max_abs, p->max_rel,
            p->status);
    json_string(f, g_dev.name);
    fprintf(f, ",\"sm\":\"%s\",\"cuda\":\"%s\",\"git_rev\":\"%s\",\"time_ms_launch_median\":%.6f,"
               "\"time_ms_launch_min\":%.6f,\"clock\":\"%s\",\"detail\":",
            g_dev.sm, g_dev.cuda, GIT_REV, p->launch_median, p->launch_min, p->clock ? p->clock : "");
    json_string(f, p->detail ? p->detail : "");
    fprintf(f, "}\n");
    fclose(f);
}

static void emit_point(const options_t *o, const point_t *p) {
    if (o->csv_path) write_csv_row(o->csv_path, p);
    if (o->json_path) write_json_row(o->json_path, p);
}
