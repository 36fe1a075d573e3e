/*
 * Every real trace under $RK_SHARED_DIR/traces parses with auto-detection into
 * the format and job count its README states, and every record is sane
 * (sorted by submit time, GPUs >= 1, a zoo model, an elastic range around the
 * request). Skips when the shared traces are not present.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rubick/trace.h"
#include "rubick/zoo.h"

static char traces_dir[4096];

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Structural checks every parsed trace must pass. */
static void check_sane(const struct rk_trace *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct rk_trace_job *j = &t->jobs[i];
		if (i > 0 && j->submit_ms < t->jobs[i - 1].submit_ms)
			fail_msg("%s: job %zu out of order", path, i);
		if (j->gpus < 1 || j->min_gpus > j->gpus || j->max_gpus < j->gpus)
			fail_msg("%s: job %s bad GPUs %d [%d, %d]", path, j->name, j->gpus,
				 j->min_gpus, j->max_gpus);
		if (!j->model[0] || !j->name[0] || j->submit_ms < 0 || j->duration_s < 0 ||
		    j->gpu_milli < 1 || j->gpu_milli > 1000)
			fail_msg("%s: job %s incomplete", path, j->name);
	}
}

/* Written back as native CSV and read again, `t` keeps every job field. */
static void check_round_trip(const struct rk_trace *t, const char *rel)
{
	char *text;
	size_t len;
	struct rk_error err;
	if (rk_trace_write_native(t, &text, &len, &err))
		fail_msg("%s: %s", rel, err.msg);
	struct rk_trace back;
	int rc = rk_trace_parse(text, len, "native-copy", "auto", NULL, &back, &err);
	free(text);
	if (rc)
		fail_msg("%s: re-reading the native copy: %s", rel, err.msg);
	assert_string_equal(back.format, "native");
	assert_int_equal(back.n, t->n);
	for (size_t i = 0; i < t->n; i++) {
		const struct rk_trace_job *a = &t->jobs[i], *b = &back.jobs[i];
		if (strcmp(a->name, b->name) || a->submit_ms != b->submit_ms ||
		    a->duration_s != b->duration_s || strcmp(a->model, b->model) ||
		    a->gpus != b->gpus || a->gpu_milli != b->gpu_milli || a->cpus != b->cpus ||
		    a->mem_mb != b->mem_mb || a->net_gbps != b->net_gbps ||
		    a->global_batch != b->global_batch || strcmp(a->plan, b->plan) ||
		    a->iters != b->iters || a->guaranteed != b->guaranteed ||
		    strcmp(a->tenant, b->tenant) || a->min_gpus != b->min_gpus ||
		    a->max_gpus != b->max_gpus || a->has_range != b->has_range ||
		    strcmp(a->source_type, b->source_type))
			fail_msg("%s: job %s changed in the native copy", rel, a->name);
	}
	rk_trace_fini(&back);
}

/* Parse `rel` (under traces/) expecting `format` and `jobs` jobs; returns the trace. */
static void parse_file(const char *rel, const char *format, size_t jobs, int skip_bad,
		       struct rk_trace *t)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/%s", traces_dir, rel);
	size_t len = 0;
	char *text = read_all(path, &len);
	if (!text)
		fail_msg("cannot read %s", path);
	struct rk_trace_options o = rk_trace_options_default();
	o.skip_bad = skip_bad;
	struct rk_error err;
	int rc = rk_trace_parse(text, len, rel, "auto", &o, t, &err);
	free(text);
	if (rc != 0)
		fail_msg("%s", err.msg);
	if (strcmp(t->format, format) != 0)
		fail_msg("%s: detected %s, expected %s", rel, t->format, format);
	if (t->n != jobs)
		fail_msg("%s: %zu jobs, README says %zu", rel, t->n, jobs);
	check_sane(t, rel);
	check_round_trip(t, rel);
}

static void expect_file(const char *rel, const char *format, size_t jobs)
{
	struct rk_trace t;
	parse_file(rel, format, jobs, 0, &t);
	rk_trace_fini(&t);
}

/* Every *.csv (or `ext`) file in folder `rel` holds `jobs` jobs of `format`; returns files seen. */
static int expect_folder(const char *rel, const char *ext, const char *format, size_t jobs)
{
	char dir[4400];
	snprintf(dir, sizeof(dir), "%s/%s", traces_dir, rel);
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open %s", dir);
	int files = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name), m = strlen(ext);
		if (n <= m || strcmp(e->d_name + n - m, ext) != 0)
			continue;
		char file[4600];
		snprintf(file, sizeof(file), "%s/%s", rel, e->d_name);
		expect_file(file, format, jobs);
		files++;
	}
	closedir(d);
	return files;
}

