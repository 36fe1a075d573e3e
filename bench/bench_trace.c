/*
 * bench_trace: speed of the trace readers (issue 3, "Parsing speed"): Pollux's
 * philly.csv (82,247 jobs, 3.4 MB) must parse in well under 0.5 s; the budget
 * here is 0.25 s. Also times the other large traces. Each figure is the
 * median of R runs, printed beside an in-run reference — one memchr pass
 * counting the lines of the same bytes, the floor any reader pays — so
 * numbers from different machines compare as ratios.
 *
 *   bench_trace [--reps R] [TRACES_DIR]     (default $RK_SHARED_DIR/traces)
 *
 * Exit status 1 when philly.csv is over budget or a trace fails to parse.
 */
#include "rubick/trace.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PHILLY_BUDGET_MS 250.0

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *nb = realloc(buf, cap *= 2);
		if (!nb)
			free(buf);
		buf = nb;
	}
	fclose(f);
	*len = n;
	return buf;
}

static volatile size_t sink;

/* Median ms of R parses of `path`; *ref_ms the median memchr pass. -1 on failure. */
static double bench_file(const char *path, int reps, double *ref_ms, size_t *jobs)
{
	size_t len;
	char *text = read_all(path, &len);
	if (!text) {
		fprintf(stderr, "bench_trace: cannot read %s\n", path);
		return -1;
	}
	double *t = malloc(sizeof(double) * (size_t)reps * 2);
	if (!t) {
		free(text);
		return -1;
	}
	double *r = t + reps;
	for (int i = 0; i < reps; i++) {
		double t0 = bench_cpu_ms();
		size_t lines = 0;
		for (const char *p = text; (p = memchr(p, '\n', len - (size_t)(p - text))); p++)
			lines++;
		sink = lines;
		r[i] = bench_cpu_ms() - t0;
		struct rk_trace tr;
		struct rk_error err;
		t0 = bench_cpu_ms();
		int rc = rk_trace_parse(text, len, path, "auto", NULL, &tr, &err);
		t[i] = bench_cpu_ms() - t0;
		if (rc != 0) {
			fprintf(stderr, "bench_trace: %s\n", err.msg);
			free(t);
			free(text);
			return -1;
		}
		*jobs = tr.n;
		rk_trace_fini(&tr);
	}
	qsort(t, (size_t)reps, sizeof(*t), bench_cmp_double);
	qsort(r, (size_t)reps, sizeof(*r), bench_cmp_double);
	double med = t[reps / 2];
	*ref_ms = r[reps / 2];
	free(t);
	free(text);
	return med;
}

int main(int argc, char **argv)
{
	int reps = 7;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > 1000) {
				fprintf(stderr, "bench_trace: --reps: '%s' is not 1..1000\n", argv[i]);
				return 2;
			}
			reps = (int)v;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: bench_trace [--reps R] [TRACES_DIR]\n");
			return 2;
		} else {
			dir = argv[i];
		}
	}
	char def[4096];
	if (!dir) {
		const char *shared = getenv("RK_SHARED_DIR");
		snprintf(def, sizeof(def), "%s/traces", shared ? shared : "../shared");
		dir = def;
	}
	static const char *const files[] = {
		"pollux-osdi21/philly.csv",
		"muri/trace-data/trace2.csv",
		"gavel/msr/seed0/11cb48.trace",
		"alibaba-pai-gpu-v2023/openb_pod_list_default.csv",
		"rubick/workloads/workload-base.csv",
	};
	int status = 0;
	printf("%-50s %8s %10s %10s %8s\n", "trace", "jobs", "parse_ms", "memchr_ms", "ratio");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		double ref = 0;
		size_t jobs = 0;
		double ms = bench_file(path, reps, &ref, &jobs);
		if (ms < 0) {
			status = 1;
			continue;
		}
		printf("%-50s %8zu %10.2f %10.3f %8.0f\n", files[i], jobs, ms, ref,
		       ref > 0 ? ms / ref : 0.0);
		if (i == 0 && ms > PHILLY_BUDGET_MS) {
			printf("  over budget: %.1f ms > %.0f ms\n", ms, PHILLY_BUDGET_MS);
			status = 1;
		}
	}
	printf("philly.csv budget %.0f ms: %s\n", PHILLY_BUDGET_MS, status ? "FAIL" : "ok");
	return status;
}