static int setup(void **state)
{
	(void)state;
	const char *shared = getenv("RK_SHARED_DIR");
	snprintf(traces_dir, sizeof(traces_dir), "%s/traces", shared ? shared : "../shared");
	return 0;
}

static int have_traces(void)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/README.md", traces_dir);
	FILE *f = fopen(p, "r");
	if (f)
		fclose(f);
	return f != NULL;
}

static void rubick_traces(void **state)
{
	(void)state;
	if (!have_traces())
		skip();
	expect_file("rubick/workloads/workload-base.csv", "rubick", 406);
	expect_file("rubick/workloads/workload-bp.csv", "rubick", 406);
	expect_file("rubick/workloads/naive.csv", "rubick", 10);
	struct rk_trace t;
	parse_file("rubick/workloads/workload-mt.csv", "rubick", 406, 0, &t);
	size_t sla = 0;
	for (size_t i = 0; i < t.n; i++)
		sla += (size_t)t.jobs[i].guaranteed;
	assert_int_equal(sla, 194); /* README: 194 guaranteed jobs */
	assert_int_equal(t.n_mapped, 0);
	rk_trace_fini(&t);
}

static void philly_csv(void **state)
{
	(void)state;
	if (!have_traces())
		skip();
	struct rk_trace t;
	parse_file("pollux-osdi21/philly.csv", "philly", 82247, 0, &t);
	/* README: submissions 2017-09-04 .. 2017-12-22, 15 VCs, 1..128 GPUs. */
	assert_int_equal(t.jobs[0].submit_ms, 0);
	int64_t span_days = t.jobs[t.n - 1].submit_ms / 86400000;
	assert_true(span_days >= 108 && span_days <= 109);
	int max_gpus = 0;
	char vcs[32][RK_TENANT_MAX];
	int n_vcs = 0;
	for (size_t i = 0; i < t.n; i++) {
		if (t.jobs[i].gpus > max_gpus)
			max_gpus = t.jobs[i].gpus;
		int k = 0;
		while (k < n_vcs && strcmp(vcs[k], t.jobs[i].tenant) != 0)
			k++;
		if (k == n_vcs && n_vcs < 32)
			memcpy(vcs[n_vcs++], t.jobs[i].tenant, RK_TENANT_MAX);
	}
	assert_int_equal(max_gpus, 128);
	assert_int_equal(n_vcs, 15);
	assert_int_equal(t.n_mapped, 82247);
	rk_trace_fini(&t);
}

static void sia_and_pollux_workloads(void **state)
{
	(void)state;
	if (!have_traces())
		skip();
	assert_int_equal(expect_folder("pollux-osdi21/workloads", ".csv", "sia", 160), 8);
	assert_int_equal(expect_folder("pollux-osdi21/workloads-0.5", ".csv", "sia", 80), 8);
	assert_int_equal(expect_folder("pollux-osdi21/workloads-1.5", ".csv", "sia", 240), 8);
	assert_int_equal(expect_folder("pollux-osdi21/workloads-2.0", ".csv", "sia", 320), 8);
	assert_int_equal(expect_folder("pollux-osdi21/workloads-realistic", ".csv", "sia", 160), 8);
	assert_int_equal(expect_folder("sia-artifacts/workloads/philly", ".csv", "sia", 160), 8);
	assert_int_equal(expect_folder("sia-artifacts/workloads/saturn", ".csv", "sia", 160), 10);
	assert_int_equal(expect_folder("sia-artifacts/workloads/newtrace", ".csv", "sia", 960), 10);
	static const struct {
		const char *dir;
		size_t jobs;
	} scale[] = {
		{"rate_10", 80},  {"rate_20", 160},  {"rate_30", 240},  {"rate_40", 320},
		{"rate_50", 400}, {"scale_2x", 320}, {"scale_4x", 640},
	};
	for (size_t i = 0; i < sizeof(scale) / sizeof(scale[0]); i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "sia-artifacts/workloads/scale/%s", scale[i].dir);
		assert_int_equal(expect_folder(rel, ".csv", "sia", scale[i].jobs), 10);
	}
	expect_file("sia-artifacts/testbed/phoebe_workload.csv", "sia", 30);
}

static void gavel_and_shockwave(void **state)
{
	(void)state;
	if (!have_traces())
		skip();
	static const struct {
		const char *vc;
		size_t jobs;
	} vcs[] = {
		{"0e4a51", 1181}, {"103959", 986}, {"11cb48", 2000}, {"23dbec", 9},
		{"2869ce", 533},  {"51b7ef", 18},  {"6214e9", 2000}, {"6c71a0", 2000},
		{"795a4c", 3},	  {"7f04ca", 972}, {"925e2b", 4},    {"b436b2", 2000},
		{"e13805", 607},  {"ed69ec", 951}, {"ee9e8c", 2000},
	};
	size_t total = 0;
	for (size_t i = 0; i < sizeof(vcs) / sizeof(vcs[0]); i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "gavel/msr/seed0/%s.trace", vcs[i].vc);
		expect_file(rel, "gavel", vcs[i].jobs);
		total += vcs[i].jobs;
	}
	assert_int_equal(total, 15264);
	expect_file("gavel/physical_cluster/max_min_fairness.trace", "gavel", 96);
	expect_file("gavel/physical_cluster/minimize_makespan.trace", "gavel", 100);
	/* Shockwave: the job count leads each file name. */
	char dir[4400];
	snprintf(dir, sizeof(dir), "%s/shockwave/traces", traces_dir);
	DIR *d = opendir(dir);
	assert_non_null(d);
	int files = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strstr(e->d_name, ".trace"))
			continue;
		char rel[600];
		snprintf(rel, sizeof(rel), "shockwave/traces/%s", e->d_name);
		struct rk_trace t;
		parse_file(rel, "gavel", strtoul(e->d_name, NULL, 10), 0, &t);
		for (size_t i = 0; i < t.n; i++)
			assert_true(t.jobs[i].duration_s > 0 && t.jobs[i].source_iters > 0);
		rk_trace_fini(&t);
		files++;
	}
	closedir(d);
	assert_int_equal(files, 5);
}

/* Gavel commands read by the launch reader against the bundled zoo: none is
 * malformed, none is white-box, so models are exactly the mapping's. */
static void gavel_commands_with_zoo(void **state)
{
	(void)state;
	if (!have_traces())
		skip();
	static const char *const names[] = {"vit",  "roberta", "bert",   "t5",
					    "t5_3b", "gpt2",	"llama7", "llama30"};
	const char *dir = getenv("RK_DATA_DIR");
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/zoo/%s.model", dir ? dir : "data", names[i]);
		size_t len;
		char *text = read_all(path, &len);
		if (!text)
			fail_msg("cannot read %s", path);
		struct rk_error err;
		int rc = rk_zoo_add_text(&zoo, text, len, path, &err);
		free(text);
		if (rc)
			fail_msg("%s", err.msg);
	}
	static const char *const files[] = {"gavel/msr/seed0/11cb48.trace",
					    "gavel/physical_cluster/max_min_fairness.trace"};
	for (int f = 0; f < 2; f++) {
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s", traces_dir, files[f]);
		size_t len;
		char *text = read_all(path, &len);
		assert_non_null(text);
		struct rk_trace_options o = rk_trace_options_default();
		struct rk_trace with, without;
		struct rk_error err;
		o.zoo = &zoo;
		if (rk_trace_parse(text, len, files[f], "auto", &o, &with, &err))
			fail_msg("%s", err.msg);
		o.zoo = NULL;
		assert_int_equal(rk_trace_parse(text, len, files[f], "auto", &o, &without, &err), 0);
		free(text);
		assert_int_equal(with.n, without.n);
		assert_memory_equal(with.jobs, without.jobs, with.n * sizeof(*with.jobs));
		rk_trace_fini(&with);
		rk_trace_fini(&without);
	}
	rk_zoo_fini(&zoo);
}

static void muri_traces(void **state)
{
	(void)state;
	if (!have_traces())
		skip();
	static const struct {
		const char *name;
		size_t jobs;
	} files[] = {{"trace1", 1494}, {"trace2", 5755}, {"trace3", 992}, {"trace4", 2638}};
	for (size_t i = 0; i < 4; i++) {
		char rel[128];
		struct rk_trace t;
		snprintf(rel, sizeof(rel), "muri/trace-data/%s.csv", files[i].name);
		parse_file(rel, "muri", files[i].jobs, 0, &t);
		int max_gpus = 0;
		for (size_t k = 0; k < t.n; k++)
			max_gpus = t.jobs[k].gpus > max_gpus ? t.jobs[k].gpus : max_gpus;
		assert_true(max_gpus <= (i == 3 ? 8 : 32)); /* trace4: 1..8 GPUs only */
		rk_trace_fini(&t);
		snprintf(rel, sizeof(rel), "muri/trace-data/%s_pr.csv", files[i].name);
		parse_file(rel, "muri", files[i].jobs, 0, &t);
		assert_int_equal(t.jobs[t.n - 1].submit_ms, 0); /* all queued at start */
		rk_trace_fini(&t);
	}
	for (int k = 1; k <= 4; k++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "muri/trace-data/job_type_%d.csv", k);
		expect_file(rel, "muri", 992);
	}
	expect_file("muri/testbed/cluster_trace.csv", "muri", 400);
}

static void synergy_tiresias_alibaba(void **state)
{
	(void)state;
	if (!have_traces())
		skip();
	struct rk_trace t;
	parse_file("synergy/static_100job_6_3_1100.0.csv", "synergy", 100, 0, &t);
	assert_true(t.jobs[t.n - 1].submit_ms < 100); /* all at t = 0..0.099 s */
	rk_trace_fini(&t);
	parse_file("synergy/dynamic_srtf.log", "synergy", 100, 0, &t);
	assert_int_equal(t.jobs[t.n - 1].submit_ms, 12039000);
	rk_trace_fini(&t);
	expect_file("tiresias/60_job.csv", "tiresias", 60);
	/* tf_job.csv lists job 10 twice: both replayed, the second renamed and counted. */
	parse_file("tiresias/tf_job.csv", "tiresias", 2, 0, &t);
	assert_int_equal(t.n_renamed, 1);
	assert_string_equal(t.jobs[1].name, "vgg19-10~3");
	rk_trace_fini(&t);

	/* Alibaba: README's pod mix for the default list. */
	parse_file("alibaba-pai-gpu-v2023/openb_pod_list_default.csv", "alibaba", 7064, 0, &t);
	assert_int_equal(t.n_lines, 8152);
	assert_int_equal(t.n_no_gpu, 1088);
	size_t by_gpus[9] = {0}, fractional = 0;
	for (size_t i = 0; i < t.n; i++) {
		if (t.jobs[i].gpus <= 8)
			by_gpus[t.jobs[i].gpus]++;
		fractional += t.jobs[i].gpu_milli < 1000;
	}
	assert_int_equal(by_gpus[1], 6989);
	assert_int_equal(by_gpus[2], 16);
	assert_int_equal(by_gpus[4], 15);
	assert_int_equal(by_gpus[8], 44);
	assert_int_equal(fractional, 3078);
	rk_trace_fini(&t);
	parse_file("alibaba-pai-gpu-v2023/openb_pod_list_gpushare100.csv", "alibaba", 7064, 0, &t);
	fractional = 0;
	for (size_t i = 0; i < t.n; i++)
		fractional += t.jobs[i].gpu_milli < 1000;
	assert_int_equal(fractional, 7064); /* README: 7064 sharing tasks */
	rk_trace_fini(&t);
	static const char *const same[] = {"gpushare20", "gpushare80", "gpuspec33"};
	for (int i = 0; i < 3; i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "alibaba-pai-gpu-v2023/openb_pod_list_%s.csv", same[i]);
		expect_file(rel, "alibaba", 7064);
	}
	/* multigpu files: 8324 / 9061 rows, 1088 CPU-only in each. */
	parse_file("alibaba-pai-gpu-v2023/openb_pod_list_multigpu20.csv", "alibaba", 8324 - 1088, 0,
		   &t);
	rk_trace_fini(&t);
	parse_file("alibaba-pai-gpu-v2023/openb_pod_list_multigpu50.csv", "alibaba", 9061 - 1088, 0,
		   &t);
	rk_trace_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rubick_traces),
		cmocka_unit_test(philly_csv),
		cmocka_unit_test(sia_and_pollux_workloads),
		cmocka_unit_test(gavel_and_shockwave),
		cmocka_unit_test(gavel_commands_with_zoo),
		cmocka_unit_test(muri_traces),
		cmocka_unit_test(synergy_tiresias_alibaba),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
